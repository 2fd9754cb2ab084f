// expirykit/state/twin.hpp: one live server and the model, driven side by side.
//
//   resp::Client c = target.client();
//   state::Twin twin(c, *model::Dialect::for_server("valkey", 9, 1));
//   auto step = twin.run({"HEXPIRE", "h", "100", "FIELDS", "1", "a"});
//   if (!step.ok) FAIL(step.describe(twin));
//   auto diffs = twin.compare_state();           // every key: type, value(s), deadlines
//
// Time. Each command is sent pipelined between two TIME calls (one round trip):
// [TIME, command, TIME]. The server ran the command at one millisecond of that TIME window
// [before, after] (Unix ms; a server reads its clock once per command: commandTimeSnapshot() in
// Valkey's and Redis's server.c, and a transaction or script runs at the time of its EXEC/EVAL).
// The model applies the command at `before`, and if the replies differ, at each later
// millisecond of the window from the same state; the step passes if one of them gives exactly the
// server's reply. So clock-dependent replies (HTTL, HPTTL, TTL, PTTL, HEXPIRETIME, ...) are checked
// exactly, with the dialect's rounding (model/): a TTL one second off fails, however loaded the
// machine (a loaded machine only widens the window). After a command that changed deadlines, the
// model adopts the deadlines the server actually computed (read back with HPEXPIRETIME /
// PEXPIRETIME) when they lie within the window: a relative TTL ("HPEXPIRE h 1000") lands on the
// server's own "now", which the model can only bracket, and later GT/LT comparisons between two
// such deadlines must use the same values on both sides (found by a 10,000-sequence run on a
// loaded machine: HPEXPIRE then HEXPIRE GT with the same relative time, executed in the same
// server millisecond, is not "greater"). A deadline outside the window (set one second late,
// say) is not adopted and compare_state() reports it. Everything else must be equal, except
// the unordered replies of HGETALL/HKEYS/HVALS which are compared as sets (model/canonical.hpp).
// Options::time_tolerance_ms > 0 loosens the clock-dependent comparisons (replies.hpp).
//
// Beyond replies (model/effects.hpp), opt in per twin:
//   twin.observe_events();      // keyspace notifications of every command, both channel families
//   twin.observe_counters();    // INFO counters from here on: compare_counters()
//   twin.observe_tracking();    // CLIENT TRACKING invalidations of the twin's connection
// The twin's own read-backs (compare_state, deadlines it adopts, keys it re-reads, INFO) go over
// a second connection to the same server (one per server when use_connection() moves the twin
// between cluster nodes), so they never register keys for tracking nor show up
// in what a test observes on its connection. compare_state() also checks OBJECT ENCODING of every
// hash (Options::check_encoding), with the listpack limits read from the server (CONFIG GET) when
// the twin is made.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/known_issues.hpp>
#include <expirykit/state/adopt.hpp>
#include <expirykit/state/coverage.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/replies.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

using server::time_ms;

class Twin {
 public:
  struct Options {
    /// Extra allowed difference (ms) on clock-dependent replies and read-back deadlines, beyond
    /// the command's TIME window. 0 (the default): exact (see the file comment).
    int64_t time_tolerance_ms = 0;
    /// compare_state() compares OBJECT ENCODING of every hash with the model's prediction (when
    /// the listpack limits could be read with CONFIG GET).
    bool check_encoding = true;
    /// Test hook for the harness itself: applied to every model reply before comparing
    /// (e.g. to plant a model bug and check that it is caught and shrunk). Empty: none.
    std::function<void(const Argv&, Reply&)> mutate_model_reply;
    /// Test hook: applied to the model's tracking invalidations of every command before comparing.
    std::function<void(const Argv&, model::Invalidations&)> mutate_model_invalidations;
    /// Test hook: applied to the model's events of every command before comparing.
    std::function<void(const Argv&, std::vector<model::Event>&)> mutate_model_events;
    /// The server under test: a divergence it has as a known issue (server/known_issues.hpp)
    /// is excused and named in Step::known_issue instead of failing. Empty: nothing excused.
    std::optional<server::Identity> server;
    /// More servers whose crash rows (KnownIssue::crashes) hold a command back: the replicas of a
    /// mixed-version pair, which apply what the primary accepts (the primary's are in `server`).
    std::vector<server::Identity> crash_servers{};
    /// A command the model does not cover (model::Unmodelled): true runs it on the server only,
    /// re-reads the keys it names (COMMAND GETKEYS) into the model and counts it in coverage()
    /// as unmodelled, so the step is ok; false makes the step fail.
    bool adopt_unmodelled = true;
  };

  /// How often each command (upper-case name) ran modelled and unmodelled.
  struct Coverage {
    long modelled = 0, unmodelled = 0;
  };

  Twin(resp::Client& c, model::Dialect d) : Twin(c, std::move(d), Options{}) {}
  Twin(resp::Client& c, model::Dialect d, Options o) : c_(&c), d_(std::move(d)), opt_(o) { read_limits(); }

