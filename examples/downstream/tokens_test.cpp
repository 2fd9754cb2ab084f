// The commands our session service sends, against a real server (ServerFixture): one hash per
// user, one field per device, each field with its own TTL.
#include <catch2/catch_test_macros.hpp>
#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/matchers.hpp>
#include <expirykit/server/clock.hpp>

using expirykit::catch2::EachIntegerIn;
using expirykit::catch2::IsErrorStartingWith;
using expirykit::catch2::ServerFixture;
using expirykit::resp::Reply;

// Each test gets a flushed server: Valkey 9.1.2 by default, EXPIRYKIT_SERVER=redis-8.0 (or a
// path) for another one, EXPIRYKIT_SERVER_ADDR=host:port for one you started yourself.
TEST_CASE_METHOD(ServerFixture, "A session token lives in a hash field with its own TTL") {
  require_field_ttl();  // "not supported by valkey 8.0.1" is a SKIP, not a failure
  auto& c = client();
  REQUIRE(c("HSETEX", "user:42", "PX", 90000, "FIELDS", 1, "token", "abc") == Reply::integer(1));
  CHECK(c("HGET", "user:42", "token") == Reply::string("abc"));
  CHECK_THAT(c("HPTTL", "user:42", "FIELDS", 1, "token"), EachIntegerIn(1, 90000));
  // Revoking: a zero TTL deletes the field at once (reply 2), and the emptied hash goes too.
  CHECK(c("HPEXPIRE", "user:42", 0, "FIELDS", 1, "token") == Reply::ints({2}));
  CHECK(c("EXISTS", "user:42") == Reply::integer(0));
}

TEST_CASE_METHOD(ServerFixture, "Issuing a token never replaces a live one (HSETEX FNX)") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSETEX", "user:42", "FNX", "PX", 60000, "FIELDS", 1, "web", "first") == Reply::integer(1));
  // A second login racing the first: FNX refuses (0), the first token and its TTL stay.
  CHECK(c("HSETEX", "user:42", "FNX", "PX", 1000, "FIELDS", 1, "web", "second") == Reply::integer(0));
  CHECK(c("HGET", "user:42", "web") == Reply::string("first"));
  CHECK_THAT(c("HPTTL", "user:42", "FIELDS", 1, "web"), EachIntegerIn(1001, 60000));
}

TEST_CASE_METHOD(ServerFixture, "Using a token slides its expiry (HGETEX PX)") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSETEX", "user:42", "PX", 5000, "FIELDS", 1, "web", "abc") == Reply::integer(1));
  CHECK(c("HGETEX", "user:42", "PX", 600000, "FIELDS", 1, "web") == Reply::strings({"abc"}));
  CHECK_THAT(c("HPTTL", "user:42", "FIELDS", 1, "web"), EachIntegerIn(5001, 600000));
}

TEST_CASE_METHOD(ServerFixture, "Each device's token expires on its own; the others stay") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("HSETEX", "user:42", "PX", 300, "FIELDS", 1, "phone", "p") == Reply::integer(1));
  REQUIRE(c("HSETEX", "user:42", "PX", 600000, "FIELDS", 1, "laptop", "l") == Reply::integer(1));
  const Reply deadline = c("HPEXPIRETIME", "user:42", "FIELDS", 1, "phone");
  REQUIRE(deadline.is_array());
  expirykit::server::wait_until_past(c, deadline[0].as_integer());  // on the server's clock
  CHECK(c("HGET", "user:42", "phone") == Reply::nil());
  const Reply ttls = c("HTTL", "user:42", "FIELDS", 2, "phone", "laptop");
  REQUIRE(ttls.is_array());
  CHECK(ttls[0] == Reply::integer(-2));  // -2: no such field
  CHECK(ttls[1].as_integer() > 500);
  CHECK(c("HKEYS", "user:42") == Reply::strings({"laptop"}));
  CHECK(c("HGET", "user:42", "laptop") == Reply::string("l"));
}

TEST_CASE_METHOD(ServerFixture, "Logout everywhere: HGETDEL returns the tokens and deletes the user's hash") {
  require_field_ttl();
  require(identity().caps.hgetdel, "HGETDEL");
  auto& c = client();
  REQUIRE(c("HSETEX", "user:42", "PX", 600000, "FIELDS", 2, "web", "w", "app", "a") == Reply::integer(1));
  CHECK(c("HGETDEL", "user:42", "FIELDS", 3, "web", "app", "tv") == Reply::array({Reply::string("w"), Reply::string("a"), Reply::nil()}));
  CHECK(c("EXISTS", "user:42") == Reply::integer(0));
}

TEST_CASE_METHOD(ServerFixture, "A legacy string token under the user's key is refused, not overwritten") {
  require_field_ttl();
  auto& c = client();
  REQUIRE(c("SET", "user:42", "legacy-token") == Reply::ok());
  CHECK_THAT(c("HEXPIRE", "user:42", 60, "FIELDS", 1, "web"), IsErrorStartingWith("WRONGTYPE"));
  CHECK_THAT(c("HSETEX", "user:42", "EX", 60, "FIELDS", 1, "web", "w"), IsErrorStartingWith("WRONGTYPE"));
  CHECK(c("GET", "user:42") == Reply::string("legacy-token"));
}
