// expirykit/property/sequence.hpp: run a command sequence on the live server and the model, check
// every reply and then the whole state; on failure, a report to act on.
//
//   auto out = property::run_sequence(twin, cmds);     // FLUSHALL SYNC first, model reset
//   RC_ASSERT(out.ok) / if (!out.ok) FAIL(out.report)
//
// The report holds: the first mismatching command with both replies, the whole sequence as a
// script that replays with valkey-cli / redis-cli (each line followed by "#   server: ..." and
// "#   model: ..." comments), the model state of the keys involved, and the full-state
// differences. A command the model does not cover (model::Unmodelled) runs on the server only and
// its keys are re-read into the model (Twin::Options::adopt_unmodelled); Twin::coverage() counts it.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/state/history.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::property {

using resp::Argv;
using state::Step;
using state::Twin;

struct SequenceResult {
  bool ok = true;
  std::size_t steps = 0;  ///< commands run
  /// One line when not ok: the first differing command with the server's and the model's
  /// replies (or events / invalidations), or the first state difference.
  std::string summary;
  std::string report;     ///< empty when ok
  /// Known server issues (known_issues/table.hpp ids) the case met and excused, with counts.
  std::map<std::string, int> known_issues;
};

struct SequenceOptions {
  bool full_state_check = true;  ///< compare every key after the last command
  bool stop_at_first = true;     ///< stop checking at the first mismatch
  /// Send the commands in pipelined runs (Twin::run_all); false: one round trip each (Twin::run).
  bool pipelined = true;
  /// When the twin observes events and this is not empty: notify-keyspace-events for this
  /// sequence, set with its FLUSHALL (Twin::begin_sequence).
  std::string event_flags;
  /// The protocol the sequence runs on (2 or 3: Twin::use_protocol; 3 needs hiredis 1.1 or later);
  /// 0 leaves the twin's as it is.
  int protocol = 0;
};

/// The keys a command names (argv[1], and argv[2] for RENAME/COPY; all args of DEL/UNLINK/EXISTS;
/// the numkeys keys of EVAL/FCALL; none for DEBUG and other keyless commands): the keys whose
/// model state a failure report shows.
inline std::vector<std::string> keys_of(const Argv& a) {
  std::vector<std::string> k;
  if (a.size() < 2) return k;
  const std::string u = model::upper(a[0]);
  // No key: the stale set-up's DEBUG pair, whole-keyspace commands, a transaction's brackets.
  for (const char* keyless : {"DEBUG", "FLUSHALL", "FLUSHDB", "SWAPDB", "DBSIZE", "MULTI", "EXEC", "DISCARD", "TIME", "PING"})
    if (u == keyless) return k;
  if (u == "DEL" || u == "UNLINK" || u == "EXISTS") return {a.begin() + 1, a.end()};
  if (u == "EVAL" || u == "EVALSHA" || u == "FCALL") {  // script numkeys key...
    long long n = 0;
    if (a.size() > 2 && model::parse_ll(a[2], n) && n > 0)
      for (std::size_t i = 3; i < a.size() && i < 3 + static_cast<std::size_t>(n); ++i) k.push_back(a[i]);
    return k;
  }
  k.push_back(a[1]);
  if ((u == "RENAME" || u == "COPY") && a.size() > 2) k.push_back(a[2]);
  return k;
}

/// A failed step on one line: `<command> -> server <reply>, model <reply>`, or the events /
/// tracking difference when the replies agree.
inline std::string step_summary(const Step& s) {
  std::string out = resp::cli_line(s.argv) + " -> server " + Twin::oneline(s.server) + ", model " + state::model_line(s);
  if (s.server_events && !s.events_diff.empty()) out += "; events differ: " + s.events_diff;
  if (s.server_invalidations && !s.tracking_diff.empty()) out += "; tracking differs: " + s.tracking_diff;
  if (!s.resp3_diff.empty()) out += "; " + s.resp3_diff;
  return out;
}

inline SequenceResult run_sequence(Twin& twin, const std::vector<Argv>& cmds, SequenceOptions opt = {}) {
  SequenceResult res;
  if (opt.protocol) twin.use_protocol(opt.protocol);
  twin.prepare_stale_templates(cmds);  // outside what the sequence is checked on
  twin.begin_sequence(opt.event_flags);  // FLUSHALL (or FLUSHDB), the flags, the counters' base: one round trip
  const std::size_t first = 0;
  std::string failure;
  // Sent in pipelined runs (Twin::run_all: state/detail/run_all.hpp), checked step by step; the
  // compare_all() at the end sent as soon as the last run's replies are in (compare_all_follows()).
  if (opt.pipelined && opt.full_state_check) twin.compare_all_follows();
  const std::vector<Step> steps = opt.pipelined ? twin.run_all(cmds, opt.stop_at_first) : std::vector<Step>{};
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    if (opt.pipelined && i >= steps.size()) break;
    Step unpipelined;
    const Step& s = opt.pipelined ? steps[i] : (unpipelined = twin.run(cmds[i]));
    ++res.steps;
    if (!s.known_issue.empty()) res.known_issues[s.known_issue] = 1;
    if (!s.ok && failure.empty()) {
      failure = "first mismatch at command " + std::to_string(res.steps) + " of " + std::to_string(cmds.size()) +
                ":\n" + s.describe() + "\n";
      res.summary = step_summary(s);
      if (opt.stop_at_first) break;
    }
  }
  const std::size_t ran = res.steps;  // of cmds (the DISCARD below is not one of them)
  if (twin.in_transaction()) {  // a shrunk case may lose its EXEC
    Step s = twin.run(Argv{"DISCARD"});
    ++res.steps;
    if (!s.ok && failure.empty()) {
      failure = "DISCARD at the end:\n" + s.describe() + "\n";
      res.summary = step_summary(s);
    }
  }
  std::vector<std::string> diffs;
  if (failure.empty() && opt.full_state_check) {
    // Nothing outside the commands (or as the model says), the state, the counters: two round trips.
    diffs = twin.compare_all();
  }
  if (failure.empty() && diffs.empty()) return res;
  res.ok = false;
  if (res.summary.empty()) res.summary = "state differs after the last command: " + diffs.front();
  std::ostringstream os;
  os << "dialect " << twin.dialect().name << "\n";
  if (twin.observing_events()) os << "CONFIG SET notify-keyspace-events " << twin.event_flags() << "\n";
  os << failure;
  if (!diffs.empty()) {
    os << "state differs after the last command:\n";
    for (auto& d : diffs) os << "  " << d << "\n";
  }
  os << "script (replay with valkey-cli / redis-cli; comments show each reply):\n";
  const auto& h = twin.history();
  int protocol = 2;
  for (std::size_t i = first; i < h.size(); ++i) {
    const auto& s = h[i];
    os << state::protocol_switch(s, protocol) << state::script_entry(s);
    if (s.server_events && !s.events_diff.empty())
      os << "#   events: " << s.events_diff << "\n";
  }
  std::set<std::string> involved;  // the keys of the commands run, for the report only
  for (std::size_t i = 0; i < ran && i < cmds.size(); ++i)
    for (auto& k : keys_of(cmds[i])) involved.insert(k);
  int64_t now = 0;  // the last TIME window read (a held-back step read none)
  for (auto it = h.rbegin(); it != h.rend() && !now; ++it) now = it->after_ms;
  os << "model state of the keys involved (at server time " << now << "):\n";
  for (const auto& k : involved) os << "  " << twin.model().describe(k, now) << "\n";
  res.report = os.str();
  return res;
}

}  // namespace expirykit::property