  /// From now on every run() also checks the keyspace notifications the command emitted,
  /// under notify-keyspace-events `flags` (set now, restored when the twin goes). A mismatch
  /// makes the step fail. Throws like observe::KeyspaceEvents.
  void observe_events(const std::string& flags = "KEA") {
    events_.reset();
    observe::KeyspaceEvents::Options o;
    o.flags = flags;
    events_ = std::make_unique<observe::KeyspaceEvents>(*c_, o);
    ks_.take_events();
  }
  bool observing_events() const { return events_ != nullptr; }
  /// Changes the notify-keyspace-events flags of an observing twin (e.g. one class only, to
  /// check classes: effects.hpp). No-op when not observing.
  void set_event_flags(const std::string& flags) {
    if (events_) events_->set_flags(*c_, flags);
  }
  bool observing_counters() const { return counter_base_.has_value(); }

  /// From now on every run() also checks the invalidation messages CLIENT TRACKING (default
  /// mode, REDIRECT to a connection of the twin's own) sends for the twin's connection
  /// (model/tracking.hpp); a mismatch makes the step fail. Throws like observe::Tracking.
  void observe_tracking() {
    tracking_.reset();
    tracking_ = std::make_unique<observe::Tracking>(*c_);
    tracking_model_ = model::TrackingModel{};
  }
  bool observing_tracking() const { return tracking_ != nullptr; }
  const std::string& event_flags() const {
    static const std::string none;
    return events_ ? events_->flags() : none;
  }

  /// From now on the model's counters are compared with INFO (compare_counters()). Reads the
  /// server's stats as the base the model's counts are added to.
  void observe_counters() {
    counter_base_ = observe::Counters::read(side(), d_);
    ks_.counters() = model::Counters{};
  }
  /// INFO counters vs the model (observe/counters.hpp); one line per difference. Empty if
  /// observe_counters() was not called.
  std::vector<std::string> compare_counters() {
    if (!counter_base_) return {};
    return observe::compare(observe::Counters::read(side(), d_), observe::Counters::of_model(ks_, *counter_base_), d_);
  }

  /// Events that arrived outside any command (active expiry, lazy expiry by read-backs) since
  /// the last call, with the model's own (reclaim_model()), compared per key as multisets (the
  /// order of active expiry between keys is the server's). Returns one line per difference;
  /// empty when not observing.
  std::vector<std::string> compare_background_events() {
    const std::string token = "bg" + std::to_string(++marker_seq_);
    auto model_bg = ks_.take_events();
    background_model_.insert(background_model_.end(), model_bg.begin(), model_bg.end());
    std::vector<std::string> out;
    if (events_) {
      c_->call(events_->marker(token));
      const auto seen = events_->read_until(token);
      stray_.insert(stray_.end(), seen.keyevent.begin(), seen.keyevent.end());
      auto want = observe::deliverable(background_model_, events_->flags());
      // Per key and event name, as sets: active expiry may reclaim a key's fields over several
      // cycles, each with its own `hexpired` (valkey-hfe.md §11: one per batch and key).
      auto key = [](const model::Event& e) { return e.key + '\0' + e.name; };
      std::map<std::string, int> diff;
      std::set<std::string> got_set, want_set;
      for (const auto& e : stray_) got_set.insert(key(e));
      for (const auto& e : want) want_set.insert(key(e));
      for (const auto& k : got_set) ++diff[k];
      for (const auto& k : want_set) --diff[k];
      stray_.clear();
      for (const auto& [k, n] : diff)
        if (n) {
          const auto z = k.find('\0');
          const model::Event e{k.substr(z + 1), k.substr(0, z), '?'};
          out.push_back("background event " + e.to_string() + (n > 0 ? ": server sent it, model does not expect it"
                                                                            : ": model expects it, server did not send it"));
        }
    }
    if (tracking_) {
      c_->call(tracking_->marker(token));
      auto seen = tracking_->read_until(token);
      tracking_stray_.insert(tracking_stray_.end(), seen.begin(), seen.end());
      const auto d =
          observe::compare_invalidations_unordered(tracking_model_.on_background(background_model_), tracking_stray_);
      if (!d.empty()) out.push_back("background " + d);
      tracking_stray_.clear();
    }
    background_model_.clear();
    return out;
  }


  resp::Client& client() { return *c_; }
  /// Points the twin at another server that shares this model's keyspace: the next commands,
  /// their TIME windows and the read-backs go to `c` (a cluster node: state/cluster_twin.hpp
  /// moves the twin to the node serving each command's slot). The model, history and coverage
  /// carry over. Throws std::logic_error inside a transaction, or while observing events or
  /// tracking (those observers listen on one connection).
  void use_connection(resp::Client& c) {
    if (&c == c_) return;
    if (tx_) throw std::logic_error("Twin::use_connection inside MULTI: the transaction lives on " + c_->address());
    if (events_ || tracking_)
      throw std::logic_error("Twin::use_connection while observing events or tracking on " + c_->address());
    c_ = &c;
  }
  model::Keyspace& model() { return ks_; }
  const model::Dialect& dialect() const { return d_; }
  const Options& options() const { return opt_; }
  const std::vector<Step>& history() const { return history_; }
  void clear_history() {
    history_.clear();
    inflight_.reset();
  }
  /// The commands of history(), and the one run() was sending when it threw (a server that
  /// died, say): what a crash triage replays (triage/crash_triage.hpp).
  std::vector<Argv> sent() const {
    std::vector<Argv> out;
    for (const auto& s : history_)
      if (!s.server.is_status() || s.server.str().rfind("(not sent", 0) != 0) out.push_back(s.argv);
    if (inflight_) out.push_back(*inflight_);
    return out;
  }
  /// FLUSHALL SYNC on the server, an empty model (counters kept), no history, and the events
  /// that came before forgotten: a fresh start for a sequence.
  void flushall() {
    if (tx_) {
      (*c_)("DISCARD");
      tx_.reset();
    }
    (*c_)("FLUSHALL", "SYNC");
    sides_.clear();  // the server may be another process than last time (a restart)
    script_strings_.clear();
    ks_.clear();
    tracking_model_.tracked.clear();
    history_.clear();
    inflight_.reset();
    hlen_unknown_.clear();
    compare_background_events();
  }

