// expirykit/state/detail/send.hpp (internal to state::Twin): the SERVER side of a step. How
// state::Twin::run() (state/twin.hpp) sends one command, in one round trip:
// [begin markers] TIME command TIME [end markers], and the record of what the server showed
// (`Sent`), which is all the MODEL side (Twin::check, state/twin.hpp) is given of the server's run.
//
// The two TIME replies bracket the millisecond the server ran the command at (Unix ms: a server
// reads its clock once per command, commandTimeSnapshot() in Valkey's and Redis's server.c);
// the markers (PUBLISH on each listener's channel: state/detail/listeners.hpp) cut what the
// listeners heard into before the command (background) and the command's own. After MULTI, TIME
// and PUBLISH would be queued: the MULTI step has no end markers and EXEC no begin markers (its
// window starts at the MULTI, and time is frozen at EXEC).
//
// A pipelined sender (a Twin member sending a whole sequence in one round trip, a TIME between
// commands: command i's window is [the TIME before it, the TIME after it], one TIME closing a
// window and opening the next) would produce one Sent per command and hand each to Twin::check in
// order. What it needs besides:
//  - the read-backs check() makes over side() after a command (the deadlines it adopts or shifts
//    a batch by: PEXPIRETIME / HPEXPIRETIME; the keys a known issue's state check reads: TYPE,
//    HLEN, HPEXPIRETIME, TIME; INFO for the counters; COMMAND GETKEYS and the re-reads of an
//    unmodelled command) would see the server after the whole pipeline, not right after that
//    command: either read them in the pipeline right after the command (PEXPIRETIME and the
//    HPEXPIRETIME of every field the command names, say), carry them in the record and have
//    check() read them from there, or end the pipeline at a command whose check needs the server
//    as it was (an unmodelled command, a known issue decided by the state);
//  - what decides a command before it is sent: a crash row (Twin::crashing asks the model state
//    before the command, i.e. after the checks of the commands before it), a
//    `RESTORE ... @dump:<src>` (DUMP <src> read first), FCALL's library (FUNCTION LIST), and
//    MULTI's reply (a transaction opens only if the server accepts it): decide them before the
//    pipeline is built, or end the pipeline there;
//  - a begin / end marker pair per command (their numbers) when listeners are on, as here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/transaction.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state::detail {

/// What the server showed for one command: the record the model side checks.
struct Sent {
  Reply reply;
  int64_t before_ms = 0, after_ms = 0;  ///< its TIME window (server clock, Unix ms)
  std::optional<observe::Observed> events;            ///< what the event listener heard, if on
  std::optional<model::Invalidations> invalidations;  ///< what the tracking listener heard, if on
  bool opened_transaction = false;                    ///< a MULTI the server accepted
};

/// Sends `mc` on `c` with marker number `n_seq` and returns what the server showed. An EXEC /
/// DISCARD closing `tx` (mc.tx.closes) takes its window's start from it. Throws like
/// resp::Client::pipeline.
inline Sent send_command(resp::Client& c, Listeners& listeners, uint64_t n_seq, const ModelCommand& mc,
                         const std::optional<Transaction>& tx) {
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
  Sent out;
  if (u == "MULTI") {
    out.before_ms = out.after_ms = time_ms(r[at]);
    out.reply = r[at + 1];
    out.opened_transaction = out.reply == Reply::ok();
  } else if (mc.tx.closes) {
    out.before_ms = tx->before_ms;
    out.reply = r[at];
    out.after_ms = time_ms(r[at + 1]);
  } else {
    out.before_ms = time_ms(r[at]);
    out.reply = r[at + 1];
    out.after_ms = time_ms(r[at + 2]);
  }
  if (!pre.empty()) listeners.read_begin(n);
  listeners.read_end(n, !post.empty(), out.events, out.invalidations);
  return out;
}

/// The step of `mc` as the server showed it (`sent`): argv, the server's reply, the TIME window,
/// what the listeners heard, and the batch the model runs; the model's side is still empty.
inline Step step_of(const ModelCommand& mc, Sent&& sent) {
  Step s;
  s.argv = mc.argv;
  s.server = std::move(sent.reply);
  s.before_ms = sent.before_ms;
  s.after_ms = sent.after_ms;
  s.server_events = std::move(sent.events);
  s.server_invalidations = std::move(sent.invalidations);
  if (mc.batch) s.batch = *mc.batch;
  return s;
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

}  // namespace expirykit::state::detail
