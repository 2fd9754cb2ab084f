// expirykit/state/cluster_twin.hpp: the model and a live cluster side by side. One model holds
// the keys of every node; each command runs, through a state::Twin, on the primary serving its
// keys' slot.
//
//   process::Cluster cl({.primaries = 3});
//   cluster::Client c(cl.seed_host(), cl.seed_port());
//   state::ClusterTwin twin(c, *model::Dialect::for_server("valkey", 9, 1));
//   twin.run({"HSETEX", "h1", "PX", "5000", "FIELDS", "1", "a", "1"});  // on h1's primary
//   twin.run({"COPY", "h1", "h2"});    // h1, h2: two slots: the server's CROSSSLOT error
// A whole sequence with its report: property/cluster_sequence.hpp (run_cluster_sequence).
//
// Per command (property::cluster_sequence() first drops what a cluster cannot run, see there):
//  - keys in one slot: Twin::use_connection(that slot's primary), then Twin::run(): the same
//    TIME window, exact reply, deadline adoption and known-issue checks as on one server;
//  - keys in several slots: sent as is to the first key's primary; the step passes when the
//    reply is the CROSSSLOT error (valkey.io/topics/cluster-spec, "Keys distribution model":
//    multi-key operations need all keys in one slot), and the model is not changed;
//  - a MULTI ... EXEC/DISCARD block is routed as a whole: to its one slot's primary through the
//    twin, or, when its commands name several slots, sent raw to the first key's primary where
//    EXEC must refuse it: EXECABORT when a queued command was refused (MOVED: its key lives on
//    another primary), CROSSSLOT when all keys live on this primary in different slots (the
//    commands are QUEUED and EXEC checks them: live on Valkey 9.1.2 and Redis 8.0.6);
//  - FLUSHALL / FLUSHDB go to every primary, DEBUG SET-ACTIVE-EXPIRE to every node (the twin runs
//    them on the first primary); other keyless commands (DEBUG SLEEP) to the primary last used.
// compare_state() compares each primary's keys with the model's keys of that primary's slots.
// Events, tracking and INFO counters are not observed here (each lives on one connection).
// Throws what state::Twin and cluster::Client throw.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/cluster/client.hpp>
#include <expirykit/cluster/slot.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/state/history.hpp>
#include <expirykit/state/replica_triggers.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

/// Counts of how ClusterTwin routed the commands of its sequences.
struct ClusterRouting {
  long one_slot = 0;     ///< commands and blocks run through the twin on one slot's primary
  long crossslot = 0;    ///< multi-slot commands answered CROSSSLOT as expected
  long execabort = 0;    ///< multi-slot transactions refused by EXEC (EXECABORT or CROSSSLOT)
  long broadcast = 0;    ///< FLUSHALL / FLUSHDB (every primary), DEBUG SET-ACTIVE-EXPIRE (every node)
  long dropped = 0;      ///< commands property::cluster_sequence() left out
};

class ClusterTwin {
 public:
  /// A step with the primary it ran on ("host:port").
  struct NodeStep {
    std::string node;
    Step step;
  };

  /// The twin starts on the first primary of `c`'s slot map; Twin::Options as for one server.
  ClusterTwin(cluster::Client& c, model::Dialect d, Twin::Options o = {})
      : c_(c), twin_(c.connection(c.primaries().front()), std::move(d), std::move(o)) {
    if (const auto& id = twin_.options().server)
      for (const auto& t : detail::replica_triggers())
        if (const auto* k = known_issues::find(t.id); k && k->covers(*id)) triggers_.push_back(&t);
  }

  Twin& twin() { return twin_; }
  cluster::Client& client() { return c_; }
  model::Keyspace& model() { return twin_.model(); }
  const model::Dialect& dialect() const { return twin_.dialect(); }
  const std::vector<NodeStep>& history() const { return history_; }
  ClusterRouting& routing() { return routing_; }

