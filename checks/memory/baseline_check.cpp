// Checks of memory/baseline.hpp and memory/matchers.hpp: JSON round trip, tolerances, the
// verdict text, update mode. No server.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <expirykit/memory/baseline.hpp>
#include <expirykit/memory/matchers.hpp>
#include <expirykit/process/temp_dir.hpp>

#include "../common/env.hpp"

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

namespace {
memory::Measurement measurement(std::string layout, std::vector<double> reps, std::string encoding = "embstr") {
  memory::Measurement m;
  m.layout = std::move(layout);
  m.unit = "key";
  m.items = 20000;
  m.params.n = 20000;
  m.params.value_size = 40;
  m.server = "valkey 9.1.2";
  m.line = "valkey-9.1";
  m.stats = memory::summarize(reps);
  m.encodings = {{encoding, 64}};
  m.memory_usage = 96;
  return m;
}
memory::Baseline baseline_with(const memory::Measurement& m) {
  memory::Baseline b;
  b.record(m);
  return b;
}
}  // namespace

TEST_CASE("memory baseline: JSON round trip through a file keeps every field", "[memory][baseline]") {
  process::TempDir dir;
  auto path = dir.path() / "sub" / "valkey-9.1.json";
  memory::Baseline b = baseline_with(measurement("string-ex", {125.4, 125.5, 125.2}));
  b.record(measurement("hash1-hsetex", {301.3, 301.4, 301.1}, "hashtable"));
  b.layouts["hash1-hsetex"].tolerance = memory::Tolerance{2.0, 7.0};
  b.layouts["hash1-hsetex"].note = "seeded";
  b.tolerance = {4.0, 0.5};
  b.save(path);
  REQUIRE(std::filesystem::exists(path));

  auto r = memory::Baseline::load(path);
  CHECK(r.line == "valkey-9.1");
  CHECK(r.server == "valkey 9.1.2");
  CHECK(r.recorded == b.recorded);
  CHECK(r.tolerance.pct == 4.0);
  CHECK(r.tolerance.bytes == 0.5);
  REQUIRE(r.layouts.size() == 2);
  const auto& e = r.layouts.at("hash1-hsetex");
  CHECK(e.bytes_per_item == 301.3);
  CHECK(e.spread == 0.3);
  CHECK(e.repetitions == 3);
  CHECK(e.unit == "key");
  CHECK(e.n == 20000);
  CHECK(e.value_size == 40);
  CHECK(e.ttl == "EX 900");
  CHECK(e.encodings == std::map<std::string, std::size_t>{{"hashtable", 64}});
  CHECK(e.memory_usage == 96);
  REQUIRE(e.tolerance);
  CHECK(e.tolerance->bytes == 7.0);
  CHECK(e.note == "seeded");
  CHECK_FALSE(r.layouts.at("string-ex").tolerance);
  CHECK(r.to_json() == b.to_json());
}

TEST_CASE("memory baseline: bad files are errors that name the file", "[memory][baseline]") {
  process::TempDir dir;
  auto path = dir.path() / "x.json";
  CHECK_THROWS_WITH(memory::Baseline::load(path), ContainsSubstring("x.json") && ContainsSubstring("cannot open"));
  CHECK_FALSE(memory::Baseline::try_load(path));
  std::ofstream(path) << "{not json";
  CHECK_THROWS_AS(memory::Baseline::load(path), memory::BaselineError);
  std::ofstream(path) << R"({"line": "valkey-9.1", "layouts": {"a": {"spread": 1}}})";
  CHECK_THROWS_WITH(memory::Baseline::load(path), ContainsSubstring("x.json") && ContainsSubstring("not a valid"));
}

