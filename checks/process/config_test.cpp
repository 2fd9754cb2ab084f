// The kit's configuration (include/expirykit/config.hpp): every EXPIRYKIT_* variable the C++ code
// reads is one typed member, parsed strictly once; config() reads the environment once and
// reload_config() again; the table of every variable (env.hpp) names exactly what Config reads;
// the servers under test are chosen from it (process/under_test.hpp). No server.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/credentials.hpp>

#include "../common/env.hpp"

using Catch::Matchers::ContainsSubstring;
using ekcheck::ScopedEnv;
using expirykit::Config;
namespace env = expirykit::env;
namespace ekp = expirykit::process;

namespace {
/// Config::from() of exactly these variables.
Config config_from(const std::map<std::string, std::string>& vars) {
  return Config::from([&vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}
/// The message Config::from() throws for these variables ("" when it throws nothing).
std::string parse_error_of(const std::map<std::string, std::string>& vars) {
  try {
    config_from(vars);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("Config: an empty environment gives the documented defaults", "[config]") {
  const Config c = config_from({});
  CHECK(c == Config{});
  CHECK_FALSE(c.server);
  CHECK_FALSE(c.server_addr);
  CHECK_FALSE(c.cluster_seed);
  CHECK_FALSE(c.cluster_shape);
  CHECK_FALSE(c.keep_dirs);
  CHECK_FALSE(c.fail_not_supported);
  CHECK_FALSE(c.update_baselines);
  CHECK(c.prop_scale == 1.0);
  CHECK_FALSE(c.prop_seconds);
  CHECK(c.memory_n == 20000);
  CHECK(c.memory_value_size == 40);
  CHECK(c.memory_reps == 3);
  CHECK(c.memory_ttl == expirykit::MemoryTtl::paced);
  // An empty value counts as unset, for every variable.
  std::map<std::string, std::string> empty;
  for (const auto& v : env::variables) empty[std::string(v.name)] = "";
  CHECK(config_from(empty) == Config{});
}

TEST_CASE("Config: every variable parses into its typed member", "[config]") {
  const Config c = config_from({{"EXPIRYKIT_SERVER", "redis-8.0"},
                              {"EXPIRYKIT_SERVER_ADDR", "[::1]:7000"},
                              {"EXPIRYKIT_SERVER_PASSWORD", "pw"},
                              {"EXPIRYKIT_SERVER_USER", "bob"},
                              {"EXPIRYKIT_SERVER_TLS_CA", "/certs/ca.crt"},
                              {"EXPIRYKIT_SERVER_TLS_CERT", "/certs/client.crt"},
                              {"EXPIRYKIT_SERVER_TLS_KEY", "/certs/client.key"},
                              {"EXPIRYKIT_SERVERS_DIR", "/srv/servers"},
                              {"EXPIRYKIT_CLUSTER_SEED", "127.0.0.1:7001"},
                              {"EXPIRYKIT_CLUSTER_SHAPE", "5x0"},
                              {"EXPIRYKIT_KEEP_DIRS", "1"},
                              {"EXPIRYKIT_FAIL_NOT_SUPPORTED", "1"},
                              {"EXPIRYKIT_DIALECT", "redis-8.0"},
                              {"EXPIRYKIT_PROP_SCALE", "0.5"},
                              {"EXPIRYKIT_PROP_SECONDS", "0"},
                              {"EXPIRYKIT_VERDICT_FILE", "/tmp/v.tsv"},
                              {"EXPIRYKIT_UPDATE_BASELINES", "1"},
                              {"EXPIRYKIT_BASELINE_DIR", "base"},
                              {"EXPIRYKIT_BENCHMARK", "/usr/bin/valkey-benchmark"},
                              {"EXPIRYKIT_UPGRADE_FROM", "valkey-8.1"},
                              {"EXPIRYKIT_MEMORY_N", "1000"},
                              {"EXPIRYKIT_MEMORY_VALUE_SIZE", "8"},
                              {"EXPIRYKIT_MEMORY_REPS", "1"},
                              {"EXPIRYKIT_MEMORY_TTL", "ex"}});
  CHECK(c.server == "redis-8.0");
  REQUIRE(c.server_addr);
  CHECK(c.server_addr->text == "[::1]:7000");
  CHECK(c.server_addr->host == "::1");
  CHECK(c.server_addr->port == 7000);
  CHECK(c.server_password == "pw");
  CHECK(c.server_user == "bob");
  CHECK((c.server_tls_ca == std::filesystem::path("/certs/ca.crt")));
  CHECK((c.server_tls_cert == std::filesystem::path("/certs/client.crt")));
  CHECK((c.server_tls_key == std::filesystem::path("/certs/client.key")));
  CHECK((c.servers_dir == std::filesystem::path("/srv/servers")));
  REQUIRE(c.cluster_seed);
  CHECK(c.cluster_seed->host == "127.0.0.1");
  CHECK(c.cluster_seed->port == 7001);
  REQUIRE(c.cluster_shape);
  CHECK(c.cluster_shape->primaries == 5);
  CHECK(c.cluster_shape->replicas == 0);
  CHECK(c.cluster_shape->to_string() == "5x0");
  CHECK(c.keep_dirs);
  CHECK(c.fail_not_supported);
  CHECK(c.dialect == "redis-8.0");
  CHECK(c.prop_scale == 0.5);
  CHECK(c.prop_seconds == 0.0);
  CHECK((c.verdict_file == std::filesystem::path("/tmp/v.tsv")));
  CHECK(c.update_baselines);
  CHECK((c.baseline_dir == std::filesystem::path("base")));
  CHECK((c.benchmark == std::filesystem::path("/usr/bin/valkey-benchmark")));
  CHECK(c.upgrade_from == "valkey-8.1");
  CHECK(c.memory_n == 1000);
  CHECK(c.memory_value_size == 8);
  CHECK(c.memory_reps == 1);
  CHECK(c.memory_ttl == expirykit::MemoryTtl::ex);
}

TEST_CASE("Config: a bad value is an std::invalid_argument naming the variable and its value", "[config]") {
  struct Bad {
    const char* name;
    const char* value;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"EXPIRYKIT_SERVER_ADDR", "no-port-here", "is not host:port (e.g. 127.0.0.1:6379"},
           {"EXPIRYKIT_SERVER_ADDR", "127.0.0.1:0", "unset it to let the kit spawn one"},
           {"EXPIRYKIT_CLUSTER_SEED", "[::1]", "expected a node of a running cluster"},
           {"EXPIRYKIT_CLUSTER_SHAPE", "3", "expected <primaries>x<replicas per primary>"},
           {"EXPIRYKIT_CLUSTER_SHAPE", "0x1", "1-99 primaries"},
           {"EXPIRYKIT_CLUSTER_SHAPE", "3x10", "0-9 replicas"},
           {"EXPIRYKIT_CLUSTER_SHAPE", "+3x1", "e.g. 3x1"},
           {"EXPIRYKIT_KEEP_DIRS", "yes", "must be 1 or 0"},
           {"EXPIRYKIT_UPDATE_BASELINES", "true", "must be 1 or 0"},
           {"EXPIRYKIT_PROP_SCALE", "0", "is not a positive number"},
           {"EXPIRYKIT_PROP_SCALE", " 2", "is not a positive number"},
           {"EXPIRYKIT_PROP_SECONDS", "-1", "is not a non-negative number"},
           {"EXPIRYKIT_PROP_SECONDS", "30m", "is not a non-negative number"},
           {"EXPIRYKIT_MEMORY_N", "0", "is not a positive integer"},
           {"EXPIRYKIT_MEMORY_N", "2e4", "is not a positive integer"},
           {"EXPIRYKIT_MEMORY_N", "-5", "is not a positive integer"},
           {"EXPIRYKIT_MEMORY_VALUE_SIZE", "1000001", "1 to 1000000"},
           {"EXPIRYKIT_MEMORY_REPS", "101", "1 to 100"},
           {"EXPIRYKIT_MEMORY_REPS", "+3", "is not a positive integer"},
           {"EXPIRYKIT_MEMORY_TTL", "px", "use paced or ex"},
       }) {
    INFO(b.name << "=" << b.value);
    const std::string m = parse_error_of({{b.name, b.value}});
    CHECK_THAT(m, ContainsSubstring(std::string(b.name) + "='" + b.value + "'") && ContainsSubstring(b.says));
  }
  // Every bad value is named, one per line, not only the first.
  const std::string both = parse_error_of({{"EXPIRYKIT_KEEP_DIRS", "yes"}, {"EXPIRYKIT_MEMORY_TTL", "px"}});
  CHECK_THAT(both, ContainsSubstring("EXPIRYKIT_KEEP_DIRS='yes'") && ContainsSubstring("\nEXPIRYKIT_MEMORY_TTL='px'"));
}

TEST_CASE("config() reads the environment once; reload_config() reads it again", "[config]") {
  using expirykit::config;
  using expirykit::reload_config;
  ScopedEnv scale("EXPIRYKIT_PROP_SCALE", "2");  // sets it and reloads
  const Config& before = config();
  CHECK(before.prop_scale == 2);
  ::setenv("EXPIRYKIT_PROP_SCALE", "3", 1);
  CHECK(config().prop_scale == 2);  // read once: a change alone is not seen
  CHECK(&config() == &before);
  reload_config();
  CHECK(config().prop_scale == 3);
  CHECK(before.prop_scale == 2);  // a reference taken before the reload keeps its values
  // A bad value: reload_config() does not throw; every config() call does, until a good reload.
  ::setenv("EXPIRYKIT_PROP_SCALE", "abc", 1);
  CHECK_NOTHROW(reload_config());
  CHECK_THROWS_WITH(config(), ContainsSubstring("EXPIRYKIT_PROP_SCALE='abc' is not a positive number"));
  CHECK_THROWS_AS(config(), std::invalid_argument);
  CHECK_THROWS_WITH(expirykit::process::external_server(), ContainsSubstring("EXPIRYKIT_PROP_SCALE='abc'"));
  ::setenv("EXPIRYKIT_PROP_SCALE", "4", 1);
  reload_config();
  CHECK(config().prop_scale == 4);
}

TEST_CASE("partial_config(): the values that parse while another does not, for reporting", "[config]") {
  ScopedEnv bad("EXPIRYKIT_KEEP_DIRS", "yes"), file("EXPIRYKIT_VERDICT_FILE", "/tmp/verdicts.tsv"),
      scale("EXPIRYKIT_PROP_SCALE", "2");
  CHECK_THROWS_WITH(expirykit::config(), ContainsSubstring("EXPIRYKIT_KEEP_DIRS='yes'"));
  const Config& p = expirykit::partial_config();
  CHECK((p.verdict_file == std::filesystem::path("/tmp/verdicts.tsv")));
  CHECK(p.prop_scale == 2);
  CHECK_FALSE(p.keep_dirs);  // the bad one: its default
  std::vector<std::string> errors;
  const Config q = Config::parse([](const std::string& n) -> std::optional<std::string> {
    if (n == "EXPIRYKIT_MEMORY_N") return "many";
    if (n == "EXPIRYKIT_MEMORY_REPS") return "5";
    return std::nullopt;
  }, errors);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], ContainsSubstring("EXPIRYKIT_MEMORY_N='many'"));
  CHECK(q.memory_n == 20000);
  CHECK(q.memory_reps == 5);
}

TEST_CASE("config() from several threads while the environment is read again", "[config]") {
  using expirykit::config;
  ScopedEnv scale("EXPIRYKIT_PROP_SCALE", "2");
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&] {
      while (!stop) {
        const double s = config().prop_scale;
        if (s != 2 && s != 3) ++wrong;
        ++reads;
      }
    });
  // At least 200 reloads, and on until the readers have read while reloads went on (on a loaded
  // machine they may not have been scheduled yet after 200; 10 s at most).
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200 || (reads < 100 && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)); ++i) {
    ::setenv("EXPIRYKIT_PROP_SCALE", i % 2 ? "2" : "3", 1);  // only this thread touches the environment
    expirykit::reload_config();
  }
  stop = true;
  for (auto& t : readers) t.join();
  CHECK(reads > 0);
  CHECK(wrong == 0);
}

