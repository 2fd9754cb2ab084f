// expirykit/property/property.hpp: the model-vs-server property over random command sequences,
// with a budget in cases and in wall-clock time, independent of any test framework.
//
//   auto r = property::check_sequences(twin, {100, 40, 20});   // sequences, max length, seconds
//   if (!r.ok) FAIL(r.report);   // first line: the differing command, both replies, seed, replay
//
// Budget. The property runs in rounds of `sequences` x EXPIRYKIT_PROP_SCALE cases (a RapidCheck
// run each, with its own seed), and keeps starting rounds while its time budget lasts: `seconds`
// x EXPIRYKIT_PROP_SCALE, or EXPIRYKIT_PROP_SECONDS when set (0: one round). The first round
// always runs whole. The first round's seed comes from RC_PARAMS="seed=N" when set (RapidCheck's
// own variable), else RapidCheck's random seed; later rounds derive theirs from it. A failure is
// shrunk within its round and reported with that round's seed and the exact command line that
// replays it: RC_PARAMS="seed=<round seed>" EXPIRYKIT_PROP_SCALE=<scale> EXPIRYKIT_PROP_SECONDS=0
// plus the server variables (env::server_assignments(), env.hpp) and the test binary and name.
// Invalid EXPIRYKIT_PROP_* values throw std::invalid_argument (config.hpp).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <expirykit/gen/commands.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/property/sequence.hpp>
#include <expirykit/triage/crash_triage.hpp>