  /// The server's clock (TIME), Unix ms.
  int64_t server_time() { return time_ms((*c_)("TIME")); }

  /// Runs `argv` on the server (between two TIMEs) and on the model; records the step.
  /// `RESTORE key ttl @dump:<src> ...` names the payload of DUMP <src> taken now (over the
  /// read-back connection; the model remembers which entry it stands for): generators cannot
  /// know payloads. A missing <src> gives an empty payload.
  static constexpr const char* dump_ref = "@dump:";
  /// The longest TIME window (ms) whose every millisecond run() tries; a longer window (a machine
  /// stalled for seconds) is checked at its first max_window_ms only.
  static constexpr int64_t max_window_ms = 10000;

  Step run(const Argv& argv_in) {
    // Until run() returns, the command counts as sent (Twin::sent()); a throw keeps it there.
    inflight_ = argv_in;
    struct Done {
      std::optional<Argv>& f;
      int before = std::uncaught_exceptions();
      ~Done() {
        if (std::uncaught_exceptions() == before) f.reset();
      }
    } done{inflight_};
    const Argv argv = resolve_dump_ref(argv_in);
    inflight_ = argv;  // a RESTORE with the payload it resolved
    Step s;
    s.argv = argv;
    const std::string u = argv.empty() ? std::string() : model::upper(argv[0]);
    if (const auto* k = crashing(argv)) {  // not sent: the server would die (a crash row)
      // The generators reached the cell; the step names the row that kept it from the server.
      cells_.record(ks_, d_, argv, nullptr, false, history_.empty() ? 0 : history_.back().after_ms);
      s.server = s.model = Reply::status("(not sent: known issue " + k->id + ")");
      s.known_issue = k->id;
      s.ok = true;
      history_.push_back(s);
      return s;
    }
    if (tx_ && u != "EXEC" && u != "DISCARD") return queue_step(std::move(s));
    // What the model executes: one command, the queued commands of a transaction, or the
    // commands packed in the sequence script (model/batch.hpp).
    std::optional<std::vector<Argv>> batch;
    bool in_script = false, tx_aborted = false, tx_unknown = false;
    const bool closes_tx = (u == "EXEC" || u == "DISCARD") && tx_;
    if (u == "EXEC" && tx_) {
      batch = tx_->queued;
      tx_aborted = tx_->aborted;
      tx_unknown = tx_->unmodelled;
    } else if (u == "EVAL" || u == "FCALL") {
      batch = model::sequence_eval_commands(argv);
      in_script = batch.has_value();
      if (in_script && u == "FCALL") load_sequence_function();
    }
    bool opened_tx = false;
    {
      // [begin markers] TIME command TIME [end markers], one round trip. After MULTI, TIME and
      // PUBLISH would be queued: the MULTI step has no end markers and EXEC no begin markers
      // (its window starts at the MULTI).
      const std::string n = std::to_string(++marker_seq_);
      std::vector<Argv> pre, post, cmds;
      if (!closes_tx) {
        if (events_) pre.push_back(events_->marker("b" + n));
        if (tracking_) pre.push_back(tracking_->marker("b" + n));
      }
      if (u != "MULTI") {
        if (events_) post.push_back(events_->marker("e" + n));
        if (tracking_) post.push_back(tracking_->marker("e" + n));
      }
      cmds = pre;
      const std::size_t at = cmds.size();
      if (u == "MULTI") {
        cmds.insert(cmds.end(), {{"TIME"}, argv});
      } else if (closes_tx) {
        cmds.insert(cmds.end(), {argv, {"TIME"}});
      } else {
        cmds.insert(cmds.end(), {{"TIME"}, argv, {"TIME"}});
      }
      cmds.insert(cmds.end(), post.begin(), post.end());
      const auto r = c_->pipeline(cmds);
      if (u == "MULTI") {
        s.before_ms = s.after_ms = time_ms(r[at]);
        s.server = r[at + 1];
        if (s.server == Reply::ok()) {
          tx_ = Transaction{"", s.before_ms, {}, false, false};
          opened_tx = true;
        }
      } else if (closes_tx) {
        s.before_ms = tx_->before_ms;
        s.server = r[at];
        s.after_ms = time_ms(r[at + 1]);
      } else {
        s.before_ms = time_ms(r[at]);
        s.server = r[at + 1];
        s.after_ms = time_ms(r[at + 2]);
      }
      if (!pre.empty()) {
        if (events_) {
          const auto before = events_->read_until("b" + n);
          stray_.insert(stray_.end(), before.keyevent.begin(), before.keyevent.end());
        }
        if (tracking_) {
          const auto before = tracking_->read_until("b" + n);
          tracking_stray_.insert(tracking_stray_.end(), before.begin(), before.end());
        }
      }
      if (events_) s.server_events = post.empty() ? observe::Observed{} : events_->read_until("e" + n);
      if (tracking_) s.server_invalidations = post.empty() ? model::Invalidations{} : tracking_->read_until("e" + n);
    }
    if (closes_tx) tx_.reset();
    std::vector<std::string> keys;
    if (batch) {
      for (const auto& c : *batch)
        if (c.size() > 1) keys.push_back(c[1]);
    } else if (argv.size() > 1) {
      keys.push_back(argv[1]);
    }
    std::map<std::string, std::map<std::string, int64_t>> deadlines_before;
    for (const auto& k : keys) deadlines_before[k] = model_deadlines(ks_, k);
    // Coverage cells (state/coverage.hpp): the command against the model state before it runs.
    cells_.record(ks_, d_, argv, batch && !tx_aborted && !tx_unknown ? &*batch : nullptr, in_script, s.before_ms);
    auto pending = ks_.take_events();
    background_model_.insert(background_model_.end(), pending.begin(), pending.end());
    // The server ran the command at one millisecond of [before, after]; the model tries
    // `before` first, then each later millisecond of the window (at most max_window_ms) from the
    // same state, and keeps the first that agrees: a relative deadline, a GT/LT comparison between
    // two relative deadlines, a TTL reply, or a field at its deadline may depend on the exact
    // millisecond. A transaction's window runs from its MULTI to its EXEC: time is frozen at EXEC.
    if (batch) s.batch = *batch;
    const bool window = s.after_ms > s.before_ms;
    model::Keyspace saved;
    if (window || opt_.server) saved = ks_;  // opt_.server: known_divergence.hpp replays from it
    auto model_reply = [&](int64_t at) -> Reply {
      if (u == "MULTI") return opened_tx ? Reply::ok() : Reply::error("ERR MULTI calls can not be nested");
      if (u == "DISCARD") return closes_tx ? Reply::ok() : Reply::error("ERR DISCARD without MULTI");
      if (u == "EXEC" && !closes_tx) return Reply::error("ERR EXEC without MULTI");
      if (u == "EXEC" && tx_aborted) return Reply::error("EXECABORT Transaction discarded because of previous errors.");
      if (u == "EXEC" && tx_unknown) throw model::Unmodelled("a transaction with an unmodelled command");
      if (batch) return model::apply_batch(ks_, d_, *batch, at, in_script);
      return model::apply(ks_, d_, argv, at);
    };
    try {
      model::TrackingModel tm;
      // TrackingFacts::key_changed. An empty hash (only valkey-copy-skips-expired-fields makes
      // one) counts as missing: Valkey 9.1.2's HSETEX with a past deadline deletes it (`del`)
      // without invalidating it, as when it removes no stored field (live 9.1.2).
      auto entry = [&](const Argv& a) -> std::optional<model::Entry> {
        const model::Entry* e = a.size() > 1 ? ks_.raw(a[1]) : nullptr;
        if (e && e->is_hash() && e->hash().fields.empty()) e = nullptr;
        return e ? std::optional<model::Entry>(*e) : std::nullopt;
      };
      auto attempt = [&](int64_t at) {
        tm = tracking_model_;
        s.model_invalidations.clear();
        if (batch && !(u == "EXEC" && (tx_aborted || tx_unknown))) {
          for (const auto& c : *batch)
            if (c.empty() || !model::is_modelled(c[0], d_)) throw model::Unmodelled("batch with " + (c.empty() ? std::string("()") : c[0]));
          std::vector<Reply> replies;
          s.model_events.clear();
          for (const auto& c : *batch) {
            const auto before = entry(c);
            Reply r = model::apply_batch(ks_, d_, {c}, at, in_script)[0];
            auto ev = ks_.take_events();
            if (tracking_) {
              // A call refused for its arity (in a script: another text) registers nothing.
              const Reply as_seen = in_script && !model::arity_ok(c) ? Reply::error(d_.arity_error(c[0])) : r;
              auto inv = tm.on_command(d_, c, as_seen, ev, {true, before != entry(c)});
              s.model_invalidations.insert(s.model_invalidations.end(), inv.begin(), inv.end());
            }
            s.model_events.insert(s.model_events.end(), ev.begin(), ev.end());
            replies.push_back(std::move(r));
          }
          s.model = Reply::array(std::move(replies));
        } else {
          const auto before = entry(argv);
          s.model = model_reply(at);
          s.model_events = ks_.take_events();
          if (tracking_) s.model_invalidations = tm.on_command(d_, argv, s.model, s.model_events, {true, before != entry(argv)});
        }
        if (opt_.mutate_model_reply) opt_.mutate_model_reply(argv, s.model);
        if (opt_.mutate_model_invalidations) opt_.mutate_model_invalidations(argv, s.model_invalidations);
        if (opt_.mutate_model_events) opt_.mutate_model_events(argv, s.model_events);
        s.ok = batch && s.model.is_array() ? batch_match(*batch, s.model, s.server, opt_.time_tolerance_ms)
                                           : replies_match(argv, s.model, s.server, opt_.time_tolerance_ms);
        s.events_diff.clear();
        s.known_issue.clear();
        if (s.server_events) {
          s.events_diff = observe::compare_events(s.model_events, *s.server_events, events_->flags());
          if (!s.events_diff.empty() && opt_.server) {
            std::string id = events_known_issue(argv);
            for (std::size_t i = 0; batch && id.empty() && i < batch->size(); ++i) id = events_known_issue((*batch)[i]);
            const auto* k = server::find_known_issue(id);
            if (k && k->covers(*opt_.server)) s.known_issue = k->id;
          }
          s.ok = s.ok && (s.events_diff.empty() || !s.known_issue.empty());
        }
        s.tracking_diff.clear();
        if (s.server_invalidations) {
          s.tracking_diff = observe::compare_invalidations(s.model_invalidations, *s.server_invalidations);
          s.ok = s.ok && s.tracking_diff.empty();
        }
      };
      attempt(s.before_ms);
      if (!s.ok && opt_.server && u == "OBJECT" && !script_strings_.empty() && s.model == Reply::string("int") &&
          s.server == Reply::string("embstr")) {
        const auto* k = server::find_known_issue("valkey-script-string-not-int-encoded");
        if (k && k->covers(*opt_.server)) {
          s.known_issue = k->id;
          s.ok = s.events_diff.empty() && s.tracking_diff.empty();
        }
      }
      s.model_at_ms = s.before_ms;
      for (int64_t at = s.before_ms + 1; !s.ok && window && at <= s.after_ms && at <= s.before_ms + max_window_ms; ++at) {
        ks_ = saved;
        attempt(at);
        s.model_at_ms = at;
      }
      // The dialect of the outcome kept: the spec, or the spec with the defects of the known
      // issues settle_known_divergence() excused the step with (its last replay is the one kept).
      model::Dialect kept_dialect = d_;
      if (opt_.server) {  // a known issue of this server, or its fix (state/known_divergence.hpp)
        const model::Dialect spec = d_;
        settle_known_divergence(*opt_.server, spec, s, ks_, side(), max_window_ms, [&](const model::Dialect& d, int64_t at) {
          d_ = d;
          kept_dialect = d;
          ks_ = saved;
          try {
            attempt(at);
          } catch (...) {
            d_ = spec;
            throw;
          }
          d_ = spec;
          s.model_at_ms = at;
        }, [&](const model::Keyspace& k) -> std::optional<bool> {
          if (!counter_base_) return std::nullopt;
          return observe::compare(observe::Counters::read(side(), d_), observe::Counters::of_model(k, *counter_base_), d_)
              .empty();
        });
      }
      if (!s.ok && window) {  // report the attempt at `before`
        ks_ = saved;
        attempt(s.before_ms);
        s.model_at_ms = s.before_ms;
        kept_dialect = d_;
      }
      if (s.ok && window && batch) {
        // A transaction or script runs at one millisecond: a relative deadline read back names
        // it. Re-apply the whole batch there, so that what a later command of the batch derived
        // from that deadline (a COPY of the key, say) agrees as well, not only the key adopted.
        std::optional<int64_t> shift;
        for (const auto& [k, before] : deadlines_before)
          if (!shift) shift = server_deadline_shift(side(), ks_, k, before, s);
        if (shift && *shift != 0 && s.model_at_ms + *shift >= s.before_ms && s.model_at_ms + *shift <= s.after_ms) {
          const model::Keyspace kept = ks_;
          const Step kept_step = s;
          const model::TrackingModel kept_tm = tm;
          ks_ = saved;
          // With the defects of the outcome kept: a known issue that only shows in the state
          // (redis-hsetex-keepttl-expired-deadline in a transaction) must not be undone here.
          const model::Dialect spec = d_;
          d_ = kept_dialect;
          try {
            attempt(s.model_at_ms + *shift);
          } catch (...) {
            d_ = spec;
            throw;
          }
          d_ = spec;
          if (s.ok) {
            s.model_at_ms += *shift;
            if (s.known_issue.empty()) s.known_issue = kept_step.known_issue;
          } else {
            ks_ = kept;
            s = kept_step;
            tm = kept_tm;
          }
        }
      }
      if (s.ok && !s.known_issue.empty() && !s.tracking_diff.empty() && s.server_invalidations) {
        // An excused step whose invalidations differ (valkey-hsetex-flag-named-key invalidates
        // another key than the one written): the keys still tracked follow the server.
        for (const auto& k : s.model_invalidations)
          if (k) tm.tracked.insert(*k);
        for (const auto& k : *s.server_invalidations)
          if (k) tm.tracked.erase(*k);
      }
      tracking_model_ = tm;
      if (s.ok && u == "DUMP" && s.server.is_string() && argv.size() == 2)
        if (const model::Entry* e = ks_.raw(argv[1])) ks_.remember_dump(s.server.str(), *e);
      if (in_script)
        for (const auto& c : *batch)
          if (c.size() > 1 && model::upper(c[0]) == "SET") script_strings_.insert(c[1]);
      if (s.ok)
        for (const auto& [k, before] : deadlines_before) adopt_server_deadlines(side(), ks_, k, before, s, opt_.time_tolerance_ms);
    } catch (const model::Unmodelled& e) {
      s.unmodelled = e.what();
      s.tracking_diff.clear();
      if (window) ks_ = saved;
      if (opt_.adopt_unmodelled) {
        std::vector<std::string> touched;
        for (const auto& c : batch ? *batch : std::vector<Argv>{argv}) {
          auto k = adopt_from_server(side(), ks_, c, hlen_unknown_);
          touched.insert(touched.end(), k.begin(), k.end());
        }
        if (counter_base_) observe_counters();
        // Tracking: what the command invalidated is not known; what it read is tracked now.
        for (const auto& k : touched) tracking_model_.tracked.erase(k);
        for (const auto& c : batch ? *batch : std::vector<Argv>{argv})
          for (const auto& k : model::TrackingModel::read_keys(c)) tracking_model_.tracked.insert(k);
        s.ok = true;
      }
    }
    if (!argv.empty()) {
      auto& cov = coverage_[u];
      ++(s.unmodelled.empty() ? cov.modelled : cov.unmodelled);
    }
    history_.push_back(s);
    return s;
  }

