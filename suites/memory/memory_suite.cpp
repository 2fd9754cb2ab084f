// suites/memory: bytes per item of every built-in layout against the committed baseline of the
// server line (ci/baselines/memory/<line>.json), and the encoding guards (small hashes stay
// compact; known gaps reported, not failed). Every probe spawns fresh servers of the binary
// the suite runs against (EXPIRYKIT_SERVER), so external servers (EXPIRYKIT_SERVER_ADDR) SKIP.
//
// Environment (config.hpp: expirykit::config(); defaults keep each layout at about 2.5 s):
//   EXPIRYKIT_MEMORY_N            items per layout (20000)
//   EXPIRYKIT_MEMORY_VALUE_SIZE   bytes per value (40)
//   EXPIRYKIT_MEMORY_REPS         fresh servers per layout (3)
//   EXPIRYKIT_MEMORY_TTL          "paced" (PXAT, aligned base + 1 ms per item; default) or "ex"
//                                 (EX 900: expiry times depend on load speed, less repeatable)
//   EXPIRYKIT_BASELINE_DIR        where <line>.json lives (default: the source tree's
//                                 ci/baselines/memory)
//   EXPIRYKIT_UPDATE_BASELINES=1  record the measurements instead of comparing them
#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <iostream>
#include <string>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/config.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/memory/baseline.hpp>
#include <expirykit/memory/guard.hpp>
#include <expirykit/memory/layouts.hpp>
#include <expirykit/memory/matchers.hpp>
#include <expirykit/memory/probe.hpp>

#ifndef EXPIRYKIT_MEMORY_BASELINE_DIR
#define EXPIRYKIT_MEMORY_BASELINE_DIR "ci/baselines/memory"
#endif

using namespace expirykit;

namespace {

memory::LayoutParams params() {
  const Config& c = config();
  memory::LayoutParams p;
  p.n = c.memory_n;
  p.value_size = c.memory_value_size;
  if (c.memory_ttl == MemoryTtl::paced) {
    p.expire_at_ms = memory::aligned_expiry_ms(p.ttl_s);
    p.expire_step_ms = 1;
  }
  return p;
}

/// The shared target (so the verdict table names the server) and probe options for its binary.
memory::ProbeOptions probe_options(int reps) {
  auto& t = catch2::shared_target();
  if (t.external()) SKIP("memory probes spawn fresh servers of their own; EXPIRYKIT_SERVER_ADDR is set");
  memory::ProbeOptions o;
  o.repetitions = reps;
  o.server.binary = t.owned()->binary();
  return o;
}

memory::Measurement measure(const memory::Layout& l, const memory::ProbeOptions& o) {
  try {
    return memory::Probe(o).run(l);
  } catch (const memory::Unsupported& e) {
    std::cout << "[memory] " << l.name << ": " << e.what() << std::endl;
    catch2::skip(catch2::Verdict::not_supported, e.what());  // "not supported by <server>: ..."
  }
  throw std::logic_error("unreachable");
}

void within_baseline(const std::string& name) {
  auto o = probe_options(config().memory_reps);
  auto m = measure(memory::by_name(name, params()), o);
  memory::check_against_baseline(m, memory::baseline_dir(EXPIRYKIT_MEMORY_BASELINE_DIR) / (m.line + ".json"));
}

/// A small census: 1 repetition of 640 items, 64 keys sampled.
void stays_compact(const std::string& name) {
  auto o = probe_options(1);
  o.stable = std::chrono::milliseconds(0);
  auto p = params();
  p.n = 640;
  auto l = memory::by_name(name, p);
  auto m = measure(l, o);
  auto c = catch2::shared_target().client();
  memory::check_compact(server::Identity::probe(c), m, l.field_ttl);
}

}  // namespace

TEST_CASE("memory: string-ex within baseline", "[memory]") { within_baseline("string-ex"); }
TEST_CASE("memory: hash1-hsetex within baseline", "[memory]") { within_baseline("hash1-hsetex"); }
TEST_CASE("memory: hash1-plain within baseline", "[memory]") { within_baseline("hash1-plain"); }
TEST_CASE("memory: hash1-expire within baseline", "[memory]") { within_baseline("hash1-expire"); }
TEST_CASE("memory: bighash-plain within baseline", "[memory]") { within_baseline("bighash-plain"); }
TEST_CASE("memory: bighash-ttl within baseline", "[memory]") { within_baseline("bighash-ttl"); }
TEST_CASE("memory: hash10-plain within baseline", "[memory]") { within_baseline("hash10-plain"); }
TEST_CASE("memory: hash10-ttl within baseline", "[memory]") { within_baseline("hash10-ttl"); }
TEST_CASE("memory: hash50-plain within baseline", "[memory]") { within_baseline("hash50-plain"); }
TEST_CASE("memory: hash50-ttl within baseline", "[memory]") { within_baseline("hash50-ttl"); }
TEST_CASE("memory: ints50 within baseline", "[memory]") { within_baseline("ints50"); }

TEST_CASE("encoding: a one-field hash without TTL is compact", "[memory][encoding]") { stays_compact("hash1-plain"); }
TEST_CASE("encoding: a one-field hash with a field TTL stays compact", "[memory][encoding]") {
  stays_compact("hash1-hsetex");
}
TEST_CASE("encoding: ten-field hashes with field TTLs stay compact", "[memory][encoding]") {
  stays_compact("hash10-ttl");
}
