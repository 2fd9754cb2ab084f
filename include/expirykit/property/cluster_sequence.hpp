// expirykit/property/cluster_sequence.hpp: a command sequence on a live cluster and the model,
// through a state::ClusterTwin (state/cluster_twin.hpp): what a cluster cannot run left out
// (cluster_sequence), then every reply and the state of every primary checked
// (run_cluster_sequence), with a report whose script replays with `valkey-cli -c`.
//
//   auto [cmds, dropped] = property::cluster_sequence(drawn);
//   auto r = property::run_cluster_sequence(twin, {{"HSETEX", "h1", "PX", "5000", "FIELDS", "1", "a", "1"},
//                                                  {"COPY", "h1", "h2"}});   // h1, h2: two slots
//   // r.ok: the HSETEX agreed with the model, the COPY got the server's CROSSSLOT error
#pragma once

#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/cluster/slot.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/property/sequence.hpp>
#include <expirykit/state/cluster_twin.hpp>

namespace expirykit::property {

using resp::Argv;
using state::ClusterTwin;
using state::Step;
using state::Twin;

/// `cmds` without what a cluster cannot run as the model predicts, with the number left out:
/// MOVE, SWAPDB, SELECT, COPY ... DB (one database per node on Redis Cluster; valkey.io/topics/
/// cluster-spec), DBSIZE, RANDOMKEY, KEYS and SCAN (per node, not per cluster), the sequence
/// script or function whose commands name several slots (the script reaches keys through ARGV),
/// and RESTORE of a `@dump:<src>` payload from another slot than its key's.
inline std::pair<std::vector<Argv>, long> cluster_sequence(const std::vector<Argv>& cmds) {
  std::vector<Argv> out;
  long dropped = 0;
  auto slot_set = [](const std::vector<Argv>& batch) {
    std::set<int> s;
    for (const auto& c : batch)
      for (const auto& k : keys_of(c)) s.insert(cluster::slot_of(k));
    return s;
  };
  for (const auto& c : cmds) {
    const std::string u = c.empty() ? std::string() : model::upper(c[0]);
    bool drop = u == "MOVE" || u == "SWAPDB" || u == "SELECT" || u == "DBSIZE" || u == "RANDOMKEY" || u == "KEYS" ||
                u == "SCAN";
    if (u == "COPY")
      for (std::size_t i = 3; i < c.size(); ++i)
        if (model::upper(c[i]) == "DB") drop = true;
    if (u == "EVAL" || u == "FCALL")
      if (const auto batch = model::sequence_eval_commands(c)) drop = slot_set(*batch).size() > 1;
    if (u == "RESTORE" && c.size() > 3 && c[3].rfind(Twin::dump_ref, 0) == 0)
      drop = cluster::slot_of(c[3].substr(std::string(Twin::dump_ref).size())) != cluster::slot_of(c[1]);
    if (drop) ++dropped;
    else out.push_back(c);
  }
  return {std::move(out), dropped};
}

/// run_sequence() for a cluster: flushes every primary, runs `cmds` (cluster_sequence() is the
/// caller's: commands it would drop are run and may fail), blocks whole, then compares the state
/// of every primary. The report's script names the primary of every command and replays with
/// `valkey-cli -c` / `redis-cli -c`.
/// `between(i)`, when set, runs before the i-th top-level command or block (a reshard or a
/// failover in the middle of a sequence: property/cluster_property.hpp); it may throw.
inline SequenceResult run_cluster_sequence(ClusterTwin& twin, const std::vector<Argv>& cmds,
                                           const std::function<void(std::size_t)>& between = {}) {
  SequenceResult res;
  twin.flushall();
  std::string failure;
  std::set<std::string> involved;
  auto note = [&](const Step& s) {
    ++res.steps;
    if (!s.known_issue.empty()) res.known_issues[s.known_issue] = 1;
    for (auto& k : twin.client().keys_of(s.argv)) involved.insert(k);
    if (!s.ok && failure.empty()) {
      failure = "first mismatch at command " + std::to_string(res.steps) + " of " + std::to_string(cmds.size()) + ":\n" +
                s.describe() + "\n";
      res.summary = step_summary(s);
    }
  };
  for (std::size_t i = 0; i < cmds.size() && failure.empty(); ++i) {
    if (between) between(i);
    if (!cmds[i].empty() && model::upper(cmds[i][0]) == "MULTI") {
      std::vector<Argv> block{cmds[i]};
      while (++i < cmds.size()) {
        block.push_back(cmds[i]);
        const std::string u = model::upper(cmds[i][0]);
        if (u == "EXEC" || u == "DISCARD") break;
      }
      for (const auto& s : twin.run_block(block)) note(s);
    } else {
      note(twin.run(cmds[i]));
    }
  }
  std::vector<std::string> diffs;
  if (failure.empty()) diffs = twin.compare_state();
  for (const auto& [id, n] : twin.known_issues()) res.known_issues[id] = 1;
  if (failure.empty() && diffs.empty()) return res;
  res.ok = false;
  if (res.summary.empty()) res.summary = "state differs after the last command: " + diffs.front();
  std::ostringstream os;
  os << "dialect " << twin.dialect().name << ", cluster of " << twin.client().primaries().size() << " primaries\n"
     << failure;
  if (!diffs.empty()) {
    os << "state differs after the last command:\n";
    for (auto& d : diffs) os << "  " << d << "\n";
  }
  os << state::cluster_script(twin, involved);
  res.report = os.str();
  return res;
}

}  // namespace expirykit::property
