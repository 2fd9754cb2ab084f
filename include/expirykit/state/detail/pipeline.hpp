// expirykit/state/detail/pipeline.hpp (internal to state::Twin): a run of commands sent to the
// server in one round trip (Twin::run_all, state/detail/run_all.hpp), and how long such a run
// may be.
//
// RunSend sends, for each command, what state/detail/send.hpp sends for one (its Layout:
// [begin markers] TIME command TIME [end markers]; a transaction as MULTI, its queued commands
// bare, EXEC or DISCARD), all in one pipeline, a command that follows one ending in `TIME [end
// markers]` starting there (`shares_start`: TIME c1 TIME [m] c2 TIME [m] ...), and returns one
// Sent per command: the server ran each command at one millisecond of its own TIME window, and
// the listeners' messages are cut per command by its markers, as when the commands go one by one.
// The pipeline may go out in parts (RunSend::send, as chunk_end decides them: Twin::run_all); the
// first command of a part opens its own window (the server may have waited for the part between
// its TIME and the previous command's).
//
// chunk_end() decides where a run ends, from a speculative copy of the model (the commands applied
// in order at the server's time as the twin estimates it: Twin::server_time_estimate, never later
// than the server's now), so that nothing a command's check needs is lost:
//  - a run holds a transaction whole (MULTI, its queued commands, the EXEC or DISCARD closing it)
//    or not at all: a run may exceed max_len by the transaction it starts with, and a MULTI
//    whose close is not in the sequence goes alone (run() then queues the rest one by one);
//  - a run never holds what must be decided before it is sent: WATCH / UNWATCH,
//    `RESTORE ... @dump:` unresolved (its payload is read first: run_all resolves one that
//    starts a run outside a transaction, which may then hold it), a command a crash row says would kill
//    the server on the model state before it (looked at with the speculative state at the
//    estimated time and one second later; a queued command, on the state before its MULTI);
//  - a run ends right after a command whose check reads the server as it is right after the
//    command: a command outside the model (its keys are re-read, the counters re-based; not
//    one that leaves the model alone, state/adopt.hpp: DEBUG SET-ACTIVE-EXPIRE; a DEBUG SLEEP, which
//    leaves it alone too, ends its run for the time, below), and a
//    command a known issue of the server might settle from the state (its row's defect replayed
//    gives another model state or other counters than the specification: state/known_divergence.hpp).
// What is left is a deadline a relative TTL set at the server's own millisecond: when that
// command's window spans more than one millisecond and it is not the last of the run, its
// deadlines cannot be read back right after it (state/detail/observe_deadlines.hpp); run_all
// resolves it from the run's later observations and the state after the run instead. The
// speculation also applies every command of a run at the one estimated time (never later than the
// server's): a field given a TTL of a few ms earlier in the same run may expire on the server
// before a later command of that run. So a run also ends right after a DEBUG SLEEP (which leaves
// the model alone, state/adopt.hpp: no counters' re-base, nothing read back): the next one is laid
// out from the server's time read after the sleep. Run on past it at the time before it, the
// main property's sleep set-up (1 ms TTLs, then the sleep) had its fields live in the
// speculation; an HGETEX EX after the sleep refreshed them there, and the run went on past a COPY
// whose known issue is settled from the state read right after it (valkey-9.1,
// RC_PARAMS="seed=16229034470520149326": "h2: HLEN server 1, model 2"). Crash rows and known
// issues are also looked at one second later, below.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/adopt.hpp>
#include <expirykit/state/detail/dump_ref.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/send.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// One pipelined run as it goes out: each command laid out as state/detail/send.hpp lays it out,
/// marker numbers from ++seq on, with the transaction state they make (no transaction open before
/// the first; a MULTI opens one, its EXEC / DISCARD closes it: chunk_end takes whole blocks).
/// add() queues a command on the connection, send() writes what was queued (the server starts
/// on it while the client lays out the rest: Twin::run_all sends a run's first commands while
/// chunk_end is still deciding where the run ends), finish() reads every reply: one Sent per
/// command, in order. A MULTI the server refused leaves the commands laid out after it as
/// queued: Twin::run_chunk records them as outside the model. add(), send() and finish() throw
/// like resp::Client's append(), send() and read().
class RunSend {
 public:
  void add(resp::Client& c, const Listeners& listeners, uint64_t& seq, ModelCommand mc) {
    const bool after_close = !ls_.empty() && (ls_.back() == Layout::single || ls_.back() == Layout::close);
    ns_.push_back(std::to_string(++seq));
    ls_.push_back(layout_of(mc.name, in_tx_));
    // Not across a send(): the server may wait for the next part there, outside any window.
    shares_.push_back(after_close && !parted_ && (ls_.back() == Layout::single || ls_.back() == Layout::multi));
    parted_ = false;
    const std::size_t from = wire_.size();
    at_.push_back(lay_out(wire_, listeners, ns_.back(), ls_.back(), mc.argv, shares_.back()));
    for (std::size_t w = from; w < wire_.size(); ++w) c.append(wire_[w]);
    in_tx_ = ls_.back() == Layout::multi || ls_.back() == Layout::queued;
    mcs_.push_back(std::move(mc));
  }
  void send(resp::Client& c) {
    c.send();
    parted_ = true;
  }
  std::size_t size() const { return mcs_.size(); }
  /// The commands added, and how each was laid out.
  std::vector<ModelCommand>& commands() { return mcs_; }
  const std::vector<Layout>& layouts() const { return ls_; }
  /// Reads the replies of everything added (sending what is still queued) and what the listeners
  /// heard for each command.
  std::vector<Sent> finish(resp::Client& c, Listeners& listeners) {
    std::vector<Reply> r;
    r.reserve(wire_.size());
    for (std::size_t w = 0; w < wire_.size(); ++w) r.push_back(c.read());
    std::vector<Sent> out;
    int64_t tx_before_ms = 0;
    for (std::size_t i = 0; i < mcs_.size(); ++i) {
      const int64_t previous_after_ms = shares_[i] ? out.back().after_ms : 0;
      out.push_back(read_sent(r, at_[i], ls_[i], tx_before_ms, listeners, ns_[i], shares_[i] ? &previous_after_ms : nullptr));
      if (ls_[i] == Layout::multi) tx_before_ms = out.back().before_ms;
    }
    return out;
  }

