// expirykit/cluster/client.hpp: a cluster-aware client over resp::Client: one connection per
// node, commands routed by the hash slot of their keys, MOVED and ASK followed.
//
//   cluster::Client c("127.0.0.1", seed_port);          // reads the slot map (CLUSTER SLOTS)
//   c("HSETEX", "user:1", "EX", 60, "FIELDS", 1, "tok", "x");   // sent to the slot's primary
//   c("COPY", "a", "b");    // keys in two slots: the server's CROSSSLOT error comes back as the
//                           // reply, never hidden or split
//   resp::Client& n = c.node_for_slot(cluster::slot_of("user:1"));   // that node's connection
//
// Routing (valkey.io/topics/cluster-spec, "Redirection and resharding"):
//  - The keys of a command come from COMMAND INFO's first key, last key and step (cached per
//    command name), or from COMMAND GETKEYS for commands with movable keys (EVAL, FCALL...) and
//    container commands (OBJECT ENCODING...).
//    The command goes to the primary serving the slot of its first key; a command without keys
//    goes to the primary serving slot 0 (primaries().front()).
//  - `-MOVED <slot> <host:port>`: the slot map is re-read (CLUSTER SLOTS) and the command sent
//    to the named node; counted in stats().moved.
//  - `-ASK <slot> <host:port>`: ASKING then the command on the named node, one round trip, the
//    map unchanged; counted in stats().ask.
//  - `-TRYAGAIN` (a multi-key command during a migration): retried after Options::tryagain_wait.
//  - After Options::max_redirects such replies the last one is returned as the reply.
// Errors: resp::ConnectionError from a node that cannot be reached during a command;
// std::runtime_error when no known node answers CLUSTER SLOTS with a map covering every slot
// (also from the constructor when the seed cannot be reached: the message has the reason).
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/cluster/nodes.hpp>
#include <expirykit/cluster/slot.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::cluster {

using resp::Argv;
using resp::Reply;

class Client {
 public:
  struct Options {
    resp::Client::Options connection;
    /// MOVED/ASK/TRYAGAIN replies followed for one command before the last one is returned.
    int max_redirects = 16;
    std::chrono::milliseconds tryagain_wait{20};
  };
  /// Redirections followed so far.
  struct Stats {
    long moved = 0, ask = 0, tryagain = 0;
  };

  /// Connects to the seed node and reads the slot map. Throws std::runtime_error (seed not
  /// reachable, not a cluster node, or slots not covered), naming the reason.
  Client(std::string host, int port) : Client(std::move(host), port, Options{}) {}
  Client(std::string host, int port, Options o) : opts_(o), seed_(std::move(host) + ":" + std::to_string(port)) {
    refresh();
  }

  /// Runs `argv` on the node serving its keys' slot (see the file comment).
  Reply call(const Argv& argv) {
    std::string addr = address_for(argv);
    bool asking = false;
    Reply r;
    for (int hop = 0;; ++hop) {
      auto& node = connection(addr);
      if (asking) {
        auto both = node.pipeline({{"ASKING"}, argv});
        r = both[1];
      } else {
        r = node.call(argv);
      }
      asking = false;
      if (!r.is_error() || hop >= opts_.max_redirects) return r;
      const std::string& e = r.str();
      if (e.rfind("MOVED ", 0) == 0) {
        ++stats_.moved;
        refresh();
        addr = redirect_target(e);
      } else if (e.rfind("ASK ", 0) == 0) {
        ++stats_.ask;
        addr = redirect_target(e);
        asking = true;
      } else if (e.rfind("TRYAGAIN", 0) == 0) {
        ++stats_.tryagain;
        std::this_thread::sleep_for(opts_.tryagain_wait);
      } else {
        return r;
      }
    }
  }
  /// call("HGET", "h", "f"): arguments as strings or integers.
  template <resp::Arg... A>
  Reply operator()(const A&... args) {
    return call(Argv{resp::to_arg(args)...});
  }

  /// The keys of `argv` as the server defines them (COMMAND INFO / COMMAND GETKEYS); empty for
  /// a command without keys.
  std::vector<std::string> keys_of(const Argv& argv) {
    if (argv.empty()) return {};
    const std::string name = lower(argv[0]);
    auto it = specs_.find(name);
    if (it == specs_.end()) it = specs_.emplace(name, read_spec(name)).first;
    const KeySpec& k = it->second;
    std::vector<std::string> out;
    if (k.movable) {
      Argv q{"COMMAND", "GETKEYS"};
      q.insert(q.end(), argv.begin(), argv.end());
      const Reply r = seed_connection().call(q);
      if (r.is_array())
        for (const auto& e : r.elements()) out.push_back(e.str());
      return out;
    }
    if (k.first <= 0) return out;
    const long argc = static_cast<long>(argv.size());
    const long last = k.last < 0 ? argc + k.last : k.last;
    for (long i = k.first; i <= last && i < argc; i += std::max(1L, k.step)) out.push_back(argv[static_cast<std::size_t>(i)]);
    return out;
  }
  /// The distinct slots of `argv`'s keys, in key order.
  std::vector<int> slots_of(const Argv& argv) {
    std::vector<int> out;
    for (const auto& k : keys_of(argv)) {
      const int s = slot_of(k);
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    }
    return out;
  }

