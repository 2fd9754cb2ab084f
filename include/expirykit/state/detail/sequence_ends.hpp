// expirykit/state/detail/sequence_ends.hpp (internal to state::Twin, included by state/twin.hpp):
// the definitions of what a sequence starts and ends with, each in one round trip:
// Twin::begin_sequence (and flushall(), through Twin::flush: FLUSHALL SYNC or FLUSHDB SYNC, the
// event flags, the counters' base, the background markers in one pipeline on the twin's
// connection) and
// Twin::compare_all (background events, state and counters read in one pipeline over the
// read-back connection: state/keyspace_diff.hpp, keyspace_diff_send and keyspace_diff_finish;
// sent by run_all() ahead of its last run's checks when compare_all_follows()). What each promises
// is said at its declaration in state/twin.hpp; bench/RESULTS.md 9.4 says what they saved.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/observe/counters.hpp>
#include <expirykit/state/keyspace_diff.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

inline void Twin::send_begin_sequence(const std::string& event_flags) {
  finish_begin();
  std::vector<Argv> before;
  auto* events = listeners_.event_listener();
  const bool set_flags = events && !event_flags.empty();
  if (set_flags) before.push_back(events->set_flags_command(event_flags));
  pending_begin_ = PendingBegin{event_flags, set_flags, flush_send(std::move(before), counters_.on())};
}

inline void Twin::finish_begin() {
  if (pending_begin_) {
    const PendingBegin p = std::move(*pending_begin_);
    pending_begin_.reset();
    const std::vector<Reply> r = flush_finish(p.flush);
    if (p.set_flags) listeners_.event_listener()->set_flags_reply(r.front(), p.event_flags);
  }
  if (c_->protocol() == protocol_) return;
  // use_protocol(): tracking moves with it (REDIRECT on RESP2, in band on RESP3), and the model
  // starts again with no key tracked, as the server does after CLIENT TRACKING OFF.
  const bool tracking = listeners_.tracking();
  if (tracking) listeners_.stop_tracking();
  try {
    c_->hello(protocol_);
  } catch (...) {  // refused (or the connection broke): the twin stays on the protocol it has
    protocol_ = c_->protocol();
    if (tracking && c_->connected()) listeners_.listen_tracking(*c_);
    tracking_model_ = model::TrackingModel{};
    throw;
  }
  if (tracking) {
    listeners_.listen_tracking(*c_);
    tracking_model_ = model::TrackingModel{};
  }
}

inline void Twin::begin_sequence(const std::string& event_flags) {
  if (pending_begin_ && pending_begin_->event_flags == event_flags && pending_begin_->flush.rebase == counters_.on() &&
      pending_begin_->flush.c == c_) {
    finish_begin();
    return;
  }
  send_begin_sequence(event_flags);
  finish_begin();
}

inline std::vector<std::string> Twin::compare_other_dbs(const Reply& keyspace_info) {
  std::vector<std::string> out;
  const auto dbs = other_dbs_to_compare(ks_, keyspace_info.is_string() ? keyspace_info.str() : std::string());
  for (int db : dbs)
    for (auto& d : keyspace_diff_db(side(), ks_, db, diff_options({}), server_time_estimate())) out.push_back(std::move(d));
  db0_only_at_seq_ = dbs.empty() && persistence_off() ? marker_seq_ : 0;
  return out;
}

inline bool Twin::persistence_off() {
  resp::Client& s = side();
  auto& known = sides_[c_->address()].persistence_off;
  if (!known) {
    const auto r = s.pipeline({{"CONFIG", "GET", "save"}, {"CONFIG", "GET", "appendonly"}});
    const auto value = [](const Reply& x) { return x.is_array() && x.size() == 2 && x[1].is_string() ? x[1].str() : "?"; };
    known = value(r[0]).empty() && value(r[1]) == "no";  // a refused CONFIG GET: not known to be off
  }
  return *known;
}

inline Twin::CompareAhead Twin::send_compare_all(const model::Keyspace& plan, int64_t estimate_ms) {
  resp::Client& s = side();
  CompareAhead a;
  a.c = c_;
  a.token = "bg" + std::to_string(++marker_seq_);
  a.markers = listeners_.background_markers(a.token);
  std::vector<Argv> first = a.markers;
  a.counters_at = first.size();
  a.counters = counters_.on();
  if (a.counters)
    for (auto& x : observe::Counters::requests()) first.push_back(std::move(x));
  // Which databases hold keys (the others are compared too): the counters' own INFO keyspace
  // when they are read, else one of its own.
  a.keyspace_at = a.counters ? a.counters_at + observe::Counters::keyspace_request : first.size();
  if (!a.counters) first.push_back({"INFO", "keyspace"});
  a.diff = keyspace_diff_send(s, plan, estimate_ms, diff_options({}), std::move(first));
  a.c_sent = c_->commands_appended();
  a.side_sent = s.commands_appended();
  return a;
}

inline std::vector<std::string> Twin::finish_compare_all(const CompareAhead& a, const std::vector<Reply>& replies) {
  std::vector<Reply> r;
  auto state = keyspace_diff_finish(a.diff, replies, ks_, diff_options({}), r);
  auto out = background_until(a.token);
  out.insert(out.end(), std::make_move_iterator(state.begin()), std::make_move_iterator(state.end()));
  for (auto& d : compare_other_dbs(r[a.keyspace_at])) out.push_back(std::move(d));
  if (a.counters) {
    const auto server = observe::Counters::parse(r[a.counters_at], r[a.counters_at + 1], d_, 0, a.diff.side->address());
    for (auto& d : counters_.compare_with(server, d_, ks_)) out.push_back(std::move(d));
  }
  return out;
}

