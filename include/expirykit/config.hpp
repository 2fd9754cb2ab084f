// expirykit/config.hpp: the kit's configuration, read from the EXPIRYKIT_* environment
// variables once and parsed strictly.
//
//   const expirykit::Config& c = expirykit::config();   // read on first use, then kept
//   double scale = c.prop_scale;                       // EXPIRYKIT_PROP_SCALE, default 1
//   if (c.server_addr) connect(c.server_addr->host, c.server_addr->port);
//
// Every EXPIRYKIT_* variable the C++ code reads is one typed member of Config, with its default;
// no other header reads one (env.hpp lists every variable the kit, its scripts and its CMake files
// read: docs/reference/env.md is generated from that table). An empty value counts as unset. A
// value that does not parse is an std::invalid_argument naming the variable and its value (every
// bad one, a line each), thrown by config() whenever it is asked, never a silent default; only
// reporting reads partial_config() (the values that parse) meanwhile.
// Which servers a run tests (a spawned one, EXPIRYKIT_SERVER_ADDR, a cluster) is decided from
// here by process/under_test.hpp.
//
// Code that changes the environment while it runs (the kit's own checks) calls reload_config()
// after the change. config() is safe to call from several threads; a reload while other threads
// read is too (every Config read stays alive for the process: a reference taken before a
// reload keeps the values it had).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/detail/env_values.hpp>
#include <expirykit/process/address.hpp>
#include <expirykit/process/errors.hpp>

namespace expirykit {

/// The shape of a cluster the kit spawns: primaries x replicas of each (EXPIRYKIT_CLUSTER_SHAPE).
struct ClusterShape {
  int primaries = 3;  ///< 1-99
  int replicas = 1;   ///< per primary, 0-9
  /// "3x1", the form EXPIRYKIT_CLUSTER_SHAPE takes.
  std::string to_string() const { return std::to_string(primaries) + "x" + std::to_string(replicas); }
  bool operator==(const ClusterShape&) const = default;
};

/// How the memory suite spaces its layouts' TTLs (EXPIRYKIT_MEMORY_TTL).
enum class MemoryTtl {
  paced,  ///< "paced": PXAT from an aligned base, 1 ms apart per item (repeatable)
  ex,     ///< "ex": EX 900 (expiry times depend on the load's speed)
};

/// Every EXPIRYKIT_* variable the C++ code reads, parsed. A default-constructed Config is the
/// configuration of an empty environment.
struct Config {
  // ---- the servers under test (process/under_test.hpp, process/discovery.hpp) ----
  /// EXPIRYKIT_SERVER: a provisioned line ("redis-8.0") or a path to a server binary; nullopt: the
  /// provisioned default, valkey-9.1 (process/discovery.hpp vets it).
  std::optional<std::string> server;
  /// EXPIRYKIT_SERVER_ADDR: host:port of a server you started (external mode); nullopt: the kit
  /// spawns its servers.
  std::optional<process::Address> server_addr;
  /// EXPIRYKIT_SERVER_PASSWORD: the AUTH password of external servers; nullopt: no AUTH.
  std::optional<std::string> server_password;
  /// EXPIRYKIT_SERVER_USER: the ACL user of server_password; nullopt: the default user. Set
  /// without a password it is an error where credentials are used (process::external_credentials).
  std::optional<std::string> server_user;
  /// EXPIRYKIT_SERVER_TLS_CA: a PEM file of the CA of external servers' certificates: the kit's
  /// connections to them speak TLS (resp/tls.hpp; needs a build with TLS); nullopt: plain TCP.
  std::optional<std::filesystem::path> server_tls_ca;
  /// EXPIRYKIT_SERVER_TLS_CERT / EXPIRYKIT_SERVER_TLS_KEY: a client certificate and its key (PEM)
  /// for external servers with tls-auth-clients yes; both or neither, with
  /// EXPIRYKIT_SERVER_TLS_CA (process::external_tls says so otherwise).
  std::optional<std::filesystem::path> server_tls_cert, server_tls_key;
  /// EXPIRYKIT_SERVERS_DIR: the folder of provisioned binaries; nullopt:
  /// $XDG_CACHE_HOME/expirykit/servers, else ~/.cache/expirykit/servers.
  std::optional<std::filesystem::path> servers_dir;
  /// EXPIRYKIT_CLUSTER_SEED: host:port of a node of a running cluster; nullopt: the kit spawns
  /// its clusters.
  std::optional<process::Address> cluster_seed;
  /// EXPIRYKIT_CLUSTER_SHAPE: the shape of the clusters the kit spawns; nullopt: 3x1.
  std::optional<ClusterShape> cluster_shape;
  /// EXPIRYKIT_KEEP_DIRS=1: keep each spawned server's folder and log.
  bool keep_dirs = false;
  /// EXPIRYKIT_FAIL_NOT_SUPPORTED=1: a NOT SUPPORTED skip (the server lacks what a check needs:
  /// field TTLs, DEBUG, a dialect) fails the test instead (catch2/verdict_kind.hpp, skip()).
  bool fail_not_supported = false;
  /// EXPIRYKIT_DIALECT: the name of the model dialect that checks the server ("redis-8.0");
  /// nullopt: the server's own (server/dialect_choice.hpp checks the name).
  std::optional<std::string> dialect;
  /// EXPIRYKIT_WIRE_DELAY_MS: milliseconds every resp::Client waits after it sends, before it reads
  /// the replies (each round trip that much slower, as on a slow network or a busy CI runner), 0
  /// to 60000; 0 or unset: none (resp/client.hpp).
  long long wire_delay_ms = 0;
  /// EXPIRYKIT_READ_SPIN_US: microseconds a resp::Client polls its socket for a reply it waits
  /// for, yielding the processor between polls, before it sleeps in the kernel (0 to 100000; 0:
  /// never polls). A sleeping reader is woken by the kernel when the reply lands, which on this
  /// kind of virtual machine costs more than the server's work (a PING round trip 90-140 us
  /// asleep, 30 us polling: bench/RESULTS.md 9.11).
  long long read_spin_us = 300;

