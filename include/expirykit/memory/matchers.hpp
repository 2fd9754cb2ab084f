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
#include <string>
#include <utility>

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
    return last.status == Verdict::Status::passed || last.status == Verdict::Status::improved;
  }
  std::string describe() const override { return "is within the memory baseline: " + last.text; }
  Baseline baseline;
  std::string origin;
  mutable Verdict last;
};
inline WithinBaselineMatcher WithinBaseline(Baseline b, std::string origin = "baseline") {
  return {std::move(b), std::move(origin)};
}

/// The suite's assertion. In update mode (EXPIRYKIT_UPDATE_BASELINES=1) records `m` into
/// `path` and passes with a WARN; otherwise SKIPs when `path` or its entry for the layout is
/// missing (saying how to record one), else CHECKs WithinBaseline and WARNs on an improvement.
/// Prints the verdict line to stdout either way ("[memory] ..."). Returns the Verdict.
/// Throws BaselineError if the file exists but cannot be read.
inline Verdict check_against_baseline(const Measurement& m, const std::filesystem::path& path) {
  if (update_requested()) {
    update_file(path, m);
    std::cout << "[memory] RECORDED " << m.summary() << " into " << path.string() << std::endl;
    WARN("baseline updated (EXPIRYKIT_UPDATE_BASELINES=1): " << m.summary() << " -> " << path.string());
    return {Verdict::Status::passed, 0, 0, 0, "recorded"};
  }
  auto b = Baseline::try_load(path);
  if (!b || !b->find(m.layout)) {
    std::string why = !b ? "no memory baseline file " + path.string() : path.string() + " has no entry for " + m.layout;
    std::cout << "[memory] NO BASELINE " << m.summary() << " (" << why << ")" << std::endl;
    SKIP(why << " (server line " << m.line << "); measured " << m.summary() << ". Record it on purpose: "
              << update_hint(m.line));
  }
  Verdict v = compare(m, *b, path.string());
  std::cout << "[memory] " << v.text << std::endl;
  CHECK_THAT(m, WithinBaseline(*b, path.string()));
  if (v.status == Verdict::Status::improved) WARN(v.text);
  return v;
}

/// The suite's encoding guard: PASS when compact, SKIP with "KNOWN ISSUE ..." (reported, not
/// failed) on a known issue of the server (server/known_issues.hpp), SKIP with "FIXED ..." when a
/// server in a known issue's range keeps them compact (record the fix, rewrite the baseline),
/// FAIL when not compact otherwise or when nothing was sampled. Prints the message to stdout.
inline void check_compact(const server::Identity& id, const Measurement& m, bool has_field_ttl) {
  Guard g = judge_compact(id, m.layout, m.encodings, has_field_ttl);
  std::cout << "[memory] " << g.message << std::endl;
  switch (g.status) {
    case Guard::Status::compact: SUCCEED(g.message); break;
    case Guard::Status::known_issue:
    case Guard::Status::fixed: SKIP(g.message); break;
    case Guard::Status::not_compact: FAIL_CHECK(g.message); break;
    case Guard::Status::no_sample: FAIL_CHECK(g.message); break;
  }
}

}  // namespace expirykit::memory
