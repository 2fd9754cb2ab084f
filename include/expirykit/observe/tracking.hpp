// expirykit/observe/tracking.hpp: the invalidation messages CLIENT TRACKING sends for one
// tracked connection, cut into "what one command caused".
//
//   observe::Tracking trk(client);        // client: CLIENT TRACKING ON REDIRECT <own subscriber>
//   client("HGET", "h", "a");             // h is now tracked (default mode)
//   auto r = other.pipeline({{"HSET", "h", "a", "2"}, trk.marker("1")});
//   model::Invalidations inv = trk.read_until("1");   // {"h"}
//
// Modes (redis.io/docs/latest/develop/reference/client-side-caching):
//  - redirect ("Two connections mode", the only one a RESP2 connection has): the Tracking object
//    opens its own connection to the same server, asks its CLIENT ID, SUBSCRIBEs it to
//    `__redis__:invalidate` and to a private marker channel, then sends `CLIENT TRACKING ON
//    REDIRECT <id>` on the tracked connection;
//  - in band (Options::in_band, a tracked connection on RESP3: resp::Client::hello(3)): the
//    invalidations arrive as push messages on the tracked connection itself. It SUBSCRIBEs to
//    the marker channel (a RESP3 connection runs every command while subscribed), then sends
//    `CLIENT TRACKING ON`; read_until() reads the pushes resp::Client kept (take_pushes()), then
//    the connection's socket: call it only when every reply the tracked connection awaits has
//    been read (the twin calls it after its pipeline's replies).
// Default tracking mode (no BCAST / OPTIN / OPTOUT / NOLOOP): the server remembers
// the keys the tracked connection reads and sends one message per key when any client modifies
// it, then forgets the key until it is read again.
//
// Message shapes (identical on Valkey 9.1.2 and Redis 8.0.6, live): a key invalidation is
// ["message", "__redis__:invalidate", [key, ...]] (an array; one key per message in practice),
// FLUSHALL / FLUSHDB is ["message", "__redis__:invalidate", nil] (a null bulk); in band, the
// push ["invalidate", [key, ...]] or ["invalidate", nil], and the markers the push ["message",
// <channel>, <token>]. read_until() returns one element per key, std::nullopt for a flush.
//
// How the cut works (as observe/keyspace_events.hpp): the caller pipelines `PUBLISH <marker
// channel> <token>` (marker()) after the commands, on any connection to the same server. The
// server runs commands one at a time and writes each invalidation into the subscriber's output
// buffer while (or right after) the command that caused it runs, so everything before a marker
// belongs to the commands before it. Invalidations of active expiry, which runs between commands,
// land between the markers around which it ran: bracket a waiting period with markers.
//
// Errors: resp::ConnectionError when the subscriber cannot connect; std::runtime_error, with
// what the server answered, when CLIENT ID, SUBSCRIBE or CLIENT TRACKING is refused, and when a
// marker does not come back in time. The destructor switches tracking off on the tracked
// connection (CLIENT TRACKING OFF) and ignores every error doing so.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::observe {

class Tracking {
 public:
  struct Options {
    /// Longest wait for a marker to come back.
    std::chrono::milliseconds timeout{10000};
    /// The marker channel to subscribe to; empty: a private one. Another listener's channel
    /// (KeyspaceEvents::marker_channel()) lets one PUBLISH mark a point for both.
    std::string marker_channel{};
    /// In band (file comment): the tracked connection must be on RESP3.
    bool in_band = false;
  };

  explicit Tracking(resp::Client& tracked) : Tracking(tracked, Options{}) {}
  Tracking(resp::Client& tracked, Options o) : tracked_(tracked), opt_(o) {
    static std::atomic<int> seq{0};
    channel_ = !opt_.marker_channel.empty()
                   ? opt_.marker_channel
                   : "__expirykit_tracking_marker__:" + std::to_string(::getpid()) + ":" + std::to_string(seq++);
    if (opt_.in_band) {
      start_in_band();
      return;
    }
    sub_ = std::make_unique<resp::Client>(tracked.host(), tracked.port());
    const resp::Reply id = (*sub_)("CLIENT", "ID");
    if (!id.is_integer()) throw std::runtime_error("tracking: CLIENT ID answered " + id.to_string());
    id_ = id.as_integer();
    sub_->append({"SUBSCRIBE", "__redis__:invalidate", channel_});
    for (int i = 0; i < 2; ++i) {
      const resp::Reply r = sub_->read();
      if (!r.is_array() || r.size() != 3 || !r[0].is_string() || r[0].str() != "subscribe")
        throw std::runtime_error("tracking: SUBSCRIBE __redis__:invalidate " + channel_ + " answered " + r.to_string());
    }
    const resp::Reply on = tracked_("CLIENT", "TRACKING", "ON", "REDIRECT", std::to_string(id_));
    if (!on.is_status())
      throw std::runtime_error("tracking: CLIENT TRACKING ON REDIRECT " + std::to_string(id_) + " answered " +
                               on.to_string());
  }
  Tracking(const Tracking&) = delete;
  Tracking& operator=(const Tracking&) = delete;
  ~Tracking() {
    try {
      if (tracked_.connected()) tracked_("CLIENT", "TRACKING", "OFF");
      if (opt_.in_band && tracked_.connected()) {  // RESP3 answers UNSUBSCRIBE with a push only
        tracked_.append({"UNSUBSCRIBE", channel_});
        tracked_.send();
        for (int i = 0; i < 100; ++i) {  // its confirmation, after pushes still on their way
          const auto r = tracked_.read_for(opt_.timeout);
          if (!r || (r->is_array() && r->size() == 3 && (*r)[0] == resp::Reply::string("unsubscribe"))) break;
        }
        tracked_.take_pushes();  // what arrived meanwhile is no later listener's
      }
    } catch (...) {
    }
  }