TEST_CASE("memory baseline: record keeps hand-set tolerances and refuses another line", "[memory][baseline]") {
  auto b = baseline_with(measurement("hash10-ttl", {102.6, 102.6, 109.0}));
  b.layouts["hash10-ttl"].tolerance = memory::Tolerance{3.0, 7.0};
  b.layouts["hash10-ttl"].note = "hash seed steps";
  b.record(measurement("hash10-ttl", {103.0, 103.0, 103.0}));
  CHECK(b.layouts["hash10-ttl"].bytes_per_item == 103.0);
  CHECK(b.layouts["hash10-ttl"].tolerance->bytes == 7.0);
  CHECK(b.layouts["hash10-ttl"].note == "hash seed steps");
  auto other = measurement("string-ex", {1.0});
  other.line = "redis-8.0";
  CHECK_THROWS_AS(b.record(other), memory::BaselineError);
}

TEST_CASE("memory baseline: tolerance is the larger of percent and bytes", "[memory][baseline]") {
  memory::Tolerance t{3.0, 1.0};
  CHECK(t.allowed(300) == 9.0);
  CHECK(t.allowed(6) == 1.0);
}

TEST_CASE("memory verdict: within, regressed, improved and missing", "[memory][baseline]") {
  auto b = baseline_with(measurement("string-ex", {125.4, 125.5, 125.2}));
  const std::string origin = "ci/baselines/memory/valkey-9.1.json";

  auto same = memory::compare(measurement("string-ex", {126.0, 127.0, 128.0}), b, origin);
  CHECK(same.status == memory::Verdict::Status::passed);
  CHECK(same.ok());
  CHECK_THAT(same.text, ContainsSubstring("PASSED string-ex"));

  auto bigger = measurement("string-ex", {133.4, 133.0, 133.5});
  auto v = memory::compare(bigger, b, origin);
  CHECK(v.status == memory::Verdict::Status::regressed);
  CHECK_FALSE(v.ok());
  CHECK(v.delta == Catch::Approx(8.0).margin(1e-9));
  CHECK(v.allowed == Catch::Approx(3.762));
  CHECK(v.text ==
        "REGRESSED string-ex on valkey 9.1.2: measured 133.4 B/key (median of 3, spread 0.5 B = 0.4%), encodings "
        "embstr x64; baseline 125.4 B/key (spread 0.3 B, encodings embstr, ci/baselines/memory/valkey-9.1.json, "
        "recorded " + b.recorded + " on valkey 9.1.2); difference +8.0 B (+6.4%), allowed +/-3.8 B (3.0% or 1.0 B, "
        "whichever is larger). This layout costs more memory than "
        "the committed baseline. If that is expected (a new server release, or your layout changed on purpose), "
        "rewrite the baseline: run this test again with " + expirykit::env::server_assignments() +
        "EXPIRYKIT_UPDATE_BASELINES=1 (the kit's own layouts: "
        "EXPIRYKIT_UPDATE_BASELINES=1 ci/memory-gate valkey-9.1); otherwise look at the "
        "encodings above first.");

  auto smaller = memory::compare(measurement("string-ex", {110.0, 110.0, 110.0}, "listpack"), b, origin);
  CHECK(smaller.status == memory::Verdict::Status::improved);
  CHECK(smaller.ok());
  CHECK_THAT(smaller.text, ContainsSubstring("IMPROVED") && ContainsSubstring("update it") &&
                               ContainsSubstring("encodings changed from embstr to listpack"));

  // Another layout parameter: no verdict, whichever way the figure went (not "IMPROVED").
  for (double figure : {110.0, 125.4, 140.0}) {
    auto other = measurement("string-ex", {figure, figure, figure});
    other.params.value_size = 48;
    auto x = memory::compare(other, b, origin);
    CHECK(x.status == memory::Verdict::Status::incomparable);
    CHECK_FALSE(x.ok());
    CHECK_THAT(x.text, ContainsSubstring("INCOMPARABLE string-ex") &&
                           ContainsSubstring("parameters differ: value_size 48 (baseline 40)") &&
                           ContainsSubstring("EXPIRYKIT_MEMORY_VALUE_SIZE") &&
                           // what a custom layout's author changes instead: the recorded parameters
                           ContainsSubstring("the LayoutParams it was recorded with, n 20000, value_size 40"));
    CHECK_FALSE(memory::WithinBaseline(b, origin).match(other));
  }
  auto other_n = measurement("string-ex", {125.4});
  other_n.params.n = 1000;
  CHECK(memory::compare(other_n, b, origin).status == memory::Verdict::Status::incomparable);

  auto missing = memory::compare(measurement("ints50", {6.0}), b, origin);
  CHECK(missing.status == memory::Verdict::Status::no_baseline);
  CHECK_THAT(missing.text, ContainsSubstring("has no entry") && ContainsSubstring("EXPIRYKIT_UPDATE_BASELINES=1"));
}