 private:
  std::vector<ModelCommand> mcs_;
  std::vector<Argv> wire_;  // what went (or goes) out, markers and TIMEs included
  std::vector<std::size_t> at_;
  std::vector<Layout> ls_;
  std::vector<std::string> ns_;
  std::vector<bool> shares_;  // starts at the previous command's closing TIME and end markers
  bool in_tx_ = false;
  bool parted_ = false;  // send() since the last add(): the next command opens its own window
};

/// Whether `a` can go in a pipelined run at all (see the file comment).
inline bool pipelinable(const Argv& a, const char* dump_ref) {
  if (a.empty()) return false;
  const std::string u = model::upper(a[0]);
  return u != "WATCH" && u != "UNWATCH" && !names_dump_ref(a, dump_ref);
}

/// The index of the EXEC or DISCARD that closes the transaction the MULTI at cmds[i] opens;
/// std::nullopt when the sequence ends before one.
inline std::optional<std::size_t> transaction_close(const std::vector<Argv>& cmds, std::size_t i) {
  for (std::size_t j = i + 1; j < cmds.size(); ++j)
    if (!cmds[j].empty() && ends_transaction(model::upper(cmds[j][0]))) return j;
  return std::nullopt;
}

/// Where a pipelined run of `cmds` that starts at `i` ends (exclusive): i when cmds[i] must go
/// alone, else at most i + max_len, or the end of a transaction that starts at i (see the file
/// comment). `ks` is the twin's model now (no transaction open), `d` its dialect, `o` its options
/// (the server under test and the crash servers), `now_ms` the server's time now, or earlier (Unix ms),
/// `counters` whether the INFO counters are observed. `after`, when given: set to the speculative
/// model after the run's commands (at now_ms) when the run ends with `cmds`' last command and
/// that command's check reads nothing back (no known issue settled from the state, modelled).
/// `decided`, when given: called with j as soon as cmds[i, j) are sure to be in the run with no
/// transaction open after them (Twin::run_all sends them then), j > i, increasing.
inline std::size_t chunk_end(const std::vector<Argv>& cmds, std::size_t i, const model::Keyspace& ks,
                             const model::Dialect& d, const TwinOptions& o, int64_t now_ms, bool counters,
                             const char* dump_ref, std::size_t max_len, std::optional<model::Keyspace>* after = nullptr,
                             const std::function<void(std::size_t)>& decided = {}) {
  model::Keyspace spec = ks;
  model::TrackingModel no_tracking;
  Step scratch;
  std::optional<Transaction> tx;  // the transaction the run opened, as the server will queue it
  auto crashes = [&](const Argv& a) {
    return crash_row(o.server, o.crash_servers, spec, a, now_ms) || crash_row(o.server, o.crash_servers, spec, a, now_ms + 1000);
  };
  for (std::size_t j = i; j < cmds.size(); ++j) {
    if (decided && !tx && j > i) decided(j);  // whatever ends the run from here on, ends it at j or later
    const Argv& a = cmds[j];
    if (!pipelinable(a, dump_ref)) return j;
    const std::string u = model::upper(a[0]);
    if (tx && !ends_transaction(u)) {  // queued: what EXEC will run (checked at the MULTI)
      queue_into(*tx, d, a, Reply::status("QUEUED"));
      continue;
    }
    if (!tx && j >= i + max_len) return j;
    if (crashes(a)) return j;
    if (!tx && u == "MULTI") {  // the whole transaction, or none of it
      const auto close = transaction_close(cmds, j);
      if (!close || (j > i && *close >= i + max_len)) return j;
      for (std::size_t q = j + 1; q < *close; ++q)
        if (!pipelinable(cmds[q], dump_ref) || crashes(cmds[q])) return j;
      tx = Transaction{};
      continue;
    }
    ModelCommand mc = model_command(a);
    plan_batch(mc, tx);
    tx.reset();
    // The rows a known issue of the server might settle from the state: their defects are
    // replayed below from the state before the command (kept only for them).
    static const std::vector<Argv> no_batch;
    std::vector<const known_issues::KnownIssue*> rows;
    if (o.server)
      for (const auto* k : known_issues_for_step(*o.server, a, mc.batch ? *mc.batch : no_batch))
        if (k->reproduce.any()) rows.push_back(k);  // a matcher row settles from the step's own observations
    model::Keyspace before;
    if (!rows.empty()) before = spec;
    try {
      run_model(spec, d, mc, now_ms, false, no_tracking, scratch);
    } catch (const model::Unmodelled&) {
      if (!leaves_model_alone(a)) return j + 1;  // its keys are re-read right after it
      // After a DEBUG SLEEP the next run is laid out from the server's time read after it (the
      // estimate here is from before the sleep: see the file comment).
      if (model::upper(a[1]) == "SLEEP") return j + 1;
      continue;
    }
    for (const auto* k : rows) {
      const model::Dialect defect = with_defect(d, *k);
      for (const int64_t at : {now_ms, now_ms + 1000}) {
        // At now_ms the spec's outcome is `spec` itself (the same run from the same state).
        std::optional<model::Keyspace> later;
        model::Keyspace defect_at = before;
        try {
          if (at != now_ms) run_model(later.emplace(before), d, mc, at, false, no_tracking, scratch);
          run_model(defect_at, defect, mc, at, false, no_tracking, scratch);
        } catch (const model::Unmodelled&) {
          return j + 1;
        }
        const model::Keyspace& spec_at = later ? *later : spec;
        const bool counters_differ = counters && !(spec_at.counters() == defect_at.counters());
        if (!differing_keys(spec_at, defect_at).empty() || counters_differ) return j + 1;  // settled from the state
      }
    }
  }
  if (after) after->emplace(std::move(spec));
  return cmds.size();
}

}  // namespace expirykit::state::detail
