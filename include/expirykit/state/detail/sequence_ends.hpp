// expirykit/state/detail/sequence_ends.hpp (internal to state::Twin, included by state/twin.hpp):
// the definitions of what a sequence starts and ends with, each in one round trip:
// Twin::begin_sequence (and flushall(), through Twin::flush: FLUSHALL SYNC, the event flags, the
// counters' base, the background markers in one pipeline on the twin's connection) and
// Twin::compare_all (background events, state and counters read in one pipeline over the
// read-back connection: state/keyspace_diff.hpp, keyspace_diff_pipelined). What each promises
// is said at its declaration in state/twin.hpp; bench/RESULTS.md 9.4 says what they saved.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/observe/counters.hpp>
#include <expirykit/state/keyspace_diff.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

inline void Twin::begin_sequence(const std::string& event_flags) {
  std::vector<Argv> before;
  auto* events = listeners_.event_listener();
  const bool set_flags = events && !event_flags.empty();
  if (set_flags) before.push_back(events->set_flags_command(event_flags));
  const std::vector<Reply> r = flush(std::move(before), counters_.on());
  if (set_flags) events->set_flags_reply(r.front(), event_flags);
}

inline std::vector<std::string> Twin::compare_all() {
  resp::Client& s = side();
  const std::string token = "bg" + std::to_string(++marker_seq_);
  std::vector<Argv> first = listeners_.background_markers(token);
  const std::size_t at = first.size();
  if (counters_.on())
    for (auto& a : observe::Counters::requests()) first.push_back(std::move(a));
  std::vector<Reply> r;
  auto state = keyspace_diff_pipelined(s, ks_, server_time_estimate(), diff_options({}), std::move(first), r);
  auto out = background_until(token);
  out.insert(out.end(), std::make_move_iterator(state.begin()), std::make_move_iterator(state.end()));
  if (counters_.on()) {
    const auto server = observe::Counters::parse(r[at], r[at + 1], d_, 0, s.address());
    for (auto& d : counters_.compare_with(server, d_, ks_)) out.push_back(std::move(d));
  }
  return out;
}

inline std::vector<Reply> Twin::flush(std::vector<Argv> before, bool rebase) {
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
  before.push_back({"FLUSHALL", "SYNC"});
  if (rebase)
    for (auto& a : observe::Counters::requests()) before.push_back(std::move(a));
  const std::string token = "bg" + std::to_string(++marker_seq_);
  for (auto& m : listeners_.background_markers(token)) before.push_back(std::move(m));
  const std::vector<Reply> r = c_->pipeline(before);
  background_until(token);  // what came before is forgotten
  if (rebase)
    counters_.start_from(observe::Counters::parse(r[n_before + 1], r[n_before + 2], d_, 0, c_->address()), ks_);
  return r;
}

}  // namespace expirykit::state