  /// FLUSHALL SYNC on every primary, DEBUG SET-ACTIVE-EXPIRE 1 on every node, the slot map re-read, an
  /// empty model and history: a fresh start for a sequence.
  void flushall() {
    c_.refresh();
    // The first primary is flushed by twin_.flushall() below; each other one is emptied by DEL
    // when it holds a few keys: FLUSHALL on a Redis 8.0.6 cluster node took about 1 ms against
    // 0.04 ms on Valkey 9.1.2 and left its bio thread releasing memory (madvise) for most of
    // the CPU of a cluster property run (perf, bench/RESULTS.md 9.3). DBSIZE, which counts
    // logically expired keys that KEYS hides, must then read 0, or FLUSHALL SYNC follows.
    // After a case in which a known issue may have made a replica store keys its primary does not
    // (diverged_, e.g. valkey-hsetex-flag-named-key), a DEL of the primary's keys would leave
    // those on the replica for a later failover to expose (seen: key FXX on a promoted replica,
    // the failover property, 2026-12-06): FLUSHALL SYNC, which the replicas apply too.
    // A twin's first flush does the same: it cannot know what an earlier user of the cluster left.
    const bool replicas_may_differ = !diverged_.empty() || !flushed_once_;
    flushed_once_ = true;
    for (std::size_t i = 1; i < c_.primaries().size(); ++i) {
      if (replicas_may_differ) c_.connection(c_.primaries()[i])("FLUSHALL", "SYNC");
      else empty(c_.connection(c_.primaries()[i]));
    }
    set_active_expire(true);
    twin_.use_connection(c_.connection(c_.primaries().front()));
    twin_.flushall();
    history_.clear();
    clock_.reset();
    diverged_.clear();
    known_issues_.clear();
  }

