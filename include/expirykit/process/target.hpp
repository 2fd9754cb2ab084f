// expirykit/process/target.hpp: the server under test: one the kit spawned, or an external one.
//
// If EXPIRYKIT_SERVER_ADDR=host:port is set, the Target connects to that server instead of
// spawning one (external mode): what needs a restart, a config the kit cannot set, or the
// server's files is then unavailable (owned() is nullptr) and tests skip it with a reason.
// Otherwise it owns a process::Server started with the given options.
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <expirykit/env.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::process {

/// "host:port", "[v6-address]:port" (e.g. "[::1]:6379") or "v6-address:port" split into host and
/// port. Throws ServerError naming `what` (e.g. "EXPIRYKIT_SERVER_ADDR") when it is not one.
inline std::pair<std::string, int> parse_address(const std::string& a, const std::string& what = "address") {
  const auto colon = a.rfind(':');
  std::string host = colon == std::string::npos ? std::string() : a.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = 0;
  std::size_t used = 0;
  try {
    if (colon != std::string::npos) port = std::stoi(a.substr(colon + 1), &used);
  } catch (...) {
    port = 0;
  }
  if (colon == std::string::npos || host.empty() || used != a.size() - colon - 1 || port <= 0 || port > 65535 ||
      host.find_first_of("[] ") != std::string::npos)
    throw ServerError(what + "='" + a + "' is not host:port (e.g. 127.0.0.1:6379 or [::1]:6379)");
  return {host, port};
}

/// EXPIRYKIT_SERVER_ADDR as set now ("host:port" of an external server); nullopt when unset or
/// empty. The one place the kit reads it: Target, ReplicaFixture, ClusterFixture and memory::Probe ask here
/// (docs/reference/env.md lists every variable).
inline std::optional<std::string> external_address() { return env::get("EXPIRYKIT_SERVER_ADDR"); }

class Target {
 public:
  /// External mode if EXPIRYKIT_SERVER_ADDR is set (checked with PING), else spawns a Server.
  /// Throws ServerError: unreachable external address, or any Server start failure.
  explicit Target(ServerOptions opts = {}) {
    if (const auto addr = external_address()) {
      const std::string& a = *addr;
      std::tie(host_, port_) = parse_address(a, "EXPIRYKIT_SERVER_ADDR");
      try {
        resp::Client c(host_, port_, {std::chrono::milliseconds(3000), std::chrono::milliseconds(5000)});
        auto r = c("PING");
        if (r.is_error())
          throw ServerError("EXPIRYKIT_SERVER_ADDR=" + a + " answered PING with " + r.to_string() +
                            " (needs AUTH? the kit speaks plain RESP2 without auth)");
      } catch (const resp::ConnectionError& e) {
        throw ServerError(std::string("EXPIRYKIT_SERVER_ADDR=") + a + ": " + e.what() +
                          "; start that server or unset EXPIRYKIT_SERVER_ADDR to let the kit spawn one");
      }
    } else {
      server_ = std::make_unique<Server>(std::move(opts));
      host_ = server_->host();
      port_ = server_->port();
    }
  }

  bool external() const { return !server_; }
  /// The spawned server, or nullptr in external mode.
  Server* owned() { return server_.get(); }
  std::string host() const { return host_; }
  int port() const { return server_ ? server_->port() : port_; }
  std::string address() const { return host_ + ":" + std::to_string(port()); }
  resp::Client client(resp::Client::Options o = {}) const { return resp::Client(host_, port(), o); }

  /// Flavor, version and capabilities (probed once, cached; probed again after a restart
  /// only if reset_identity() is called).
  const server::Identity& identity() {
    if (!identity_) {
      auto c = client();
      identity_ = server::Identity::probe(c);
    }
    return *identity_;
  }
  void reset_identity() { identity_.reset(); }

  /// "valkey 9.1.2 at 127.0.0.1:23995 (spawned: /path/valkey-server)" or "... (external)".
  std::string describe() {
    return identity().to_string() + " at " + address() +
           (server_ ? " (spawned: " + server_->binary().string() + ")" : " (external)");
  }

 private:
  std::unique_ptr<Server> server_;
  std::string host_;
  int port_ = 0;
  std::optional<server::Identity> identity_;
};

}  // namespace expirykit::process
