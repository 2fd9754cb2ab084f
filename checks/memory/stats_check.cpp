// Checks of the arithmetic and texts in memory/probe.hpp. No server.
#include <string>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include <expirykit/memory/probe.hpp>

#include "../common/env.hpp"

using namespace expirykit;

TEST_CASE("memory stats: median, min, max and spread", "[memory][stats]") {
  auto s = memory::summarize({300.0, 310.0, 301.0});
  CHECK(s.median == 301.0);
  CHECK(s.min == 300.0);
  CHECK(s.max == 310.0);
  CHECK(s.count == 3);
  CHECK(s.spread() == 10.0);
  CHECK(s.spread_pct() == Catch::Approx(100.0 * 10 / 301));

  auto even = memory::summarize({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median == 2.5);
  CHECK(memory::summarize({7.0}).spread() == 0);
  CHECK(memory::summarize({0.0, 0.0}).spread_pct() == 0);
  CHECK_THROWS_AS(memory::summarize({}), std::invalid_argument);
}

TEST_CASE("memory measurement: summary names layout, server, figure, spread and encodings", "[memory][stats]") {
  memory::Measurement m;
  m.layout = "hash1-hsetex";
  m.unit = "key";
  m.server = "valkey 9.1.2";
  m.stats = memory::summarize({301.4, 301.3, 301.6});
  m.encodings = {{"hashtable", 64}};
  m.memory_usage = 264;
  CHECK(m.figure() == "301.4 B/key (median of 3, spread 0.3 B = 0.1%)");
  CHECK(m.summary() ==
        "hash1-hsetex on valkey 9.1.2: 301.4 B/key (median of 3, spread 0.3 B = 0.1%), encodings hashtable x64, "
        "MEMORY USAGE 264.0 B/key");
  m.encodings["listpack"] = 2;
  CHECK(m.encodings_text() == "hashtable x64, listpack x2");
  CHECK(m.encoding() == "hashtable+listpack");
  m.notes.push_back("repetition 2 did not settle within 10000 ms");
  CHECK(m.summary().find("note: repetition 2") != std::string::npos);
}

TEST_CASE("memory probe: options are validated", "[memory][stats]") {
  memory::ProbeOptions o;
  o.repetitions = 0;
  CHECK_THROWS_AS(memory::Probe(o), std::invalid_argument);
  o.repetitions = 1;
  o.batch = 0;
  CHECK_THROWS_AS(memory::Probe(o), std::invalid_argument);
}

TEST_CASE("memory probe: external mode is refused unless a binary is named", "[memory][stats]") {
  // The Probe spawns its own servers; with EXPIRYKIT_SERVER_ADDR set it would measure the
  // provisioned binary while the rest of the run talks to the external server (issue 23).
  ekcheck::ScopedEnv external("EXPIRYKIT_SERVER_ADDR", "127.0.0.1:1");
  memory::ProbeOptions o;
  try {
    memory::Probe p(o);
    FAIL("memory::Probe was constructed in external mode");
  } catch (const memory::ProbeError& e) {
    const std::string what = e.what();
    CHECK(what.find("EXPIRYKIT_SERVER_ADDR=127.0.0.1:1") != std::string::npos);
    CHECK(what.find("require_own_server") != std::string::npos);
    CHECK(what.find("ProbeOptions::server.binary") != std::string::npos);
  }
  o.server.binary = "/a/binary/named/on/purpose";  // constructing spawns nothing yet
  CHECK_NOTHROW(memory::Probe(o));
}
