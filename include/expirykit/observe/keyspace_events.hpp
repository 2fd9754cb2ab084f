// expirykit/observe/keyspace_events.hpp: a subscriber that sees the keyspace notifications a
// server publishes, and cuts them into "what one command emitted".
//
//   observe::KeyspaceEvents ev(client);                 // CONFIG SET notify-keyspace-events KEA
//   auto r = client.pipeline({ev.marker("1"), {"HSET", "h", "a", "1"}, ev.marker("2")});
//   ev.read_until("1");                                // whatever came before
//   observe::Observed o = ev.read_until("2");          // o.keyspace == [hset@h], o.keyevent == [hset@h]
//
// How the cut works: the subscriber also listens to a private marker channel, and the caller
// pipelines `PUBLISH <marker channel> <token>` around the command on its own connection. A server
// executes commands one at a time and publishes every notification of a command while executing
// it, into each subscriber's output buffer in order, so everything between two markers belongs to
// the commands between them (redis.io/docs/latest/develop/use/keyspace-notifications: "events are
// delivered ... in the order they are generated"). Events of active expiry, which runs between
// commands, land before the first marker.
//
// Config: the constructor reads notify-keyspace-events (CONFIG GET), sets the flags asked for,
// and the destructor puts the old value back over a fresh connection. Throws resp::ConnectionError
// when it cannot connect and std::runtime_error when the server refuses CONFIG SET or SUBSCRIBE.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/effects.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::observe {

/// Notifications seen between two markers, per channel family, in arrival order. Classes are
/// not observable (the message does not carry them): Event::cls is '?'.
struct Observed {
  std::vector<model::Event> keyspace;  ///< from __keyspace@<db>__:<key>, message = event name
  std::vector<model::Event> keyevent;  ///< from __keyevent@<db>__:<event>, message = key
  bool empty() const { return keyspace.empty() && keyevent.empty(); }
};

class KeyspaceEvents {
 public:
  struct Options {
    /// notify-keyspace-events while observing. Both K and E, so both channel families can be
    /// compared; 'A' is every class (g $ l s h z x e t d: the servers' docs).
    std::string flags = "KEA";
    int db = 0;
    /// Longest wait for a marker to come back.
    std::chrono::milliseconds timeout{10000};
    /// The marker channel to subscribe to; empty: a private one. Another listener's channel
    /// (Tracking::marker_channel()) lets one PUBLISH mark a point for both.
    std::string marker_channel{};
  };

  explicit KeyspaceEvents(resp::Client& control) : KeyspaceEvents(control, Options{}) {}
  KeyspaceEvents(resp::Client& control, Options o)
      : host_(control.host()), port_(control.port()), opt_(std::move(o)), sub_(host_, port_) {
    static std::atomic<int> seq{0};
    channel_ = !opt_.marker_channel.empty()
                   ? opt_.marker_channel
                   : "__expirykit_marker__:" + std::to_string(::getpid()) + ":" + std::to_string(seq++);
    const resp::Reply old = control("CONFIG", "GET", "notify-keyspace-events");
    if (!old.is_array() || old.size() != 2)
      throw std::runtime_error("keyspace events: CONFIG GET notify-keyspace-events answered " + old.to_string());
    old_flags_ = old[1].str();
    const resp::Reply set = control("CONFIG", "SET", "notify-keyspace-events", opt_.flags);
    if (!set.is_status())
      throw std::runtime_error("keyspace events: CONFIG SET notify-keyspace-events " + opt_.flags + " answered " +
                               set.to_string());
    const std::string db = std::to_string(opt_.db);
    sub_.append({"PSUBSCRIBE", "__keyspace@" + db + "__:*", "__keyevent@" + db + "__:*"});
    sub_.append({"SUBSCRIBE", channel_});
    for (int i = 0; i < 3; ++i) {
      const resp::Reply r = sub_.read();
      if (!r.is_array() || r.size() != 3)
        throw std::runtime_error("keyspace events: subscribing answered " + r.to_string());
    }
  }
  KeyspaceEvents(const KeyspaceEvents&) = delete;
  KeyspaceEvents& operator=(const KeyspaceEvents&) = delete;
  ~KeyspaceEvents() {
    try {
      resp::Client c(host_, port_);
      c("CONFIG", "SET", "notify-keyspace-events", old_flags_);
    } catch (...) {
    }
  }

