// The kit's environment variables are parsed strictly (include/expirykit/config.hpp): a value that
// does not parse is an error naming the variable; addresses take host:port and [v6]:port
// (process/address.hpp); replay lines carry the server variables (env.hpp). config_test.cpp
// checks the rest of the configuration.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <expirykit/process/target.hpp>
#include <expirykit/property/property.hpp>

#include "../common/env.hpp"

using Catch::Matchers::ContainsSubstring;
namespace env = expirykit::env;

using ekcheck::ScopedEnv;

TEST_CASE("EXPIRYKIT_PROP_SCALE: a positive number, anything else is an error naming it", "[env]") {
  {
    ScopedEnv e("EXPIRYKIT_PROP_SCALE", nullptr);
    CHECK(expirykit::property::prop_scale() == 1.0);
  }
  {
    ScopedEnv e("EXPIRYKIT_PROP_SCALE", "0.5");
    CHECK(expirykit::property::prop_scale() == 0.5);
  }
  for (const char* bad : {"abc", "0", "-1", "5x", "nan", "inf", " 2"}) {
    ScopedEnv e("EXPIRYKIT_PROP_SCALE", bad);
    INFO("EXPIRYKIT_PROP_SCALE=" << bad);
    CHECK_THROWS_WITH(expirykit::property::prop_scale(),
                      ContainsSubstring("EXPIRYKIT_PROP_SCALE='" + std::string(bad) + "'") && ContainsSubstring("positive number"));
  }
}

TEST_CASE("EXPIRYKIT_PROP_SECONDS: non-negative seconds, overriding the scaled default", "[env]") {
  ScopedEnv scale("EXPIRYKIT_PROP_SCALE", "2");
  {
    ScopedEnv e("EXPIRYKIT_PROP_SECONDS", nullptr);
    CHECK(expirykit::property::prop_seconds(20) == 40);
  }
  {
    ScopedEnv e("EXPIRYKIT_PROP_SECONDS", "0");
    CHECK(expirykit::property::prop_seconds(20) == 0);
  }
  {
    ScopedEnv e("EXPIRYKIT_PROP_SECONDS", "1800");
    CHECK(expirykit::property::prop_seconds(20) == 1800);
  }
  ScopedEnv e("EXPIRYKIT_PROP_SECONDS", "30m");
  CHECK_THROWS_WITH(expirykit::property::prop_seconds(20), ContainsSubstring("EXPIRYKIT_PROP_SECONDS='30m'"));
}

TEST_CASE("Flags (EXPIRYKIT_KEEP_DIRS, EXPIRYKIT_UPDATE_BASELINES) take 1 or 0 only", "[env]") {
  using expirykit::config;
  {
    ScopedEnv e("EXPIRYKIT_KEEP_DIRS", "1"), u("EXPIRYKIT_UPDATE_BASELINES", "1");
    CHECK(config().keep_dirs);
    CHECK(config().update_baselines);
  }
  {
    ScopedEnv e("EXPIRYKIT_KEEP_DIRS", "0"), u("EXPIRYKIT_UPDATE_BASELINES", "0");
    CHECK_FALSE(config().keep_dirs);
    CHECK_FALSE(config().update_baselines);
  }
  ScopedEnv e("EXPIRYKIT_KEEP_DIRS", "yes");
  CHECK_THROWS_AS(config(), std::invalid_argument);
  CHECK_THROWS_WITH(config(), ContainsSubstring("EXPIRYKIT_KEEP_DIRS='yes' must be 1 or 0"));
}

TEST_CASE("Server addresses: host:port, [v6]:port; anything else names the variable", "[env]") {
  using expirykit::process::parse_address;
  CHECK(parse_address("127.0.0.1:6379") == std::pair<std::string, int>{"127.0.0.1", 6379});
  CHECK(parse_address("[::1]:7000") == std::pair<std::string, int>{"::1", 7000});
  CHECK(parse_address("localhost:1") == std::pair<std::string, int>{"localhost", 1});
  for (const char* bad : {"127.0.0.1", ":6379", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:63x", "[::1]", "[]:5", "h:"}) {
    INFO(bad);
    CHECK_THROWS_WITH(parse_address(bad, "EXPIRYKIT_SERVER_ADDR"),
                      ContainsSubstring("EXPIRYKIT_SERVER_ADDR='" + std::string(bad) + "' is not host:port"));
  }
}

TEST_CASE("Replay lines quote for the shell and select one Catch2 test", "[env]") {
  CHECK(env::shell_quote("a b") == "'a b'");
  CHECK(env::shell_quote("it's") == "'it'\\''s'");
  ScopedEnv s("EXPIRYKIT_SERVER", "redis-8.0"), a("EXPIRYKIT_SERVER_ADDR", nullptr), d("EXPIRYKIT_SERVERS_DIR", nullptr),
      sh("EXPIRYKIT_CLUSTER_SHAPE", nullptr), seed("EXPIRYKIT_CLUSTER_SEED", nullptr), dia("EXPIRYKIT_DIALECT", nullptr);
  CHECK(env::server_assignments() == "EXPIRYKIT_SERVER='redis-8.0' ");
  const std::string line = expirykit::property::replay_command(42, "a\\, b");
  CHECK_THAT(line, ContainsSubstring("RC_PARAMS=\"seed=42\"") && ContainsSubstring("EXPIRYKIT_PROP_SECONDS=0") &&
                       ContainsSubstring("EXPIRYKIT_SERVER='redis-8.0'") && ContainsSubstring(" 'a\\, b'"));
}
