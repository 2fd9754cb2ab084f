// expirykit/process/target.hpp: the server under test: one the kit spawned, or an external one.
//
// If the run names an external server (EXPIRYKIT_SERVER_ADDR=host:port: process::external_server(),
// process/under_test.hpp), the Target connects to that server instead of spawning one (external
// mode): what needs a restart, a config the kit cannot set, or the server's files is then
// unavailable (owned() is nullptr) and tests skip it with a reason. Otherwise it owns a
// process::Server started with the given options. A password-protected external server:
// EXPIRYKIT_SERVER_PASSWORD (and EXPIRYKIT_SERVER_USER for an ACL user); a TLS one:
// EXPIRYKIT_SERVER_TLS_CA (and EXPIRYKIT_SERVER_TLS_CERT, EXPIRYKIT_SERVER_TLS_KEY). An external Target holds
// the server's process::ExternalLock for its life: test processes of this machine that share one
// external server (ctest -j) take turns instead of flushing each other (process/external_lock.hpp).
// parse_address (process/address.hpp) and external_address() / external_credentials()
// (process/under_test.hpp) come with this header.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <expirykit/process/address.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/process/external_lock.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::process {

class Target {
 public:
  /// External mode if EXPIRYKIT_SERVER_ADDR is set (checked with PING; waits first while another
  /// process of this machine holds the server's ExternalLock), else spawns a Server.
  /// Throws ServerError: unreachable external address, the lock file, or any Server start failure;
  /// std::invalid_argument: a bad EXPIRYKIT_* value (config()).
  explicit Target(ServerOptions opts = {}) {
    if (const auto addr = external_server()) {
      const std::string& a = addr->text;
      host_ = addr->host;
      port_ = addr->port;
      lock_ = std::make_unique<ExternalLock>(a);  // before the first test flushes it
      try {
        resp::Client c(host_, port_, {std::chrono::milliseconds(3000), std::chrono::milliseconds(5000)});
        auto r = c("PING");
        if (r.is_error())
          throw ServerError("EXPIRYKIT_SERVER_ADDR=" + a + " answered PING with " + r.to_string() +
                            (r.str().rfind("NOAUTH", 0) == 0
                                 ? std::string(" (set EXPIRYKIT_SERVER_PASSWORD, and EXPIRYKIT_SERVER_USER for an ACL user)")
                                 : std::string()));
      } catch (const resp::ConnectionError& e) {
        std::string what = e.what();  // "<address>: <what failed>": the address is said once, first
        if (what.rfind(a + ": ", 0) == 0) what.erase(0, a.size() + 2);
        while (!what.empty() && (what.back() == '.' || what.back() == ' ')) what.pop_back();
        std::string hint = "; start that server or unset EXPIRYKIT_SERVER_ADDR to let the kit spawn one";
        if (what.rfind("AUTH as ", 0) == 0)
          hint = "; check EXPIRYKIT_SERVER_PASSWORD and EXPIRYKIT_SERVER_USER";
        else if (what.find("has no TLS") != std::string::npos)
          hint = "";  // the message says what the build needs
        else if (what.find("no TLS answer") != std::string::npos)
          hint = "; if that port is a plain one, unset EXPIRYKIT_SERVER_TLS_CA (and _CERT, _KEY)";
        else if (what.find("TLS") != std::string::npos)
          hint = "; check EXPIRYKIT_SERVER_TLS_CA, EXPIRYKIT_SERVER_TLS_CERT and EXPIRYKIT_SERVER_TLS_KEY";
        else if (what.find("reset by peer") != std::string::npos || what.find("closed the connection") != std::string::npos) {
          // The server is there but dropped the connection: a TLS port reached over plain TCP, or
          // a TLS server with tls-auth-clients yes given no client certificate.
          const auto tls = external_tls();
          if (!tls)
            hint = std::string("; if that port speaks TLS, set EXPIRYKIT_SERVER_TLS_CA (and _CERT, _KEY for a client "
                               "certificate)") +
                   (resp::tls_supported ? "" : "; this build has no TLS: resp/tls.hpp says what it needs");
          else if (tls->cert.empty())
            hint = "; a server with tls-auth-clients yes wants a client certificate: set EXPIRYKIT_SERVER_TLS_CERT and "
                   "EXPIRYKIT_SERVER_TLS_KEY";
          else
            hint = "; the server closed the TLS connection: does its tls-ca-cert-file trust the issuer of "
                   "EXPIRYKIT_SERVER_TLS_CERT?";
        }
        throw ServerError(std::string("EXPIRYKIT_SERVER_ADDR=") + a + ": " + what + hint);
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
  std::unique_ptr<ExternalLock> lock_;  // external mode only
  std::string host_;
  int port_ = 0;
  std::optional<server::Identity> identity_;
};

}  // namespace expirykit::process
