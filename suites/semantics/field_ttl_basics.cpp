// Argument validation and reply codes of the hash field TTL commands, checked against the
// server. Sources: valkey-hfe.md §2, §5, §6 and redis-hfe.md §3-§4 (both verified live); the
// exact error texts differ between dialects, so these cases assert the shared part (an error
// whose text is the dialect's) and that nothing changed.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/catch2/matchers.hpp>

using expirykit::catch2::EachIntegerIn;
using expirykit::catch2::IsError;
using expirykit::catch2::IsErrorStartingWith;
using expirykit::catch2::ServerFixture;
using expirykit::resp::Reply;


TEST_CASE_METHOD(ServerFixture, "HEXPIRE on a string key replies WRONGTYPE", "[semantics]") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("SET", "s", "v") == Reply::ok());
  CHECK_THAT(c("HEXPIRE", "s", 100, "FIELDS", 1, "a"), IsErrorStartingWith("WRONGTYPE"));
  CHECK(c("GET", "s") == Reply::string("v"));
  CHECK(c("TTL", "s") == Reply::integer(-1));
}

TEST_CASE_METHOD(ServerFixture, "Negative expire times are rejected by every command that takes one", "[semantics]") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  const long long future_s = expirykit::server::now_ms(c) / 1000 + 3600;
  SECTION("HEXPIRE") { CHECK_THAT(c("HEXPIRE", "h", -1, "FIELDS", 1, "a"), IsErrorStartingWith("ERR invalid expire time")); }
  SECTION("HPEXPIRE") { CHECK_THAT(c("HPEXPIRE", "h", -1, "FIELDS", 1, "a"), IsErrorStartingWith("ERR invalid expire time")); }
  SECTION("HEXPIREAT") { CHECK_THAT(c("HEXPIREAT", "h", -1, "FIELDS", 1, "a"), IsErrorStartingWith("ERR invalid expire time")); }
  SECTION("HPEXPIREAT") { CHECK_THAT(c("HPEXPIREAT", "h", -1, "FIELDS", 1, "a"), IsErrorStartingWith("ERR invalid expire time")); }
  SECTION("HSETEX EX / PX / EXAT / PXAT") {
    require(identity().caps.hsetex, "HSETEX");
    for (const char* unit : {"EX", "PX", "EXAT", "PXAT"}) {
      INFO("HSETEX h " << unit << " -1");
      CHECK_THAT(c("HSETEX", "h", unit, -1, "FIELDS", 1, "a", "2"), IsErrorStartingWith("ERR invalid expire time"));
    }
  }
  SECTION("HGETEX EX / PX / EXAT / PXAT") {
    require(identity().caps.hgetex, "HGETEX");
    for (const char* unit : {"EX", "PX", "EXAT", "PXAT"}) {
      INFO("HGETEX h " << unit << " -1");
      CHECK_THAT(c("HGETEX", "h", unit, -1, "FIELDS", 1, "a"), IsErrorStartingWith("ERR invalid expire time"));
    }
  }
  // Nothing was written: the value is unchanged and the field still has no TTL.
  CHECK(c("HGET", "h", "a") == Reply::string("1"));
  CHECK(c("HTTL", "h", "FIELDS", 1, "a") == Reply::ints({-1}));
  // A valid call right after still works (the rejection did not poison the key).
  CHECK(c("HEXPIREAT", "h", future_s, "FIELDS", 1, "a") == Reply::ints({1}));
}