TEST_CASE("memory matcher: WithinBaseline accepts, rejects and composes", "[memory][baseline]") {
  auto b = baseline_with(measurement("string-ex", {125.4}));
  CHECK_THAT(measurement("string-ex", {125.0}), memory::WithinBaseline(b, "f.json"));
  CHECK_THAT(measurement("string-ex", {150.0}), !memory::WithinBaseline(b, "f.json"));
  CHECK_THAT(measurement("ints50", {6.0}), !memory::WithinBaseline(b, "f.json"));
  auto matcher = memory::WithinBaseline(b, "f.json");
  CHECK_FALSE(matcher.match(measurement("string-ex", {150.0})));
  CHECK_THAT(matcher.describe(),
             StartsWith("is within the memory baseline (verdict: REGRESSED string-ex") && ContainsSubstring("f.json"));
  CHECK(matcher.match(measurement("string-ex", {125.0})));
  CHECK_THAT(matcher.describe(), StartsWith("is within the memory baseline (verdict: PASSED string-ex"));
}

TEST_CASE("memory baseline: the hint reruns with the same server; a relative path says relative to what",
          "[memory][baseline]") {
  {
    ekcheck::ScopedEnv server("EXPIRYKIT_SERVER", "redis-8.0");  // a new-user trial's rerun recorded the default
    CHECK_THAT(memory::update_hint("redis-8.0"),
               StartsWith("run this test again with EXPIRYKIT_SERVER='redis-8.0' EXPIRYKIT_UPDATE_BASELINES=1"));
    // With the test's spec: a whole command line, this binary and the test (a later trial).
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    REQUIRE_FALSE(ec);
    CHECK_THAT(memory::update_hint("redis-8.0", "memory: my layout"),
               StartsWith("run this test again: EXPIRYKIT_SERVER='redis-8.0' EXPIRYKIT_UPDATE_BASELINES=1 '" +
                          self.string() + "' 'memory: my layout' (the kit's own layouts: "));
  }
  const auto rel = memory::describe_path("memory-baselines/valkey-9.1.json");
  CHECK_THAT(rel, StartsWith("memory-baselines/valkey-9.1.json (relative to the working directory: /") &&
                      ContainsSubstring((std::filesystem::current_path() / "memory-baselines/valkey-9.1.json").string()));
  CHECK(memory::describe_path("/tmp/b/valkey-9.1.json") == "/tmp/b/valkey-9.1.json");
  // Beside the calling source file, whatever the working directory; EXPIRYKIT_BASELINE_DIR wins.
  ekcheck::ScopedEnv unset("EXPIRYKIT_BASELINE_DIR", nullptr);
  const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  CHECK(memory::baseline_dir_beside_source("memory-baselines") == here / "memory-baselines");
  CHECK(memory::baseline_dir_beside_source("/abs/b") == "/abs/b");
  ekcheck::ScopedEnv set("EXPIRYKIT_BASELINE_DIR", "/elsewhere");
  CHECK(memory::baseline_dir_beside_source("memory-baselines") == "/elsewhere");
}

