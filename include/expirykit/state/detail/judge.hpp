// expirykit/state/detail/judge.hpp (internal to state::Twin): one step's verdict, asked of each observation in turn: the reply
// (state/replies.hpp: exact, with the clock-dependent replies inside the TIME window and the
// unordered ones as sets), the keyspace notifications (observe/keyspace_events.hpp; a difference
// a known issue of the server under test explains is excused and named: state/known_divergence.hpp)
// and the CLIENT TRACKING invalidations (observe/tracking.hpp). The model's side goes through the
// options' test hooks first (state/twin_options.hpp).
#pragma once

#include <string>

#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/replies.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// Sets s.ok, s.events_diff, s.tracking_diff and s.known_issue (cleared first) for the model's
/// run of `mc` in `s` against the server's, events compared under notify-keyspace-events
/// `event_flags`. Applies o's mutate_model_* hooks to the model's side first.
inline void judge_step(const TwinOptions& o, const std::string& event_flags, const ModelCommand& mc, Step& s) {
  const Argv& argv = mc.argv;
  if (o.mutate_model_reply) o.mutate_model_reply(argv, s.model);
  if (o.mutate_model_invalidations) o.mutate_model_invalidations(argv, s.model_invalidations);
  if (o.mutate_model_events) o.mutate_model_events(argv, s.model_events);
  s.ok = mc.batch && s.model.is_array() ? batch_match(*mc.batch, s.model, s.server, o.time_tolerance_ms)
                                        : replies_match(argv, s.model, s.server, o.time_tolerance_ms);
  s.events_diff.clear();
  s.known_issue.clear();
  if (s.server_events) {
    s.events_diff = observe::compare_events(s.model_events, *s.server_events, event_flags);
    if (!s.events_diff.empty() && o.server) s.known_issue = events_excuse(*o.server, argv, mc.batch);
    s.ok = s.ok && (s.events_diff.empty() || !s.known_issue.empty());
  }
  s.tracking_diff.clear();
  if (s.server_invalidations) {
    s.tracking_diff = observe::compare_invalidations(s.model_invalidations, *s.server_invalidations);
    s.ok = s.ok && s.tracking_diff.empty();
  }
}

}  // namespace expirykit::state::detail
