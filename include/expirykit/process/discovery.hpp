// expirykit/process/discovery.hpp: finding and vetting a server binary.
//
// Order (first that is set wins):
//   1. an explicit path (ServerOptions::binary),
//   2. the environment variable EXPIRYKIT_SERVER (config().server, config.hpp): a path, or the
//      name of a provisioned server such as "redis-8.0" (see ci/provision-servers --list),
//   3. the provisioned default, "valkey-9.1" (Valkey 9.1.2 from Debian sid).
// Provisioned servers live in servers_cache_dir()/<name>/bin/<flavor>-server.
// Every candidate is vetted by running `<binary> --version` (5 s limit): its first line must be
// "Valkey server v=...", "Redis server v=..." or "Redict server v=..." (the format of Valkey 8/9,
// Redis 7/8 and Redict 7.3).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <thread>
#include <utility>

#include <boost/process/child.hpp>
#include <boost/process/io.hpp>

#include <expirykit/config.hpp>
#include <expirykit/process/errors.hpp>

namespace expirykit::process {

namespace fs = std::filesystem;

inline constexpr const char* default_server_name = "valkey-9.1";

/// EXPIRYKIT_SERVERS_DIR (config().servers_dir), else $XDG_CACHE_HOME/expirykit/servers, else
/// ~/.cache/expirykit/servers. Throws std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline fs::path servers_cache_dir() {
  if (const auto& d = config().servers_dir) return *d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "expirykit/servers";
  const char* home = std::getenv("HOME");
  return fs::path(home && *home ? home : "/root") / ".cache/expirykit/servers";
}

/// The server binary of a provisioned server ("valkey-9.1", "redis-8.0", ...), or an empty
/// path when it is not provisioned.
inline fs::path provisioned_server(const std::string& name) {
  for (const char* flavor : {"valkey", "redis", "redict"}) {
    fs::path p = servers_cache_dir() / name / "bin" / (std::string(flavor) + "-server");
    if (fs::exists(p)) return p;
  }
  return {};
}

/// A provisioned server line: its name ("redis-8.0") split into flavor and major.minor.
struct ProvisionedLine {
  std::string name, flavor;
  int major = 0, minor = 0;
};

/// Every server provisioned in servers_cache_dir() whose folder is named <flavor>-<major>.<minor>
/// (ci/provision-servers), in no particular order.
inline std::vector<ProvisionedLine> provisioned_lines() {
  std::vector<ProvisionedLine> out;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(servers_cache_dir(), ec)) {
    const std::string n = d.path().filename().string();
    const auto dash = n.rfind('-');
    if (dash == std::string::npos || provisioned_server(n).empty()) continue;
    ProvisionedLine l;
    l.name = n;
    l.flavor = n.substr(0, dash);
    if (std::sscanf(n.c_str() + dash + 1, "%d.%d", &l.major, &l.minor) != 2) continue;
    out.push_back(l);
  }
  return out;
}

/// The newest provisioned line of `flavor` older than major.minor (the release an upgrade to
/// major.minor comes from), or nullopt when none is provisioned.
inline std::optional<ProvisionedLine> previous_line(const std::string& flavor, int major, int minor) {
  std::optional<ProvisionedLine> best;
  for (const auto& l : provisioned_lines()) {
    if (l.flavor != flavor || std::make_pair(l.major, l.minor) >= std::make_pair(major, minor)) continue;
    if (!best || std::make_pair(l.major, l.minor) > std::make_pair(best->major, best->minor)) best = l;
  }
  return best;
}

/// What `--version` said: "Valkey server v=9.1.2 ..." -> {"valkey", "9.1.2"}.
struct BinaryVersion {
  std::string flavor;   ///< "valkey", "redis" or "redict"
  std::string version;  ///< "9.1.2"
  std::string line;     ///< the whole first line
};

