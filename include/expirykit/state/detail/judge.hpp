// expirykit/state/detail/judge.hpp (internal to state::Twin): the verdict of one attempt of the
// model at a step (state/detail/trial.hpp), asked of each observation in turn: the reply
// (state/replies.hpp: exact, with the clock-dependent replies inside the TIME window and the
// unordered ones as sets), the keyspace notifications (state/detail/observe_events.hpp) and the
// CLIENT TRACKING invalidations (state/detail/observe_tracking.hpp). The model's side goes through
// the options' test hooks first (state/twin_options.hpp). A new observation of every step is
// one more header beside those, asked here.
#pragma once

#include <string>

#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/observe_events.hpp>
#include <expirykit/state/detail/observe_tracking.hpp>
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
  s.known_issue.clear();
  judge_events(o, event_flags, mc, s);
  judge_tracking(s);
}

}  // namespace expirykit::state::detail
