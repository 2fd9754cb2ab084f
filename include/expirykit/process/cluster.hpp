// expirykit/process/cluster.hpp: a Valkey Cluster or Redis Cluster of real servers spawned by
// the kit on loopback: N primaries with M replicas each.
//
//   process::Cluster cl({.primaries = 3, .replicas = 1});   // Valkey 9.1.2 by default
//   cluster::Client c(cl.seed_host(), cl.seed_port());        // routes by slot (cluster/client.hpp)
//   auto& owner = cl.owner_of(cluster::slot_of("h"));        // the primary serving the key now
//   cl.wait_agreed();                                        // after a reshard or a failover
//
// How it starts (every node a process::Server: own process group, SIGKILL when the spawning
// thread's process dies, 0700 temp dir, loopback only, the same binary for all unless
// ClusterOptions::node_binaries names one per node):
//  1. every node with ServerOptions::cluster (cluster-enabled, nodes.conf in its dir, its own
//     free bus port), repl-diskless-sync-delay 0 and cluster-node-timeout 5000 (failover());
//  2. node i gets CLUSTER SET-CONFIG-EPOCH i+1 (distinct epochs, as valkey-cli --cluster create
//     sets them); primary i gets CLUSTER ADDSLOTSRANGE over the i-th contiguous share of
//     0..16383 (slots_of(i));
//  3. every node sends CLUSTER MEET to every later node; the kit waits until every node knows every
//     other one with no handshake pending;
//  4. each replica gets CLUSTER REPLICATE <its primary's id>;
//  5. wait_agreed(): never a fixed sleep.
// Teardown kills every node (the destructor, whatever the test's fate; a SIGKILLed test binary's
// nodes die with it through PR_SET_PDEATHSIG: checks/process/no_leak_test.cpp).
// CLUSTER ADDSLOTSRANGE, CLUSTER MYID and the bus-port argument of CLUSTER MEET exist since
// Redis 7.0 and in every Valkey (valkey.io/commands/cluster-addslotsrange, cluster-meet).
// Throws ServerError (a node that does not start, a cluster that does not agree within
// ready_timeout, with every node's view and log tail).
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <expirykit/cluster/nodes.hpp>
#include <expirykit/cluster/slot.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/process/options.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::process {

struct ClusterOptions {
  /// How every node starts (binary, config...); ServerOptions::cluster is set by the kit, and
  /// `port` and `seed_files` must stay empty (each node picks its own port).
  ServerOptions node{};
  int primaries = 3;
  /// Replicas per primary.
  int replicas = 0;
  /// Longest wait for the cluster to form or to agree again (wait_agreed()).
  std::chrono::milliseconds ready_timeout{60000};
  /// A binary per node, in the order of nodes() (the primaries, then the replicas), for a cluster
  /// of mixed versions (a rolling upgrade); a node past the end of the list, or with an empty
  /// path, uses node.binary.
  std::vector<std::filesystem::path> node_binaries{};
};

// The parser of CLUSTER NODES lives in cluster/nodes.hpp; these names are kept for callers that
// knew it here.
using cluster::ClusterNode;
using cluster::parse_cluster_nodes;

class Cluster {
 public:
  using Options = ClusterOptions;