TEST_CASE("The variable table names exactly what Config reads, each name once", "[config]") {
  std::set<std::string> asked;
  Config::from([&asked](const std::string& name) -> std::optional<std::string> {
    asked.insert(name);
    return std::nullopt;
  });
  std::set<std::string> listed, all;
  for (const auto& v : env::variables) {
    INFO(v.name);
    CHECK(v.name.substr(0, 10) == "EXPIRYKIT_");
    CHECK(all.insert(std::string(v.name)).second);  // each name once
    CHECK_FALSE(v.value.empty());
    CHECK_FALSE(v.default_value.empty());
    CHECK_FALSE(v.meaning.empty());
    CHECK_FALSE(v.read_by.empty());
    if (v.readers == env::Readers::headers || v.readers == env::Readers::suites) listed.insert(std::string(v.name));
  }
  CHECK(asked == listed);
  CHECK(env::find_variable("EXPIRYKIT_SERVER_ADDR") != nullptr);
  CHECK(env::find_variable(std::string("EXPIRYKIT_") + "NOT_A_ROW") == nullptr);  // split: not a name to list
}

TEST_CASE("The servers under test: an external server or cluster, and the shape of spawned clusters", "[config]") {
  ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", nullptr), user("EXPIRYKIT_SERVER_USER", nullptr);
  {
    ScopedEnv a("EXPIRYKIT_SERVER_ADDR", nullptr), s("EXPIRYKIT_CLUSTER_SEED", nullptr), sh("EXPIRYKIT_CLUSTER_SHAPE", nullptr);
    CHECK_FALSE(ekp::external_server());
    CHECK_FALSE(ekp::external_address());
    CHECK_FALSE(ekp::external_cluster());
    CHECK(ekp::cluster_shape().primaries == 3);
    CHECK(ekp::cluster_shape().replicas == 1);
  }
  {
    ScopedEnv a("EXPIRYKIT_SERVER_ADDR", "[::1]:7000"), s("EXPIRYKIT_CLUSTER_SEED", "localhost:7001"),
        sh("EXPIRYKIT_CLUSTER_SHAPE", "2x0");
    REQUIRE(ekp::external_server());
    CHECK(ekp::external_server()->host == "::1");
    CHECK(ekp::external_server()->port == 7000);
    CHECK(ekp::external_address() == "[::1]:7000");
    REQUIRE(ekp::external_cluster());
    CHECK(ekp::external_cluster()->host == "localhost");
    CHECK(ekp::external_cluster()->port == 7001);
    CHECK(ekp::cluster_shape().primaries == 2);
    CHECK(ekp::cluster_shape().replicas == 0);
  }
  {
    ScopedEnv s("EXPIRYKIT_CLUSTER_SHAPE", "3by1");
    CHECK_THROWS_WITH(ekp::cluster_shape(), ContainsSubstring("EXPIRYKIT_CLUSTER_SHAPE='3by1'"));
  }
}