  // ---- properties (property/property.hpp) ----
  /// EXPIRYKIT_PROP_SCALE: multiplies property rounds and time budgets; > 0.
  double prop_scale = 1.0;
  /// EXPIRYKIT_PROP_SECONDS: a property's wall-clock budget in seconds, >= 0 (0: one round);
  /// nullopt: each property's own budget x prop_scale.
  std::optional<double> prop_seconds;

  /// EXPIRYKIT_PROTOCOL: `2`, `3` or `both`: the protocols the main, durability and cluster
  /// properties draw from per sequence (property::property_protocols); nullopt: both with hiredis
  /// 1.1 or later, else 2.
  std::optional<std::string> protocol;

  // ---- verdicts, baselines, benchmarks ----
  /// EXPIRYKIT_VERDICT_FILE: the file the verdict listener appends a line per test case to
  /// (catch2/verdict.hpp); nullopt: none written.
  std::optional<std::filesystem::path> verdict_file;
  /// EXPIRYKIT_UPDATE_BASELINES=1: record memory baselines instead of comparing with them.
  bool update_baselines = false;
  /// EXPIRYKIT_BASELINE_DIR: the folder of memory baselines (<line>.json); nullopt: the
  /// caller's fallback (memory::baseline_dir).
  std::optional<std::filesystem::path> baseline_dir;
  /// EXPIRYKIT_BENCHMARK: valkey-benchmark or redis-benchmark to run; nullopt: the one next to
  /// the server binary (bench/compare.hpp).
  std::optional<std::filesystem::path> benchmark;

  // ---- the kit's own suites ----
  /// EXPIRYKIT_UPGRADE_FROM: the previous release of suites/durability/upgrade.cpp, a provisioned
  /// name or a binary path; nullopt: the newest provisioned older line of the server's flavor.
  std::optional<std::string> upgrade_from;
  /// EXPIRYKIT_MEMORY_N: items per memory layout (suites/memory), 1 to 10^9.
  std::size_t memory_n = 20000;
  /// EXPIRYKIT_MEMORY_VALUE_SIZE: bytes per value of a memory layout, 1 to 10^6.
  std::size_t memory_value_size = 40;
  /// EXPIRYKIT_MEMORY_REPS: fresh servers measured per layout, 1 to 100.
  int memory_reps = 3;
  /// EXPIRYKIT_MEMORY_TTL: "paced" or "ex".
  MemoryTtl memory_ttl = MemoryTtl::paced;

  bool operator==(const Config&) const = default;

  /// What a variable is set to: its value, or nullopt when it is unset or empty.
  using Lookup = std::function<std::optional<std::string>(const std::string& name)>;

  /// The Config of the variables `lookup` gives (the environment: from_environment()). Throws
  /// std::invalid_argument naming each variable whose value does not parse, with its value, one
  /// per line (see the members for what each takes).
  static Config from(const Lookup& lookup) {
    std::vector<std::string> errors;
    Config c = parse(lookup, errors);
    if (!errors.empty()) {
      std::string all;
      for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
      throw std::invalid_argument(all);
    }
    return c;
  }

