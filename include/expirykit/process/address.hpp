// expirykit/process/address.hpp: the kit's one host:port parser.
//
//   auto [host, port] = process::parse_address("[::1]:7000", "EXPIRYKIT_CLUSTER_SEED");  // "::1", 7000
//   process::Address a = process::Address::parse("127.0.0.1:6379");                      // text, host, port
//
// config.hpp parses EXPIRYKIT_SERVER_ADDR and EXPIRYKIT_CLUSTER_SEED with it; the external
// servers of a run are chosen from them in process/under_test.hpp.
#pragma once

#include <string>
#include <utility>

#include <expirykit/process/errors.hpp>

namespace expirykit::process {

/// "host:port", "[v6-address]:port" (e.g. "[::1]:6379") or "v6-address:port" split into host and
/// port (1-65535). Throws ServerError naming `what` (e.g. "EXPIRYKIT_SERVER_ADDR") and the text
/// when it is not one: "<what>='<a>' is not host:port (e.g. 127.0.0.1:6379 or [::1]:6379)".
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

/// A server address as it was written (`text`, e.g. "[::1]:7000") and split (`host` "::1",
/// `port` 7000).
struct Address {
  std::string text;
  std::string host;
  int port = 0;

  /// parse_address(text, what) kept with its text. Throws ServerError as parse_address does.
  static Address parse(const std::string& text, const std::string& what = "address") {
    auto [host, port] = parse_address(text, what);
    return Address{text, std::move(host), port};
  }
  bool operator==(const Address&) const = default;
};

}  // namespace expirykit::process
