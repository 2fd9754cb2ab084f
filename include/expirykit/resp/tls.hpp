// expirykit/resp/tls.hpp: which server addresses the kit's connections reach over TLS, and with
// which files, so every resp::Client the kit opens (a test's, the twin's read-back and listener
// connections, a replica's) speaks TLS to a TLS port without each caller passing it along.
//
//   resp::set_tls("127.0.0.1:7000", resp::Tls{"ca.crt", "", "", ""});           // verify the server
//   resp::set_tls("127.0.0.1:7000", resp::Tls{"ca.crt", "client.crt", "client.key", ""});  // tls-auth-clients yes
//   resp::Client c("127.0.0.1", 7000);   // connects, TLS handshake, then AUTH if credentials say so
//
// Lookup as for credentials (resp/detail/by_address.hpp): the address's own entry, else the
// fallback, else plain TCP. Who sets them: process::Server for its own address (ServerOptions::tls,
// process/tls_certificates.hpp) and external mode (process/under_test.hpp: EXPIRYKIT_SERVER_TLS_CA,
// EXPIRYKIT_SERVER_TLS_CERT, EXPIRYKIT_SERVER_TLS_KEY as the fallback).
// TLS needs hiredis 1.x built with hiredis_ssl (Debian 12's libhiredis-dev is 0.14, without TLS;
// ci/hiredis1 builds 1.x with it): the CMake package defines EXPIRYKIT_HIREDIS_SSL=1 and links it
// when it is there (cmake/expirykitDependencies.cmake). Without it, tls_supported is false and a
// connection to an address with TLS settings throws ConnectionError saying so.
// The handshake verifies the server's certificate chain against ca_cert (hiredis's
// REDIS_SSL_VERIFY_PEER); hiredis does not compare the certificate's name with the host.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#if defined(EXPIRYKIT_HIREDIS_SSL) && EXPIRYKIT_HIREDIS_SSL
#include <hiredis/hiredis_ssl.h>
#endif

#include <expirykit/resp/detail/by_address.hpp>

