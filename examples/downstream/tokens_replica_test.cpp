// A primary with a replica (ReplicaFixture): after a failover the replica serves the tokens,
// so it must hold the same fields, values and absolute deadlines as the primary, and a token
// revoked or expired on the primary must not live on there.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>

#include <expirykit/catch2/replica_fixture.hpp>
#include <expirykit/server/clock.hpp>

using expirykit::catch2::ReplicaFixture;
using expirykit::resp::Reply;

TEST_CASE_METHOD(ReplicaFixture, "Refreshed, remembered and revoked tokens reach the replica with their deadlines") {
  require_field_ttl();
  auto& p = primary();
  REQUIRE(p("HSETEX", "user:1", "PX", 600000, "FIELDS", 2, "web", "w", "app", "a") == Reply::integer(1));
  REQUIRE(p("HPEXPIRE", "user:1", 900000, "GT", "FIELDS", 1, "web") == Reply::ints({1}));  // refresh
  REQUIRE(p("HPERSIST", "user:1", "FIELDS", 1, "app") == Reply::ints({1}));                // remember-me
  REQUIRE(p("HSETEX", "user:2", "PX", 600000, "FIELDS", 1, "web", "x") == Reply::integer(1));
  REQUIRE(p("HPEXPIRE", "user:2", 0, "FIELDS", 1, "web") == Reply::ints({2}));             // revoke
  check_replica_agrees();  // waits for the replica's offset, then every key field by field
  const Reply deadlines = p("HPEXPIRETIME", "user:1", "FIELDS", 2, "web", "app");
  CHECK(replica()("HPEXPIRETIME", "user:1", "FIELDS", 2, "web", "app") == deadlines);
  CHECK(replica()("EXISTS", "user:2") == Reply::integer(0));
}

TEST_CASE_METHOD(ReplicaFixture, "A token that expires on the primary is deleted on the replica") {
  require_field_ttl();
  auto& p = primary();
  REQUIRE(p("HSETEX", "user:3", "PX", 200, "FIELDS", 1, "web", "w") == Reply::integer(1));
  REQUIRE(p("HSETEX", "user:3", "PX", 600000, "FIELDS", 1, "app", "a") == Reply::integer(1));
  const Reply deadline = p("HPEXPIRETIME", "user:3", "FIELDS", 1, "web");
  REQUIRE(deadline.is_array());
  expirykit::server::wait_until_past(p, deadline[0].as_integer());
  // Active expiry on the primary deletes the field and sends the deletion to the replica
  // (replicas do not expire data themselves). Wait for it, bounded; HLEN counts stored fields.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (p("HLEN", "user:3") != Reply::integer(1) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(p("HLEN", "user:3") == Reply::integer(1));
  sync();
  CHECK(replica()("HLEN", "user:3") == Reply::integer(1));
  CHECK(replica()("HGET", "user:3", "web") == Reply::nil());
  CHECK(replica()("HGET", "user:3", "app") == Reply::string("a"));
  check_replica_agrees();
}