/// Runs `binary --version` and checks it is a Valkey or Redis server. The answer is remembered
/// per path and modification time for the life of the process (one exec per binary, not per
/// server). Throws ServerError naming the binary: missing, not executable, hangs, or not a server.
inline BinaryVersion vet_server_binary(const fs::path& binary) {
  std::error_code ec;
  static std::mutex mu;
  static std::map<std::pair<std::string, fs::file_time_type>, BinaryVersion> vetted;
  const auto key = std::make_pair(binary.string(), fs::last_write_time(binary, ec));
  if (!ec) {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = vetted.find(key); it != vetted.end()) return it->second;
  }
  ec.clear();
  if (!fs::exists(binary, ec))
    throw ServerError("server binary " + binary.string() +
                      " does not exist; run ci/provision-servers or set EXPIRYKIT_SERVER to a valkey-server/redis-server path");
  if (fs::is_directory(binary, ec) || ::access(binary.c_str(), X_OK) != 0)
    throw ServerError("server binary " + binary.string() + " is not an executable file; chmod +x it or point EXPIRYKIT_SERVER elsewhere");
  namespace bp = boost::process;
  // Output goes to a temp file, not a pipe: a binary that prints nothing and hangs must not
  // block us past the deadline.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string out_path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/expirykit-version-XXXXXX";
  const int fd = ::mkstemp(out_path.data());
  if (fd < 0) throw ServerError("cannot create a temp file to vet " + binary.string() + ": " + std::strerror(errno));
  ::close(fd);
  struct Remove {
    std::string p;
    ~Remove() { ::unlink(p.c_str()); }
  } remove_out{out_path};
  bp::child c(binary.string(), "--version", bp::std_out > out_path, bp::std_err > bp::null, bp::std_in < bp::null, ec);
  if (ec) throw ServerError("server binary " + binary.string() + " cannot be started: " + ec.message());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (c.running(ec) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (c.running(ec)) {
    c.terminate(ec);
    c.wait(ec);
    throw ServerError("server binary " + binary.string() + " did not finish `--version` within 5 s: not a Valkey or Redis server?");
  }
  c.wait(ec);
  std::string line;
  {
    std::ifstream in(out_path);
    std::getline(in, line);
  }
  BinaryVersion v;
  v.line = line;
  for (const char* f : {"Valkey", "Redis", "Redict"}) {
    std::string prefix = std::string(f) + " server v=";
    if (line.rfind(prefix, 0) == 0) {
      v.flavor = f[0] == 'V' ? "valkey" : std::string(f) == "Redis" ? "redis" : "redict";
      auto rest = line.substr(prefix.size());
      v.version = rest.substr(0, rest.find(' '));
      std::lock_guard<std::mutex> lock(mu);
      vetted[key] = v;
      return v;
    }
  }
  throw ServerError("server binary " + binary.string() + " is not a Valkey or Redis server: `--version` printed '" +
                    line + "'; point EXPIRYKIT_SERVER at a valkey-server or redis-server binary");
}

/// Resolves the binary to run (see the order above; EXPIRYKIT_SERVER is config().server). Throws
/// ServerError if none is found, std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline fs::path find_server_binary(const fs::path& explicit_path = {}) {
  if (!explicit_path.empty()) return explicit_path;
  if (const auto chosen = config().server) {
    const std::string& v = *chosen;
    if (v.find('/') == std::string::npos) {
      if (auto p = provisioned_server(v); !p.empty()) return p;
      std::string have;
      std::error_code ec;
      for (const auto& d : fs::directory_iterator(servers_cache_dir(), ec))
        if (d.is_directory(ec) && !provisioned_server(d.path().filename().string()).empty())
          have += (have.empty() ? "" : ", ") + d.path().filename().string();
      throw ServerError("EXPIRYKIT_SERVER=" + v + " names no provisioned server in " + servers_cache_dir().string() +
                        " (provisioned there: " + (have.empty() ? std::string("none") : have) +
                        "); bash ci/provision-servers NAME provisions a line <valkey|redis|redict>-<major>.<minor> "
                        "from Debian's archive (its default set: valkey-9.1 redis-8.0 redis-8.6 valkey-8.1 valkey-8.0 "
                        "redis-7.0), or give a path to a server binary");
    }
    return v;
  }
  if (auto p = provisioned_server(default_server_name); !p.empty()) return p;
  throw ServerError(std::string("no server binary: the default (") + default_server_name + ") is not provisioned in " +
                    servers_cache_dir().string() + "; run ci/provision-servers, or set EXPIRYKIT_SERVER to a server binary");
}

}  // namespace expirykit::process
