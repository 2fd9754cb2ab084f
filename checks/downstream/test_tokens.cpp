#include <catch2/catch_test_macros.hpp>
#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/matchers.hpp>

using expirykit::catch2::EachIntegerIn;
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
