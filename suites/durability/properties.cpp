#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/catch2/replica_fixture.hpp>
#include <expirykit/server/persistence.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Reply;

TEST_CASE_METHOD(ReplicaFixture, "smoke: the replica sees a field TTL", "[durability]") {
  require_field_ttl();
  auto& p = primary();
  REQUIRE(p("HSETEX", "h", "PX", 600000, "FIELDS", 2, "a", "1", "b", "2") == Reply::integer(1));
  REQUIRE(p("HSET", "h", "c", "3") == Reply::integer(1));
  check_replica_agrees();
  auto s = expirykit::state::Snapshot::take(replica(), "replica");
  INFO(s.describe("h"));
  CHECK(s.keys.at("h").fields.size() == 3);
  CHECK(s.keys.at("h").fields.at("a").expire_ms.has_value());
}