namespace expirykit::resp {

/// The files of a TLS connection, PEM.
struct Tls {
  std::filesystem::path ca_cert;  ///< the CA the server's certificate must chain to (required)
  std::filesystem::path cert;     ///< client certificate, for a server with tls-auth-clients yes; empty: none
  std::filesystem::path key;      ///< the client certificate's private key; empty when cert is
  std::string server_name;        ///< SNI sent in the handshake; empty: none
  friend bool operator==(const Tls&, const Tls&) = default;
};

/// Whether this build can speak TLS (hiredis 1.x with hiredis_ssl, EXPIRYKIT_HIREDIS_SSL).
#if defined(EXPIRYKIT_HIREDIS_SSL) && EXPIRYKIT_HIREDIS_SSL
inline constexpr bool tls_supported = true;
#else
inline constexpr bool tls_supported = false;
#endif

/// Connections to `address` ("host:port") speak TLS with `t`; std::nullopt: plain TCP even when
/// a fallback is set.
/// `owner` (optional): who sets it, for forget_tls(address, owner).
inline void set_tls(const std::string& address, std::optional<Tls> t, const void* owner = nullptr) {
  detail::by_address<Tls>().set(address, std::move(t), owner);
}
/// Drops `address`'s own entry: the fallback applies to it again. With `owner`, only an entry
/// that owner set last (process::Server: not one a newer server on the same port set since).
inline void forget_tls(const std::string& address, const void* owner = nullptr) {
  detail::by_address<Tls>().forget(address, owner);
}
/// The TLS settings of every address without an entry of its own; std::nullopt: plain TCP.
inline void set_fallback_tls(std::optional<Tls> t) { detail::by_address<Tls>().set_fallback(std::move(t)); }
/// What a connection to `address` speaks (see the file comment); nullopt: plain TCP.
inline std::optional<Tls> tls_for(const std::string& address) { return detail::by_address<Tls>().lookup(address); }

namespace detail {

/// `p` for a message, with the absolute path it names when it is relative (a test under ctest
/// runs in the build folder, where a path relative to the shell's folder points elsewhere).
inline std::string tls_path_text(const std::filesystem::path& p) {
  if (p.empty() || p.is_absolute()) return p.string();
  std::error_code ec;
  const auto abs = std::filesystem::absolute(p, ec);
  return p.string() + (ec ? std::string() : " (relative to the working directory: " + abs.string() + ")");
}

/// The TLS side of one connection: owns hiredis's SSL context (the SSL object of the
/// redisContext holds its own reference on it, so either may go first).
class TlsSession {
 public:
#if defined(EXPIRYKIT_HIREDIS_SSL) && EXPIRYKIT_HIREDIS_SSL
  /// Starts TLS on the connected `c` (before anything else is sent). Throws what `fail` throws
  /// (it takes the message): settings hiredis refuses (a missing or unreadable file), or a failed
  /// handshake.
  template <class Fail>
  TlsSession(redisContext* c, const Tls& t, std::chrono::milliseconds timeout, Fail&& fail) {
    static std::once_flag init;
    std::call_once(init, [] { redisInitOpenSSL(); });
    if (!t.cert.empty() && t.key.empty()) fail("TLS settings name a client certificate without its key");
    redisSSLContextError err = REDIS_SSL_CTX_NONE;
    const std::string ca = t.ca_cert.string(), cert = t.cert.string(), key = t.key.string();
    ssl_ = redisCreateSSLContext(ca.empty() ? nullptr : ca.c_str(), nullptr, cert.empty() ? nullptr : cert.c_str(),
                                 key.empty() ? nullptr : key.c_str(),
                                 t.server_name.empty() ? nullptr : t.server_name.c_str(), &err);
    if (!ssl_)
      fail(std::string("TLS settings refused (ca_cert ") + (ca.empty() ? "none" : tls_path_text(t.ca_cert)) +
           (cert.empty() ? "" : ", cert " + tls_path_text(t.cert)) + (key.empty() ? "" : ", key " + tls_path_text(t.key)) +
           "): " + redisSSLContextGetError(err));
    const auto t0 = std::chrono::steady_clock::now();
    if (redisInitiateSSLWithContext(c, ssl_) != REDIS_OK) {
      // `fail` adds hiredis's errstr, e.g. "certificate verify failed"; a handshake that timed
      // out ("(null)" from OpenSSL) most likely met a port that does not speak TLS.
      const bool silent = std::string(c->errstr).find("(null)") != std::string::npos ||
                          std::chrono::steady_clock::now() - t0 >= timeout;
      const std::string why = "TLS handshake failed (ca_cert " + tls_path_text(t.ca_cert) +
                              (silent ? "; no TLS answer within " + std::to_string(timeout.count()) +
                                            " ms: is it a plain, non-TLS port?"
                                      : std::string()) +
                              ")";
      redisFreeSSLContext(std::exchange(ssl_, nullptr));  // no destructor runs when fail() throws
      fail(why);
    }
  }
  ~TlsSession() {
    if (ssl_) redisFreeSSLContext(ssl_);
  }
#else
  template <class Fail>
  TlsSession(redisContext*, const Tls&, std::chrono::milliseconds, Fail&& fail) {
    fail("TLS is set for this address (resp/tls.hpp: EXPIRYKIT_SERVER_TLS_CA or ServerOptions::tls) but this "
         "build of the kit has no TLS: it needs hiredis 1.x with hiredis_ssl (Debian 12's libhiredis-dev is 0.14, "
         "without TLS; ci/hiredis1 builds 1.x with it, then configure with -DEXPIRYKIT_HIREDIS_PREFIX=<its prefix>)");
  }
#endif
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

 private:
#if defined(EXPIRYKIT_HIREDIS_SSL) && EXPIRYKIT_HIREDIS_SSL
  redisSSLContext* ssl_ = nullptr;
#endif
};

}  // namespace detail
}  // namespace expirykit::resp
