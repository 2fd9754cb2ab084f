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
// The same layout serves a pipelined run (state/detail/pipeline.hpp: RunSend): each command
// of the run laid out as here, one after the other in one pipeline, and one Sent per command;
// a transaction's queued commands go bare between its MULTI and its EXEC / DISCARD (Layout). In
// a run, a command right after one that ended with `TIME [end markers]` starts there (no markers
// or TIME of its own before it: `shares_start`): the server runs a pipeline's commands one after
// the other, so that TIME still bounds both windows and those markers still cut both commands'
// messages; what the server did between them (active expiry, when its read of the pipeline is
// split there) is in the later command's cut instead of the background.
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

/// How a command is laid out in the pipeline that sends it (its markers numbered n):
///  - single: [begin markers] TIME command TIME [end markers];
///  - multi:  [begin markers] TIME MULTI (what would follow it is queued: its window is the one
///            TIME, and the transaction's window opens there);
///  - queued: the command alone (a command inside MULTI: the server answers QUEUED or refuses it);
///  - close:  EXEC or DISCARD TIME [end markers] (its window opens at the MULTI's TIME).
enum class Layout { single, multi, queued, close };

/// The layout of a command named `upper_name` when a transaction is (`in_tx`) or is not open.
inline Layout layout_of(const std::string& upper_name, bool in_tx) {
  if (in_tx) return ends_transaction(upper_name) ? Layout::close : Layout::queued;
  return upper_name == "MULTI" ? Layout::multi : Layout::single;
}

/// Appends what is sent for `argv` laid out as `l` (markers numbered `n`) to `cmds`; returns the
/// index of its first reply that is not a marker's. `shares_start`: a single or multi right after
/// a single or close in the same pipeline (state/detail/pipeline.hpp: RunSend) sends neither
/// begin markers nor its first TIME: the previous command's TIME and end markers are its start.
inline std::size_t lay_out(std::vector<Argv>& cmds, const Listeners& listeners, const std::string& n, Layout l,
                           const Argv& argv, bool shares_start = false) {
  const bool starts = (l == Layout::single || l == Layout::multi) && !shares_start;
  if (starts) {
    const auto pre = listeners.begin_markers(n);
    cmds.insert(cmds.end(), pre.begin(), pre.end());
  }
  const std::size_t at = cmds.size();
  if (starts) cmds.push_back({"TIME"});
  cmds.push_back(argv);
  if (l == Layout::single || l == Layout::close) {
    cmds.push_back({"TIME"});
    const auto post = listeners.end_markers(n);
    cmds.insert(cmds.end(), post.begin(), post.end());
  }
  return at;
}

/// What the server showed for a command laid out as `l` whose replies start at r[at] (lay_out),
/// with what the listeners heard for it (markers numbered `n`). `tx_before_ms` is the server time
/// at the open transaction's MULTI (Unix ms): a queued command's window, and where an EXEC's or
/// DISCARD's opens. `shared_start_ms`: laid out with `shares_start`, the previous command's
/// closing TIME (Unix ms), which opens this one's window; what the listeners heard since the
/// previous command's end markers is this one's; null otherwise. (A pointer, not a
/// std::optional: GCC 12 at -O2 warns maybe-uninitialized on the optional, an -Werror build
/// with RelWithDebInfo stopped there.)
inline Sent read_sent(const std::vector<Reply>& r, std::size_t at, Layout l, int64_t tx_before_ms,
                      Listeners& listeners, const std::string& n, const int64_t* shared_start_ms = nullptr) {
  using server::time_ms;
  Sent out;
  const std::size_t own = shared_start_ms ? 0 : 1;  // replies of its own before the command's: its first TIME
  switch (l) {
    case Layout::single:
      out.before_ms = shared_start_ms ? *shared_start_ms : time_ms(r[at]);
      out.reply = r[at + own];
      out.after_ms = time_ms(r[at + own + 1]);
      break;
    case Layout::multi:
      out.before_ms = out.after_ms = shared_start_ms ? *shared_start_ms : time_ms(r[at]);
      out.reply = r[at + own];
      out.opened_transaction = out.reply == Reply::ok();
      break;
    case Layout::queued:
      out.before_ms = out.after_ms = tx_before_ms;
      out.reply = r[at];
      return out;  // no markers: nothing is the queued command's own
    case Layout::close:
      out.before_ms = tx_before_ms;
      out.reply = r[at];
      out.after_ms = time_ms(r[at + 1]);
      break;
  }
  if (l != Layout::close && !shared_start_ms && listeners.any()) listeners.read_begin(n);
  listeners.read_end(n, l != Layout::multi, out.events, out.invalidations);
  return out;
}

/// Sends `mc` (not a queued command) on `c` with marker number `n_seq` and returns what the
/// server showed. An EXEC / DISCARD closing `tx` (mc.tx.closes) takes its window's start from it.
/// Throws like resp::Client::pipeline.
inline Sent send_command(resp::Client& c, Listeners& listeners, uint64_t n_seq, const ModelCommand& mc,
                         const std::optional<Transaction>& tx) {
  const std::string n = std::to_string(n_seq);
  const Layout l = mc.tx.closes ? Layout::close : layout_of(mc.name, false);
  std::vector<Argv> cmds;
  const std::size_t at = lay_out(cmds, listeners, n, l, mc.argv);
  return read_sent(c.pipeline(cmds), at, l, tx ? tx->before_ms : 0, listeners, n);
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
