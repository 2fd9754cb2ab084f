// expirykit/property/cluster_property.hpp: the main property on a cluster: gen::property_sequence
// (the sequences of suites/properties), minus what a cluster cannot run (cluster_sequence()),
// through a ClusterTwin: replies, CROSSSLOT / EXECABORT for commands and transactions that name
// several slots, and every primary's state after each sequence. The keys h1, h2, h3 and s1 of
// the generators lie in different slots (checks/cluster/slot_test.cpp), so a 3-primary cluster
// spreads every sequence over its shards.
//
//   property::check_cluster_sequences(twin, budget);                  // sequences only
//   property::check_cluster_sequences(twin, budget, "reshard", [&](state::ClusterTwin& t) {
//     return move_the_slot_of_some_key(t);                          // a description for the report
//   });
//
// With a `disturb` callable, every case runs it once at a drawn point of its sequence (before a
// drawn command, at the top level): a reshard or a failover while the sequence's fields hold far,
// short and already-expired TTLs; the description it returns is printed in the report's script.
// Each case runs on RESP2 or RESP3, drawn from `protocols` (default property_protocols(), as the
// main property: EXPIRYKIT_PROTOCOL; shrinks towards RESP2; {3}: RESP3 only; std::invalid_argument
// for an empty list, anything but 2 and 3, or 3 in a build with hiredis 0.14). Budget and replay
// as check_sequences() (property/property.hpp); `cells` stay empty.
#pragma once

#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/gen/commands.hpp>
#include <expirykit/property/cluster_sequence.hpp>
#include <expirykit/property/property.hpp>
#include <expirykit/state/cluster_twin.hpp>

namespace expirykit::property {

using resp::Argv;
using state::Cells;
using state::ClusterTwin;
using state::Step;
using state::Twin;

inline PropertyResult check_cluster_sequences(ClusterTwin& twin, PropertyBudget budget = {}, const std::string& what = {},
                                              std::function<std::string(ClusterTwin&)> disturb = {},
                                              std::vector<int> protocols = property_protocols()) {
  const model::Dialect d = twin.dialect();
  const std::string name = "model and a " + d.name + " cluster agree on random sequences" + (what.empty() ? "" : " (" + what + ")");
  // Crash triage (property.hpp): the commands sent; a node that crashed is triaged standalone.
  if (!budget.sent) budget.sent = [&twin] { return twin.twin().sent(); };
  const auto sequence_gen = gen::property_sequence(d, budget.max_len, gen::StaleBy::sleep);  // once; ClusterTwin has no @stale:
  if (protocols.empty()) throw std::invalid_argument("check_cluster_sequences: no protocol to draw from");
  check_protocols(protocols, "check_cluster_sequences: protocols");
  // Afterwards every node connection the twin moved to RESP3 goes back to RESP2, as the cluster
  // client's other users (reshards, counters, snapshots) found them.
  struct BackToResp2 {
    ClusterTwin& t;
    ~BackToResp2() {
      try {
        t.twin().use_protocol(2);
        for (const auto& a : t.client().all_nodes())
          if (auto& conn = t.client().connection(a); conn.protocol() == 3) (void)conn.hello(2);
      } catch (...) {  // a node that went away: its connection is not used again
      }
    }
  } back{twin};
  return check_cases(name, budget, [&] {
    // RESP2 or RESP3 per sequence (EXPIRYKIT_PROTOCOL; shrinks towards RESP2): the twin sends
    // HELLO on each node's connection as it first uses it in that protocol.
    twin.twin().use_protocol(draw_protocol(protocols));
    auto [cmds, dropped] = cluster_sequence(*sequence_gen);
    twin.routing().dropped += dropped;
    if (!disturb) return run_cluster_sequence(twin, cmds);
    // Where it may happen: before a command at the top level (not inside a MULTI block), or at the end.
    std::vector<std::size_t> points;
    bool in_block = false;
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      const std::string u = cmds[i].empty() ? std::string() : model::upper(cmds[i][0]);
      if (!in_block) points.push_back(i);
      if (u == "MULTI") in_block = true;
      else if (u == "EXEC" || u == "DISCARD") in_block = false;
    }
    points.push_back(cmds.size());
    const std::size_t at = *rc::gen::elementOf(points);
    auto res = run_cluster_sequence(twin, cmds, [&](std::size_t i) {
      if (i == at) twin.topology_changed(disturb(twin));
    });
    if (at >= cmds.size() && res.ok) {  // after the last command: disturb, then compare again
      twin.topology_changed(disturb(twin));
      for (const auto& [id, n] : twin.known_issues()) res.known_issues[id] = 1;
      const auto diffs = twin.compare_state();
      if (!diffs.empty()) {
        res.ok = false;
        res.summary = "state differs after " + twin.history().back().step.argv.front() + ": " + diffs.front();
        res.report = res.summary + "\n";
        for (const auto& x : diffs) res.report += "  " + x + "\n";
        std::set<std::string> involved;
        for (const auto& c : cmds)
          for (const auto& k : keys_of(c)) involved.insert(k);
        res.report += cluster_script(twin, involved);
      }
    }
    return res;
  });
}

}  // namespace expirykit::property
