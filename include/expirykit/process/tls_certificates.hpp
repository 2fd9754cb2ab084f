// expirykit/process/tls_certificates.hpp: certificates a test makes for a TLS server it spawns:
// a CA, a server certificate for 127.0.0.1 / localhost and a client certificate, both signed by
// that CA (EC P-256 keys, valid two days), made with the `openssl` command-line tool (Debian's
// openssl package) in a folder of the caller's.
//
//   process::TempDir d;
//   process::ServerOptions o;
//   o.tls = process::make_test_certificates(d.path());   // the server speaks TLS only
//   process::Server s(o);
//   auto c = s.client();                                  // over TLS (resp/tls.hpp)
//
// The servers' TLS options: valkey.io/topics/encryption, redis.io/docs/latest/operate/oss_and_stack/
// management/security/encryption (tls-port, tls-cert-file, tls-key-file, tls-ca-cert-file,
// tls-auth-clients, tls-replication, tls-cluster).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>

#include <expirykit/process/errors.hpp>
#include <expirykit/resp/tls.hpp>

namespace expirykit::process {

/// The PEM files make_test_certificates() writes.
struct TlsCertificates {
  std::filesystem::path ca_cert, ca_key;          ///< the CA (self-signed)
  std::filesystem::path server_cert, server_key;  ///< subjectAltName IP:127.0.0.1, DNS:localhost
  std::filesystem::path client_cert, client_key;  ///< for a server with tls-auth-clients yes
  /// What the kit's connections present: the CA to verify the server, the client pair.
  resp::Tls client() const { return resp::Tls{ca_cert, client_cert, client_key, ""}; }
};

/// Makes a CA, a server and a client certificate in `dir` (created if missing; ca.crt, ca.key,
/// server.crt, server.key, client.crt, client.key). Takes about 0.15 s. Throws ServerError when
/// `openssl` is not on PATH or fails (with its output), std::filesystem::filesystem_error when
/// `dir` cannot be created.
inline TlsCertificates make_test_certificates(const std::filesystem::path& dir) {
  namespace bp = boost::process;
  std::filesystem::create_directories(dir);
  const auto openssl = bp::search_path("openssl");
  if (openssl.empty())
    throw ServerError("make_test_certificates: no `openssl` on PATH (Debian: apt-get install openssl)");
  TlsCertificates t{dir / "ca.crt", dir / "ca.key", dir / "server.crt", dir / "server.key", dir / "client.crt",
                    dir / "client.key"};
  const auto log = dir / "openssl.log";
  const auto run = [&](std::vector<std::string> args) {
    std::error_code ec;
    // bp::child and wait, not bp::system: <boost/process/system.hpp> brings in Boost.Asio.
    bp::child c(openssl, bp::args(args), bp::std_in < bp::null, (bp::std_out & bp::std_err) > log.string(), ec);
    if (!ec) c.wait(ec);
    const int rc = ec ? -1 : c.exit_code();
    if (ec || rc != 0) {
      std::ifstream in(log);
      const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      throw ServerError("make_test_certificates: openssl " + args.front() + " failed (" +
                        (ec ? ec.message() : "exit " + std::to_string(rc)) + "):\n" + out);
    }
  };
  const std::vector<std::string> ec_key = {"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"};
  const auto req = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, ec_key.begin(), ec_key.end());
    run(std::move(args));
  };
  req({"req", "-x509", "-days", "2", "-subj", "/CN=expirykit test CA", "-keyout", t.ca_key.string(), "-out",
       t.ca_cert.string()});
  const auto san = dir / "server.ext";
  std::ofstream(san) << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  const auto sign = [&](const std::filesystem::path& csr, const std::filesystem::path& cert, bool server) {
    std::vector<std::string> a = {"x509", "-req", "-in", csr.string(), "-CA", t.ca_cert.string(), "-CAkey",
                                  t.ca_key.string(), "-CAcreateserial", "-days", "2", "-out", cert.string()};
    if (server) a.insert(a.end(), {"-extfile", san.string()});
    run(a);
  };
  req({"req", "-subj", "/CN=127.0.0.1", "-keyout", t.server_key.string(), "-out", (dir / "server.csr").string()});
  sign(dir / "server.csr", t.server_cert, true);
  req({"req", "-subj", "/CN=expirykit test client", "-keyout", t.client_key.string(), "-out",
       (dir / "client.csr").string()});
  sign(dir / "client.csr", t.client_cert, false);
  std::error_code ec;  // what only the making needed
  for (const char* f : {"server.csr", "client.csr", "server.ext", "ca.srl", "openssl.log"}) std::filesystem::remove(dir / f, ec);
  return t;
}

}  // namespace expirykit::process
