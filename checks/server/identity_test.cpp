// server::Identity against the live server: flavor and version must agree with what the
// binary itself says with --version (an independent source), and capabilities with the
// documented command history (HEXPIRE: Redis 7.4+, Valkey 9.0+; HGETDEL: Redis 8.0+, Valkey 9.1+).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/server/identity.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::server::Flavor;
using expirykit::server::Version;

TEST_CASE_METHOD(ServerFixture, "Identity matches the binary's --version and the command history", "[server]") {
  require_own_server("compares with the binary's --version");
  const auto& id = identity();
  const auto& bv = target().owned()->binary_version();
  CHECK(std::string(to_string(id.flavor)) == bv.flavor);
  CHECK(id.version.to_string() == bv.version);
  const bool valkey = id.flavor == Flavor::valkey;
  const Version v = id.version;
  CHECK(id.caps.hexpire == (valkey ? v >= Version{9, 0, 0} : v >= Version{7, 4, 0}));
  CHECK(id.caps.hsetex == (valkey ? v >= Version{9, 0, 0} : v >= Version{8, 0, 0}));
  CHECK(id.caps.hgetdel == (valkey ? v >= Version{9, 1, 0} : v >= Version{8, 0, 0}));
  CHECK(id.caps.debug);  // spawned servers run with enable-debug-command yes
  CHECK(id.line() == bv.flavor + "-" + std::to_string(v.major) + "." + std::to_string(v.minor));
}

TEST_CASE("Versions parse and order numerically", "[server]") {
  CHECK(Version::parse("9.1.2") == Version{9, 1, 2});
  CHECK(Version::parse("10.0") == Version{10, 0, 0});
  CHECK(Version{9, 10, 0} > Version{9, 9, 9});
  CHECK_THROWS_AS(Version::parse("x"), std::invalid_argument);
}
