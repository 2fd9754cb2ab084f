// The main property: random command sequences give the same replies and the same final state
// on the live server and in the model (state::Twin, model::Dialect picked from the server's
// identity), with the keyspace notifications and the client-tracking invalidations of every command (notify-keyspace-events drawn per
// sequence: all classes or single ones), OBJECT ENCODING of every hash and the INFO counters
// checked too. Budget (property/property.hpp): rounds of 100 sequences of up to 40 commands while
// 15 s last, both times EXPIRYKIT_PROP_SCALE (or EXPIRYKIT_PROP_SECONDS). On a failure the first
// line names the first differing command with both replies, the seed and the command line that
// replays it; then the shrunk sequence as a valkey-cli script with the server's and the model's
// reply per line, and the model state of the keys involved.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/property/property.hpp>

using namespace expirykit::catch2;
using expirykit::property::check_sequences;
using expirykit::property::PropertyBudget;

TEST_CASE_METHOD(TwinFixture, "Random sequences: server and model agree", "[properties]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  t.observe_tracking();
  auto r = check_sequences(t, PropertyBudget{100, 40, 15, current_test_name()});
  std::string known;
  for (const auto& [id, n] : r.known_issues) known += " " + id + " (" + std::to_string(n) + " cases)";
  UNSCOPED_INFO(r.sequences << " sequences in " << r.rounds << " round(s) (" << r.extra_rounds
                            << " after the budget to reach every coverage cell), " << r.commands << " commands in " << r.seconds
                            << " s (" << static_cast<long>(static_cast<double>(r.commands) / r.seconds)
                            << " model-checked commands/s), seed " << r.seed
                            << (known.empty() ? "" : "; known server issues met and excused:" + known));
  // Coverage (state/coverage.hpp): the command x field-state table of this run. WARN puts it in
  // the console log of a passing run too (ci/conformance keeps that log and discards stdout).
  WARN("coverage of " << r.sequences << " sequences (" << r.commands << " commands)\n"
                     << expirykit::state::format_cells(r.cells, t.dialect()));
  if (!r.ok) FAIL(r.report);
  // Every cell the generators claim to reach was reached (in a run of at least
  // state::min_sequences_for_reach sequences; the default budget runs more).
  const std::string missed = expirykit::state::missed_cells(r.cells, t.dialect(), r.sequences);
  INFO(missed);
  CHECK(missed.empty());
  CHECK(r.commands > 0);
}

