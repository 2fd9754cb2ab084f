// expirykit/state/detail/switches.hpp (internal to state::Twin, included by state/twin.hpp): the
// twin's switches, each documented at its declaration in state/twin.hpp: the listpack limits read
// again (Twin::read_listpack_limits), the protocol of its connection (Twin::use_protocol, sent by
// Twin::finish_begin: state/detail/sequence_ends.hpp), a load followed (Twin::follow_load) and
// active expiry switched, recorded in the history (Twin::set_active_expire).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/state/twin.hpp>

namespace expirykit::state {

inline bool Twin::read_listpack_limits() {
  finish_begin();
  return limits_read_ = state::read_listpack_limits(*c_, ks_);
}

inline void Twin::use_protocol(int protocol) {
  if (protocol != 2 && protocol != 3) throw std::invalid_argument("use_protocol: " + std::to_string(protocol) + " (2 or 3)");
  if (protocol == 3 && !resp::resp3_supported)
    throw std::logic_error("use_protocol(3): RESP3 needs a build with hiredis 1.1 or later (docs/guide/resp3.md)");
  if (tx_ && protocol != protocol_) throw std::logic_error("use_protocol: inside a transaction");
  protocol_ = protocol;
}

inline void Twin::follow_load() {
  finish_begin();
  if (listeners_.tracking()) throw std::logic_error("follow_load: not while observing tracking");
  ks_ = ks_.after_load(server_time(), d_.load_skips_due_fields);
  background_model_.clear();
  if (counters_.on()) observe_counters();
}

inline Reply Twin::set_active_expire(bool on) {
  finish_begin();
  const std::vector<Reply> r = c_->pipeline({{"DEBUG", "SET-ACTIVE-EXPIRE", on ? "1" : "0"}, {"TIME"}});
  Step s;
  s.argv = {"DEBUG", "SET-ACTIVE-EXPIRE", on ? "1" : "0"};
  s.protocol = c_->protocol();
  s.server = r[0].without_resp3();
  s.before_ms = s.after_ms = saw_server_time(server::time_ms(r[1]));
  s.unmodelled = "the twin's own switch (Twin::set_active_expire): active expiry is the model's reclaim_model()";
  s.ok = !s.server.is_error();
  history_.push_back(s);
  return r[0];
}

}  // namespace expirykit::state