  /// FUNCTION LOAD of model::sequence_function_library() unless the server has it (FUNCTION
  /// LIST; a restarted server without persistence may have lost it). Throws std::runtime_error
  /// if the server refuses.
  void load_sequence_function() {
    const Reply have = side()("FUNCTION", "LIST", "LIBRARYNAME", "expirykit");
    if (have.is_array() && have.size() > 0) return;
    const Reply r = side()("FUNCTION", "LOAD", "REPLACE", model::sequence_function_library());
    if (r.is_error()) throw std::runtime_error("FUNCTION LOAD of the kit's sequence function answered " + r.to_string());
  }

  /// The row valkey-empty-hash-hrandfield-crash (server/known_issues.hpp) when Options::server
  /// is in its range and `argv` is HRANDFIELD in a form that kills such a server (no count,
  /// count 1, a negative count; live 9.1.2) on a key the model holds as an empty hash (only the
  /// defect valkey-copy-skips-expired-fields makes one): run() then records the step under that
  /// row without sending it, model unchanged. nullptr otherwise. Only a command run on its own
  /// (or queued in MULTI, judged against the state before it) is checked: the generators never
  /// put HRANDFIELD in a transaction or the sequence script.
  /// The crash row (server/known_issues.hpp, KnownIssue::crashes) that says `argv` would crash
  /// the server under test, given the model's state; nullptr when none does (or no server is
  /// named in Options::server). A batch (EXEC is never held back: its commands were looked at
  /// when queued; the sequence script) counts when one of its commands would crash.
  const server::KnownIssue* crashing(const Argv& argv) const {
    if ((!opt_.server && opt_.crash_servers.empty()) || argv.empty()) return nullptr;
    std::vector<Argv> looked_at{argv};
    if (auto inner = model::sequence_eval_commands(argv)) looked_at = *inner;
    const int64_t now = history_.empty() ? 0 : history_.back().after_ms;
    auto covered = [&](const server::KnownIssue& k) {
      if (opt_.server && k.covers(*opt_.server)) return true;
      for (const auto& id : opt_.crash_servers)
        if (k.covers(id)) return true;
      return false;
    };
    for (const auto& k : server::known_issues()) {
      if (!k.crashes || !covered(k)) continue;
      for (const auto& a : looked_at)
        if (k.crashes(ks_, a, now)) return &k;
    }
    return nullptr;
  }