  /// Starts, joins and waits for the cluster (see the file comment).
  explicit Cluster(Options o = {}) : opts_(std::move(o)) {
    if (opts_.primaries < 1 || opts_.replicas < 0)
      throw ServerError("ClusterOptions: primaries = " + std::to_string(opts_.primaries) + ", replicas = " +
                        std::to_string(opts_.replicas) + ": need at least 1 primary and 0 or more replicas");
    if (opts_.node.port || !opts_.node.seed_files.empty())
      throw ServerError("ClusterOptions::node: port and seed_files must be empty (each node has its own)");
    opts_.node.cluster = true;
    // The kit's defaults first, so a caller's node.config still overrides them. A primary votes
    // for a replica of the same shard at most once per 2 x cluster-node-timeout (Redis 8.0.6's
    // clusterSendFailoverAuthIfNeeded, also for a manual failover): 5 s instead of the default
    // 15 s lets failover() repeat on one shard within 10 s.
    opts_.node.config.insert(opts_.node.config.begin(), {{"repl-diskless-sync-delay", "0"}, {"cluster-node-timeout", "5000"}});
    const int total = opts_.primaries * (1 + opts_.replicas);
    for (int i = 0; i < total; ++i) {
      ServerOptions n = opts_.node;
      const auto at = static_cast<std::size_t>(i);
      if (at < opts_.node_binaries.size() && !opts_.node_binaries[at].empty()) n.binary = opts_.node_binaries[at];
      nodes_.push_back(std::make_unique<Server>(std::move(n)));
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      auto c = nodes_[i]->client();
      ids_.push_back(c("CLUSTER", "MYID").str());
      // Distinct config epochs before the nodes meet, as valkey-cli --cluster create does: equal
      // epochs are only told apart by gossip later, and a slot handed over in the meantime
      // (CLUSTER SETSLOT NODE) can be claimed by two primaries with the same epoch.
      expect_ok(c("CLUSTER", "SET-CONFIG-EPOCH", i + 1), *nodes_[i], "CLUSTER SET-CONFIG-EPOCH");
    }
    for (int i = 0; i < opts_.primaries; ++i) {
      const auto [a, b] = slots_of(static_cast<std::size_t>(i));
      auto c = nodes_[static_cast<std::size_t>(i)]->client();
      expect_ok(c("CLUSTER", "ADDSLOTSRANGE", a, b), *nodes_[static_cast<std::size_t>(i)], "CLUSTER ADDSLOTSRANGE");
    }
    // Every pair meets directly: gossip alone spreads a new node in seconds on Redis 8.0.
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      auto c = nodes_[i]->client();
      for (std::size_t j = i + 1; j < nodes_.size(); ++j)
        expect_ok(c("CLUSTER", "MEET", nodes_[j]->host(), nodes_[j]->port(), nodes_[j]->bus_port()), *nodes_[i],
                  "CLUSTER MEET " + nodes_[j]->address());
    }
    wait_until("every node knows every other one", [&](std::string& why) {
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const auto view = view_of(i);
        if (view.size() != nodes_.size()) {
          why = nodes_[i]->address() + " knows " + std::to_string(view.size()) + " of " + std::to_string(nodes_.size());
          return false;
        }
        for (const auto& n : view)
          if (n.flags.find("handshake") != std::string::npos || n.flags.find("noaddr") != std::string::npos) {
            why = nodes_[i]->address() + " sees " + n.address + " as " + n.flags;
            return false;
          }
      }
      return true;
    });
    for (int p = 0; p < opts_.primaries; ++p)
      for (int r = 0; r < opts_.replicas; ++r) {
        auto& rep = replica(static_cast<std::size_t>(p), static_cast<std::size_t>(r));
        auto c = rep.client();
        expect_ok(c("CLUSTER", "REPLICATE", ids_[static_cast<std::size_t>(p)]), rep, "CLUSTER REPLICATE");
      }
    wait_agreed();
  }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const Options& options() const { return opts_; }
  std::size_t primary_count() const { return static_cast<std::size_t>(opts_.primaries); }
  std::size_t replicas_per_primary() const { return static_cast<std::size_t>(opts_.replicas); }
  /// The node started as primary `i` (a failover may have made it a replica since: roles()).
  Server& primary(std::size_t i) {
    if (i >= primary_count())
      throw ServerError("no primary " + std::to_string(i) + ": this cluster has " + std::to_string(primary_count()));
    return *nodes_[i];
  }
  /// The node started as replica `j` of primary `i`.
  Server& replica(std::size_t i, std::size_t j = 0) {
    if (i >= primary_count() || j >= replicas_per_primary())
      throw ServerError("no replica " + std::to_string(j) + " of primary " + std::to_string(i));
    return *nodes_[primary_count() + i * replicas_per_primary() + j];
  }
  /// Every node: the primaries first, then the replicas of primary 0, 1, ...
  std::vector<Server*> nodes() {
    std::vector<Server*> out;
    for (auto& n : nodes_) out.push_back(n.get());
    return out;
  }
  /// The index of `s` in nodes(). Throws ServerError when it is not a node of this cluster.
  std::size_t index_of(const Server& s) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].get() == &s) return i;
    throw ServerError(s.address() + " is not a node of this cluster");
  }
  /// The node's cluster id (CLUSTER MYID at start).
  const std::string& id_of(const Server& s) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i].get() == &s) return ids_[i];
    throw ServerError(s.address() + " is not a node of this cluster");
  }
  /// The node with cluster id `id`. Throws ServerError when there is none.
  Server& node_by_id(const std::string& id) {
    for (std::size_t i = 0; i < nodes_.size(); ++i)
      if (ids_[i] == id) return *nodes_[i];
    throw ServerError("no node with id " + id + " in this cluster");
  }
  /// The first and last slot given to primary `i` at start: the i-th contiguous share of
  /// 0..16383 (3 primaries: 0-5460, 5461-10921, 10922-16383).
  std::pair<int, int> slots_of(std::size_t i) const {
    const long n = opts_.primaries, s = cluster::slot_count;
    const long a = static_cast<long>(i) * s / n, b = (static_cast<long>(i) + 1) * s / n - 1;
    return {static_cast<int>(a), static_cast<int>(b)};
  }
  /// Address of node 0, to seed a cluster client.
  std::string seed_host() const { return nodes_[0]->host(); }
  int seed_port() const { return nodes_[0]->port(); }
  const BinaryVersion& binary_version() const { return nodes_[0]->binary_version(); }

  /// The cluster as node `i` sees it now (CLUSTER NODES), sorted by id.
  std::vector<ClusterNode> view_of(std::size_t i) {
    nodes_.at(i)->check_alive();
    auto c = nodes_[i]->client();
    const auto r = c("CLUSTER", "NODES");
    if (r.is_error()) throw ServerError(nodes_[i]->address() + ": CLUSTER NODES: " + r.to_string());
    return parse_cluster_nodes(r.str());
  }
  /// The primary serving `slot` now, as node 0 sees it (after wait_agreed(), all nodes do).
  Server& owner_of(int slot) {
    for (const auto& n : view_of(0))
      if (n.primary)
        for (const auto& [a, b] : n.slots)
          if (slot >= a && slot <= b) return node_by_id(n.id);
    throw ServerError("no primary serves slot " + std::to_string(slot) + " in the view of " + nodes_[0]->address());
  }
  /// The current primaries (after failovers: whoever has the primary flag now), as node 0 sees
  /// them.
  std::vector<Server*> current_primaries() {
    std::vector<Server*> out;
    for (const auto& n : view_of(0))
      if (n.primary) out.push_back(&node_by_id(n.id));
    return out;
  }

  /// A manual failover: CLUSTER FAILOVER on `replica` (valkey.io/commands/cluster-failover:
  /// its primary stops accepting writes until the replica has applied its whole replication
  /// stream, then the replica takes over the slots), repeated every 6 s while the replica does not
  /// see itself as a primary (a failover the primaries did not vote for gives up), then waits until
  /// every node sees `replica` as a primary serving the slots its old primary served, and that
  /// old primary as a replica, and wait_agreed(). Throws ServerError when the command is refused or the
  /// switch does not happen within ready_timeout.
  void failover(Server& replica) {
    const std::string id = id_of(replica);
    // The shard as node 0 sees it before: the primary `replica` follows and the slots it serves.
    std::string old_id;
    std::vector<std::pair<int, int>> old_slots;
    const auto before = view_of(0);
    for (const auto& n : before)
      if (n.id == id) old_id = n.primary_id;
    if (old_id.empty())
      throw ServerError(replica.address() + " is not a replica in " + nodes_[0]->address() + "'s view of the cluster");
    for (const auto& n : before)
      if (n.id == old_id) old_slots = n.slots;
    auto c = replica.client();
    // Whether `replica` sees itself as a primary: then it must not be asked again (a primary
    // refuses CLUSTER FAILOVER), only waited for.
    auto promoted = [&] {
      for (const auto& n : view_of(index_of(replica)))
        if (n.id == id) return n.primary;
      return false;
    };
    // A manual failover gives up after a few seconds without the primaries' votes (a primary
    // votes for a shard at most once per 2 x cluster-node-timeout): ask again until every node
    // sees the replica as a primary.
    const auto until = std::chrono::steady_clock::now() + opts_.ready_timeout;
    std::string why;
    for (int attempt = 1;; ++attempt) {
      if (attempt == 1 || !promoted()) expect_ok(c("CLUSTER", "FAILOVER"), replica, "CLUSTER FAILOVER");
      const auto retry_at = std::chrono::steady_clock::now() + std::chrono::seconds(6);
      for (;;) {
        bool all = true;
        // Done when every node sees `replica` as a primary serving the old primary's slots and
        // the old primary as a replica. The primary flag alone is not enough: a node can hold
        // it before the slots move, and a slot map read then still names the old primary (found
        // on Redis 8.6.3: the failover property sent a read to the demoted node, which answered
        // with a field whose TTL had passed).
        for (std::size_t i = 0; i < nodes_.size() && all; ++i) {
          nodes_[i]->check_alive();
          for (const auto& n : view_of(i)) {
            if (n.id == id && !n.primary) {
              all = false;
              why = nodes_[i]->address() + " still sees it as " + n.flags;
            } else if (n.id == id && n.slots != old_slots) {
              all = false;
              why = nodes_[i]->address() + " does not yet see it serving the old primary's slots";
            } else if (n.id == old_id && n.primary) {
              all = false;
              why = nodes_[i]->address() + " still sees the old primary " + n.address + " as a primary";
            }
          }
        }
        if (all) {
          wait_agreed();
          return;
        }
        if (std::chrono::steady_clock::now() > retry_at) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (std::chrono::steady_clock::now() > until)
        throw ServerError(replica.address() + ": not a primary for every node after " + std::to_string(attempt) +
                          " CLUSTER FAILOVER attempts in " + std::to_string(opts_.ready_timeout.count()) + " ms (" + why +
                          ")\n" + replica.log_tail(15));
    }
  }

  /// Waits until every node is alive, says cluster_state:ok with all 16384 slots assigned,
  /// sees no node as failing, handshaking or without address, no two primaries with the same
  /// config epoch, and all nodes hold the same map
  /// (which primary serves which slots, which replica follows which primary); and every replica
  /// reports master_link_status:up with no sync in progress. Polls every 10 ms; throws
  /// ServerError after ready_timeout with every node's view and the log tails.
  void wait_agreed() {
    wait_until("agree on one slot map with cluster_state:ok", [&](std::string& why) {
      std::string first;
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        auto c = nodes_[i]->client();
        const auto info = c("CLUSTER", "INFO");
        const std::string ci = info.is_string() ? info.str() : info.to_string();
        if (ci.find("cluster_state:ok") == std::string::npos ||
            ci.find("cluster_slots_assigned:16384") == std::string::npos) {
          why = nodes_[i]->address() + ": CLUSTER INFO has no cluster_state:ok with 16384 slots assigned";
          return false;
        }
        const auto view = view_of(i);
        const auto map = canonical(view);
        if (i == 0) first = map;
        if (view.size() != nodes_.size() || map != first) {
          why = nodes_[i]->address() + " sees\n" + map + "node 0 sees\n" + first;
          return false;
        }
        for (const auto& n : view)
          for (const char* bad : {"fail", "handshake", "noaddr"})
            if (("," + n.flags + ",").find(std::string(",") + bad) != std::string::npos) {
              why = nodes_[i]->address() + " sees " + n.address + " as " + n.flags;
              return false;
            }
        std::map<long long, std::string> epochs;  // of the primaries: a tie leaves a slot claim open
        for (const auto& n : view)
          if (n.primary && !epochs.emplace(n.config_epoch, n.address).second) {
            why = nodes_[i]->address() + " sees primaries " + epochs[n.config_epoch] + " and " + n.address +
                  " with the same config epoch " + std::to_string(n.config_epoch);
            return false;
          }
        bool me_primary = false;
        for (const auto& n : view)
          if (n.myself) me_primary = n.primary;
        if (!me_primary) {
          const auto rep = server::Info::fetch(c, "replication");
          if (rep.get("master_link_status").value_or("") != "up" || rep.get_int("master_sync_in_progress", 1) != 0) {
            why = nodes_[i]->address() + " (replica): master_link_status=" + rep.get("master_link_status").value_or("?") +
                  ", master_sync_in_progress=" + rep.get("master_sync_in_progress").value_or("?");
            return false;
          }
        }
      }
      return true;
    });
  }

 private:
  /// One line per node: "id primary slots" or "id replica-of primary-id", sorted by id.
  static std::string canonical(const std::vector<ClusterNode>& view) {
    std::string out;
    for (const auto& n : view) {
      out += "  " + n.id + " " + n.address + (n.primary ? " primary" : " replica-of " + n.primary_id);
      for (const auto& [a, b] : n.slots) out += " " + std::to_string(a) + "-" + std::to_string(b);
      out += "\n";
    }
    return out;
  }

  void expect_ok(const resp::Reply& r, Server& s, const std::string& what) {
    if (r != resp::Reply::ok()) throw ServerError(s.address() + ": " + what + " answered " + r.to_string() + "\n" + s.log_tail(10));
  }

  template <class Ready>
  void wait_until(const std::string& what, Ready ready) {
    const auto until = std::chrono::steady_clock::now() + opts_.ready_timeout;
    std::string why;
    for (;;) {
      for (auto& n : nodes_) n->check_alive();
      try {
        if (ready(why)) return;
      } catch (const resp::ConnectionError& e) {
        why = e.what();
      }
      if (std::chrono::steady_clock::now() > until) {
        std::string logs;
        for (auto& n : nodes_) logs += n->address() + ":\n" + n->log_tail(6);
        throw ServerError("the cluster's " + std::to_string(nodes_.size()) + " nodes did not " + what + " within " +
                          std::to_string(opts_.ready_timeout.count()) + " ms: " + why + "\n" + logs);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  Options opts_;
  std::vector<std::unique_ptr<Server>> nodes_;
  std::vector<std::string> ids_;
};

}  // namespace expirykit::process