TEST_CASE("An external server or cluster makes the password the fallback credentials", "[config][auth]") {
  using expirykit::resp::Credentials;
  using expirykit::resp::credentials_for;
  struct ForgetFallback {  // as before this check, also when a check fails
    ~ForgetFallback() { expirykit::resp::set_fallback_credentials(std::nullopt); }
  } forget;
  ScopedEnv s("EXPIRYKIT_CLUSTER_SEED", nullptr);
  {
    ScopedEnv a("EXPIRYKIT_SERVER_ADDR", "127.0.0.1:1"), pw("EXPIRYKIT_SERVER_PASSWORD", "pw"),
        user("EXPIRYKIT_SERVER_USER", "bob");
    CHECK(ekp::external_credentials() == Credentials{"bob", "pw"});
    REQUIRE(ekp::external_server());
    CHECK(credentials_for("127.0.0.1:2") == Credentials{"bob", "pw"});  // any server the kit did not spawn
  }
  {
    ScopedEnv a("EXPIRYKIT_SERVER_ADDR", nullptr), c("EXPIRYKIT_CLUSTER_SEED", "127.0.0.1:1"),
        pw("EXPIRYKIT_SERVER_PASSWORD", "cluster-pw"), user("EXPIRYKIT_SERVER_USER", nullptr);
    REQUIRE(ekp::external_cluster());
    CHECK(credentials_for("127.0.0.1:3") == Credentials{"", "cluster-pw"});
  }
  {
    ScopedEnv a("EXPIRYKIT_SERVER_ADDR", "127.0.0.1:1"), pw("EXPIRYKIT_SERVER_PASSWORD", nullptr),
        user("EXPIRYKIT_SERVER_USER", "bob");
    CHECK_THROWS_AS(ekp::external_server(), ekp::ServerError);
    CHECK_THROWS_WITH(ekp::external_server(),
                      ContainsSubstring("EXPIRYKIT_SERVER_USER='bob' is set without EXPIRYKIT_SERVER_PASSWORD"));
  }
}

