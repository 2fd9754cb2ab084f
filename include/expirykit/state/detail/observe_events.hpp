// expirykit/state/detail/observe_events.hpp (internal to state::Twin): the keyspace notifications
// as a step observes them (Twin::observe_events()). The server's side is what the event listener
// heard between the command's markers (state/detail/listeners.hpp, send.hpp); the model's is what
// model::Keyspace emitted while running it (state/detail/model_step.hpp). They are compared under
// the notify-keyspace-events flags (observe/keyspace_events.hpp); a difference a known issue of
// the server under test explains is excused and named (events_excuse: state/known_divergence.hpp).
// What the model emitted outside any step (its lazy expiry by a read, its active expiry:
// Twin::reclaim_model) is kept as background, for Twin::compare_background_events().
#pragma once

#include <string>
#include <vector>

#include <expirykit/model/effects.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// Sets s.events_diff (cleared first) when the step heard events (s.server_events): the model's
/// s.model_events against them under `event_flags`; a difference names its known issue in
/// s.known_issue when one of o.server's rows explains it, else it makes s.ok false.
inline void judge_events(const TwinOptions& o, const std::string& event_flags, const ModelCommand& mc, Step& s) {
  s.events_diff.clear();
  if (!s.server_events) return;
  s.events_diff = observe::compare_events(s.model_events, *s.server_events, event_flags);
  if (!s.events_diff.empty() && o.server) s.known_issue = events_excuse(*o.server, mc.argv, mc.batch);
  s.ok = s.ok && (s.events_diff.empty() || !s.known_issue.empty());
}

/// Moves the events `ks` emitted and nobody took yet (outside a step) to `background`.
inline void keep_background(model::Keyspace& ks, std::vector<model::Event>& background) {
  auto pending = ks.take_events();
  background.insert(background.end(), pending.begin(), pending.end());
}

}  // namespace expirykit::state::detail