  /// DEBUG SET-ACTIVE-EXPIRE on every node, replicas included (a replica promoted by a failover
  /// then keeps the primaries' setting).
  void set_active_expire(bool on) {
    for (const auto& a : c_.all_nodes()) c_.connection(a)("DEBUG", "SET-ACTIVE-EXPIRE", on ? "1" : "0");
  }
  /// After a reshard of `slots`: their keys travelled as DUMP payloads (MIGRATE, or the atomic
  /// migration's snapshot) and were loaded on the target, so the model's hashes there take the
  /// encoding a load gives (model/context.hpp loaded_encoding). Found live on Valkey 9.1.2: a
  /// small hash that a field TTL made hashtable, then HPERSIST left without TTLs, arrives as
  /// listpack (the property in suites/cluster/properties.cpp, seed 14570992002954383097).
  ///
  /// `legacy_since_ms`: for a legacy reshard, the server time (Unix ms) read before it. MIGRATE
  /// sends a key TTL as the time left (migrateCommand in cluster.c of both servers: the deadline
  /// minus its own now) and the target's RESTORE adds its now back, so a key's deadline moves
  /// later by the transfer time; field TTLs travel as absolute times in the payload. Each moved
  /// key TTL is read back (PEXPIRETIME, routed) and adopted when it lies from the model's deadline
  /// to that plus the time the move took; anything else stays for compare_state() to report.
  void slots_moved(const std::set<int>& slots, std::optional<int64_t> legacy_since_ms = std::nullopt) {
    auto& ks = twin_.model();
    const int64_t took = legacy_since_ms ? twin_.server_time() - *legacy_since_ms : 0;
    for (const auto& k : ks.key_names()) {
      if (!slots.count(cluster::slot_of(k))) continue;
      auto* e = ks.raw(k);
      if (e && e->is_hash()) e->hash().encoding = model::loaded_encoding(twin_.dialect(), e->hash(), ks.limits());
      if (e && e->expire_ms && legacy_since_ms) {
        const resp::Reply at = c_.call({"PEXPIRETIME", k});
        if (at.is_integer() && at.as_integer() >= *e->expire_ms && at.as_integer() <= *e->expire_ms + took)
          e->expire_ms = at.as_integer();
      }
    }
  }
  /// After a failover of the primary serving `slots`: the promoted replica built its hashes by
  /// applying the old primary's replication stream, which can leave another encoding than the
  /// primary's for the same data (found live on Valkey 9.1.2 by the failover property: a hash whose
  /// fields all expired, then were overwritten by HSETEX KEEPTTL, stays hashtable on the primary;
  /// the stream carries the expired fields' deletion, the replica drops the empty key and the
  /// HSETEX makes a new listpack). Encoding is not part of the commands' documented semantics, so
  /// the model adopts the new primary's OBJECT ENCODING of those hashes; values, HLEN and every
  /// deadline are still compared.
  ///
  /// Keys a known issue let differ between the old primary and its replica
  /// (state/replica_triggers.hpp: e.g. valkey-expired-fields-propagated, a command naming an
  /// expired and a live field, after which the replica stores fields the primary does not, or
  /// the reverse; logically expired fields cannot be read back) are deleted on both sides (DEL
  /// through the twin, recorded in the history) and counted in known_issues().
  ///
  /// A failover can take seconds (process::Cluster::failover asks again every 6 s while the
  /// primaries withhold their votes), long enough for a far field TTL of the sequence to pass,
  /// and active expiry, on by default (flushall()), may then have reclaimed those fields on the
  /// old primary or the new one. Each hash of those slots with field TTLs is read on its primary
  /// (TYPE, HLEN between two TIMEs): when the server holds exactly what reclaiming every field
  /// due at one of those times leaves (model::Keyspace::reclaim; no key when none is left), the
  /// model takes that; otherwise it stays as it is, for compare_state() to judge. Found by the
  /// failover property on Redis 8.6.3 (RC_PARAMS="seed=10561439871690131368": a field set with
  /// EX 10 was due 10 s before the comparison after the failover; the new primary held no key).
  void failed_over(const std::set<int>& slots) {
    c_.refresh();
    std::vector<std::pair<std::string, std::string>> dropped;  // key, known issue id
    for (const auto& [k, id] : diverged_)
      if (slots.count(cluster::slot_of(k))) dropped.emplace_back(k, id);
    for (const auto& [k, id] : dropped) {
      diverged_.erase(k);
      ++known_issues_[id];
      twin_.use_connection(c_.node_for_slot(cluster::slot_of(k)));
      Step s = twin_.run({"DEL", k});  // the two sides may disagree on whether it exists
      s.ok = true;
      s.model = Reply::status("(excused: known issue " + id + "; the key is dropped on both sides)");
      record(std::move(s));
    }
    auto& ks = twin_.model();
    adopt_active_expiry(slots);
    for (const auto& k : ks.key_names()) {
      if (!slots.count(cluster::slot_of(k))) continue;
      auto* e = ks.raw(k);
      if (!e || !e->is_hash()) continue;
      const Reply enc = c_.node_for_slot(cluster::slot_of(k))("OBJECT", "ENCODING", k);
      if (!enc.is_string()) continue;
      for (auto x : {model::Encoding::listpack, model::Encoding::listpackex, model::Encoding::hashtable})
        if (enc.str() == model::to_string(x)) e->hash().encoding = x;
    }
  }
  /// After a reshard or failover: re-reads the slot map (commands then go to the new owners) and
  /// records `what` in the history, where the report's script shows it as a comment.
  void topology_changed(const std::string& what) {
    c_.refresh();
    Step s;
    s.argv = {what};
    s.ok = true;
    history_.push_back({"topology", std::move(s)});
  }

  /// Known issues met since the last flushall(): id -> keys re-read after a failover.
  std::map<std::string, int> known_issues() const { return known_issues_; }