TEST_CASE("memory baseline: update mode records into the file on purpose", "[memory][baseline]") {
  process::TempDir dir;
  auto path = dir.path() / "valkey-9.1.json";
  {
    ekcheck::ScopedEnv off("EXPIRYKIT_UPDATE_BASELINES", nullptr);
    CHECK_FALSE(memory::update_requested());
  }
  {
    ekcheck::ScopedEnv on("EXPIRYKIT_UPDATE_BASELINES", "1");
    CHECK(memory::update_requested());
    memory::check_against_baseline(measurement("string-ex", {125.0}), path);  // records, WARNs
    memory::check_against_baseline(measurement("hash1-plain", {110.7}), path);
  }
  ekcheck::ScopedEnv off("EXPIRYKIT_UPDATE_BASELINES", nullptr);
  auto b = memory::Baseline::load(path);
  CHECK(b.layouts.size() == 2);
  CHECK(b.layouts.at("string-ex").bytes_per_item == 125.0);
  std::size_t entries = 0;
  for (auto& f : std::filesystem::directory_iterator(dir.path())) entries += f.is_regular_file();
  CHECK(entries == 1);  // no lock or temp file left behind
  auto v = memory::check_against_baseline(measurement("string-ex", {125.5}), path);
  CHECK(v.status == memory::Verdict::Status::passed);
}

TEST_CASE("memory baseline: a line without its own file is gated against the newest older line of its flavor",
          "[memory][baseline]") {
  process::TempDir dir;
  ekcheck::ScopedEnv off("EXPIRYKIT_UPDATE_BASELINES", nullptr);
  for (const char* line : {"redis-7.0", "redis-8.0", "redis-9.0", "valkey-8.1"}) {
    auto b = baseline_with(measurement("string-ex", {125.0}));
    b.line = line;
    b.server = std::string(line) + ".x";
    b.save(dir.path() / (std::string(line) + ".json"));
  }
  std::ofstream(dir.path() / "redis-8.5.json.bak") << "{}";  // not a baseline name
  auto own = memory::choose_baseline(dir.path() / "redis-8.0.json");
  CHECK(own.own);
  CHECK(own.line == "redis-8.0");
  auto older = memory::choose_baseline(dir.path() / "redis-8.6.json");
  CHECK_FALSE(older.own);
  CHECK(older.line == "redis-8.0");  // not redis-9.0 (newer), not redis-7.0 (older than 8.0), not valkey
  CHECK(older.path == dir.path() / "redis-8.0.json");
  CHECK(memory::choose_baseline(dir.path() / "valkey-8.0.json").path.empty());  // no older valkey line
  CHECK(memory::choose_baseline(dir.path() / "redict-7.3.json").path.empty());
  auto m = measurement("string-ex", {124.0});
  m.line = "redis-8.6";
  m.server = "redis 8.6.3";
  const auto v = memory::check_against_baseline(m, dir.path() / "redis-8.6.json");
  CHECK(v.status == memory::Verdict::Status::passed);
  CHECK_THAT(v.text, StartsWith("PASSED string-ex on redis 8.6.3") &&
                         ContainsSubstring("; CHANGED since redis-8.0: redis-8.0.x 125.0 B/") &&
                         ContainsSubstring("-> redis 8.6.3 124.0 B/") && ContainsSubstring("-1.0 B (-0.8%)") &&
                         ContainsSubstring("record redis-8.6's own now (run this test again: EXPIRYKIT_UPDATE_BASELINES=1 '") &&
                         !ContainsSubstring(".; CHANGED"));
  // A verdict that says how to record (here IMPROVED) says it once: the CHANGED part points back.
  auto cheaper = measurement("string-ex", {60.0});
  cheaper.line = "redis-8.6";
  cheaper.server = "redis 8.6.3";
  const auto vi = memory::check_against_baseline(cheaper, dir.path() / "redis-8.6.json");
  CHECK(vi.status == memory::Verdict::Status::improved);
  const auto hint = vi.text.find("run this test again");
  CHECK(hint != std::string::npos);
  CHECK(vi.text.find("run this test again", hint + 1) == std::string::npos);
  CHECK_THAT(vi.text, ContainsSubstring("record redis-8.6's own now, as above."));
}