  /// See dump_ref.
  Argv resolve_dump_ref(const Argv& a) {
    if (a.size() < 4 || model::upper(a[0]) != "RESTORE" || a[3].rfind(dump_ref, 0) != 0) return a;
    Argv out = a;
    const std::string src = a[3].substr(std::string(dump_ref).size());
    const Reply p = side()("DUMP", src);
    out[3] = p.is_string() ? p.str() : std::string();
    if (p.is_string())
      if (const model::Entry* e = ks_.raw(src)) ks_.remember_dump(p.str(), *e);
    return out;
  }

  /// The read-back connection (same server, opened on first use): its reads never register
  /// keys for the tracked connection nor change what a test observes on it. Tests polling the
  /// server while the twin observes tracking should poll over it.
  resp::Client& side() {
    auto& side = sides_[c_->address()];
    if (!side || !side->connected()) side = std::make_unique<resp::Client>(c_->host(), c_->port());
    return *side;
  }
  /// True between a MULTI this twin sent and its EXEC / DISCARD.
  bool in_transaction() const { return tx_.has_value(); }

  /// Per command name: modelled and unmodelled runs since the twin was made.
  const std::map<std::string, Coverage>& coverage() const { return coverage_; }
  /// Command x field-state cells of every command run since the twin was made (state/coverage.hpp).
  const Cells& cells() const { return cells_; }
  /// coverage() as lines "HSET 120" / "OBJECT 3 (3 unmodelled: server only, keys re-read)".
  std::string coverage_table() const {
    std::ostringstream os;
    for (const auto& [name, c] : coverage_) {
      os << "  " << name << " " << (c.modelled + c.unmodelled);
      if (c.unmodelled) os << " (" << c.unmodelled << " unmodelled: server only, keys re-read)";
      os << "\n";
    }
    return os.str();
  }
  /// run() of a valkey-cli line (resp::parse_cli_line: "double" and 'single' quotes, escapes),
  /// e.g. run(R"(HSET h "a b" "")"). Throws std::invalid_argument on unbalanced quotes.
  Step run(const std::string& line) { return run(resp::parse_cli_line(line)); }

