// bench::Load, Template, records and the valkey-benchmark CSV parser. Load runs against a real
// server (the provisioned default or EXPIRYKIT_SERVER). Nothing here asserts a timing.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/bench/compare.hpp>
#include <expirykit/bench/load.hpp>
#include <expirykit/bench/record.hpp>
#include <expirykit/catch2/fixture.hpp>

using namespace expirykit;
using expirykit::catch2::ServerFixture;

namespace {
std::string fill(const bench::Template& t, unsigned thread, std::uint64_t seq, std::uint64_t seed = 1) {
  bench::Rng rng(seed);
  bench::RequestContext ctx{thread, 4, 0, seq, &rng};
  std::string out;
  t(ctx, out);
  return out;
}
bench::LoadOptions opts(process::Target& t) {
  bench::LoadOptions o;
  o.host = t.host();
  o.port = t.port();
  o.connections = 3;
  o.pipeline = 7;
  o.requests = 1000;
  return o;
}
}  // namespace

TEST_CASE("Template formats RESP and fills placeholders in place", "[bench]") {
  CHECK(fill(bench::Template({"GET", "k"}), 0, 0) == "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
  // Without a keyspace the placeholders stay literal, as with valkey-benchmark without -r.
  CHECK(fill(bench::Template({"GET", "k:__rand_int__"}), 0, 0) == "*2\r\n$3\r\nGET\r\n$14\r\nk:__rand_int__\r\n");
  auto s = fill(bench::Template({"GET", "k:__rand_int__"}, 100), 0, 0);
  REQUIRE(s.size() == std::string("*2\r\n$3\r\nGET\r\n$14\r\nk:000000000042\r\n").size());
  CHECK(s.substr(0, 24) == "*2\r\n$3\r\nGET\r\n$14\r\nk:0000");
  CHECK(std::stoi(s.substr(24, 8)) < 100);
  // Sequential: thread t of 4 starts at t * keyspace / 4.
  CHECK(fill(bench::Template({"SET", "__rand_int__", "__rand_int__"}, 1000, true), 1, 5) ==
        "*3\r\n$3\r\nSET\r\n$12\r\n000000000255\r\n$12\r\n000000000255\r\n");
  CHECK(fill(bench::Template({"HGET", "h:__thread__", "f"}), 7, 0) == "*3\r\n$4\r\nHGET\r\n$5\r\nh:007\r\n$1\r\nf\r\n");
  auto same = fill(bench::Template({"X", "__rand_1st__", "__rand_1st__"}, 1'000'000'000), 0, 0, 99);
  CHECK(same.substr(same.size() - 14, 12) == same.substr(same.size() - 33, 12));
}

TEST_CASE_METHOD(ServerFixture, "Load counts exactly the requested replies and writes what it says", "[bench]") {
  auto o = opts(target());
  o.threads = 2;
  o.requests = 10'000;
  auto r = bench::Load(o, bench::Template({"HSET", "h", "f:__rand_int__", "v"}, 10'000, true)).run();
  CHECK(r.ops == 10'000);
  CHECK(r.errors == 0);
  CHECK(r.latency_ns.count() == 10'000);
  CHECK(r.ops_per_thread == std::vector<std::uint64_t>{5000, 5000});
  CHECK(r.elapsed_s > 0);
  CHECK(r.server_cpu_s >= 0);
  // Sequential fill: every field 0..9999 exactly once (the probe rewrote field 0).
  CHECK(client()("HLEN", "h") == resp::Reply::integer(10'000));
}

TEST_CASE_METHOD(ServerFixture, "Load with a warm-up does not count warm-up replies; duration mode stops", "[bench]") {
  auto o = opts(target());
  o.requests = 0;
  o.duration_s = 0.3;
  o.warmup_s = 0.2;
  int ticks = 0;
  o.tick_interval = std::chrono::milliseconds(50);
  o.on_tick = [&](const bench::Progress&) { ++ticks; };
  auto r = bench::Load(o, bench::Template({"INCR", "n"})).run();
  CHECK(r.ops > 0);
  CHECK(r.warmup_ops > 0);
  CHECK(ticks > 0);
  // Every INCR was answered: warm-up + counted + the probe.
  CHECK(client()("GET", "n") == resp::Reply::string(std::to_string(r.ops + r.warmup_ops + 1)));
}

TEST_CASE_METHOD(ServerFixture, "Load refuses a command the server answers with an error, and counts errors", "[bench]") {
  auto o = opts(target());
  CHECK_THROWS_WITH(bench::Load(o, bench::Template({"NOSUCHCOMMAND", "x"})).run(),
                    Catch::Matchers::ContainsSubstring("unknown command"));
  client()("SET", "s", "x");
  o.probe = false;
  auto r = bench::Load(o, bench::Template({"HGET", "s", "f"})).run();  // WRONGTYPE
  CHECK(r.errors == r.ops);
  CHECK(r.ops == 1000);
}

TEST_CASE_METHOD(ServerFixture, "A result record holds server, machine, parameters and latency in us", "[bench]") {
  auto o = opts(target());
  auto r = bench::Load(o, bench::Template({"PING"})).run();
  auto j = bench::record("t", o, r, identity(), {{"command", "PING"}});
  CHECK(j["server"]["flavor"] == to_string(identity().flavor));
  CHECK(j["machine"]["cores"].get<unsigned>() >= 1);
  CHECK(j["params"]["pipeline"] == 7);
  CHECK(j["params"]["connections_total"] == 3);
  CHECK(j["result"]["ops"] == 1000);
  CHECK(j["result"]["latency"]["p99_9_us"].get<double>() >= j["result"]["latency"]["p50_us"].get<double>());
  CHECK(j["command"] == "PING");
}

TEST_CASE("The benchmark tool's CSV output is parsed", "[bench]") {
  auto r = bench::parse_their_csv(
      "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n"
      "\"HGET h f:__rand_int__\",\"70671.38\",\"0.476\",\"0.120\",\"0.471\",\"0.671\",\"0.815\",\"3.287\"\n");
  CHECK(r.ops_per_sec == 70671.38);
  CHECK(r.p99_ms == 0.815);
  CHECK_THROWS(bench::parse_their_csv("garbage"));
}
