// Servers that speak TLS (resp/tls.hpp, process/tls_certificates.hpp): a spawned one with
// certificates the test makes, a replica set over TLS, external mode with EXPIRYKIT_SERVER_TLS_*;
// and, in a build without TLS (hiredis 0.14), the error that says what is missing.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <memory>

#include <boost/process.hpp>

#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/target.hpp>
#include <expirykit/process/temp_dir.hpp>
#include <expirykit/process/tls_certificates.hpp>

#include "../common/env.hpp"

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using resp::Reply;

namespace {
/// The message of what connecting to `address` and sending PING throws, "" if nothing does.
std::string ping_error(const std::string& host, int port) {
  try {
    resp::Client c(host, port);
    const Reply r = c("PING");
    if (r != Reply::status("PONG")) return "PING answered " + r.to_string();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("make_test_certificates: a CA, a server certificate for 127.0.0.1 and a client one, verified by openssl",
          "[process][tls]") {
  process::TempDir d;
  const auto t = process::make_test_certificates(d.path() / "certs");
  for (const auto& f : {t.ca_cert, t.ca_key, t.server_cert, t.server_key, t.client_cert, t.client_key})
    CHECK(std::filesystem::file_size(f) > 0);
  namespace bp = boost::process;
  bp::ipstream out;
  const int rc = bp::system(bp::search_path("openssl"), "verify", "-CAfile", t.ca_cert.string(), t.server_cert.string(),
                            t.client_cert.string(), bp::std_out > out, bp::std_err > bp::null);
  std::string all, line;
  while (std::getline(out, line)) all += line + "\n";
  CHECK(rc == 0);
  CHECK_THAT(all, ContainsSubstring("server.crt: OK") && ContainsSubstring("client.crt: OK"));
  CHECK(t.client() == resp::Tls{t.ca_cert, t.client_cert, t.client_key, ""});
}

TEST_CASE("Without TLS in the build, TLS settings fail at once and say what the build needs", "[process][tls]") {
  if (resp::tls_supported) SKIP("this build has TLS (hiredis_ssl): the TLS cases below run instead");
  process::TempDir d;
  process::ServerOptions o;
  o.tls = process::make_test_certificates(d.path());
  try {
    process::Server s(o);
    FAIL("a TLS server started in a build without TLS");
  } catch (const process::ServerError& e) {
    CHECK_THAT(std::string(e.what()), ContainsSubstring("no TLS") && ContainsSubstring("hiredis 1.x"));
  }
  process::Server plain;
  resp::set_tls(plain.address(), o.tls->client());
  const std::string e = ping_error(plain.host(), plain.port());
  CHECK_THAT(e, ContainsSubstring(plain.address() + ": TLS is set for this address") &&
                    ContainsSubstring("hiredis_ssl") && ContainsSubstring("EXPIRYKIT_HIREDIS_PREFIX"));
  resp::forget_tls(plain.address());
  resp::set_tls(plain.address(), std::nullopt);
}

TEST_CASE("A spawned TLS server: the kit's connections speak TLS; plain TCP, another CA and no client certificate "
          "are refused", "[process][tls]") {
  if (!resp::tls_supported) SKIP("this build has no TLS (hiredis 0.14): see the case above");
  process::TempDir d;
  process::ServerOptions o;
  o.tls = process::make_test_certificates(d.path() / "ours");
  process::Server s(o);  // its readiness PING spoke TLS
  auto c = s.client();
  // Plain commands with a key TTL: the transport is under test, on every line (7.0 has no field TTLs).
  CHECK(c("HSET", "h", "a", "1") == Reply::integer(1));
  CHECK(c("PEXPIRE", "h", "100000") == Reply::integer(1));
  CHECK(c("PTTL", "h").as_integer() > 90000);
  CHECK(c("CONFIG", "GET", "port") == Reply::strings({"port", "0"}));  // no plain TCP port
  CHECK(c("CONFIG", "GET", "tls-port") == Reply::strings({"tls-port", std::to_string(s.port())}));

  const auto ours = resp::tls_for(s.address());
  REQUIRE(ours == o.tls->client());
  resp::set_tls(s.address(), std::nullopt);  // plain TCP to the TLS port: the server drops it
  const std::string plain = ping_error(s.host(), s.port());
  CHECK_THAT(plain, ContainsSubstring("reset by peer") || ContainsSubstring("closed the connection"));
  const auto theirs = process::make_test_certificates(d.path() / "theirs");
  resp::set_tls(s.address(), theirs.client());  // a CA that did not sign the server's certificate
  CHECK_THAT(ping_error(s.host(), s.port()),
             ContainsSubstring(s.address() + ": TLS handshake failed") && ContainsSubstring(theirs.ca_cert.string()));
  resp::set_tls(s.address(), resp::Tls{o.tls->ca_cert, "", "", ""});  // no client certificate (tls-auth-clients yes)
  const std::string no_cert = ping_error(s.host(), s.port());
  CHECK_THAT(no_cert, ContainsSubstring("reset by peer") || ContainsSubstring("closed the connection"));
  resp::set_tls(s.address(), resp::Tls{o.tls->ca_cert, o.tls->client_cert, "", ""});
  CHECK_THAT(ping_error(s.host(), s.port()), ContainsSubstring("client certificate without its key"));
  resp::set_tls(s.address(), resp::Tls{d.path() / "missing.crt", "", "", ""});
  CHECK_THAT(ping_error(s.host(), s.port()), ContainsSubstring("TLS settings refused (ca_cert " + (d.path() / "missing.crt").string()));
  resp::set_tls(s.address(), resp::Tls{"certs/nowhere.crt", "", "", ""});  // relative: to the working directory
  CHECK_THAT(ping_error(s.host(), s.port()),
             ContainsSubstring("ca_cert certs/nowhere.crt (relative to the working directory: " +
                               (std::filesystem::current_path() / "certs/nowhere.crt").string() + ")"));
  resp::set_tls(s.address(), ours);
  CHECK(ping_error(s.host(), s.port()).empty());
}

TEST_CASE("A replica set over TLS: the replica syncs from its TLS primary and keeps the TTL",
          "[process][tls][replica]") {
  if (!resp::tls_supported) SKIP("this build has no TLS (hiredis 0.14)");
  process::TempDir d;
  process::ReplicaSetOptions o;
  o.primary.tls = process::make_test_certificates(d.path());
  process::ReplicaSet rs(o);
  auto p = rs.primary().client();
  REQUIRE(p("HSET", "h", "a", "1") == Reply::integer(1));
  REQUIRE(p("PEXPIRE", "h", "100000") == Reply::integer(1));
  rs.sync();
  auto r = rs.replica(0).client();
  CHECK(r("HGET", "h", "a") == Reply::string("1"));
  CHECK(r("PTTL", "h").as_integer() > 90000);
  CHECK(r("CONFIG", "GET", "tls-replication") == Reply::strings({"tls-replication", "yes"}));
}

TEST_CASE("External mode speaks TLS with EXPIRYKIT_SERVER_TLS_CA, _CERT and _KEY, and says which is missing",
          "[process][tls]") {
  if (!resp::tls_supported) SKIP("this build has no TLS (hiredis 0.14)");
  process::TempDir d;
  process::ServerOptions o;
  o.tls = process::make_test_certificates(d.path());
  process::Server s(o);
  resp::forget_tls(s.address());  // as a server the kit did not spawn
  struct ResetFallbacks {  // a failed REQUIRE must not leave TLS on for the next cases
    ~ResetFallbacks() {
      resp::set_fallback_tls(std::nullopt);
      resp::set_fallback_credentials(std::nullopt);
    }
  } reset_fallbacks;
  ekcheck::ScopedEnv addr("EXPIRYKIT_SERVER_ADDR", s.address().c_str());
  auto error_of = [] {
    try {
      process::Target t;
    } catch (const process::ServerError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  {
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", o.tls->ca_cert.c_str()),
        cert("EXPIRYKIT_SERVER_TLS_CERT", o.tls->client_cert.c_str()), key("EXPIRYKIT_SERVER_TLS_KEY", o.tls->client_key.c_str());
    process::Target t;
    REQUIRE(t.external());
    CHECK(t.client()("PING") == Reply::status("PONG"));
    CHECK(t.identity().version.to_string() == s.binary_version().version);
  }
  {
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", nullptr), cert("EXPIRYKIT_SERVER_TLS_CERT", nullptr),
        key("EXPIRYKIT_SERVER_TLS_KEY", nullptr);
    CHECK_THAT(error_of(), ContainsSubstring("if that port speaks TLS, set EXPIRYKIT_SERVER_TLS_CA"));
  }
  {
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", o.tls->ca_cert.c_str()), cert("EXPIRYKIT_SERVER_TLS_CERT", nullptr),
        key("EXPIRYKIT_SERVER_TLS_KEY", nullptr);  // the server has tls-auth-clients yes
    CHECK_THAT(error_of(), ContainsSubstring("wants a client certificate: set EXPIRYKIT_SERVER_TLS_CERT"));
  }
  {  // a client certificate of a CA the server does not trust
    const auto other = process::make_test_certificates(d.path() / "other");
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", o.tls->ca_cert.c_str()),
        cert("EXPIRYKIT_SERVER_TLS_CERT", other.client_cert.c_str()), key("EXPIRYKIT_SERVER_TLS_KEY", other.client_key.c_str());
    CHECK_THAT(error_of(), ContainsSubstring("does its tls-ca-cert-file trust the issuer of EXPIRYKIT_SERVER_TLS_CERT"));
  }
  {
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", o.tls->ca_cert.c_str()),
        cert("EXPIRYKIT_SERVER_TLS_CERT", o.tls->client_cert.c_str()), key("EXPIRYKIT_SERVER_TLS_KEY", nullptr);
    CHECK_THAT(error_of(), ContainsSubstring("EXPIRYKIT_SERVER_TLS_CERT is set without EXPIRYKIT_SERVER_TLS_KEY"));
  }
  {
    ekcheck::ScopedEnv ca("EXPIRYKIT_SERVER_TLS_CA", (d.path() / "nowhere.crt").c_str()),
        cert("EXPIRYKIT_SERVER_TLS_CERT", nullptr), key("EXPIRYKIT_SERVER_TLS_KEY", nullptr);
    CHECK_THAT(error_of(), ContainsSubstring("TLS settings refused") &&
                               ContainsSubstring("check EXPIRYKIT_SERVER_TLS_CA, EXPIRYKIT_SERVER_TLS_CERT"));
  }
}

TEST_CASE("A TLS client at a plain port gives up after the connect timeout and says it met no TLS", "[process][tls]") {
  if (!resp::tls_supported) SKIP("this build has no TLS (hiredis 0.14)");
  process::TempDir d;
  const auto certs = process::make_test_certificates(d.path());
  process::Server plain;
  resp::set_tls(plain.address(), certs.client());
  const auto t0 = std::chrono::steady_clock::now();
  std::string e;
  try {
    resp::Client c(plain.host(), plain.port(), {std::chrono::milliseconds(500), std::chrono::milliseconds(30000)});
  } catch (const resp::ConnectionError& x) {
    e = x.what();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  resp::set_tls(plain.address(), std::nullopt);
  CHECK_THAT(e, ContainsSubstring("TLS handshake failed") && ContainsSubstring("no TLS answer within 500 ms"));
  CHECK(took < std::chrono::seconds(20));  // the connect timeout, not the 30 s command timeout
}

TEST_CASE("A server forgets only its own address settings: a newer server on the same port keeps its TLS",
          "[process][tls]") {
  // Server A leaves a port; B (TLS) starts on it; A's destructor must not erase B's entry.
  process::TempDir d;
  auto a = std::make_unique<process::Server>();
  const int port = a->port();
  a->stop();
  process::ServerOptions o;
  o.port = port;
  if (resp::tls_supported) o.tls = process::make_test_certificates(d.path());
  else o.set("requirepass", "b-pw");  // the same registry, for credentials
  process::Server b(o);
  a.reset();
  if (resp::tls_supported) CHECK(resp::tls_for(b.address()) == o.tls->client());
  else CHECK(resp::credentials_for(b.address()) == resp::Credentials{"", "b-pw"});
  CHECK(b.client()("PING") == Reply::status("PONG"));
}