  /// Polls the server clock until it is past `deadline_ms` plus `margin_ms`; returns the server
  /// time reached. Throws std::runtime_error if it has not got there after `limit`
  /// (server::wait_until_past).
  int64_t wait_until_past(int64_t deadline_ms, int64_t margin_ms = 5,
                          std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    return server::wait_until_past(*c_, deadline_ms, margin_ms, limit);
  }

  /// Active expiry switched off (DEBUG SET-ACTIVE-EXPIRE 0) / on; returns the server's reply.
  Reply set_active_expire(bool on) { return (*c_)("DEBUG", "SET-ACTIVE-EXPIRE", on ? "1" : "0"); }

  /// Model: active expiry fully done at the server's current time.
  /// Its events (hexpired, del, expired) are compared by compare_background_events().
  std::size_t reclaim_model() {
    auto pending = ks_.take_events();
    background_model_.insert(background_model_.end(), pending.begin(), pending.end());
    return ks_.reclaim(server_time(), d_.hexpired_class);
  }

  /// Full-state comparison of every key either side knows: type, string value, hash fields and
  /// values (live ones, as HGETALL shows them), HLEN (stored fields, expired included), each
  /// field's HPEXPIRETIME and the key's PTTL presence. Read-only on both sides (no command used
  /// deletes lazily). Returns one line per difference; empty means equal.
  /// With `owns`, only the keys it accepts are compared, on both sides (a cluster node's share:
  /// state/cluster_twin.hpp).
  std::vector<std::string> compare_state(const std::function<bool(const std::string&)>& owns = {}) {
    std::vector<std::string> diffs;
    const int64_t now = server_time();
    std::set<std::string> keys;
    for (const auto& k : ks_.key_names())
      if (ks_.peek(k, now) && (!owns || owns(k))) keys.insert(k);
    auto all = side()("KEYS", "*");
    if (all.is_array())
      for (const auto& k : all.elements())
        if (!owns || owns(k.str())) keys.insert(k.str());
    for (const auto& key : keys) {
      const model::Entry* e = ks_.peek(key, now);
      const Reply type = side()("TYPE", key);
      const std::string mt = e ? e->type_name() : "none";
      if (!type.is_status() || type.str() != mt) {
        diffs.push_back(key + ": TYPE server " + type.to_string() + ", model " + mt);
        continue;
      }
      if (!e) continue;
      const int64_t tol = opt_.time_tolerance_ms;
      const Reply pttl = side()("PTTL", key);
      const bool model_ttl = e->expire_ms.has_value();
      if (!pttl.is_integer() || (pttl.as_integer() == -1) == model_ttl)
        diffs.push_back(key + ": key PTTL server " + pttl.to_string() + ", model " +
                        (model_ttl ? std::to_string(*e->expire_ms - now) : "-1"));
      if (e->is_string()) {
        const Reply v = side()("GET", key);
        if (v != Reply::string(e->string()))
          diffs.push_back(key + ": GET server " + v.to_string() + ", model \"" + e->string() + "\"");
        continue;
      }
      const model::Hash& h = e->hash();
      const Reply len = side()("HLEN", key);
      if (!hlen_unknown_.count(key) && len != Reply::integer(static_cast<long long>(h.stored_count())))
        diffs.push_back(key + ": HLEN server " + len.to_string() + ", model " + std::to_string(h.stored_count()));
      std::vector<Reply> pairs;
      Argv times{"HPEXPIRETIME", key, "FIELDS", std::to_string(h.fields.size())};
      std::vector<long long> expected;
      for (const auto& [f, fld] : h.fields) {
        if (!fld.expired(now)) {
          pairs.push_back(Reply::string(f));
          pairs.push_back(Reply::string(fld.value));
        }
        times.push_back(f);
        expected.push_back(fld.expired(now) ? -2 : fld.expire_ms ? *fld.expire_ms : -1);
      }
      const Argv getall{"HGETALL", key};
      const Reply all_fields = side().call(getall);
      if (!model::same_reply(getall, Reply::array(pairs), all_fields))
        diffs.push_back(key + ": HGETALL server " + oneline(all_fields) + ", model " + oneline(Reply::array(pairs)));
      if (opt_.check_encoding && limits_read_) {
        const Reply enc = side()("OBJECT", "ENCODING", key);
        if (!enc.is_string() || enc.str() != model::to_string(h.encoding))
          diffs.push_back(key + ": OBJECT ENCODING server " + enc.to_string() + ", model " + model::to_string(h.encoding));
      }
      if (!h.fields.empty()) {
        const Reply t = side().call(times);
        if (!replies_match(times, Reply::ints(expected), t, tol))
          diffs.push_back(key + ": " + resp::cli_line(times) + " server " + oneline(t) + ", model " +
                          oneline(Reply::ints(expected)));
      }
    }
    return diffs;
  }

