// expirykit/server/clock.hpp: the server's clock. Absolute expiries are Unix milliseconds on
// the server's clock, so tests compute deadlines from TIME, never from the client's clock.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <expirykit/resp/client.hpp>

namespace expirykit::server {

/// Unix ms from a TIME reply (["<seconds>", "<microseconds>"]). Throws std::runtime_error on
/// any other shape.
inline int64_t time_ms(const resp::Reply& r) {
  if (!r.is_array() || r.size() != 2 || !r[0].is_string() || !r[1].is_string())
    throw std::runtime_error("unexpected TIME reply: " + r.to_string());
  return std::stoll(r[0].str()) * 1000 + std::stoll(r[1].str()) / 1000;
}

/// The server's current time in Unix ms (one TIME round trip). Throws resp::ConnectionError or
/// std::runtime_error.
inline int64_t now_ms(resp::Client& c) { return time_ms(c("TIME")); }

}  // namespace expirykit::server