  /// Runs one command (not MULTI: run_block()) as the file comment says; records it.
  Step run(const Argv& argv) {
    const std::string u = argv.empty() ? std::string() : model::upper(argv[0]);
    if (u == "MULTI") throw std::logic_error("ClusterTwin::run(MULTI): run the whole block with run_block()");
    const auto slots = slots_of({argv});
    if (slots.empty()) {
      const bool everywhere = u == "FLUSHALL" || u == "FLUSHDB" ||
                              (u == "DEBUG" && argv.size() > 1 && model::upper(argv[1]) == "SET-ACTIVE-EXPIRE");
      if (everywhere) {
        ++routing_.broadcast;
        twin_.use_connection(c_.connection(c_.primaries().front()));
        const bool debug = u == "DEBUG";  // to replicas too: set_active_expire()
        for (const auto& a : debug ? c_.all_nodes() : c_.primaries())
          if (a != c_.primaries().front()) c_.connection(a).call(argv);
      }
      return record(twin_.run(argv));
    }
    if (slots.size() == 1) {
      ++routing_.one_slot;
      note_triggers({argv});  // a refused command (CROSSSLOT) changes neither side
      twin_.use_connection(c_.node_for_slot(*slots.begin()));
      return record(twin_.run(argv));
    }
    Step s;
    s.protocol = twin_.protocol();  // as the twin's steps: no HELLO line around it in the script
    s.argv = argv;
    auto& node = c_.node_for_slot(first_slot({argv}));
    s.server = node.call(argv);
    s.model = Reply::status("(cluster: a CROSSSLOT error)");
    s.ok = s.server.is_error_starting("CROSSSLOT");
    if (s.ok) ++routing_.crossslot;
    return record(std::move(s), node.address());
  }

  /// Runs a MULTI ... EXEC/DISCARD block (the last command may be missing: then DISCARD is
  /// added) as the file comment says; one Step per command.
  std::vector<Step> run_block(std::vector<Argv> block) {
    std::vector<Step> out;
    if (block.empty()) return out;
    const std::string last = model::upper(block.back()[0]);
    if (block.size() < 2 || (last != "EXEC" && last != "DISCARD")) block.push_back({"DISCARD"});
    const auto slots = slots_of(block);
    if (slots.size() <= 1) {
      ++routing_.one_slot;
      note_triggers(block);  // a block EXEC refuses changes neither side
      if (!slots.empty()) twin_.use_connection(c_.node_for_slot(*slots.begin()));
      for (const auto& c : block) out.push_back(record(twin_.run(c)));
      return out;
    }
    auto& node = c_.node_for_slot(first_slot(block));
    const auto replies = node.pipeline(block);
    for (std::size_t i = 0; i < block.size(); ++i) {
      Step s;
      s.protocol = twin_.protocol();  // as the twin's steps: no HELLO line around it in the script
      s.argv = block[i];
      s.server = replies[i];
      const std::string u = model::upper(block[i][0]);
      if (u == "EXEC") {
        s.model = Reply::status("(cluster: EXECABORT or CROSSSLOT, the block names several slots)");
        s.ok = s.server.is_error_starting("EXECABORT") || s.server.is_error_starting("CROSSSLOT");
        if (s.ok) ++routing_.execabort;
      } else {
        s.model = Reply::status("(cluster: any reply, the block names several slots)");
        s.ok = true;
      }
      out.push_back(record(std::move(s), node.address()));
    }
    return out;
  }

  /// Every primary's keys against the model's keys of that primary's slots (Twin::compare_state
  /// per node); one line per difference, prefixed with the node.
  std::vector<std::string> compare_state() {
    std::vector<std::string> diffs;
    for (const auto& a : c_.primaries()) {
      twin_.use_connection(c_.connection(a));
      for (auto& d : twin_.compare_state([&](const std::string& k) { return c_.address_of(cluster::slot_of(k)) == a; }))
        diffs.push_back(a + ": " + d);
    }
    return diffs;
  }