  /// The recorded steps as a script replayable with valkey-cli / redis-cli, each command
  /// followed by comment lines with the server's and the model's replies.
  std::string script() const {
    std::ostringstream os;
    for (const auto& s : history_) {
      os << resp::cli_line(s.argv) << "\n#   server: " << oneline(s.server) << "\n#   model:  "
         << (s.unmodelled.empty() ? oneline(s.model) : "(unmodelled)") << (s.ok ? "" : "   <-- MISMATCH") << "\n";
    }
    return os.str();
  }

  /// A reply on one line: arrays as [a, b, ...].
  static std::string oneline(const Reply& r) {
    if (!r.is_array()) return r.to_string();
    std::string out = "[";
    for (std::size_t i = 0; i < r.size(); ++i) out += (i ? ", " : "") + oneline(r[i]);
    return out + "]";
  }

 private:
  /// A MULTI this twin sent: the marker published before it, the server time then, and what the
  /// server queued.
  struct Transaction {
    std::string marker;
    int64_t before_ms = 0;
    std::vector<Argv> queued;
    bool aborted = false;     ///< a command was refused when queued: EXEC answers EXECABORT
    bool unmodelled = false;  ///< a queued command is outside the model: EXEC is adopted
  };

  /// A command sent inside MULTI: the server queues it ("QUEUED") or refuses it now (the
  /// command-table arity, an unknown command: model/batch.hpp), which aborts the transaction.
  Step queue_step(Step s) {
    const Argv& argv = s.argv;
    s.server = c_->call(argv);
    s.before_ms = s.after_ms = tx_->before_ms;
    const bool known = !argv.empty() && model::is_modelled(argv[0], d_);
    if (!argv.empty() && model::upper(argv[0]) == "MULTI") {  // refused, the transaction goes on
      s.model = Reply::error("ERR MULTI calls can not be nested");
    } else if (known && !model::arity_ok(argv)) {
      s.model = Reply::error(d_.arity_error(argv[0]));
      tx_->aborted = true;
    } else if (known) {
      s.model = Reply::status("QUEUED");
      tx_->queued.push_back(argv);
    } else {
      s.unmodelled = "queued command outside the model";
      s.model = s.server;
      if (s.server == Reply::status("QUEUED")) tx_->unmodelled = true;
      else tx_->aborted = true;
    }
    if (opt_.mutate_model_reply) opt_.mutate_model_reply(argv, s.model);
    s.ok = s.model == s.server;
    if (!argv.empty()) {
      auto& cov = coverage_[model::upper(argv[0])];
      ++(known ? cov.modelled : cov.unmodelled);
    }
    history_.push_back(s);
    return s;
  }

