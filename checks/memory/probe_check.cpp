// Checks of memory::Probe against real servers (the provisioned default or EXPIRYKIT_SERVER):
// repeatability, an inflated layout failing the gate, the backlog control, unsupported layouts.
// These checks spawn servers of their own: with EXPIRYKIT_SERVER_ADDR set, the Probe refuses
// (ProbeError), so run them without it.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <thread>

#include <expirykit/memory/baseline.hpp>
#include <expirykit/memory/layouts.hpp>
#include <expirykit/memory/matchers.hpp>
#include <expirykit/memory/probe.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/temp_dir.hpp>

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;

namespace {
memory::LayoutParams small(std::size_t value_size = 40) {
  memory::LayoutParams p;
  p.n = 4000;
  p.value_size = value_size;
  return p;
}
}  // namespace

TEST_CASE("memory probe: fresh servers give a settled, repeatable figure and a census", "[memory][server]") {
  memory::ProbeOptions o;
  o.repetitions = 3;
  auto m = memory::Probe(o).run(memory::hash1_plain(small()));
  INFO(m.summary());
  CHECK(m.stats.count == 3);
  CHECK(m.reps.size() == 3);
  CHECK(m.stats.median > 40);   // more than the value itself
  CHECK(m.stats.median < 400);
  CHECK(m.stats.spread_pct() < 2.0);
  CHECK(m.notes.empty());
  CHECK(m.encodings == std::map<std::string, std::size_t>{{"listpack", 64}});
  CHECK(m.sampled_keys == 64);
  CHECK(m.memory_usage > 0);
  CHECK_FALSE(m.line.empty());
  for (const auto& r : m.reps) CHECK(r.settled);
}

// hash1-plain: 20% larger values (40 -> 48 bytes) cost +16 B/key on Valkey 9.1.2 and Redis 8.0.6
// (the listpack crosses a jemalloc size class). Not every layout shows it: on Valkey 9.1.2
// string-ex, hash1-hsetex and bighash-plain cost the same with 48-byte values, the extra bytes
// fit in the allocations' size-class slack.
TEST_CASE("memory gate: a layout with 20% larger values fails against its baseline", "[memory][server]") {
  process::TempDir dir;
  memory::ProbeOptions o;
  o.repetitions = 3;
  auto base = memory::Probe(o).run(memory::hash1_plain(small(40)));
  const auto path = dir.path() / (base.line + ".json");
  memory::Baseline b;
  b.record(base);
  b.save(path);
  b = memory::Baseline::load(path);

  auto same = memory::Probe(o).run(memory::hash1_plain(small(40)));
  CHECK_THAT(same, memory::WithinBaseline(b, path.string()));

  auto inflated = memory::Probe(o).run(memory::hash1_plain(small(48)));
  // Measured as such, the parameters differ from the baseline's: no verdict (INCOMPARABLE).
  const auto refused = memory::compare(inflated, b, path.string());
  INFO(refused.text);
  CHECK(refused.status == memory::Verdict::Status::incomparable);
  CHECK_THAT(refused.text, ContainsSubstring("value_size 48 (baseline 40)"));
  // Under the baseline's parameters, as a server release storing 8 more bytes per value would
  // be measured: a regression.
  inflated.params = base.params;
  auto v = memory::compare(inflated, b, path.string());
  INFO(v.text);
  CHECK(v.status == memory::Verdict::Status::regressed);
  CHECK_THAT(inflated, !memory::WithinBaseline(b, path.string()));
  CHECK_THAT(v.text, ContainsSubstring("REGRESSED hash1-plain on ") && ContainsSubstring("baseline ") &&
                         ContainsSubstring(path.string()) && ContainsSubstring("encodings listpack") &&
                         ContainsSubstring("EXPIRYKIT_UPDATE_BASELINES=1"));
}

TEST_CASE("memory probe: a replication backlog is refused", "[memory][server]") {
  process::Server primary, replica;
  auto rc = replica.client();
  REQUIRE(rc("REPLICAOF", primary.host(), primary.port()).is_status());
  auto pc = primary.client();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server::Info::fetch(pc, "replication").get_int("repl_backlog_active", 0) == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_THROWS_WITH(memory::Probe::require_no_backlog(pc, "before the load"),
                    ContainsSubstring("replication backlog exists") && ContainsSubstring("never had a replica"));
  process::Server fresh;
  auto fc = fresh.client();
  CHECK_NOTHROW(memory::Probe::require_no_backlog(fc, "on a fresh server"));
}

TEST_CASE("memory probe: a layout the server cannot build is Unsupported", "[memory][server]") {
  auto old = process::provisioned_server("valkey-8.0");
  if (old.empty()) SKIP("valkey-8.0 is not provisioned (ci/provision-servers valkey-8.0)");
  memory::ProbeOptions o;
  o.repetitions = 1;
  o.server.binary = old;
  CHECK_THROWS_AS(memory::Probe(o).run(memory::hash1_hsetex(small())), memory::Unsupported);
}
