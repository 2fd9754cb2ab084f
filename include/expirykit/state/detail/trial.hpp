// expirykit/state/detail/trial.hpp (internal to state::Twin): the model's attempts at one step.
//
// The server ran the command at one millisecond of the step's TIME window [before, after]; the
// model tries `before` first, then each later millisecond of the window (at most max_window_ms)
// from the same state, and keeps the first whose outcome agrees (state/detail/judge.hpp): a
// relative deadline, a GT/LT comparison between two relative deadlines, a TTL reply, or a field
// at its deadline may depend on the exact millisecond. A transaction's window runs from its MULTI
// to its EXEC: time is frozen at EXEC. Each attempt runs the command (state/detail/model_step.hpp)
// on the twin's model and on a copy of its tracking model, from the model state before the step
// (kept when there is a window to search or a known issue of the server names the command, whose
// settling replays the step), and fills the
// step's model side and verdict. The known-issue settling (state/known_divergence.hpp) replays the
// step under other dialects (the spec with defects) through rerun(); the dialect of the outcome
// kept is kept() (a batch re-applied at another millisecond keeps it: observe_deadlines.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/state/detail/judge.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

class Trial {
 public:
  /// Before the step `s` (its server side filled: state/detail/send.hpp) of `mc` is tried: `ks` is
  /// the twin's model, `spec` its dialect, `tracked` its tracking model, all as before the step.
  /// Throws nothing itself; the attempts throw model::Unmodelled for a command outside the model.
  Trial(model::Keyspace& ks, const model::Dialect& spec, const TwinOptions& o, const Listeners& listeners,
        const model::TrackingModel& tracked, const ModelCommand& mc, Step& s)
      : ks_(ks), spec_(spec), o_(o), listeners_(listeners), tracked_(tracked), mc_(mc), s_(s),
        window_(s.after_ms > s.before_ms) {
    // A known issue's settling replays the step from it (known_divergence.hpp), only for a step
    // whose command a row covering the server names: no copy for the others.
    static const std::vector<Argv> no_batch;
    if (window_ || (o.server && !known_issues_for_step(*o.server, mc.argv, mc.batch ? *mc.batch : no_batch).empty()))
      saved_ = ks;
  }

  /// Whether the window spans more than one millisecond.
  bool window() const { return window_; }
  /// The spec at the window's first millisecond (or at `from_ms`, a later one of the window:
  /// Twin::run_all trying another millisecond for a step), on the model as it is: the step's
  /// first attempt.
  void attempt_first(int64_t from_ms = 0) {
    from_ = std::max(from_ms, s_.before_ms);
    attempt(spec_, from_);
  }
  /// Unless the first attempt agreed: the spec at each later millisecond of the window (at most
  /// `max_window_ms` after its start) from the state before the step, until one agrees. Sets
  /// s.model_at_ms to the millisecond of the last attempt.
  void search_window(int64_t max_window_ms) {
    s_.model_at_ms = from_;
    for (int64_t at = from_ + 1; !s_.ok && window_ && at <= s_.after_ms && at <= s_.before_ms + max_window_ms;
         ++at) {
      ks_ = saved_;
      attempt(spec_, at);
      s_.model_at_ms = at;
    }
  }
  /// The step again from the state before it, under `d` at `at` (Unix ms).
  void replay(const model::Dialect& d, int64_t at) {
    ks_ = saved_;
    attempt(d, at);
  }
  /// replay(d, at) as the outcome to keep: kept() is `d` from now on, s.model_at_ms `at`
  /// (the `rerun` of settle_known_divergence: state/known_divergence.hpp).
  void rerun(const model::Dialect& d, int64_t at) {
    if (&d == &spec_) kept_.reset();
    else kept_ = d;
    replay(d, at);
    s_.model_at_ms = at;
  }
  /// The step under `d` at `at` (Unix ms) from the state before it, on copies: the trial's
  /// outcome (the model, its tracking model, the step) stays as it was. Returns whether that
  /// attempt agreed with the server and the model state it left (the `probe` of
  /// settle_known_divergence: a step the defects do not change needs no rerun).
  std::pair<bool, model::Keyspace> probe(const model::Dialect& d, int64_t at) const {
    std::pair<bool, model::Keyspace> out{false, saved_};
    model::TrackingModel tm = tracked_;
    Step s = s_;
    run_model(out.second, d, mc_, at, listeners_.tracking(), tm, s);
    judge_step(o_, listeners_.event_flags(), mc_, s);
    out.first = s.ok;
    return out;
  }
  /// When no attempt agreed and the window had more than one millisecond: the attempt at its
  /// start again, the one reported, under the spec.
  void report_first() {
    if (s_.ok || !window_) return;
    ks_ = saved_;
    attempt(spec_, s_.before_ms);
    s_.model_at_ms = s_.before_ms;
    kept_.reset();
  }
  /// Back to the model state before the step (an unmodelled command: its keys are re-read).
  void restore() { ks_ = saved_; }
  /// The dialect of the outcome kept: the spec, or the spec with the defects of the known issues
  /// the step was excused with (the last rerun).
  const model::Dialect& kept() const { return kept_ ? *kept_ : spec_; }
  /// The tracking model as the last attempt left it: the twin's after the step.
  model::TrackingModel& tracking() { return tm_; }

 private:
  void attempt(const model::Dialect& d, int64_t at) {
    tm_ = tracked_;
    run_model(ks_, d, mc_, at, listeners_.tracking(), tm_, s_);
    judge_step(o_, listeners_.event_flags(), mc_, s_);
  }

  model::Keyspace& ks_;
  const model::Dialect& spec_;
  const TwinOptions& o_;
  const Listeners& listeners_;
  const model::TrackingModel& tracked_;
  const ModelCommand& mc_;
  Step& s_;
  const bool window_;
  int64_t from_ = 0;                   ///< the first millisecond tried
  model::Keyspace saved_;              ///< the model before the step (a window, or a known issue to settle)
  model::TrackingModel tm_;            ///< the tracking model after the last attempt
  std::optional<model::Dialect> kept_;  ///< kept() when it is not the spec
};

}  // namespace expirykit::state::detail