  /// Listpack limits from CONFIG GET into the model; encoding checks stay off if refused.
  void read_limits() {
    try {
      const Reply e = (*c_)("CONFIG", "GET", "hash-max-listpack-entries");
      const Reply v = (*c_)("CONFIG", "GET", "hash-max-listpack-value");
      if (e.is_array() && e.size() == 2 && v.is_array() && v.size() == 2) {
        ks_.limits().entries = std::stoull(e[1].str());
        ks_.limits().value = std::stoull(v[1].str());
        limits_read_ = true;
      }
    } catch (const std::exception&) {
      limits_read_ = false;
    }
  }

  resp::Client* c_;  ///< the server under test (use_connection() moves it to another node)
  model::Dialect d_;
  Options opt_;
  model::Keyspace ks_;
  std::vector<Step> history_;
  std::optional<Argv> inflight_;  // the command of the run() under way (sent())
  bool limits_read_ = false;
  std::unique_ptr<observe::KeyspaceEvents> events_;
  uint64_t marker_seq_ = 0;
  std::vector<model::Event> stray_;             ///< server events outside commands, not yet compared
  std::vector<model::Event> background_model_;  ///< model events outside run(), not yet compared
  std::optional<observe::Counters> counter_base_;
  std::map<std::string, Coverage> coverage_;
  Cells cells_;  ///< cells(): command x field-state coverage
  std::optional<Transaction> tx_;
  std::unique_ptr<observe::Tracking> tracking_;
  model::TrackingModel tracking_model_;
  model::Invalidations tracking_stray_;  ///< invalidations outside commands, not yet compared
  std::map<std::string, std::unique_ptr<resp::Client>> sides_;  ///< read-backs per server (side())
  std::set<std::string> script_strings_;  ///< strings a script wrote (valkey-script-string-not-int-encoded)
  std::set<std::string> hlen_unknown_;  ///< keys re-read after an unmodelled command
};

}  // namespace expirykit::state
