// server::dialect_for / dialect_named / is_stand_in: which dialect a server line is checked
// against, and EXPIRYKIT_DIALECT. Lines from the provisioned servers (ci/provision-servers) and
// lines the kit has no dialect of (Redis 8.2, a future Redis 9.0).
#include <stdexcept>

#include <catch2/catch_test_macros.hpp>

#include <expirykit/server/dialect_choice.hpp>

#include "../common/env.hpp"

using expirykit::server::dialect_for;
using expirykit::server::dialect_named;
using expirykit::server::Flavor;
using expirykit::server::Identity;
using expirykit::server::is_stand_in;
using expirykit::server::Version;

namespace {
Identity line(Flavor f, int major, int minor, bool ttl = true) {
  Identity id;
  id.flavor = f;
  id.version = Version{major, minor, 0};
  id.caps.hexpire = ttl;
  return id;
}
struct ForcedDialect {
  explicit ForcedDialect(const char* name) : env("EXPIRYKIT_DIALECT", name) {}
  ekcheck::ScopedEnv env;
};
}  // namespace

TEST_CASE("Dialect choice: a line's own dialect, else the newest older one as a stand-in", "[server]") {
  ekcheck::ScopedEnv not_forced("EXPIRYKIT_DIALECT", nullptr);
  const auto r86 = line(Flavor::redis, 8, 6);
  REQUIRE(dialect_for(r86));
  CHECK(dialect_for(r86)->name == "redis-8.6");
  CHECK_FALSE(is_stand_in(*dialect_for(r86), r86));

  const auto r82 = line(Flavor::redis, 8, 2);
  REQUIRE(dialect_for(r82));
  CHECK(dialect_for(r82)->name == "redis-8.0");
  CHECK(is_stand_in(*dialect_for(r82), r82));

  const auto r90 = line(Flavor::redis, 9, 0);
  REQUIRE(dialect_for(r90));
  CHECK(dialect_for(r90)->name == "redis-8.6");
  CHECK(is_stand_in(*dialect_for(r90), r90));

  CHECK(dialect_for(line(Flavor::valkey, 9, 1))->name == "valkey-9.1");
  CHECK_FALSE(dialect_for(line(Flavor::valkey, 8, 1, false)));  // no field TTLs: nothing to model
  CHECK_FALSE(dialect_for(line(Flavor::redis, 7, 0, false)));
}

TEST_CASE("Dialect choice: dialect_named knows the kit's dialects only", "[server]") {
  for (const char* n : {"valkey-9.0", "valkey-9.1", "redis-7.4", "redis-8.0", "redis-8.6"}) {
    INFO(n);
    REQUIRE(dialect_named(n));
    CHECK(dialect_named(n)->name == n);
  }
  CHECK_FALSE(dialect_named("redis-8.2"));  // served by redis-8.0, but not a dialect of its own
  CHECK_FALSE(dialect_named("valkey-8.1"));
  CHECK_FALSE(dialect_named("redis"));
  CHECK_FALSE(dialect_named("nonsense-1.x"));
}

TEST_CASE("Dialect choice: EXPIRYKIT_DIALECT forces a dialect of the server's flavor", "[server]") {
  const auto r86 = line(Flavor::redis, 8, 6);
  {
    ForcedDialect f("redis-8.0");
    REQUIRE(dialect_for(r86));
    CHECK(dialect_for(r86)->name == "redis-8.0");
    CHECK(is_stand_in(*dialect_for(r86), r86));
    CHECK_FALSE(dialect_for(line(Flavor::redis, 7, 0, false)));
  }
  {
    ForcedDialect f("valkey-9.1");
    CHECK_THROWS_AS(dialect_for(r86), std::invalid_argument);
  }
  {
    ForcedDialect f("redis-8.3");
    CHECK_THROWS_AS(dialect_for(r86), std::invalid_argument);
  }
  CHECK(dialect_for(r86)->name == "redis-8.6");
}