 private:
  /// failed_over()'s active expiry: the model's hashes of `slots` with fields due at their
  /// primary's TIME take what reclaiming them leaves when that primary holds exactly that (TYPE
  /// and HLEN, between two TIMEs in one pipeline: the state reclaimed at either time matches).
  /// HLEN counts stored fields, logically expired ones included, and reclaims none; TYPE
  /// deletes a key whose key TTL has passed (lazy expiry), which the model holds as absent too.
  /// A count alone is compared: any fields it leaves are due or live in both.
  void adopt_active_expiry(const std::set<int>& slots) {
    auto& ks = twin_.model();
    std::map<std::string, std::vector<std::string>> hashes_by_node;  // node -> hashes of `slots`
    for (const auto& k : ks.key_names()) {
      const int slot = cluster::slot_of(k);
      const model::Entry* e = ks.raw(k);
      if (slots.count(slot) && e && e->is_hash() && e->hash().min_deadline())
        hashes_by_node[c_.address_of(slot)].push_back(k);
    }
    for (const auto& [node, keys] : hashes_by_node) {
      std::vector<Argv> reads{{"TIME"}};
      for (const auto& k : keys) {
        reads.push_back({"TYPE", k});
        reads.push_back({"HLEN", k});
      }
      reads.push_back({"TIME"});
      const auto r = c_.connection(node).pipeline(reads);
      std::vector<model::Keyspace> reclaimed;  // at the first TIME and at the last
      for (const Reply* t : {&r.front(), &r.back()}) {
        reclaimed.push_back(ks);
        (void)reclaimed.back().reclaim(server::time_ms(*t));
      }
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const Reply& type = r[1 + 2 * i];
        const Reply& hlen = r[2 + 2 * i];
        for (const auto& after_ks : reclaimed) {
          const model::Entry* before = ks.raw(keys[i]);
          const model::Entry* after = after_ks.raw(keys[i]);
          if (before && after && *before == *after) break;  // nothing due for this key at that time
          if (!after && type == Reply::status("none")) {
            ks.erase(keys[i]);
            break;
          }
          if (after && after->is_hash() && type == Reply::status("hash") && hlen.is_integer() &&
              hlen.as_integer() == static_cast<long long>(after->hash().fields.size())) {
            ks.put(keys[i], *after);
            break;
          }
        }
      }
    }
  }

  /// Empties one primary's database 0: DEL of each key KEYS lists (at most 64), pipelined, then
  /// DBSIZE must answer 0; otherwise (more keys, or a logically expired key KEYS does not list)
  /// FLUSHALL SYNC.
  static void empty(resp::Client& node) {
    const Reply size = node("DBSIZE");
    if (size.is_integer() && size.as_integer() == 0) return;
    if (size.is_integer() && size.as_integer() <= 64) {
      const Reply keys = node("KEYS", "*");
      if (keys.is_array()) {
        std::vector<Argv> dels;
        for (const auto& k : keys.elements()) dels.push_back({"DEL", k.str()});
        dels.push_back({"DBSIZE"});
        const auto r = node.pipeline(dels);
        if (!r.empty() && r.back().is_integer() && r.back().as_integer() == 0) return;
      }
    }
    node("FLUSHALL", "SYNC");
  }

  /// Keys the commands may make differ between a primary and its replica under a known issue
  /// of this server (judged against the model before them, at time_estimate()).
  void note_triggers(const std::vector<Argv>& cmds) {
    if (triggers_.empty()) return;
    const int64_t now = time_estimate();
    for (const auto& c : cmds) {
      std::vector<Argv> looked_at{c};
      if (auto inner = model::sequence_eval_commands(c)) looked_at = *inner;
      for (const auto& one : looked_at)
        for (const auto* t : triggers_)
          for (const auto& k : t->fires(twin_.model(), one, now)) diverged_.emplace(k, t->id);
    }
  }

  /// The distinct slots of the keys the commands name (COMMAND INFO / GETKEYS through the
  /// cluster client; the sequence script's commands for EVAL/FCALL of it).
  std::set<int> slots_of(const std::vector<Argv>& cmds) {
    std::set<int> s;
    for (const auto& c : cmds) {
      const std::string u = c.empty() ? std::string() : model::upper(c[0]);
      if (u == "EVAL" || u == "FCALL") {
        if (const auto batch = model::sequence_eval_commands(c)) {
          for (const auto& inner : *batch)
            for (const auto& k : c_.keys_of(inner)) s.insert(cluster::slot_of(k));
          continue;
        }
      }
      for (const auto& k : c_.keys_of(c)) s.insert(cluster::slot_of(k));
    }
    return s;
  }
  int first_slot(const std::vector<Argv>& cmds) {
    for (const auto& c : cmds)
      for (const auto& k : c_.keys_of(c)) return cluster::slot_of(k);
    return 0;
  }
  Step record(Step s, std::string node = {}) {
    clock_.saw(s.after_ms);  // 0 (ignored): a CROSSSLOT step or a refused block read no TIME
    history_.push_back({node.empty() ? twin_.client().address() : std::move(node), s});
    return s;
  }
  /// The cluster's time now (Unix ms; its nodes share one clock, as the kit's spawned clusters on
  /// one host do): the latest TIME window of a recorded step moved on by this machine's steady
  /// clock since (server::ClockEstimate), or TIME when none was read since flushall(). Not the
  /// last step's after_ms: a CROSSSLOT step, a block refused by EXEC and a failover's topology
  /// step read no TIME (after_ms 0), and a trigger looking at time 0 sees no field expired (the
  /// failover property, valkey-9.1, RC_PARAMS="seed=4997980277482661169": HGETDEL naming an
  /// expired field after a CROSSSLOT step went unnoticed, the promoted replica had dropped the
  /// field, "h2: HLEN server 2, model 3").
  int64_t time_estimate() {
    if (const auto t = clock_.now()) return *t;
    return clock_.saw(twin_.server_time());
  }

  cluster::Client& c_;
  Twin twin_;
  std::vector<NodeStep> history_;
  ClusterRouting routing_;
  std::vector<const detail::ReplicaTrigger*> triggers_;  ///< of the server's known issues
  bool flushed_once_ = false;  ///< flushall() ran: its first one is FLUSHALL SYNC on every primary
  std::map<std::string, std::string> diverged_;          ///< key -> known issue id, since flushall()
  std::map<std::string, int> known_issues_;              ///< id -> keys re-read after failovers
  server::ClockEstimate clock_;  ///< the TIME windows of the recorded steps (since flushall())
};

/// The history of `twin` as a replay script (each command with the primary it ran on and both
/// replies, topology changes as comments), then the model state of `involved`.
inline std::string cluster_script(ClusterTwin& twin, const std::set<std::string>& involved) {
  std::ostringstream os;
  bool resp3 = false;
  for (const auto& [node, s] : twin.history()) resp3 |= node != "topology" && s.protocol == 3;
  os << "script (replay with valkey-cli -c" << (resp3 ? " -3" : "") << " / redis-cli -c" << (resp3 ? " -3" : "")
     << "; comments show the primary and each reply" << (resp3 ? "; HELLO lines where the protocol changes" : "")
     << "):\n";
  int protocol = 2;
  for (const auto& [node, s] : twin.history()) {
    if (node == "topology") {
      os << "# " << s.argv.front() << "\n";
      continue;
    }
    os << protocol_switch(s, protocol) << script_entry(s, node);
  }
  const int64_t now = twin.twin().server_time();
  os << "model state of the keys involved (at server time " << now << "):\n";
  for (const auto& k : involved) os << "  " << twin.model().describe(k, now) << "\n";
  return os.str();
}

}  // namespace expirykit::state
