// expirykit/state/detail/observe_deadlines.hpp (internal to state::Twin): the deadlines a step
// set, as the server computed them (the state observation of every step; the whole state is
// compared by Twin::compare_state: state/keyspace_diff.hpp).
//
// A relative TTL ("HPEXPIRE h 1000") lands on the server's own "now", which the model can only
// bracket by the step's TIME window (state/twin.hpp, "Time"). After an agreeing step, each
// deadline it changed on a key it names is read back (HPEXPIRETIME / PEXPIRETIME over the
// read-back connection) and adopted when it lies within the window (adopt_server_deadlines:
// state/adopt.hpp). A transaction or script runs at one millisecond: a relative deadline read
// back names it, and the whole batch is re-applied there first (shift_batch), so that what a later
// command of the batch derived from that deadline (a COPY of the key, say) agrees as well, not only
// the key adopted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/state/adopt.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/trial.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state::detail {

/// The deadlines (model_deadlines(): "" the key's, "f:<field>" each field's, Unix ms) of each key
/// a command names, in the model before it runs, by key name.
using KeyDeadlines = std::map<std::string, std::map<std::string, int64_t>>;

/// The keys `mc` names (its own key, or each batch command's first argument, and the destination
/// of RENAME / RENAMENX / COPY, where a deadline set earlier in a transaction moves to) with
/// their deadlines in `ks` now (before the step).
inline KeyDeadlines deadlines_before(const model::Keyspace& ks, const ModelCommand& mc) {
  KeyDeadlines out;
  auto add = [&](const Argv& c) {
    if (c.size() < 2) return;
    out[c[1]] = model_deadlines(ks, c[1]);
    const std::string u = model::upper(c[0]);
    if ((u == "RENAME" || u == "RENAMENX" || u == "COPY") && c.size() > 2) out[c[2]] = model_deadlines(ks, c[2]);
  };
  if (mc.batch) {
    for (const auto& c : *mc.batch) add(c);
  } else {
    add(mc.argv);
  }
  return out;
}

/// `before` (deadlines_before()) without the deadlines `mc` leaves that depend on the millisecond
/// it ran at: those the model, run from `pre` (the state before the step) at `last_ms` (the
/// window's last millisecond, Unix ms) with dialect `d`, leaves other than `chosen` does (the model
/// after the step at the millisecond it chose). What the step changed is read against the result:
/// a step that sets a deadline to the value it already had at the chosen millisecond changed
/// nothing there, but would have at a later one (`HPEXPIRE h 1000 FIELDS 1 a` right after
/// `HPEXPIRE h 1000 FIELDS 2 a b` at the same millisecond, the server running the second one
/// millisecond later: redis-8.0, main property), so such a deadline is read back (adopt_deadlines)
/// and makes a pipelined run's step a choice point (state/detail/run_all.hpp).
inline KeyDeadlines without_moving(KeyDeadlines before, const model::Keyspace& pre, const model::Dialect& d,
                                   const ModelCommand& mc, int64_t last_ms, const model::Keyspace& chosen) {
  model::Keyspace alt = pre;
  model::TrackingModel no_tracking;
  Step scratch;
  try {
    run_model(alt, d, mc, last_ms, false, no_tracking, scratch);
  } catch (const model::Unmodelled&) {
    return before;
  }
  for (auto& [k, b] : before) {
    const auto at_last = model_deadlines(alt, k), at_chosen = model_deadlines(chosen, k);
    for (const auto& [f, v] : at_chosen) {
      const auto it = at_last.find(f);
      if (it == at_last.end() || it->second != v) b.erase(f);
    }
  }
  return before;
}

/// After an agreeing batch step `s` of `mc` over a window: the first deadline it changed (keys in
/// name order) that the server set some ms away from the model's, within the window
/// (server_deadline_shift: state/adopt.hpp), names the millisecond the batch ran at; the batch is
/// re-applied there through `t` with the dialect of the outcome kept, and that outcome is kept
/// if it agrees (the known issue named before stays named), else the one before. `side()` gives
/// the read-back connection; `ks` is the twin's model (the trial's).
template <class Side>
void shift_batch(Trial& t, const ModelCommand& mc, const KeyDeadlines& before, Side&& side, model::Keyspace& ks,
                 Step& s) {
  if (!(s.ok && t.window() && mc.batch)) return;
  std::optional<int64_t> shift;
  for (const auto& [k, b] : before)
    if (!shift) shift = server_deadline_shift(side, ks, k, b, s);
  if (!(shift && *shift != 0 && s.model_at_ms + *shift >= s.before_ms && s.model_at_ms + *shift <= s.after_ms)) return;
  const model::Keyspace kept = ks;
  const Step kept_step = s;
  const model::TrackingModel kept_tm = t.tracking();
  // With the defects of the outcome kept: a known issue that only shows in the state
  // (redis-hsetex-keepttl-expired-deadline in a transaction) must not be undone here.
  t.replay(t.kept(), s.model_at_ms + *shift);
  if (s.ok) {
    s.model_at_ms += *shift;
    if (s.known_issue.empty()) s.known_issue = kept_step.known_issue;
  } else {
    ks = kept;
    s = kept_step;
    t.tracking() = kept_tm;
  }
}

/// After an agreeing step `s`: each deadline it changed on the keys of `before` adopted from the
/// server (adopt_server_deadlines: within the window, widened by `tolerance_ms`), read over
/// `side()`.
template <class Side>
void adopt_deadlines(const KeyDeadlines& before, Side&& side, model::Keyspace& ks, const Step& s,
                     int64_t tolerance_ms) {
  if (!s.ok) return;
  for (const auto& [k, b] : before) adopt_server_deadlines(side, ks, k, b, s, tolerance_ms);
}

}  // namespace expirykit::state::detail