  const std::string& flags() const { return opt_.flags; }
  /// Switches notify-keyspace-events to `flags` (CONFIG SET over `control`, the observed
  /// connection). Throws std::runtime_error if refused.
  void set_flags(resp::Client& control, const std::string& flags) {
    set_flags_reply(control.call(set_flags_command(flags)), flags);
  }
  /// set_flags() in a pipeline of the caller's: the command to send on the observed connection,
  /// then set_flags_reply() with its reply (throws like set_flags()).
  static resp::Argv set_flags_command(const std::string& flags) {
    return {"CONFIG", "SET", "notify-keyspace-events", flags};
  }
  void set_flags_reply(const resp::Reply& set, const std::string& flags) {
    if (!set.is_status())
      throw std::runtime_error("keyspace events: CONFIG SET notify-keyspace-events " + flags + " answered " +
                               set.to_string());
    opt_.flags = flags;
  }
  /// The value notify-keyspace-events had before (restored by the destructor).
  const std::string& previous_flags() const { return old_flags_; }

  /// The command to pipeline on the observed connection to mark a point: PUBLISH <channel> token.
  resp::Argv marker(const std::string& token) const { return {"PUBLISH", channel_, token}; }
  /// The channel marker() publishes on.
  const std::string& marker_channel() const { return channel_; }

  /// Reads notifications until the marker `token` arrives; returns what came before it. Markers
  /// with other tokens are skipped. Throws std::runtime_error if it does not arrive in time.
  Observed read_until(const std::string& token) {
    Observed out;
    const std::string ks = "__keyspace@" + std::to_string(opt_.db) + "__:";
    const std::string ke = "__keyevent@" + std::to_string(opt_.db) + "__:";
    const auto deadline = std::chrono::steady_clock::now() + opt_.timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      auto r = sub_.read_for(left.count() > 0 ? left : std::chrono::milliseconds(0));
      if (!r) throw std::runtime_error("keyspace events: marker " + token + " not seen within " +
                                       std::to_string(opt_.timeout.count()) + " ms");
      if (!r->is_array() || r->size() < 3) continue;
      const std::string kind = (*r)[0].str();
      if (kind == "message" && (*r)[1].str() == channel_) {
        if ((*r)[2].str() == token) return out;
        continue;
      }
      if (kind != "pmessage" || r->size() != 4) continue;
      const std::string ch = (*r)[2].str(), msg = (*r)[3].str();
      if (ch.rfind(ks, 0) == 0) out.keyspace.push_back(model::Event{msg, ch.substr(ks.size()), '?'});
      else if (ch.rfind(ke, 0) == 0) out.keyevent.push_back(model::Event{ch.substr(ke.size()), msg, '?'});
    }
  }

 private:
  std::string host_;
  int port_;
  Options opt_;
  resp::Client sub_;
  std::string channel_;
  std::string old_flags_;
};

/// The model's events as the server would deliver them under `flags` on db 0's channels (what
/// KeyspaceEvents observes by default): those whose class is enabled, names and keys only. Compare with Observed::keyspace (needs 'K' in flags) and
/// Observed::keyevent (needs 'E').
inline std::vector<model::Event> deliverable(const std::vector<model::Event>& predicted, const std::string& flags) {
  std::vector<model::Event> out;
  for (const auto& e : predicted)
    if (e.db == 0 && model::class_enabled(flags, e.cls)) out.push_back(model::Event{e.name, e.key, '?'});
  return out;
}

/// Compares predicted events with observed ones; returns "" when they agree, else one line.
inline std::string compare_events(const std::vector<model::Event>& predicted, const Observed& seen,
                                  const std::string& flags) {
  const auto want = deliverable(predicted, flags);
  bool k = false, e = false;
  for (char f : flags) {
    k = k || f == 'K';
    e = e || f == 'E';
  }
  std::string out;
  if (k && want != seen.keyspace)
    out += "__keyspace__ events: server " + model::to_string(seen.keyspace) + ", model " + model::to_string(want);
  if (e && want != seen.keyevent)
    out += std::string(out.empty() ? "" : "; ") + "__keyevent__ events: server " + model::to_string(seen.keyevent) +
           ", model " + model::to_string(want);
  return out;
}

}  // namespace expirykit::observe