  /// from() as far as the values parse: a variable whose value does not parse keeps its
  /// member's default, and its error (naming it and its value) is appended to `errors`.
  static Config parse(const Lookup& lookup, std::vector<std::string>& errors) {
    Config c;
    // Each variable: its value when set; a parse error is collected, so that one message names
    // every bad value.
    const auto read = [&](const char* name, auto&& parse) {
      const auto v = lookup(name);
      if (!v || v->empty()) return;
      try {
        parse(*v);
      } catch (const std::invalid_argument& e) {
        errors.emplace_back(e.what());
      }
    };
    const auto text = [](std::optional<std::string>& to) { return [&to](const std::string& v) { to = v; }; };
    const auto path = [](std::optional<std::filesystem::path>& to) {
      return [&to](const std::string& v) { to = std::filesystem::path(v); };
    };
    const auto flag = [](const char* name, bool& to) { return [name, &to](const std::string& v) { to = detail::parse_flag(name, v); }; };

    read("EXPIRYKIT_SERVER", text(c.server));
    read("EXPIRYKIT_SERVER_ADDR", [&](const std::string& v) {
      try {
        c.server_addr = process::Address::parse(v, "EXPIRYKIT_SERVER_ADDR");
      } catch (const process::ServerError& e) {
        throw std::invalid_argument(std::string(e.what()) + "; expected a server you started, or unset it to let the kit spawn one");
      }
    });
    read("EXPIRYKIT_SERVER_PASSWORD", text(c.server_password));
    read("EXPIRYKIT_SERVER_USER", text(c.server_user));
    read("EXPIRYKIT_SERVER_TLS_CA", path(c.server_tls_ca));
    read("EXPIRYKIT_SERVER_TLS_CERT", path(c.server_tls_cert));
    read("EXPIRYKIT_SERVER_TLS_KEY", path(c.server_tls_key));
    read("EXPIRYKIT_SERVERS_DIR", path(c.servers_dir));
    read("EXPIRYKIT_CLUSTER_SEED", [&](const std::string& v) {
      try {
        c.cluster_seed = process::Address::parse(v, "EXPIRYKIT_CLUSTER_SEED");
      } catch (const process::ServerError& e) {
        throw std::invalid_argument(std::string(e.what()) + "; expected a node of a running cluster");
      }
    });
    read("EXPIRYKIT_CLUSTER_SHAPE", [&](const std::string& v) { c.cluster_shape = parse_cluster_shape(v); });
    read("EXPIRYKIT_KEEP_DIRS", flag("EXPIRYKIT_KEEP_DIRS", c.keep_dirs));
    read("EXPIRYKIT_FAIL_NOT_SUPPORTED", flag("EXPIRYKIT_FAIL_NOT_SUPPORTED", c.fail_not_supported));
    read("EXPIRYKIT_DIALECT", text(c.dialect));
    read("EXPIRYKIT_WIRE_DELAY_MS", [&](const std::string& v) {  // "0": off, as unset (a CI matrix's off leg)
      if (v == "0") return;
      try {
        c.wire_delay_ms = static_cast<long long>(detail::parse_count("EXPIRYKIT_WIRE_DELAY_MS", v, 60000, "3"));
      } catch (const std::invalid_argument&) {
        throw std::invalid_argument("EXPIRYKIT_WIRE_DELAY_MS='" + v +
                                    "' is not a number of milliseconds (0 to 60000, e.g. 3; 0 or unset: none)");
      }
    });
    read("EXPIRYKIT_READ_SPIN_US", [&](const std::string& v) {
      if (v == "0") {  // never poll
        c.read_spin_us = 0;
        return;
      }
      try {
        c.read_spin_us = static_cast<long long>(detail::parse_count("EXPIRYKIT_READ_SPIN_US", v, 100000, "300"));
      } catch (const std::invalid_argument&) {
        throw std::invalid_argument("EXPIRYKIT_READ_SPIN_US='" + v +
                                    "' is not a number of microseconds (0 to 100000, e.g. 300; 0: never poll)");
      }
    });
    read("EXPIRYKIT_PROP_SCALE", [&](const std::string& v) { c.prop_scale = detail::parse_number("EXPIRYKIT_PROP_SCALE", v, false); });
    read("EXPIRYKIT_PROP_SECONDS",
         [&](const std::string& v) { c.prop_seconds = detail::parse_number("EXPIRYKIT_PROP_SECONDS", v, true); });
    read("EXPIRYKIT_PROTOCOL", [&](const std::string& v) {
      if (v != "2" && v != "3" && v != "both")
        throw std::invalid_argument("EXPIRYKIT_PROTOCOL='" + v + "' is not 2, 3 or both (the protocols the properties run on)");
      c.protocol = v;
    });
    read("EXPIRYKIT_VERDICT_FILE", path(c.verdict_file));
    read("EXPIRYKIT_UPDATE_BASELINES", flag("EXPIRYKIT_UPDATE_BASELINES", c.update_baselines));
    read("EXPIRYKIT_BASELINE_DIR", path(c.baseline_dir));
    read("EXPIRYKIT_BENCHMARK", path(c.benchmark));
    read("EXPIRYKIT_UPGRADE_FROM", text(c.upgrade_from));
    read("EXPIRYKIT_MEMORY_N",
         [&](const std::string& v) { c.memory_n = detail::parse_count("EXPIRYKIT_MEMORY_N", v, 1000000000, "20000"); });
    read("EXPIRYKIT_MEMORY_VALUE_SIZE",
         [&](const std::string& v) { c.memory_value_size = detail::parse_count("EXPIRYKIT_MEMORY_VALUE_SIZE", v, 1000000, "40"); });
    read("EXPIRYKIT_MEMORY_REPS", [&](const std::string& v) {
      c.memory_reps = static_cast<int>(detail::parse_count("EXPIRYKIT_MEMORY_REPS", v, 100, "3"));
    });
    read("EXPIRYKIT_MEMORY_TTL", [&](const std::string& v) {
      if (v == "paced") c.memory_ttl = MemoryTtl::paced;
      else if (v == "ex") c.memory_ttl = MemoryTtl::ex;
      else throw std::invalid_argument("EXPIRYKIT_MEMORY_TTL='" + v + "': use paced or ex (or unset it for paced)");
    });
    return c;
  }