TEST_CASE_METHOD(ServerFixture, "Incompatible condition flags are rejected: NX with XX, GT or LT; GT with LT", "[semantics]") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
  REQUIRE(c("HPEXPIRE", "h", 500000, "FIELDS", 1, "b") == Reply::ints({1}));
  const auto before = c("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b");
  const std::vector<std::vector<std::string>> pairs = {{"NX", "XX"}, {"NX", "GT"}, {"NX", "LT"}, {"GT", "LT"},
                                                       {"XX", "NX"}, {"LT", "GT"}};
  for (const char* cmd : {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"}) {
    for (const auto& p : pairs) {
      INFO(cmd << " h 999999 " << p[0] << " " << p[1] << " FIELDS 2 a b");
      CHECK_THAT(c(cmd, "h", 999999, p[0], p[1], "FIELDS", 2, "a", "b"), IsError());
    }
  }
  CHECK(c("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b") == before);
  // Note: XX GT / XX LT are accepted by Valkey 9.1 but rejected by Redis 8.0 (only one condition
  // allowed, checked live); that difference belongs to the dialect, not to this case.
}

TEST_CASE_METHOD(ServerFixture, "A missing field or key answers -2 per field and the key is not created", "[semantics]") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  const long long at_s = expirykit::server::now_ms(c) / 1000 + 3600;
  for (const char* cmd : {"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"}) {
    INFO(cmd);
    CHECK(c(cmd, "h", "FIELDS", 2, "nope", "a") == Reply::ints({-2, -1}));
    CHECK(c(cmd, "missing", "FIELDS", 3, "x", "y", "x") == Reply::ints({-2, -2, -2}));
  }
  for (const auto& [cmd, t] : std::vector<std::pair<const char*, long long>>{
           {"HEXPIRE", 100}, {"HPEXPIRE", 100000}, {"HEXPIREAT", at_s}, {"HPEXPIREAT", at_s * 1000}}) {
    INFO(cmd);
    CHECK(c(cmd, "missing", t, "FIELDS", 2, "x", "y") == Reply::ints({-2, -2}));
    CHECK(c(cmd, "h", t, "FIELDS", 1, "nope") == Reply::ints({-2}));
  }
  CHECK(c("EXISTS", "missing") == Reply::integer(0));
  CHECK(c("HEXISTS", "h", "nope") == Reply::integer(0));
  CHECK(c("HLEN", "h") == Reply::integer(1));
}

TEST_CASE_METHOD(ServerFixture, "GT on a field without TTL is a no-op replying 0; LT on it sets the TTL", "[semantics]") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  // No TTL counts as an infinite TTL: nothing is greater, anything is less.
  CHECK(c("HEXPIRE", "h", 100, "GT", "FIELDS", 1, "a") == Reply::ints({0}));
  CHECK(c("HTTL", "h", "FIELDS", 1, "a") == Reply::ints({-1}));
  CHECK(c("HPEXPIRE", "h", 100000, "LT", "FIELDS", 1, "a") == Reply::ints({1}));
  CHECK_THAT(c("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(1, 100000));
  // With a TTL in place, GT now compares normally.
  CHECK(c("HPEXPIRE", "h", 200000, "GT", "FIELDS", 1, "a") == Reply::ints({1}));
  CHECK(c("HPEXPIRE", "h", 50000, "GT", "FIELDS", 1, "a") == Reply::ints({0}));
  CHECK_THAT(c("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(100001, 200000));
}

TEST_CASE_METHOD(ServerFixture, "HSETEX sets the value and the TTL in one round trip", "[semantics]") {
  require_field_ttl();
  require(identity().caps.hsetex, "HSETEX");
  auto& c = client();
  const long long px = 60000;
  CHECK(c("HSETEX", "u:1", "PX", px, "FIELDS", 2, "token", "t0k3n", "scope", "rw") == Reply::integer(1));
  CHECK(c("HMGET", "u:1", "token", "scope") == Reply::strings({"t0k3n", "rw"}));
  // HPTTL is exact (ms): at most the requested TTL, and positive.
  CHECK_THAT(c("HPTTL", "u:1", "FIELDS", 2, "token", "scope"), EachIntegerIn(1, px));
  // The absolute expiry is the same for both fields: one command, one "now".
  auto at = c("HPEXPIRETIME", "u:1", "FIELDS", 2, "token", "scope");
  REQUIRE(at.size() == 2);
  CHECK(at[0] == at[1]);
  CHECK(c("HLEN", "u:1") == Reply::integer(2));
}
