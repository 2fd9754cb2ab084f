// Field TTLs are absolute and persisted: they survive BGSAVE and a restart from that RDB and
// keep counting down while the server is down (valkey-hfe.md §16, redis-hfe.md §10: RDB keeps
// the absolute expiry in ms; checked live on both).
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/matchers.hpp>
#include <expirykit/server/persistence.hpp>

using expirykit::catch2::EachIntegerIn;
using expirykit::catch2::ServerFixture;
using expirykit::process::Persistence;
using expirykit::process::ServerOptions;
using expirykit::process::Shutdown;
using expirykit::resp::Reply;
using clk = std::chrono::steady_clock;


TEST_CASE_METHOD(ServerFixture, "Field TTLs survive BGSAVE and a restart, and keep counting down", "[semantics][durability]") {
  require_field_ttl();
  ServerOptions opts;
  opts.persistence = Persistence::rdb;
  auto srv = fresh_server(opts, "restart from RDB");
  auto c = srv->client();
  REQUIRE(c("HSET", "h", "a", "1", "b", "2", "keep", "3") == Reply::integer(3));
  REQUIRE(c("HPEXPIRE", "h", 600000, "FIELDS", 2, "a", "b") == Reply::ints({1, 1}));
  REQUIRE(c("HPEXPIRE", "h", 900000, "FIELDS", 1, "b") == Reply::ints({1}));

  expirykit::server::bgsave(c);  // waits for the child; throws if the save failed

  const auto at_before = c("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "keep");
  const auto ttl_before = c("HPTTL", "h", "FIELDS", 2, "a", "b").as_integers();
  const auto t1 = clk::now();
  // NOSAVE: what comes back must come from the BGSAVE snapshot.
  srv->stop(Shutdown::nosave);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  srv->start();
  auto c2 = srv->client();
  const auto t2 = clk::now();
  const auto ttl_after = c2("HPTTL", "h", "FIELDS", 2, "a", "b").as_integers();
  const long long downtime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(t2 - t1).count();

  CHECK(c2("HPEXPIRETIME", "h", "FIELDS", 3, "a", "b", "keep") == at_before);
  CHECK(c2("HMGET", "h", "a", "b", "keep") == Reply::strings({"1", "2", "3"}));
  REQUIRE(ttl_after.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    INFO("field " << (i ? "b" : "a") << ": HPTTL " << ttl_before[i] << " ms before, " << ttl_after[i]
                  << " ms after; downtime at least " << downtime_ms << " ms");
    CHECK(ttl_after[i] > 0);
    CHECK(ttl_before[i] - ttl_after[i] >= downtime_ms);
  }
}
