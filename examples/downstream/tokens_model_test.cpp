// The same token commands against the server and the kit's reference model side by side
// (TwinFixture): every reply is compared, and check_same_state() compares every key (values,
// HLEN, the absolute expiry of each field, OBJECT ENCODING). The model is the server's own
// dialect (Valkey 9.1 or Redis 8.0), so one test states what each server must do.
#include <catch2/catch_test_macros.hpp>
#include <expirykit/catch2/twin_fixture.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Reply;

TEST_CASE_METHOD(TwinFixture, "Token lifecycle: login, refresh, remember-me, revoke agree with the model") {
  require_field_ttl();
  CHECK(both("HSETEX user:7 PX 600000 FIELDS 2 web w1 app a1") == Reply::integer(1));
  CHECK(both("HPEXPIRE user:7 300000 FIELDS 2 web tv") == Reply::ints({1, -2}));  // tv: no such field
  CHECK(both("HPEXPIRE user:7 900000 GT FIELDS 1 web") == Reply::ints({1}));     // refresh: only longer
  CHECK(both("HPERSIST user:7 FIELDS 1 app") == Reply::ints({1}));               // remember-me
  both("HTTL user:7 FIELDS 2 web app");  // rounding to seconds differs by server: the model knows
  CHECK(both("HPEXPIRE user:7 0 FIELDS 1 web") == Reply::ints({2}));            // revoke: gone at once
  CHECK(both("HGETALL user:7") == Reply::strings({"app", "a1"}));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "An expired token is never served, even before the server reclaims it") {
  require_field_ttl();
  both("HSETEX user:7 PX 600000 FIELDS 2 web w1 app a1");
  // Active expiry off, web's TTL 1 ms, wait on the server's clock: web is logically expired but
  // still stored. Reads must hide it; HLEN still counts it (and Redis deletes it on first touch,
  // Valkey does not: both() checks each server against its own dialect).
  expire_unreclaimed("user:7", {"web"});
  CHECK(both("HGET user:7 web") == Reply::nil());
  CHECK(both("HEXISTS user:7 web") == Reply::integer(0));
  CHECK(both("HMGET user:7 web app") == Reply::array({Reply::nil(), Reply::string("a1")}));
  both("HLEN user:7");
  // A new login over the expired token gets a fresh field, not the old TTL.
  CHECK(both("HSETEX user:7 FNX PX 600000 FIELDS 1 web w2") == Reply::integer(1));
  CHECK(both("HGET user:7 web") == Reply::string("w2"));
  check_same_state();
}
