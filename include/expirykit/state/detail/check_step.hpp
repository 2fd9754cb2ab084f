// expirykit/state/detail/check_step.hpp (internal to state::Twin, included by state/twin.hpp):
// the model's side of one step (Twin::check: the reply, events, tracking, known issues and
// deadlines against the model), a step outside the model (Twin::unmodelled, Twin::adopt), a
// command queued inside MULTI (Twin::queued), and the model side restored (Twin::restore, for
// run_all's choice points: state/detail/run_all.hpp), a command a crash row holds back
// (Twin::hold_back), the replies that say the sequence function is gone (Twin::saw_reply) and
// the background heard up to a marker (Twin::background_until).
#pragma once

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <expirykit/model/resp3.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

inline Step Twin::check(const detail::ModelCommand& mc, detail::Sent sent, CheckMode mode) {
  Step s = detail::step_of(mc, std::move(sent));
  if (c_->protocol() == 3) {  // use_protocol(3): the model compares the RESP2 form (model/resp3.hpp)
    s.protocol = 3;
    s.server_resp3 = std::move(s.server);
    s.server = model::resp2_form(s.argv, *s.server_resp3, s.batch);
  }
  detail::KeyDeadlines before = detail::deadlines_before(ks_, mc);
  std::optional<model::Keyspace> pre;  // over a window of milliseconds: what a later one would set
  if (mode.readbacks && s.after_ms > s.before_ms) pre = ks_;
  // Coverage cells (state/coverage.hpp): the command against the model state before it runs.
  cells_.record(ks_, d_, mc.argv, mc.batch && !mc.tx.aborted && !mc.tx.unmodelled ? &*mc.batch : nullptr,
                mc.in_script, s.before_ms);
  detail::keep_background(ks_, background_model_);
  detail::Trial trial(ks_, d_, opt_, listeners_, tracking_model_, mc, s);
  auto read_back = [this]() -> resp::Client& { return side(); };
  try {
    trial.attempt_first(mode.from_ms);  // at the window's start, judged: reply, events, tracking
    detail::excuse_script_string(opt_, !script_strings_.empty(), s);  // encoding
    trial.search_window(max_window_ms);
    detail::settle_known_issues(opt_, d_, trial, ks_, s, read_back, max_window_ms,
                                [this](const model::Keyspace& k) { return counters_match(k); }, mode.from_ms);
    trial.report_first();                                      // none agreed: the attempt at `before`
    if (pre && s.ok) before = detail::without_moving(std::move(before), *pre, d_, mc, s.after_ms, ks_);
    if (mode.readbacks) detail::shift_batch(trial, mc, before, read_back, ks_, s);  // a batch at the server's ms
    detail::follow_server_invalidations(trial.tracking(), s);
    tracking_model_ = trial.tracking();
    detail::remember_dump(ks_, mc, s);
    detail::note_script_strings(mc, script_strings_);
    if (mode.readbacks) detail::adopt_deadlines(before, read_back, ks_, s, opt_.time_tolerance_ms);
  } catch (const model::Unmodelled& e) {
    unmodelled(mc, e, trial, s);
  }
  if (s.server_resp3 && s.unmodelled.empty()) {  // a modelled command's RESP3 form
    s.resp3_diff = model::resp3_difference(s.argv, *s.server_resp3, s.batch);
    if (!s.resp3_diff.empty()) s.ok = false;
  }
  count(mc.argv, s.unmodelled.empty());
  history_.push_back(s);
  return s;
}

inline void Twin::unmodelled(const detail::ModelCommand& mc, const model::Unmodelled& e, detail::Trial& trial, Step& s) {
  s.unmodelled = e.what();
  s.tracking_diff.clear();
  if (trial.window()) trial.restore();
  adopt(mc.batch ? *mc.batch : std::vector<Argv>{mc.argv}, s);
}

inline void Twin::adopt(const std::vector<Argv>& cmds, Step& s) {
  if (!opt_.adopt_unmodelled) return;
  // The read-back connection asked for only when a key is read: a keyless command (the main
  // property's DEBUG SET-ACTIVE-EXPIRE 0 and DEBUG SLEEP) keeps a compare_all() sent ahead
  // (compare_all_follows()).
  adopt_unmodelled([this]() -> resp::Client& { return side(); }, ks_, cmds, hlen_unknown_, tracking_model_);
  if (counters_.on() && (cmds.empty() || !std::all_of(cmds.begin(), cmds.end(), leaves_model_alone)))
    observe_counters();
  s.ok = true;
}

inline Step Twin::queued(const Argv& argv, Reply server) {
  Step s;
  s.argv = argv;
  s.protocol = c_->protocol();
  s.server = s.protocol == 3 ? server.without_resp3() : std::move(server);  // QUEUED or a refusal
  s.before_ms = s.after_ms = tx_->before_ms;
  const bool known = detail::queue_in(*tx_, d_, s);
  if (opt_.mutate_model_reply) opt_.mutate_model_reply(s.argv, s.model);
  s.ok = s.model == s.server;
  count(s.argv, known);
  history_.push_back(s);
  return s;
}

inline void Twin::restore(const ModelSide& m) {
  ks_ = m.ks;
  tracking_model_ = m.tracking;
  background_model_ = m.background;
  cells_ = m.cells;
  coverage_ = m.coverage;
  script_strings_ = m.script_strings;
  hlen_unknown_ = m.hlen_unknown;
  history_.resize(m.history);
}

inline Step Twin::hold_back(const Argv& argv, const std::string& row_id) {
  cells_.record(ks_, d_, argv, nullptr, false, history_.empty() ? 0 : history_.back().after_ms);
  Step s = detail::not_sent(argv, row_id);
  s.protocol = c_->protocol();
  history_.push_back(s);
  return s;
}

inline void Twin::saw_reply(const Reply& r) {
  if (r.is_array()) {
    for (const auto& e : r.elements()) saw_reply(e);
  } else if (r.is_error() && r.str().find("Function not found") != std::string::npos) {
    for (auto& [address, side] : sides_) side.function_loaded = false;
  }
}

inline std::vector<std::string> Twin::background_until(const std::string& token) {
  detail::keep_background(ks_, background_model_);
  auto out = listeners_.compare_background(token, background_model_, tracking_model_);
  background_model_.clear();
  return out;
}

}  // namespace expirykit::state
