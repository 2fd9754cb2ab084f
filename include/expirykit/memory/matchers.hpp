// expirykit/memory/matchers.hpp: memory baselines in Catch2 v3 tests.
//
//   auto m = memory::Probe().run(memory::hash1_hsetex());
//   CHECK_THAT(m, memory::WithinBaseline(memory::Baseline::load(path), path.string()));
//   // or, with update mode and skips handled:
//   memory::check_against_baseline(m, memory::baseline_dir() / (m.line + ".json"));
//
// A failure prints the measurement (layout, server, bytes per item with spread, encodings)
// and the verdict (baseline figure and file, difference, allowed growth, what to do).
#pragma once

#include <catch2/catch_test_macros.hpp>
#include <catch2/catch_tostring.hpp>
#include <catch2/matchers/catch_matchers_templated.hpp>

#include <filesystem>
#include <iostream>
#include <optional>
#include <source_location>
#include <sstream>
#include <string>
#include <utility>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/memory/baseline.hpp>
#include <expirykit/memory/guard.hpp>
#include <expirykit/memory/probe.hpp>

template <>
struct Catch::StringMaker<expirykit::memory::Measurement> {
  static std::string convert(const expirykit::memory::Measurement& m) { return m.summary(); }
};

namespace expirykit::memory {

/// Matches a Measurement whose median is within the baseline's tolerance (an improvement
/// matches too; a layout missing from the baseline does not).
struct WithinBaselineMatcher : Catch::Matchers::MatcherGenericBase {
  WithinBaselineMatcher(Baseline b, std::string origin) : baseline(std::move(b)), origin(std::move(origin)) {}
  bool match(const Measurement& m) const {
    last = compare(m, baseline, origin);
    return passes(last);
  }
  /// "is within the memory baseline (verdict: REGRESSED ...)": what is asserted, then the verdict,
  /// as Catch2's own matchers read ("... equals ..." on a failure too).
  std::string describe() const override { return "is within the memory baseline (verdict: " + last.text + ")"; }
  /// PASSED or IMPROVED: what the matcher accepts.
  static bool passes(const Verdict& v) { return v.status == Verdict::Status::passed || v.status == Verdict::Status::improved; }
  Baseline baseline;
  std::string origin;
  mutable Verdict last;
};
inline WithinBaselineMatcher WithinBaseline(Baseline b, std::string origin = "baseline") {
  return {std::move(b), std::move(origin)};
}

/// The suite's assertion. In update mode (EXPIRYKIT_UPDATE_BASELINES=1) records `m` into
/// `path` and passes with a WARN. Otherwise it gates `m` against the baseline choose_baseline()
/// picks: `path` itself, or, when the line has no file yet (a new release), the newest older
/// line of the same flavor beside it, with "; CHANGED since <that line>: ..." and the delta
/// (bytes per item, encodings), gated like the line's own baseline would be, and the advice to
/// record the line's own (a new-user trial: a +20 % regression on redis-8.6 passed against
/// redis-8.0's figure, which 8.6 had undercut by 14 %). With no file at
/// all, or no entry for the layout, the check FAILs (a gate that switched itself off would pass
/// every regression), saying how to record one. Prints the verdict line to stdout
/// ("[memory] ..."). A failure also names the caller's file and line (`where`). Returns the
/// Verdict. Throws BaselineError if a file exists but cannot be read.
inline Verdict check_against_baseline(const Measurement& m, const std::filesystem::path& path,
                                      std::source_location where = std::source_location::current()) {
  const std::string test = catch2::current_test_name();  // for a whole rerun command line
  INFO(catch2::detail::called_at(where));  // Catch2 reports this header's line (a new-user trial)
  if (update_requested()) {
    update_file(path, m);
    std::cout << "[memory] RECORDED " << m.summary() << " into " << describe_path(path) << std::endl;
    WARN("baseline updated (EXPIRYKIT_UPDATE_BASELINES=1): " << m.summary() << " -> " << describe_path(path));
    return {Verdict::Status::passed, 0, 0, 0, "recorded"};
  }
  const BaselineChoice choice = choose_baseline(path);
  auto b = choice.path.empty() ? std::optional<Baseline>{} : Baseline::try_load(choice.path);
  if (!b || !b->find(m.layout)) {
    const std::string why = !b ? "no memory baseline file " + describe_path(path) + " (nor one of an older " +
                                     path.stem().string().substr(0, path.stem().string().rfind('-')) + " line beside it)"
                               : describe_path(choice.path) + " has no entry for " + m.layout;
    std::cout << "[memory] NO BASELINE " << m.summary() << " (" << why << ")" << std::endl;
    FAIL("NO BASELINE: " << why << " (server line " << m.line << "); measured " << m.summary()
                         << ". Record it on purpose: " << update_hint(m.line, test));
  }
  Verdict v = compare(m, *b, choice.path.string(), test);
  if (!choice.own) {
    // A new release against the one before it: what changed, as data.
    const Entry& e = *b->find(m.layout);
    std::ostringstream t;
    t << "; CHANGED since " << choice.line << ": " << (b->server.empty() ? choice.line : b->server) << " "
      << fmt1(e.bytes_per_item) << " B/" << e.unit << " (" << e.encoding() << ") -> " << m.server << " "
      << fmt1(m.stats.median) << " B/" << m.unit << " (" << m.encoding() << "), " << (v.delta >= 0 ? "+" : "")
      << fmt1(v.delta) << " B (" << (v.delta >= 0 ? "+" : "") << fmt1(v.delta_pct) << "%); no " << m.line
      << " baseline yet, gated against " << choice.line << "'s, which cannot see a regression on " << m.line
      << " smaller than that difference: record " << m.line << "'s own now";
    // A verdict that already says how to record (regressed, improved, incomparable) says it once.
    const bool hinted = v.status != Verdict::Status::passed && v.status != Verdict::Status::no_baseline;
    t << (hinted ? std::string(", as above.") : " (" + update_hint(m.line, test) + ").");
    while (!v.text.empty() && v.text.back() == '.') v.text.pop_back();  // "...first." + "; CHANGED ..."
    v.text += t.str();
  }
  std::cout << "[memory] " << v.text << std::endl;
  CHECK_THAT(m, WithinBaseline(*b, choice.path.string()));  // its description carries the verdict
  // Worth reading on a pass too: a gain to record, or a new line gated by an older line's baseline
  // (the verdict listener writes a passing test's warnings as its detail: catch2/verdict.hpp).
  if (v.status == Verdict::Status::improved || !choice.own) WARN(v.text);
  return v;
}

/// The suite's encoding guard: PASS when compact, KNOWN ISSUE (a SKIP with "KNOWN ISSUE ...":
/// reported, not failed) on a known issue of the server (known_issues/table.hpp), FIXED (a SKIP
/// with "FIXED ...") when a server in a known issue's range keeps them compact (record the fix,
/// rewrite the baseline), FAIL when not compact otherwise or when nothing was sampled. Prints the
/// message to stdout.
inline void check_compact(const server::Identity& id, const Measurement& m, bool has_field_ttl) {
  Guard g = judge_compact(id, m.layout, m.encodings, has_field_ttl);
  std::cout << "[memory] " << g.message << std::endl;
  switch (g.status) {
    case Guard::Status::compact: SUCCEED(g.message); break;
    case Guard::Status::known_issue: catch2::skip(catch2::Verdict::known_issue, g.message); break;
    case Guard::Status::fixed: catch2::skip(catch2::Verdict::fixed, g.message); break;
    case Guard::Status::not_compact: FAIL_CHECK(g.message); break;
    case Guard::Status::no_sample: FAIL_CHECK(g.message); break;
  }
}

}  // namespace expirykit::memory
