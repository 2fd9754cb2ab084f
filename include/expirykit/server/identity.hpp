// expirykit/server/identity.hpp: which server this is (flavor and version) and what it can do.
//
// Flavor and version come from INFO server: Valkey prints server_name:valkey and
// valkey_version:X.Y.Z (its redis_version is a compatibility value, 7.2.4 on Valkey 8/9);
// Redis prints redis_version:X.Y.Z and no server_name (checked live on Valkey 8.0.1, 9.1.2,
// Redis 7.0.15, 8.0.6, 8.6.3); Redict prints redict_version:X.Y.Z and redis_version:7.2.4, a
// compatibility value (live 7.3.6). Capabilities come from COMMAND INFO, which answers nil for a command
// the server does not know, so they hold for any build, not a version table.
#pragma once

#include <compare>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/resp/client.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::server {

/// The server's family. Redict (a fork of Redis 7.2, codeberg.org/redict) is a control line: it
/// has no hash field TTLs.
enum class Flavor { valkey, redis, redict };
inline const char* to_string(Flavor f) {
  return f == Flavor::valkey ? "valkey" : f == Flavor::redis ? "redis" : "redict";
}

struct Version {
  int major = 0, minor = 0, patch = 0;
  /// Parses "9.1.2" (missing parts are 0). Throws std::invalid_argument on anything else.
  static Version parse(std::string_view s) {
    Version v;
    int n = std::sscanf(std::string(s).c_str(), "%d.%d.%d", &v.major, &v.minor, &v.patch);
    if (n < 1) throw std::invalid_argument("not a version: '" + std::string(s) + "'");
    return v;
  }
  std::string to_string() const {
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
  friend auto operator<=>(const Version&, const Version&) = default;
};

/// What a server supports, probed with COMMAND INFO (nil for an unknown command).
struct Capabilities {
  bool hexpire = false;  ///< HEXPIRE family, HTTL family, HPERSIST (Redis 7.4+, Valkey 9.0+)
  bool hsetex = false;   ///< HSETEX (Redis 8.0+, Valkey 9.0+)
  bool hgetex = false;   ///< HGETEX (Redis 8.0+, Valkey 9.0+)
  bool hgetdel = false;  ///< HGETDEL (Redis 8.0+, Valkey 9.1+)
  bool debug = false;    ///< DEBUG is enabled (enable-debug-command), e.g. DEBUG SET-ACTIVE-EXPIRE
  /// Field TTLs as a whole (the HEXPIRE family).
  bool field_ttl() const { return hexpire; }
};

struct Identity {
  Flavor flavor = Flavor::valkey;
  Version version;
  Capabilities caps;
  /// "valkey 9.1.2"
  std::string to_string() const { return std::string(server::to_string(flavor)) + " " + version.to_string(); }
  /// "valkey-9.1": the server line used for dialects and memory baselines.
  std::string line() const {
    return std::string(server::to_string(flavor)) + "-" + std::to_string(version.major) + "." +
           std::to_string(version.minor);
  }

  /// Reads INFO server and COMMAND INFO on `c`. Throws std::runtime_error if the peer does
  /// not look like Valkey, Redis or Redict (no redis_version in INFO server).
  static Identity probe(resp::Client& c) {
    Info info = Info::fetch(c, "server");
    Identity id;
    auto name = info.get("server_name");
    if (name && *name == "valkey") {
      id.flavor = Flavor::valkey;
      id.version = Version::parse(info.get("valkey_version").value_or("0"));
    } else if (auto dv = info.get("redict_version")) {
      id.flavor = Flavor::redict;
      id.version = Version::parse(*dv);
    } else if (auto rv = info.get("redis_version")) {
      id.flavor = Flavor::redis;
      id.version = Version::parse(*rv);
    } else {
      throw std::runtime_error(c.address() + ": not a Valkey or Redis server (INFO server has no redis_version)");
    }
    auto r = c("COMMAND", "INFO", "hexpire", "hsetex", "hgetex", "hgetdel");
    if (r.is_array() && r.size() == 4) {
      id.caps.hexpire = !r[0].is_nil();
      id.caps.hsetex = !r[1].is_nil();
      id.caps.hgetex = !r[2].is_nil();
      id.caps.hgetdel = !r[3].is_nil();
    }
    // DEBUG HELP is refused ("ERR DEBUG command not allowed") when enable-debug-command is no.
    id.caps.debug = !c("DEBUG", "HELP").is_error();
    return id;
  }
};

}  // namespace expirykit::server
