// expirykit/state/detail/observe_tracking.hpp (internal to state::Twin): the CLIENT TRACKING
// invalidations as a step observes them (Twin::observe_tracking()). The server's side is what the
// tracking listener heard between the command's markers (state/detail/listeners.hpp, send.hpp);
// the model's is what model::TrackingModel sends for the command (state/detail/model_step.hpp),
// compared in order (observe/tracking.hpp). The model's set of tracked keys goes on from the
// outcome the step kept; where a known issue excused a step whose invalidations differ, it
// follows the server's.
#pragma once

#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state::detail {

/// Sets s.tracking_diff (cleared first) when the step heard invalidations
/// (s.server_invalidations); a difference makes s.ok false.
inline void judge_tracking(Step& s) {
  s.tracking_diff.clear();
  if (!s.server_invalidations) return;
  s.tracking_diff = observe::compare_invalidations(s.model_invalidations, *s.server_invalidations);
  s.ok = s.ok && s.tracking_diff.empty();
}

/// After step `s`: when a known issue excused it and its invalidations differ
/// (valkey-hsetex-flag-named-key invalidates another key than the one written), the keys still
/// tracked in `tm` follow the server: what the model invalidated is tracked again, what the
/// server invalidated is not.
inline void follow_server_invalidations(model::TrackingModel& tm, const Step& s) {
  if (!(s.ok && !s.known_issue.empty() && !s.tracking_diff.empty() && s.server_invalidations)) return;
  for (const auto& k : s.model_invalidations)
    if (k) tm.tracked.insert(*k);
  for (const auto& k : *s.server_invalidations)
    if (k) tm.tracked.erase(*k);
}

}  // namespace expirykit::state::detail
