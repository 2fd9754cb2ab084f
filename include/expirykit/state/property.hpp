// expirykit/state/property.hpp: the model-vs-server property over random command sequences,
// with a budget that scales, independent of any test framework.
//
//   auto r = state::check_sequences(twin, {.sequences = 100, .max_len = 40});
//   if (!r.ok) FAIL(r.report);   // seed, shrunk script with both replies, model state
//
// Budget: `sequences` x EXPIRYKIT_PROP_SCALE (a positive number, default 1). The seed comes
// from RC_PARAMS="seed=N" when set (RapidCheck's own variable), else RapidCheck's random seed;
// it is printed in the report, and re-running with RC_PARAMS="seed=N" and the same scale
// replays the same sequences and shrinks to the same script.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <rapidcheck.h>

#include <expirykit/gen/commands.hpp>
#include <expirykit/state/sequence.hpp>

namespace expirykit::state {

/// EXPIRYKIT_PROP_SCALE as a positive factor (default 1; invalid values count as 1).
inline double prop_scale() {
  const char* s = std::getenv("EXPIRYKIT_PROP_SCALE");
  if (!s || !*s) return 1.0;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  return (end && *end == '\0' && v > 0) ? v : 1.0;
}

/// A RapidCheck listener that prints nothing: the report below says how to re-run (by seed);
/// RapidCheck's own "reproduce=" line at exit would not apply to this entry point.
struct QuietListener : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

struct PropertyBudget {
  int sequences = 100;  ///< before scaling
  int max_len = 40;
};

struct PropertyResult {
  bool ok = true;
  std::uint64_t seed = 0;
  int sequences = 0;          ///< the scaled budget
  std::size_t commands = 0;   ///< commands sent in total (all runs, shrinking included)
  std::size_t shrunk_len = 0; ///< length of the final (shrunk) counterexample, when failed
  std::string report;         ///< empty when ok
  /// Known server issues met and excused over all cases (id -> cases), see SequenceResult.
  std::map<std::string, int> known_issues;
};

/// Runs `one_case` (a RapidCheck testable that draws its own case with `*gen` and runs it,
/// returning the outcome) `budget.sequences` x EXPIRYKIT_PROP_SCALE times, shrinking a failure;
/// `what` names the property in the report. The driver of check_sequences and of the durability
/// property (state/durable_property.hpp).
template <class OneCase>
PropertyResult check_cases(const std::string& what, PropertyBudget budget, OneCase one_case) {
  PropertyResult res;
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  res.seed = params.seed;
  res.sequences = static_cast<int>(budget.sequences * prop_scale());
  if (res.sequences < 1) res.sequences = 1;
  params.maxSuccess = res.sequences;
  std::string last_report;
  std::size_t last_len = 0;
  rc::detail::TestMetadata meta;
  meta.id = meta.description = what;
  QuietListener quiet;
  auto result = rc::detail::checkTestable(
      [&] {
        SequenceResult out;
        try {
          out = one_case();
        } catch (const std::exception& e) {  // a server that died, a failed save...: a failure with its reason
          out.ok = false;
          out.report = std::string("the case threw: ") + e.what() + "\n";
        }
        res.commands += out.steps;
        for (const auto& [id, n] : out.known_issues) res.known_issues[id] += n;
        if (!out.ok) {
          last_report = out.report;
          last_len = out.steps;
        }
        RC_ASSERT(out.ok);
      },
      meta, params, quiet);
  if (result.template is<rc::detail::SuccessResult>()) return res;
  res.ok = false;
  res.shrunk_len = last_len;
  std::ostringstream os;
  const char* server = std::getenv("EXPIRYKIT_SERVER");
  const char* addr = std::getenv("EXPIRYKIT_SERVER_ADDR");
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  os << "RapidCheck seed " << res.seed << ", budget " << res.sequences << " sequences of up to " << budget.max_len
     << " commands\nre-run: RC_PARAMS=\"seed=" << res.seed << "\" EXPIRYKIT_PROP_SCALE=" << prop_scale()
     << (server && *server ? std::string(" EXPIRYKIT_SERVER=") + server : "")
     << (addr && *addr ? std::string(" EXPIRYKIT_SERVER_ADDR=") + addr : "") << " " << (ec ? "<test binary>" : exe.string())
     << " \"<this test's name>\"\n";
  if (result.template is<rc::detail::FailureResult>()) {
    const auto& f = result.template get<rc::detail::FailureResult>();
    os << "failed after " << f.numSuccess << " passing sequences; shrunk to " << last_len << " command(s)\n";
  } else {
    rc::detail::printResultMessage(result, os);
    os << "\n";
  }
  os << last_report;
  res.report = os.str();
  return res;
}

/// notify-keyspace-events values a property draws from when the twin observes events: every
/// class on both channel families most of the time, and single classes on one family so that a
/// class assignment (effects.hpp) is checked too.
inline const std::vector<std::string>& event_flag_choices() {
  static const std::vector<std::string> v = {"KEA", "KEA", "KEA", "Kh", "Eh", "Kx", "Eg", "K$g", "Exg"};
  return v;
}

/// The main property: gen::sequence on the twin, replies, state (values, deadlines, encodings)
/// and, when the twin observes them (Twin::observe_events / observe_counters), the events of
/// every command and the INFO counters after each sequence.
inline PropertyResult check_sequences(Twin& twin, PropertyBudget budget = {}) {
  const model::Dialect d = twin.dialect();
  return check_cases("model and " + d.name + " agree on random sequences", budget, [&] {
    if (twin.observing_events()) twin.set_event_flags(*rc::gen::elementOf(event_flag_choices()));
    const auto cmds = *gen::sequence(d, budget.max_len);
    return run_sequence(twin, cmds);
  });
}

}  // namespace expirykit::state
