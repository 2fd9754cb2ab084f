// expirykit/state/detail/send.hpp (internal to state::Twin): how state::Twin::run() (state/twin.hpp) sends one command, in one
// round trip: [begin markers] TIME command TIME [end markers].
//
// The two TIME replies bracket the millisecond the server ran the command at (Unix ms: a server
// reads its clock once per command, commandTimeSnapshot() in Valkey's and Redis's server.c);
// the markers (PUBLISH on each listener's channel: state/listeners.hpp) cut what the listeners
// heard into before the command (background) and the command's own. After MULTI, TIME and
// PUBLISH would be queued: the MULTI step has no end markers and EXEC no begin markers (its
// window starts at the MULTI, and time is frozen at EXEC).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/detail/transaction.hpp>

namespace expirykit::state::detail {

/// Sends `mc` on `c` with marker number `n` and fills s.before_ms, s.after_ms, s.server and
/// what the listeners heard (s.server_events, s.server_invalidations). A MULTI the server
/// accepts opens `tx` and sets mc.tx.opened; an EXEC / DISCARD closing `tx` takes its window's
/// start from it (the caller ends `tx`). Throws like resp::Client::pipeline.
inline void send_command(resp::Client& c, Listeners& listeners, uint64_t n_seq, ModelCommand& mc,
                         std::optional<Transaction>& tx, Step& s) {
  using server::time_ms;
  const std::string& u = mc.name;
  const std::string n = std::to_string(n_seq);
  const auto pre = mc.tx.closes ? std::vector<Argv>{} : listeners.begin_markers(n);
  const auto post = u != "MULTI" ? listeners.end_markers(n) : std::vector<Argv>{};
  std::vector<Argv> cmds = pre;
  const std::size_t at = cmds.size();
  if (u == "MULTI") {
    cmds.insert(cmds.end(), {{"TIME"}, mc.argv});
  } else if (mc.tx.closes) {
    cmds.insert(cmds.end(), {mc.argv, {"TIME"}});
  } else {
    cmds.insert(cmds.end(), {{"TIME"}, mc.argv, {"TIME"}});
  }
  cmds.insert(cmds.end(), post.begin(), post.end());
  const auto r = c.pipeline(cmds);
  if (u == "MULTI") {
    s.before_ms = s.after_ms = time_ms(r[at]);
    s.server = r[at + 1];
    if (s.server == Reply::ok()) {
      tx = Transaction{s.before_ms, {}, false, false};
      mc.tx.opened = true;
    }
  } else if (mc.tx.closes) {
    s.before_ms = tx->before_ms;
    s.server = r[at];
    s.after_ms = time_ms(r[at + 1]);
  } else {
    s.before_ms = time_ms(r[at]);
    s.server = r[at + 1];
    s.after_ms = time_ms(r[at + 2]);
  }
  if (!pre.empty()) listeners.read_begin(n);
  listeners.read_end(n, !post.empty(), s.server_events, s.server_invalidations);
}

/// FUNCTION LOAD of model::sequence_function_library() (model/batch.hpp: what FCALL of the kit's
/// sequence function runs) on `c` unless its server has it (FUNCTION LIST; a restarted server
/// without persistence may have lost it). Throws std::runtime_error if the server refuses.
inline void ensure_sequence_function(resp::Client& c) {
  const Reply have = c("FUNCTION", "LIST", "LIBRARYNAME", "expirykit");
  if (have.is_array() && have.size() > 0) return;
  const Reply r = c("FUNCTION", "LOAD", "REPLACE", model::sequence_function_library());
  if (r.is_error()) throw std::runtime_error("FUNCTION LOAD of the kit's sequence function answered " + r.to_string());
}

/// `RESTORE key ttl <prefix><src> ...` (prefix: Twin::dump_ref, "@dump:") with the payload of
/// DUMP <src> read now on `side`, the model remembering which entry of `ks` it stands for
/// (generators cannot know payloads); a missing <src> gives an empty payload. Any other command
/// is returned as it is.
inline Argv resolve_dump_ref(resp::Client& side, model::Keyspace& ks, const Argv& a, const std::string& prefix) {
  if (a.size() < 4 || model::upper(a[0]) != "RESTORE" || a[3].rfind(prefix, 0) != 0) return a;
  Argv out = a;
  const std::string src = a[3].substr(prefix.size());
  const Reply p = side("DUMP", src);
  out[3] = p.is_string() ? p.str() : std::string();
  if (p.is_string())
    if (const model::Entry* e = ks.raw(src)) ks.remember_dump(p.str(), *e);
  return out;
}

}  // namespace expirykit::state::detail