namespace expirykit::property {

using resp::Argv;
using state::Cells;
using state::Step;
using state::Twin;

/// EXPIRYKIT_PROP_SCALE as a positive factor (default 1; config().prop_scale). Throws
/// std::invalid_argument if it is set to anything but a positive number (config()).
inline double prop_scale() { return config().prop_scale; }

/// A property's wall-clock budget in seconds: EXPIRYKIT_PROP_SECONDS when set (>= 0), else
/// `default_seconds` x prop_scale(). Throws std::invalid_argument on an invalid value.
inline double prop_seconds(double default_seconds) {
  if (const auto& v = config().prop_seconds) return *v;
  return default_seconds * prop_scale();
}

/// A RapidCheck listener that prints nothing: the report below says how to re-run (by seed);
/// RapidCheck's own "reproduce=" line at exit would not apply to this entry point.
/// It counts the shrinks RapidCheck tried and those it kept (they failed too).
struct QuietListener : rc::detail::TestListener {
  int shrinks_tried = 0, shrinks_kept = 0;
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++shrinks_tried;
    shrinks_kept += accepted ? 1 : 0;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

struct PropertyBudget {
  PropertyBudget() = default;
  PropertyBudget(int sequences_, int max_len_, double seconds_ = 0, std::string test_name_ = {})
      : sequences(sequences_), max_len(max_len_), seconds(seconds_), test_name(std::move(test_name_)) {}
  int sequences = 100;   ///< cases per round, before EXPIRYKIT_PROP_SCALE
  int max_len = 40;      ///< commands per case, at most
  double seconds = 0;    ///< wall-clock budget before EXPIRYKIT_PROP_SCALE; 0: one round
  /// The argument that selects the test running the property (e.g. catch2::current_test_name(),
  /// a Catch2 test spec), for the replay command line; empty: "<this test's name>".
  std::string test_name;
  /// After the budget: one more round (of `sequences` cases, the round seeds go on) while this
  /// returns true for the cases run so far, at most `max_extra_rounds` times. check_sequences()
  /// uses it to top up a run that has not yet reached every coverage cell.
  std::function<bool(int sequences)> more;
  int max_extra_rounds = 0;
  /// Shrink a failing case (RapidCheck). false reports the first failing case as drawn: for
  /// properties where every try is slow (a cluster failover per case takes seconds on Redis).
  bool shrink = true;
  /// The commands the case under way has sent (e.g. Twin::sent()), for a crash triage: when a
  /// case throws and a kit-spawned server has logged a crash since the property started, the
  /// property stops drawing and shrinking on the dead server and hands these commands to
  /// triage::triage_crash (fresh server per try, shortest crashing sequence, verified replay).
  /// Empty: a crash is reported as the exception it caused.
  std::function<std::vector<resp::Argv>()> sent;
};

struct PropertyResult {
  bool ok = true;
  std::uint64_t seed = 0;     ///< the first round's seed; on failure, the failing round's
  int sequences = 0;          ///< cases run in total (all rounds; shrinking not included)
  int rounds = 0;             ///< RapidCheck runs
  int extra_rounds = 0;       ///< of them, rounds after the budget (PropertyBudget::more)
  double seconds = 0;         ///< wall-clock time taken
  std::size_t commands = 0;   ///< commands sent in total (all runs, shrinking included)
  std::size_t shrunk_len = 0; ///< length of the final (shrunk) counterexample, when failed
  /// When failed and shrunk (PropertyBudget::shrink; not after a crash, whose triage replaces
  /// the shrink): the smaller cases RapidCheck tried, those it kept (they failed too: steps
  /// taken), and the wall-clock seconds from the first failure to the end of shrinking (the
  /// report's "shrunk to N command(s) in S steps (T cases tried, X s)" line).
  int shrink_tries = 0;
  std::size_t shrink_steps = 0;
  double shrink_seconds = 0;
  /// One line when failed: the first differing command with both replies (or the first state
  /// difference), the seed and the replay command line. Empty when ok.
  std::string summary;
  std::string report;         ///< empty when ok; starts with `summary`
  /// Known server issues met and excused over all cases (id -> cases), see SequenceResult.
  std::map<std::string, int> known_issues;
  /// check_sequences(): the command x field-state cells of this run's commands, shrinking
  /// included (state/coverage.hpp; format_cells(), unreached()). Empty for other properties.
  Cells cells;
  /// A server crashed during the property (PropertyBudget::sent): the triage; then `summary`
  /// names the crash and the crashing command, `report` holds the verified replay.
  std::optional<triage::CrashTriage> crash;
};

namespace detail {
/// A property's live progress on stderr, only when stderr is a terminal (a CTest or CI log stays
/// as it was): one line rewritten at most once a second, "<what>: round 2, 160 cases, 4,211
/// commands (1,650/s), 6 s of 15 s", "shrinking" once a case failed; cleared when it goes.
class LiveProgress {
 public:
  LiveProgress(std::string what, double budget_s)
      : what_(std::move(what)), budget_s_(budget_s), live_(::isatty(2) != 0),
        start_(std::chrono::steady_clock::now()), last_(start_) {}
  LiveProgress(const LiveProgress&) = delete;
  LiveProgress& operator=(const LiveProgress&) = delete;
  ~LiveProgress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }
  void update(int round, int cases, std::uint64_t commands, bool shrinking) {
    if (!live_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double t = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r\033[K%s: round %d, %d cases, %llu commands (%.0f/s), %.0f s of %.0f s%s", what_.c_str(),
                 round, cases, static_cast<unsigned long long>(commands), t > 0 ? commands / t : 0.0, t, budget_s_,
                 shrinking ? ", shrinking a failure" : "");
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  std::string what_;
  double budget_s_;
  bool live_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
};

/// The kit-spawned servers whose log holds a crash report now.
inline std::set<process::Server*> crashed_servers() {
  std::set<process::Server*> out;
  for (auto* s : process::spawned_servers())
    if (triage::CrashReport::read(s->log_path()).found) out.insert(s);
  return out;
}
}  // namespace detail

/// The shell command that re-runs one round of a property with `seed`: RC_PARAMS, the scale,
/// EXPIRYKIT_PROP_SECONDS=0, the server variables set now, this binary and `test_name`.
inline std::string replay_command(std::uint64_t seed, const std::string& test_name) {
  std::ostringstream os;
  os << "RC_PARAMS=\"seed=" << seed << "\" EXPIRYKIT_PROP_SCALE=" << prop_scale() << " EXPIRYKIT_PROP_SECONDS=0";
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  os << " " << env::server_assignments() << (ec ? std::string("<test binary>") : env::shell_quote(exe.string())) << " "
     << (test_name.empty() ? std::string("\"<this test's name>\"") : env::shell_quote(test_name));
  return os.str();
}

/// Runs `one_case` (a callable that draws its own case with `*gen` and runs it, returning a
/// SequenceResult) in rounds as the file comment says, shrinking a failure; `what` names the
/// property in the report. The driver of check_sequences, the durability property
/// (property/durable_property.hpp) and the timing property. Throws std::invalid_argument on an
/// invalid EXPIRYKIT_PROP_* value; an exception from `one_case` is a failing case.
template <class OneCase>
PropertyResult check_cases(const std::string& what, PropertyBudget budget, OneCase one_case) {
  PropertyResult res;
  const auto start = std::chrono::steady_clock::now();
  const double budget_s = prop_seconds(budget.seconds);
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const std::uint64_t base_seed = params.seed;
  res.seed = base_seed;
  int per_round = static_cast<int>(budget.sequences * prop_scale());
  if (per_round < 1) per_round = 1;
  params.maxSuccess = per_round;
  params.disableShrinking = params.disableShrinking || !budget.shrink;
  std::string last_report, last_summary;
  std::size_t last_len = 0;
  rc::detail::TestMetadata meta;
  meta.id = meta.description = what;
  QuietListener quiet;
  detail::LiveProgress progress(what, budget_s);
  int cases = 0;
  bool failed_once = false;
  double failed_at = 0;  // elapsed() at the first failing case
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Crash triage (PropertyBudget::sent): servers that had crashed before do not count.
  const std::set<process::Server*> crashed_before = budget.sent ? detail::crashed_servers() : std::set<process::Server*>{};
  process::Server* crashed = nullptr;
  std::vector<resp::Argv> crash_cmds;
  for (int round = 0;; ++round) {
    // Round seeds after the first: splitmix64 of the base seed and the round number.
    std::uint64_t z = base_seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(round);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    params.seed = round == 0 ? base_seed : z ^ (z >> 31);
    ++res.rounds;
    auto result = rc::detail::checkTestable(
        [&] {
          RC_ASSERT(crashed == nullptr);  // after a crash: no more tries on the dead server
          SequenceResult out;
          try {
            out = one_case();
          } catch (const std::exception& e) {  // a server that died, a failed save...: a failure with its reason
            out.ok = false;
            out.summary = std::string("the case threw: ") + e.what();
            out.report = out.summary + "\n";
            if (budget.sent) {
              // The connection breaks when the crashed server exits, after its report; a short
              // look again covers a report still being written.
              for (int i = 0; i < 10 && !crashed; ++i) {
                for (auto* s : detail::crashed_servers())
                  if (!crashed_before.count(s)) crashed = s;
                if (!crashed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
              }
              if (crashed) crash_cmds = budget.sent();
            }
          }
          res.commands += out.steps;
          if (!failed_once && !out.ok) failed_at = elapsed();
          failed_once = failed_once || !out.ok;
          progress.update(round + 1, ++cases, res.commands, failed_once);
          for (const auto& [id, n] : out.known_issues) res.known_issues[id] += n;
          if (!out.ok) {
            last_report = out.report;
            last_summary = out.summary;
            last_len = out.steps;
          }
          RC_ASSERT(out.ok);
        },
        meta, params, quiet);
    if (result.template is<rc::detail::SuccessResult>()) {
      res.sequences += per_round;
      if (elapsed() < budget_s) continue;
      if (budget.more && res.extra_rounds < budget.max_extra_rounds && budget.more(res.sequences)) {
        ++res.extra_rounds;
        continue;
      }
      break;
    }
    res.ok = false;
    res.seed = params.seed;
    res.shrunk_len = last_len;
    const std::string replay = replay_command(params.seed, budget.test_name);
    std::ostringstream os;
    if (crashed) {
      // The triage replaces RapidCheck's shrink: every try on a fresh server.
      try {
        res.crash = triage::triage_crash(crashed->options(), crash_cmds, crashed->log_path());
        const std::string msg = res.crash->message();
        res.shrunk_len = res.crash->minimal.size();
        res.summary = msg.substr(0, msg.find('\n')) + " | seed " + std::to_string(params.seed) + " | replay: " + replay;
        os << res.summary << "\n" << "FAILED: " << what << ": round " << round + 1 << " (seed " << params.seed
           << "): the server " << crashed->address() << " crashed; re-run: " << replay << "\n"
           << msg;
      } catch (const std::exception& e) {
        res.summary = "a server crashed and its triage failed: " + std::string(e.what()) + " | seed " +
                      std::to_string(params.seed) + " | replay: " + replay;
        os << res.summary << "\n" << last_report;
      }
      res.report = os.str();
      break;
    }
    res.summary = (last_summary.empty() ? std::string("property failed") : last_summary) + " | seed " +
                  std::to_string(params.seed) + " | replay: " + replay;
    os << res.summary << "\n"
       << "FAILED: " << what << ": round " << round + 1 << " (seed " << params.seed << ") of " << per_round << " cases of up to "
       << budget.max_len << " commands\nre-run: " << replay << "\n";
    if (result.template is<rc::detail::FailureResult>()) {
      const auto& f = result.template get<rc::detail::FailureResult>();
      res.sequences += static_cast<int>(f.numSuccess) + 1;
      os << "failed after " << res.sequences - 1 << " passing cases; ";
      if (params.disableShrinking) {
        os << "not shrunk: " << last_len << " command(s)\n";
      } else {
        res.shrink_tries = quiet.shrinks_tried;
        res.shrink_steps = static_cast<std::size_t>(quiet.shrinks_kept);
        res.shrink_seconds = elapsed() - failed_at;
        char took[32];
        std::snprintf(took, sizeof took, "%.1f s", res.shrink_seconds);
        os << "shrunk to " << last_len << " command(s) in " << res.shrink_steps << " steps (" << res.shrink_tries
           << " cases tried, " << took << ")\n";
      }
    } else {
      rc::detail::printResultMessage(result, os);
      os << "\n";
    }
    os << last_report;
    res.report = os.str();
    break;
  }
  res.seconds = elapsed();
  return res;
}

/// notify-keyspace-events values a property draws from when the twin observes events: every
/// class on both channel families most of the time, and single classes on one family so that a
/// class assignment (effects.hpp) is checked too.
inline const std::vector<std::string>& event_flag_choices() {
  static const std::vector<std::string> v = {"KEA", "KEA", "KEA", "Kh", "Eh", "Kx", "Eg", "K$g", "Exg"};
  return v;
}

/// The protocols the main property runs its sequences on, each drawn per sequence:
/// EXPIRYKIT_PROTOCOL `2`, `3` or `both` ({2}, {3}, {2, 3}); unset: both when this build's hiredis
/// handles RESP3 (resp::resp3_supported), else 2. Throws std::invalid_argument for `3` or `both`
/// in a build with hiredis 0.14.
inline std::vector<int> property_protocols() {
  const auto& v = config().protocol;
  if (!v) return resp::resp3_supported ? std::vector<int>{2, 3} : std::vector<int>{2};
  if (*v != "2" && !resp::resp3_supported)
    throw std::invalid_argument("EXPIRYKIT_PROTOCOL=" + *v + ": RESP3 needs a build with hiredis 1.1 or later (docs/guide/resp3.md)");
  return *v == "2" ? std::vector<int>{2} : *v == "3" ? std::vector<int>{3} : std::vector<int>{2, 3};
}

/// Throws std::invalid_argument naming `what` unless every protocol of `protocols` is 2, or 3 in
/// a build whose hiredis handles RESP3 (resp::resp3_supported): the check of a property's own
/// protocol list (DurableOptions::protocols, check_cluster_sequences' `protocols`).
inline void check_protocols(const std::vector<int>& protocols, const std::string& what) {
  for (const int p : protocols)
    if (p != 2 && (p != 3 || !resp::resp3_supported))
      throw std::invalid_argument(what + ": " + std::to_string(p) +
                                  (p == 3 ? " needs a build with hiredis 1.1 or later" : " (2 or 3)"));
}

/// The protocol of one case, drawn inside a property from `protocols` (not empty): the only one
/// when there is one (nothing drawn), else rc::gen::elementOf (shrinks towards the first).
inline int draw_protocol(const std::vector<int>& protocols) {
  return protocols.size() == 1 ? protocols.front() : *rc::gen::elementOf(protocols);
}

/// The main property: gen::property_sequence on the twin, replies (on RESP2 or RESP3:
/// property_protocols()), state (values, deadlines, encodings) and, when the twin observes them (Twin::observe_events / observe_counters), the
/// events of every command and the INFO counters after each sequence; the result carries the
/// run's coverage cells (state/coverage.hpp). Budget and replay: file comment.
inline PropertyResult check_sequences(Twin& twin, PropertyBudget budget = {}) {
  const model::Dialect d = twin.dialect();
  const Cells before = twin.cells();
  // A run of the reach-checked size that missed a cell gets up to 5 more rounds to reach it
  // (rare cells are met a few times per 100 sequences): a miss after them is the generators'.
  budget.max_extra_rounds = 5;
  budget.more = [&](int sequences) {
    return sequences >= state::min_sequences_for_reach && !state::unreached(twin.cells().since(before), d).empty();
  };
  if (!budget.sent) budget.sent = [&twin] { return twin.sent(); };
  const auto sequence_gen = gen::property_sequence(d, budget.max_len);  // made once, drawn in each case
  const std::vector<int> protocols = property_protocols();
  auto res = check_cases("model and " + d.name + " agree on random sequences", budget, [&] {
    SequenceOptions opt;
    if (twin.observing_events()) opt.event_flags = *rc::gen::elementOf(event_flag_choices());
    // RESP2 or RESP3 per sequence (EXPIRYKIT_PROTOCOL; shrinks towards RESP2).
    opt.protocol = draw_protocol(protocols);
    twin.use_protocol(opt.protocol);
    // The sequence's FLUSHALL & co. run on the server while its commands are drawn here
    // (run_sequence's begin_sequence reads their replies; bench/RESULTS.md 9.6).
    // (A draw RapidCheck discards leaves it unread: the twin's next use completes it.)
    twin.send_begin_sequence(opt.event_flags);
    const auto cmds = *sequence_gen;
    return run_sequence(twin, cmds, opt);
  });
  res.cells = twin.cells().since(before);
  return res;
}

}  // namespace expirykit::property