TEST_CASE("Replay lines name every variable that picks the servers or the dialect, never the password", "[config]") {
  ScopedEnv s("EXPIRYKIT_SERVER", "/opt/it's/valkey-server"), a("EXPIRYKIT_SERVER_ADDR", "127.0.0.1:7"),
      d("EXPIRYKIT_SERVERS_DIR", "/srv"), sh("EXPIRYKIT_CLUSTER_SHAPE", "2x0"), seed("EXPIRYKIT_CLUSTER_SEED", "[::1]:9"),
      dia("EXPIRYKIT_DIALECT", "redis-8.0"), pw("EXPIRYKIT_SERVER_PASSWORD", "secret"), scale("EXPIRYKIT_PROP_SCALE", nullptr),
      ca("EXPIRYKIT_SERVER_TLS_CA", "/c/ca.crt"), cert("EXPIRYKIT_SERVER_TLS_CERT", "/c/cl.crt"),
      key("EXPIRYKIT_SERVER_TLS_KEY", "/c/cl.key"), gate("EXPIRYKIT_FAIL_NOT_SUPPORTED", "1");
  CHECK(env::server_assignments() ==
        "EXPIRYKIT_SERVER='/opt/it'\\''s/valkey-server' EXPIRYKIT_SERVER_ADDR='127.0.0.1:7' EXPIRYKIT_SERVERS_DIR='/srv' "
        "EXPIRYKIT_CLUSTER_SHAPE='2x0' EXPIRYKIT_CLUSTER_SEED='[::1]:9' EXPIRYKIT_DIALECT='redis-8.0' "
        "EXPIRYKIT_SERVER_TLS_CA='/c/ca.crt' EXPIRYKIT_SERVER_TLS_CERT='/c/cl.crt' EXPIRYKIT_SERVER_TLS_KEY='/c/cl.key' "
        "EXPIRYKIT_FAIL_NOT_SUPPORTED='1' ");
  ScopedEnv none_s("EXPIRYKIT_SERVER", nullptr), none_a("EXPIRYKIT_SERVER_ADDR", nullptr),
      none_d("EXPIRYKIT_SERVERS_DIR", nullptr), none_sh("EXPIRYKIT_CLUSTER_SHAPE", ""), none_seed("EXPIRYKIT_CLUSTER_SEED", nullptr),
      none_dia("EXPIRYKIT_DIALECT", nullptr), none_ca("EXPIRYKIT_SERVER_TLS_CA", nullptr),
      none_cert("EXPIRYKIT_SERVER_TLS_CERT", nullptr), none_key("EXPIRYKIT_SERVER_TLS_KEY", nullptr),
      none_gate("EXPIRYKIT_FAIL_NOT_SUPPORTED", nullptr);
  CHECK(env::server_assignments().empty());
}
