// expirykit/server/clock.hpp: the server's clock. Absolute expiries are Unix milliseconds on
// the server's clock, so tests compute deadlines from TIME, never from the client's clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
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

/// Polls the server clock (TIME on `c`) until it reads later than deadline_ms + margin_ms, and
/// returns the time read (Unix ms). `c` may be another server of the same host, e.g. while the
/// one under test is down. Sleeps at most 20 ms between reads. Throws std::runtime_error (the
/// deadline, the last time read and the address) if the clock has not got there after `bound`
/// of steady time; resp::ConnectionError if the server is unreachable.
inline int64_t wait_until_past(resp::Client& c, int64_t deadline_ms, int64_t margin_ms = 0,
                               std::chrono::milliseconds bound = std::chrono::seconds(15)) {
  const int64_t target = deadline_ms + margin_ms;
  const auto until = std::chrono::steady_clock::now() + bound;
  for (;;) {
    const int64_t t = now_ms(c);
    if (t > target) return t;
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("waited " + std::to_string(bound.count()) + " ms for the server clock (TIME on " +
                               c.address() + ") to pass " + std::to_string(target) + "; it reads " + std::to_string(t));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(target - t + 1, 20)));
  }
}

/// The server's time without a round trip, from the server times read so far: the latest of
/// them, each moved on by what this machine's steady clock counted since it was read. Never later
/// than TIME would say, given that every server whose times are recorded shares one clock (the
/// nodes of one host; reset() when moving to a server that may not). Used by state::Twin
/// (server_time_estimate) and state::ClusterTwin (its replica triggers).
class ClockEstimate {
 public:
  /// Records `ms` (Unix ms), a server time read before now; returns it. 0 or less (no time read)
  /// is ignored. A time recorded late only weakens the estimate.
  int64_t saw(int64_t ms) {
    if (ms <= 0) return ms;
    const int64_t origin = ms * 1000 - steady_us();
    if (!origin_us_ || origin > *origin_us_) origin_us_ = origin;
    return ms;
  }
  /// The estimate (Unix ms), or nullopt when no time was recorded since the last reset().
  std::optional<int64_t> now() const {
    if (!origin_us_) return std::nullopt;
    return (*origin_us_ + steady_us()) / 1000;
  }
  void reset() { origin_us_.reset(); }

 private:
  static int64_t steady_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::optional<int64_t> origin_us_;  ///< server time minus steady clock (µs), the largest recorded
};

}  // namespace expirykit::server
