// expirykit/state/detail/pipeline.hpp (internal to state::Twin): a run of commands sent to the
// server in one round trip (Twin::run_all, state/detail/run_all.hpp), and how long such a run
// may be.
//
// send_chunk() sends, for each command, what state/detail/send.hpp sends for one: [begin markers]
// TIME command TIME [end markers], all in one pipeline, and returns one Sent per command: the
// server ran each command at one millisecond of its own TIME window, and the listeners' messages
// are cut per command by its markers, as when the commands go one by one.
//
// chunk_end() decides where a run ends, from a speculative copy of the model (the commands applied
// in order at the last server time known), so that nothing a command's check needs is lost:
//  - a run never holds what must be decided before it is sent: MULTI ... EXEC (run one by one:
//    queued commands get no TIME), `RESTORE ... @dump:` (its payload is read first), a command a
//    crash row says would kill the server on the model state before it (looked at with the
//    speculative state at the last known server time and one second later);
//  - a run ends right after a command whose check reads the server as it is right after the
//    command: a command outside the model (its keys are re-read, the counters re-based), and a
//    command a known issue of the server might settle from the state (its row's defect replayed
//    gives another model state or other counters than the specification: state/known_divergence.hpp).
// What is left is a deadline a relative TTL set at the server's own millisecond: when that
// command's window spans more than one millisecond and it is not the last of the run, its
// deadlines cannot be read back right after it (state/detail/observe_deadlines.hpp); run_all
// resolves it from the run's later observations and the state after the run instead.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/send.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// Sends `mcs` (none a transaction command, none inside a transaction) on `c` in one pipeline,
/// marker numbers from ++seq on; one Sent per command, in order. Throws like resp::Client::pipeline.
inline std::vector<Sent> send_chunk(resp::Client& c, Listeners& listeners, uint64_t& seq,
                                    const std::vector<ModelCommand>& mcs) {
  using server::time_ms;
  std::vector<Argv> cmds;
  std::vector<std::size_t> at;
  std::vector<std::string> ns;
  for (const auto& mc : mcs) {
    ns.push_back(std::to_string(++seq));
    const auto pre = listeners.begin_markers(ns.back());
    cmds.insert(cmds.end(), pre.begin(), pre.end());
    at.push_back(cmds.size());
    cmds.insert(cmds.end(), {{"TIME"}, mc.argv, {"TIME"}});
    const auto post = listeners.end_markers(ns.back());
    cmds.insert(cmds.end(), post.begin(), post.end());
  }
  const auto r = c.pipeline(cmds);
  std::vector<Sent> out(mcs.size());
  for (std::size_t i = 0; i < mcs.size(); ++i) {
    out[i].before_ms = time_ms(r[at[i]]);
    out[i].reply = r[at[i] + 1];
    out[i].after_ms = time_ms(r[at[i] + 2]);
    if (listeners.any()) listeners.read_begin(ns[i]);
    listeners.read_end(ns[i], true, out[i].events, out[i].invalidations);
  }
  return out;
}

/// Whether `a` can go in a pipelined run at all (see the file comment).
inline bool pipelinable(const Argv& a, const char* dump_ref) {
  if (a.empty()) return false;
  const std::string u = model::upper(a[0]);
  if (u == "MULTI" || u == "EXEC" || u == "DISCARD" || u == "WATCH" || u == "UNWATCH") return false;
  if (u == "RESTORE" && a.size() > 3 && a[3].rfind(dump_ref, 0) == 0) return false;
  return true;
}

/// Where a pipelined run of `cmds` that starts at `i` ends (exclusive): i when cmds[i] must go
/// alone, else at most i + max_len (see the file comment). `ks` is the twin's model now, `d` its
/// dialect, `o` its options (the server under test and the crash servers), `now_ms` the last
/// server time known (Unix ms), `counters` whether the INFO counters are observed.
inline std::size_t chunk_end(const std::vector<Argv>& cmds, std::size_t i, const model::Keyspace& ks,
                             const model::Dialect& d, const TwinOptions& o, int64_t now_ms, bool counters,
                             const char* dump_ref, std::size_t max_len) {
  model::Keyspace spec = ks;
  model::TrackingModel no_tracking;
  Step scratch;
  std::size_t j = i;
  for (; j < cmds.size() && j < i + max_len; ++j) {
    const Argv& a = cmds[j];
    if (!pipelinable(a, dump_ref)) break;
    if (crash_row(o.server, o.crash_servers, spec, a, now_ms) || crash_row(o.server, o.crash_servers, spec, a, now_ms + 1000))
      break;
    ModelCommand mc = model_command(a);
    plan_batch(mc, std::nullopt);
    const model::Keyspace before = spec;
    try {
      run_model(spec, d, mc, now_ms, false, no_tracking, scratch);
    } catch (const model::Unmodelled&) {
      return j + 1;  // its keys are re-read right after it
    }
    if (!o.server) continue;
    const std::vector<Argv> batch = mc.batch ? *mc.batch : std::vector<Argv>{};
    for (const auto* k : known_issues_for_step(*o.server, a, batch)) {
      if (!k->reproduce.any()) continue;  // a matcher row settles from the step's own observations
      for (const int64_t at : {now_ms, now_ms + 1000}) {
        model::Keyspace spec_at = before, defect_at = before;
        try {
          run_model(spec_at, d, mc, at, false, no_tracking, scratch);
          run_model(defect_at, with_defect(d, *k), mc, at, false, no_tracking, scratch);
        } catch (const model::Unmodelled&) {
          return j + 1;
        }
        const bool counters_differ = counters && !(spec_at.counters() == defect_at.counters());
        if (!differing_keys(spec_at, defect_at).empty() || counters_differ) return j + 1;  // settled from the state
      }
    }
  }
  return j;
}

}  // namespace expirykit::state::detail