  /// The variables of this process's environment as it is now, for from() and parse().
  static std::optional<std::string> environment(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  }
  /// from() of this process's environment as it is now.
  static Config from_environment() { return from(environment); }

  /// "<primaries>x<replicas>" (digits only: 1-99 primaries, 0-9 replicas each). Throws
  /// std::invalid_argument naming EXPIRYKIT_CLUSTER_SHAPE and `v` on another form.
  static ClusterShape parse_cluster_shape(const std::string& v) {
    const auto x = v.find('x');
    const auto digits = [](const std::string& t, std::size_t max_len) {
      return !t.empty() && t.size() <= max_len && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (x == std::string::npos || !digits(v.substr(0, x), 2) || !digits(v.substr(x + 1), 1) || std::stoi(v.substr(0, x)) < 1)
      throw std::invalid_argument("EXPIRYKIT_CLUSTER_SHAPE='" + v +
                                  "': expected <primaries>x<replicas per primary> with 1-99 primaries and 0-9 "
                                  "replicas each, e.g. 3x1");
    return ClusterShape{std::stoi(v.substr(0, x)), std::stoi(v.substr(x + 1))};
  }
};

namespace detail {
/// Every Config this process read (a reference handed out stays valid), the current one, the
/// last read as far as it parsed, and the error of the last read when it failed.
struct ConfigStore {
  std::mutex mu;
  bool read = false;
  std::list<Config> kept;
  const Config* current = nullptr;
  const Config* partial = nullptr;
  std::string error;
};
inline ConfigStore& config_store() {
  static ConfigStore s;
  return s;
}
/// Reads the environment into `s`; `s.mu` is held.
inline void read_config(ConfigStore& s) {
  s.read = true;
  std::vector<std::string> errors;
  Config c = Config::parse(Config::environment, errors);
  if (!s.partial || !(*s.partial == c)) {
    s.kept.push_back(std::move(c));
    s.partial = &s.kept.back();
  }
  s.error.clear();
  for (const auto& e : errors) s.error += (s.error.empty() ? "" : "\n") + e;
  s.current = errors.empty() ? s.partial : nullptr;
}
}  // namespace detail

/// The configuration, read from the environment on the first call (thread-safe) and kept until
/// reload_config(). Throws std::invalid_argument naming every EXPIRYKIT_* variable whose value
/// does not parse, with its value (the same error on every call until a reload reads good values).
inline const Config& config() {
  auto& s = detail::config_store();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.read) detail::read_config(s);
  if (!s.current) throw std::invalid_argument(s.error);
  return *s.current;
}

/// The configuration as far as it parses: config(), except that a variable whose value does not
/// parse has its member's default instead of an error. Never throws for a bad value. Only for
/// reporting while the configuration is bad (the verdict listener still writes its lines, each
/// test failing with config()'s error), and resp::Client's EXPIRYKIT_WIRE_DELAY_MS (a bad value
/// elsewhere must not make every connection throw; the fixtures throw it); everything else calls
/// config().
inline const Config& partial_config() {
  auto& s = detail::config_store();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.read) detail::read_config(s);
  return *s.partial;
}

/// Reads the environment again, for code that changed it (the kit's checks: ekcheck::ScopedEnv).
/// Does not throw for a bad value: the next config() call throws it.
inline void reload_config() {
  auto& s = detail::config_store();
  std::lock_guard<std::mutex> lock(s.mu);
  detail::read_config(s);
}

}  // namespace expirykit