  /// "host:port" of the primary serving `slot` in the current map.
  const std::string& address_of(int slot) const { return addresses_.at(owner_.at(static_cast<std::size_t>(slot))); }
  /// The connection to the primary serving `slot` (opened on first use).
  resp::Client& node_for_slot(int slot) { return connection(address_of(slot)); }
  /// The connection to the node at "host:port" (opened on first use; reopened when broken).
  resp::Client& connection(const std::string& address) {
    auto& c = conns_[address];
    if (!c || !c->connected()) {
      const auto colon = address.rfind(':');
      c = std::make_unique<resp::Client>(address.substr(0, colon), std::stoi(address.substr(colon + 1)), opts_.connection);
    }
    return *c;
  }
  /// The primaries of the current map, "host:port", in slot order of their first range.
  std::vector<std::string> primaries() const {
    std::vector<std::string> out;
    for (int s = 0; s < slot_count; ++s) {
      const auto& a = address_of(s);
      if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
    }
    return out;
  }
  /// The primary after `address` in primaries(), wrapping round; the first primary when `address`
  /// is none: another shard to move a slot to.
  std::string primary_after(const std::string& address) const {
    const auto ps = primaries();
    const auto at = std::find(ps.begin(), ps.end(), address);
    return at == ps.end() ? ps.front() : ps[static_cast<std::size_t>(at - ps.begin() + 1) % ps.size()];
  }
  /// Every node of the cluster, primaries and replicas, "host:port", as the first primary's
  /// CLUSTER NODES lists them (failing nodes included), in the order of their ids.
  std::vector<std::string> all_nodes() {
    const Reply r = seed_connection()("CLUSTER", "NODES");
    std::vector<std::string> out;
    if (!r.is_string()) return out;
    for (const auto& n : parse_cluster_nodes(r.str())) out.push_back(n.address);  // cluster/nodes.hpp
    return out;
  }
  /// Re-reads the slot map with CLUSTER SLOTS from a known node (the seed first). Throws
  /// std::runtime_error when no node gives a map covering all 16384 slots.
  void refresh() {
    std::vector<std::string> tried;
    std::vector<std::string> candidates{seed_};
    for (const auto& a : addresses_) candidates.push_back(a);
    std::string why;
    for (const auto& a : candidates) {
      if (std::find(tried.begin(), tried.end(), a) != tried.end()) continue;
      tried.push_back(a);
      try {
        const Reply r = connection(a)("CLUSTER", "SLOTS");
        if (read_map(r, a.substr(0, a.rfind(':')), why)) return;
        why = a + ": " + why;
      } catch (const resp::ConnectionError& e) {
        why = e.what();
      }
    }
    throw std::runtime_error("cluster::Client: no slot map from " + seed_ + " (" + why + ")");
  }
  const Stats& stats() const { return stats_; }

 private:
  struct KeySpec {
    long first = 0, last = 0, step = 0;
    bool movable = false;
  };

  static std::string lower(std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  }

  KeySpec read_spec(const std::string& name) {
    KeySpec k;
    const Reply r = seed_connection()("COMMAND", "INFO", name);
    if (!r.is_array() || r.size() == 0 || !r[0].is_array() || r[0].size() < 6) return k;
    const Reply& info = r[0];
    for (const auto& f : info[2].elements())
      if (f.str() == "movablekeys") k.movable = true;
    // A container command (OBJECT, XINFO...): its subcommands (element 10) place the keys.
    if (info.size() > 9 && info[9].is_array() && info[9].size() > 0) k.movable = true;
    k.first = info[3].as_integer();
    k.last = info[4].as_integer();
    k.step = info[5].as_integer();
    return k;
  }

  resp::Client& seed_connection() { return connection(addresses_.empty() ? seed_ : address_of(0)); }

  std::string address_for(const Argv& argv) {
    const auto keys = keys_of(argv);
    if (keys.empty()) return address_of(0);
    return address_of(slot_of(keys.front()));
  }

  static std::string redirect_target(const std::string& e) {
    const auto sp = e.rfind(' ');
    return e.substr(sp + 1);
  }

  /// `host`: the answering node's host, for entries with an empty one (a node that does not
  /// know its own address, e.g. alone in its cluster, answers "": the cluster spec's "same host
  /// as the connection").
  bool read_map(const Reply& r, const std::string& host, std::string& why) {
    if (!r.is_array()) {
      why = "CLUSTER SLOTS answered " + r.to_string();
      return false;
    }
    std::vector<std::string> addrs;
    std::array<int, slot_count> owner;
    owner.fill(-1);
    for (const auto& range : r.elements()) {
      if (!range.is_array() || range.size() < 3 || !range[2].is_array() || range[2].size() < 2) continue;
      const std::string ip = range[2][0].str().empty() ? host : range[2][0].str();
      const std::string a = ip + ":" + std::to_string(range[2][1].as_integer());
      auto at = std::find(addrs.begin(), addrs.end(), a);
      if (at == addrs.end()) at = addrs.insert(addrs.end(), a);
      const int idx = static_cast<int>(at - addrs.begin());
      for (long long s = range[0].as_integer(); s <= range[1].as_integer() && s < slot_count; ++s)
        owner[static_cast<std::size_t>(s)] = idx;
    }
    for (int s = 0; s < slot_count; ++s)
      if (owner[static_cast<std::size_t>(s)] < 0) {
        why = "slot " + std::to_string(s) + " is not served";
        return false;
      }
    addresses_ = std::move(addrs);
    owner_ = owner;
    return true;
  }

  Options opts_;
  std::string seed_;
  std::vector<std::string> addresses_;   ///< primaries of the map
  std::array<int, slot_count> owner_{};  ///< slot -> index in addresses_
  std::map<std::string, std::unique_ptr<resp::Client>> conns_;
  std::map<std::string, KeySpec> specs_;
  Stats stats_;
};

}  // namespace expirykit::cluster