  /// CLIENT ID of the subscriber connection the messages are redirected to (0 in band).
  long long redirect_id() const { return id_; }
  /// Whether the invalidations arrive in band (Options::in_band).
  bool in_band() const { return opt_.in_band; }

  /// The command to pipeline (on any connection to the server) to mark a point:
  /// PUBLISH <marker channel> token.
  resp::Argv marker(const std::string& token) const { return {"PUBLISH", channel_, token}; }
  /// The channel marker() publishes on.
  const std::string& marker_channel() const { return channel_; }

  /// Reads messages until the marker `token` arrives; returns the invalidations before it, one
  /// per key in arrival order (std::nullopt: FLUSHALL / FLUSHDB). Markers with other tokens are
  /// skipped. Throws std::runtime_error if the marker does not arrive within Options::timeout,
  /// or on a message of another shape on the invalidation channel.
  model::Invalidations read_until(const std::string& token) {
    model::Invalidations out;
    const auto deadline = std::chrono::steady_clock::now() + opt_.timeout;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto r = next(left.count() > 0 ? left : std::chrono::milliseconds(0));
      if (!r)
        throw std::runtime_error("tracking: marker " + token + " not seen within " +
                                 std::to_string(opt_.timeout.count()) + " ms");
      if (opt_.in_band && r->is_array() && r->size() == 2 && (*r)[0] == resp::Reply::string("invalidate"))
        *r = resp::Reply::array({resp::Reply::string("message"), resp::Reply::string("__redis__:invalidate"), (*r)[1]});
      if (!r->is_array() || r->size() != 3 || !(*r)[0].is_string() || (*r)[0].str() != "message") continue;
      const std::string ch = (*r)[1].str();
      const resp::Reply& payload = (*r)[2];
      if (ch == channel_) {
        if (payload.is_string() && payload.str() == token) return out;
        continue;
      }
      if (ch != "__redis__:invalidate") continue;
      if (payload.is_nil()) {
        out.push_back(std::nullopt);
      } else if (payload.is_array()) {
        for (const auto& k : payload.elements()) {
          if (!k.is_string()) throw std::runtime_error("tracking: invalidation message " + r->to_string());
          out.push_back(k.str());
        }
      } else {
        throw std::runtime_error("tracking: invalidation message " + r->to_string());
      }
    }
  }

 private:
  /// In band: SUBSCRIBE the tracked connection to the marker channel, then CLIENT TRACKING ON.
  void start_in_band() {
    if (tracked_.protocol() != 3)
      throw std::logic_error("tracking: in band needs the tracked connection on RESP3 (resp::Client::hello(3))");
    tracked_.take_pushes();  // pushes from before tracking began are not its invalidations
    tracked_.append({"SUBSCRIBE", channel_});  // answered with a push only
    tracked_.send();
    const auto r = tracked_.read_for(opt_.timeout);
    if (!r || !r->is_array() || r->size() != 3 || (*r)[0] != resp::Reply::string("subscribe"))
      throw std::runtime_error("tracking: SUBSCRIBE " + channel_ + " answered " + (r ? r->oneline() : std::string("nothing")));
    const resp::Reply on = tracked_("CLIENT", "TRACKING", "ON");
    if (!on.is_status()) throw std::runtime_error("tracking: CLIENT TRACKING ON answered " + on.to_string());
  }
  /// The next message: redirected, from the subscriber; in band, the pushes the tracked
  /// connection kept, then its socket. nullopt after `wait`.
  std::optional<resp::Reply> next(std::chrono::milliseconds wait) {
    if (!opt_.in_band) return sub_->read_for(wait);
    if (pending_.empty())
      for (auto& p : tracked_.take_pushes()) pending_.push_back(std::move(p));
    if (pending_.empty()) {
      auto r = tracked_.read_for(wait);
      if (r && r->resp3_type() != resp::Resp3Type::push)  // a reply some command still awaited
        throw std::logic_error("tracking: read_until() read a reply, not a push, from the tracked connection (" +
                               r->oneline() + "): call it only when no reply is pending there");
      return r;
    }
    resp::Reply r = std::move(pending_.front());
    pending_.pop_front();
    return r;
  }

  resp::Client& tracked_;
  Options opt_;
  std::unique_ptr<resp::Client> sub_;  ///< the subscriber the messages are redirected to (none in band)
  std::deque<resp::Reply> pending_;    ///< in band: pushes taken from the tracked connection, not yet read
  std::string channel_;
  long long id_ = 0;
};

/// Predicted vs observed invalidations of one command (in order); "" when they agree, else one
/// line.
inline std::string compare_invalidations(const model::Invalidations& predicted, const model::Invalidations& seen) {
  if (predicted == seen) return {};
  return "invalidations: server " + model::to_string(seen) + ", model " + model::to_string(predicted);
}

/// The same for background invalidations (active expiry), whose order between keys is the
/// server's: compared as multisets.
inline std::string compare_invalidations_unordered(model::Invalidations predicted, model::Invalidations seen) {
  auto less = [](const model::Invalidation& a, const model::Invalidation& b) {
    if (!a || !b) return !a && b;
    return *a < *b;
  };
  std::sort(predicted.begin(), predicted.end(), less);
  std::sort(seen.begin(), seen.end(), less);
  return compare_invalidations(predicted, seen);
}

}  // namespace expirykit::observe
