// expirykit/state/detail/listeners.hpp (internal to state::Twin): the twin's two listeners on the server under test, keyspace
// notifications (observe/keyspace_events.hpp) and CLIENT TRACKING invalidations
// (observe/tracking.hpp), with what each heard outside any command.
//
// state::Twin (state/twin.hpp) asks them around every command: markers published before and
// after it in the command's own pipeline (`begin_markers`, `end_markers`), then what arrived
// between the markers is the command's (`read_begin`, `read_end`), and what arrived before the
// first marker is background (active expiry, lazy expiry by a read-back), kept for
// `compare_background` (per key and event name, as sets: active expiry may reclaim a key's fields
// over several cycles, each with its own `hexpired`: valkey-hfe.md §11, one per batch and key).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/effects.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::state::detail {

class Listeners {
 public:
  /// Subscribes to the keyspace notifications of `c`'s server under notify-keyspace-events
  /// `flags` (set now, restored when the listener goes). Throws like observe::KeyspaceEvents.
  void listen_events(resp::Client& c, const std::string& flags) {
    events_.reset();
    observe::KeyspaceEvents::Options o;
    o.flags = flags;
    if (tracking_) o.marker_channel = tracking_->marker_channel();
    events_ = std::make_unique<observe::KeyspaceEvents>(c, o);
  }
  /// Turns CLIENT TRACKING on for `c`: REDIRECT to a connection of its own on RESP2, in band
  /// (pushes on `c` itself) when `c` is on RESP3 (observe/tracking.hpp). Throws like
  /// observe::Tracking.
  void listen_tracking(resp::Client& c) {
    tracking_.reset();
    observe::Tracking::Options o;
    if (events_) o.marker_channel = events_->marker_channel();
    o.in_band = c.protocol() == 3;
    tracking_ = std::make_unique<observe::Tracking>(c, o);
  }
  /// CLIENT TRACKING off (observe::Tracking's destructor); the background heard is kept.
  void stop_tracking() { tracking_.reset(); }
  bool events() const { return events_ != nullptr; }
  bool tracking() const { return tracking_ != nullptr; }
  bool any() const { return events() || tracking(); }
  observe::KeyspaceEvents* event_listener() { return events_.get(); }
  const std::string& event_flags() const {
    static const std::string none;
    return events_ ? events_->flags() : none;
  }

  /// The PUBLISH commands that mark the start (`b<n>`) / end (`e<n>`) of command n on each
  /// listener: sent in the command's pipeline. The second listener made subscribes to the
  /// first one's marker channel, so one PUBLISH marks a point for both (each subscriber gets the
  /// message after everything the server wrote to it before: the same order a private channel
  /// gives).
  std::vector<resp::Argv> begin_markers(const std::string& n) const { return markers("b" + n); }
  std::vector<resp::Argv> end_markers(const std::string& n) const { return markers("e" + n); }
  /// What arrived before command n's begin markers: background, kept for compare_background().
  void read_begin(const std::string& n) {
    if (events_) {
      const auto before = events_->read_until("b" + n);
      stray_.insert(stray_.end(), before.keyevent.begin(), before.keyevent.end());
    }
    if (tracking_) {
      const auto before = tracking_->read_until("b" + n);
      tracking_stray_.insert(tracking_stray_.end(), before.begin(), before.end());
    }
  }
  /// What command n emitted (up to its end markers; nothing when `sent_end` is false: the MULTI
  /// step, whose end markers would be queued), into `events` / `invalidations`; each left empty
  /// (std::nullopt) when its listener is off.
  void read_end(const std::string& n, bool sent_end, std::optional<observe::Observed>& events,
                std::optional<model::Invalidations>& invalidations) {
    if (events_) events = sent_end ? events_->read_until("e" + n) : observe::Observed{};
    if (tracking_) invalidations = sent_end ? tracking_->read_until("e" + n) : model::Invalidations{};
  }

  /// What the last compare_background() compared: the keyspace events the server sent outside
  /// commands (its keyevent channel, in arrival order), the model's (as the flags deliver them),
  /// and the invalidations heard outside commands; each empty when its listener is off.
  struct Background {
    std::vector<model::Event> server, model;
    model::Invalidations invalidations;
  };
  const Background& last_background() const { return last_background_; }

  /// The PUBLISH commands that mark the end of the background compare_background(token) reads:
  /// sent after everything they must follow: on the observed connection (in a pipeline of the
  /// twin's own, say), or on any other once every reply of the observed connection has arrived
  /// (Twin::compare_all() sends them on the read-back connection).
  std::vector<resp::Argv> background_markers(const std::string& token) const { return markers(token); }
  /// Background events and invalidations heard since the last call (up to the markers
  /// background_markers(token) sent), against the model's `model_background` events (their
  /// delivery under the current flags) and what `tracking` makes of them. One line per
  /// difference; empty when they agree or nothing listens.
  std::vector<std::string> compare_background(const std::string& token, const std::vector<model::Event>& model_background,
                                               model::TrackingModel& tracking) {
    std::vector<std::string> out;
    last_background_ = {};
    if (events_) {
      const auto seen = events_->read_until(token);
      stray_.insert(stray_.end(), seen.keyevent.begin(), seen.keyevent.end());
      auto want = observe::deliverable(model_background, events_->flags());
      auto key = [](const model::Event& e) { return e.key + '\0' + e.name; };
      std::map<std::string, int> diff;
      std::set<std::string> got_set, want_set;
      for (const auto& e : stray_) got_set.insert(key(e));
      for (const auto& e : want) want_set.insert(key(e));
      for (const auto& k : got_set) ++diff[k];
      for (const auto& k : want_set) --diff[k];
      last_background_.server = std::move(stray_);
      last_background_.model = std::move(want);
      stray_.clear();
      for (const auto& [k, n] : diff)
        if (n) {
          const auto z = k.find('\0');
          const model::Event e{k.substr(z + 1), k.substr(0, z), '?'};
          out.push_back("background event " + e.to_string() + (n > 0 ? ": server sent it, model does not expect it"
                                                                            : ": model expects it, server did not send it"));
        }
    }
    if (tracking_) {
      auto seen = tracking_->read_until(token);
      tracking_stray_.insert(tracking_stray_.end(), seen.begin(), seen.end());
      const auto d =
          observe::compare_invalidations_unordered(tracking.on_background(model_background), tracking_stray_);
      if (!d.empty()) out.push_back("background " + d);
      last_background_.invalidations = std::move(tracking_stray_);
      tracking_stray_.clear();
    }
    return out;
  }

 private:
  std::vector<resp::Argv> markers(const std::string& token) const {
    std::vector<resp::Argv> out;
    if (events_) out.push_back(events_->marker(token));
    if (tracking_ && !(events_ && events_->marker_channel() == tracking_->marker_channel()))
      out.push_back(tracking_->marker(token));
    return out;
  }

  std::unique_ptr<observe::KeyspaceEvents> events_;
  std::unique_ptr<observe::Tracking> tracking_;
  Background last_background_;           ///< what the last compare_background() compared
  std::vector<model::Event> stray_;      ///< server events outside commands, not yet compared
  model::Invalidations tracking_stray_;  ///< invalidations outside commands, not yet compared
};

}  // namespace expirykit::state::detail