inline void Twin::drop_compare_ahead() {
  if (!compare_ahead_) return;
  const CompareAhead a = std::move(*compare_ahead_);
  compare_ahead_.reset();
  try {
    (void)keyspace_diff_read(a.diff);
  } catch (const resp::ConnectionError&) {
  }
}

inline std::vector<std::string> Twin::compare_all() {
  finish_begin();
  if (compare_ahead_) {  // sent by run_all() (compare_all_follows()): used when nothing went out since
    const CompareAhead a = std::move(*compare_ahead_);
    compare_ahead_.reset();
    // Still a read-back connection of the twin (side() and flushes read it before they replace one).
    if (std::any_of(sides_.begin(), sides_.end(), [&a](const auto& e) { return e.second.c.get() == a.diff.side; })) {
      const bool same = a.c == c_ && c_->commands_appended() == a.c_sent && a.diff.side->commands_appended() == a.side_sent &&
                        a.counters == counters_.on() && a.markers == listeners_.background_markers(a.token);
      const std::vector<Reply> r = keyspace_diff_read(a.diff);
      if (same) {
        ++run_stats_.compares_ahead;
        return finish_compare_all(a, r);
      }
    }
  }
  const CompareAhead a = send_compare_all(ks_, server_time_estimate());
  return finish_compare_all(a, keyspace_diff_read(a.diff));
}

inline Twin::PendingFlush Twin::flush_send(std::vector<Argv> before, bool rebase, bool all_dbs) {
  finish_begin();
  // Right after a compare_all() that saw keys in database 0 only: FLUSHDB (flushall()'s doc).
  const bool db0_only = !all_dbs && db0_only_at_seq_ != 0 && db0_only_at_seq_ == marker_seq_;
  db0_only_at_seq_ = 0;
  drop_compare_ahead();  // a compare_all() run_all() sent ahead, not used
  drop_dump_ahead();     // a DUMP it sent ahead, not used
  if (tx_) {
    (*c_)("DISCARD");
    tx_.reset();
  }
  // The server may be another process than last time (a restart): a read-back connection it
  // closed is dropped, an open one kept (a new connection per sequence cost 3 % of the
  // checker's CPU: bench/RESULTS.md).
  std::erase_if(sides_, [](const auto& s) { return !s.second.c || !s.second.c->open_and_quiet(); });
  script_strings_.clear();
  ks_.clear();
  tracking_model_.tracked.clear();
  history_.clear();
  inflight_.reset();
  inflight_run_.clear();
  hlen_unknown_.clear();
  const std::size_t n_before = before.size();
  // In a transaction: Redis 7.4 and later run a FLUSHALL / FLUSHDB SYNC sent alone in their
  // lazyfree thread, the client blocked until it is done (flushCommandCommon in Redis's
  // src/db.c), and inside MULTI at once (CLIENT_AVOID_BLOCKING_ASYNC_FLUSH): the same empty
  // keyspace without the wake-ups, about 30 us less a flush on Redis 8.0.6 (bench/RESULTS.md 9.11).
  before.push_back({"MULTI"});
  before.push_back({db0_only ? "FLUSHDB" : "FLUSHALL", "SYNC"});
  before.push_back({"EXEC"});  // its reply at n_before + 2
  if (rebase)
    for (auto& a : observe::Counters::requests()) before.push_back(std::move(a));  // INFO stats, INFO keyspace
  std::optional<std::size_t> keyspace_at;  // FLUSHDB: the INFO keyspace that confirms no database holds a key
  if (db0_only) {
    keyspace_at = rebase ? n_before + 4 : before.size();
    if (!rebase) before.push_back({"INFO", "keyspace"});
  }
  const std::string token = "bg" + std::to_string(++marker_seq_);
  for (auto& m : listeners_.background_markers(token)) before.push_back(std::move(m));
  for (const auto& a : before) c_->append(a);
  c_->send();
  return PendingFlush{c_, before.size(), n_before, rebase, token, keyspace_at};
}

inline std::vector<Reply> Twin::flush_finish(const PendingFlush& p) {
  std::vector<Reply> r;
  r.reserve(p.replies);
  for (std::size_t i = 0; i < p.replies; ++i) r.push_back(p.c->read());
  background_until(p.token);  // what came before is forgotten
  const Reply& exec = r[p.n_before + 2];
  if (exec.is_nil()) {  // a WATCH sent around the twin saw its key change (EXEC has dropped it)
    (void)flush_finish(flush_send({}, p.rebase, true));
    return r;
  }
  // A MULTI refused (a proxy without transactions, say) ran the flush at once: its own OK.
  const bool flushed = r[p.n_before] == Reply::ok() ? exec.is_array() && exec.size() == 1 && exec[0] == Reply::ok()
                                                    : r[p.n_before + 1] == Reply::ok();
  if (!flushed)
    throw std::runtime_error(p.c->address() + ": MULTI, FLUSHALL (or FLUSHDB) SYNC, EXEC answered " + exec.oneline() +
                             " (MULTI: " + r[p.n_before].oneline() + ", the flush: " + r[p.n_before + 1].oneline() + ")");
  if (const Reply* info = p.keyspace_at ? &r[*p.keyspace_at] : nullptr;
      info && (!info->is_string() || !dbs_listed(info->str()).empty())) {
    (void)flush_finish(flush_send({}, p.rebase, true));  // a key left somewhere (sent behind the twin's back)
    return r;
  }
  if (p.rebase)
    counters_.start_from(observe::Counters::parse(r[p.n_before + 3], r[p.n_before + 4], d_, 0, p.c->address()), ks_);
  return r;
}

}  // namespace expirykit::state
