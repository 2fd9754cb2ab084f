// expirykit/process/target.hpp: the server under test: one the kit spawned, or an external one.
//
// If EXPIRYKIT_SERVER_ADDR=host:port is set, the Target connects to that server instead of
// spawning one (external mode): what needs a restart, a config the kit cannot set, or the
// server's files is then unavailable (owned() is nullptr) and tests skip it with a reason.
// Otherwise it owns a process::Server started with the given options. A password-protected
// external server: EXPIRYKIT_SERVER_PASSWORD (and EXPIRYKIT_SERVER_USER for an ACL user).
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

/// EXPIRYKIT_SERVER_PASSWORD (and EXPIRYKIT_SERVER_USER, an ACL user; unset: the default user)
/// as set now; nullopt when no password is set. Throws ServerError for a user without a password.
inline std::optional<resp::Credentials> external_credentials() {
  const auto pass = env::get("EXPIRYKIT_SERVER_PASSWORD");
  const auto user = env::get("EXPIRYKIT_SERVER_USER");
  if (user && !pass)
    throw ServerError("EXPIRYKIT_SERVER_USER='" + *user + "' is set without EXPIRYKIT_SERVER_PASSWORD");
  if (!pass) return std::nullopt;
  return resp::Credentials{user.value_or(""), *pass};
}

/// EXPIRYKIT_SERVER_ADDR as set now ("host:port" of an external server); nullopt when unset or
/// empty. The one place the kit reads it: Target, ReplicaFixture, ClusterFixture and memory::Probe ask here
/// (docs/reference/env.md lists every variable). When it is set, external_credentials() become
/// the fallback credentials of every connection (resp/credentials.hpp): the external server,
/// its cluster nodes and replicas; servers the kit spawns keep their own (process::Server).
/// Throws ServerError as external_credentials() does.
inline std::optional<std::string> external_address() {
  auto a = env::get("EXPIRYKIT_SERVER_ADDR");
  if (a) resp::set_fallback_credentials(external_credentials());
  return a;
}

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
                            (r.str().rfind("NOAUTH", 0) == 0
                                 ? std::string(" (set EXPIRYKIT_SERVER_PASSWORD, and EXPIRYKIT_SERVER_USER for an ACL user)")
                                 : std::string()));
      } catch (const resp::ConnectionError& e) {
        const std::string what = e.what();
        throw ServerError(std::string("EXPIRYKIT_SERVER_ADDR=") + a + ": " + what +
                          (what.find(": AUTH as ") != std::string::npos
                               ? "; check EXPIRYKIT_SERVER_PASSWORD and EXPIRYKIT_SERVER_USER"
                               : "; start that server or unset EXPIRYKIT_SERVER_ADDR to let the kit spawn one"));
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
