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
// the twin is made. The parts run() asks, each in its own header: state/detail/ send (the round
// trip), listeners, model_step, judge (reply, events, tracking), transaction; state/ known_divergence
// (known issues), adopt, keyspace_diff (state, encoding), history.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/state/adopt.hpp>
#include <expirykit/state/coverage.hpp>
#include <expirykit/state/history.hpp>
#include <expirykit/state/detail/judge.hpp>
#include <expirykit/state/keyspace_diff.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/replies.hpp>
#include <expirykit/state/detail/send.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/detail/transaction.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

using server::time_ms;

class Twin {
 public:
  /// What a twin checks beyond the replies, and the test hooks (state/twin_options.hpp).
  using Options = TwinOptions;
  /// How often each command (upper-case name) ran modelled and unmodelled (state/history.hpp).
  using Coverage = CommandCoverage;

  Twin(resp::Client& c, model::Dialect d) : Twin(c, std::move(d), Options{}) {}
  Twin(resp::Client& c, model::Dialect d, Options o) : c_(&c), d_(std::move(d)), opt_(o) {
    limits_read_ = read_listpack_limits(*c_, ks_);
  }

  /// From now on every run() also checks the keyspace notifications the command emitted,
  /// under notify-keyspace-events `flags` (set now, restored when the twin goes). A mismatch
  /// makes the step fail. Throws like observe::KeyspaceEvents.
  void observe_events(const std::string& flags = "KEA") {
    listeners_.listen_events(*c_, flags);
    ks_.take_events();
  }
  bool observing_events() const { return listeners_.events(); }
  /// Changes the notify-keyspace-events flags of an observing twin (e.g. one class only, to
  /// check classes: effects.hpp). No-op when not observing.
  void set_event_flags(const std::string& flags) {
    if (auto* e = listeners_.event_listener()) e->set_flags(*c_, flags);
  }
  bool observing_counters() const { return counter_base_.has_value(); }

  /// From now on every run() also checks the invalidation messages CLIENT TRACKING (default
  /// mode, REDIRECT to a connection of the twin's own) sends for the twin's connection
  /// (model/tracking.hpp); a mismatch makes the step fail. Throws like observe::Tracking.
  void observe_tracking() {
    listeners_.listen_tracking(*c_);
    tracking_model_ = model::TrackingModel{};
  }
  bool observing_tracking() const { return listeners_.tracking(); }
  const std::string& event_flags() const { return listeners_.event_flags(); }

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
    auto out = listeners_.compare_background(*c_, token, background_model_, tracking_model_);
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
    if (listeners_.any())
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
    detail::ModelCommand mc;
    mc.argv = resolve_dump_ref(argv_in);
    const Argv& argv = mc.argv;
    inflight_ = argv;  // a RESTORE with the payload it resolved
    Step s;
    s.argv = argv;
    mc.name = argv.empty() ? std::string() : model::upper(argv[0]);
    const std::string& u = mc.name;
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
    mc.tx.closes = (u == "EXEC" || u == "DISCARD") && tx_;
    if (u == "EXEC" && tx_) {
      mc.batch = tx_->queued;
      mc.tx.aborted = tx_->aborted;
      mc.tx.unmodelled = tx_->unmodelled;
    } else if (u == "EVAL" || u == "FCALL") {
      mc.batch = model::sequence_eval_commands(argv);
      mc.in_script = mc.batch.has_value();
      if (mc.in_script && u == "FCALL") load_sequence_function();
    }
    const auto& batch = mc.batch;
    const bool in_script = mc.in_script;
    detail::send_command(*c_, listeners_, ++marker_seq_, mc, tx_, s);
    if (mc.tx.closes) tx_.reset();
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
    cells_.record(ks_, d_, argv, batch && !mc.tx.aborted && !mc.tx.unmodelled ? &*batch : nullptr, in_script,
                  s.before_ms);
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
    try {
      model::TrackingModel tm;
      auto attempt = [&](int64_t at) {
        tm = tracking_model_;
        detail::run_model(ks_, d_, mc, at, listeners_.tracking(), tm, s);
        detail::judge_step(opt_, listeners_.event_flags(), mc, s);
      };
      attempt(s.before_ms);
      if (!s.ok && opt_.server)
        if (auto id = script_string_excuse(*opt_.server, s, !script_strings_.empty()); !id.empty()) {
          s.known_issue = id;
          s.ok = s.events_diff.empty() && s.tracking_diff.empty();
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
      // Runs attempt(at) under dialect `d` from the state before the step.
      auto replay = [&](const model::Dialect& d, int64_t at) {
        const model::Dialect spec = d_;
        d_ = d;
        ks_ = saved;
        try {
          attempt(at);
        } catch (...) {
          d_ = spec;
          throw;
        }
        d_ = spec;
      };
      if (opt_.server) {  // a known issue of this server, or its fix (state/known_divergence.hpp)
        const model::Dialect spec = d_;
        settle_known_divergence(*opt_.server, spec, s, ks_, side(), max_window_ms, [&](const model::Dialect& d, int64_t at) {
          kept_dialect = d;
          replay(d, at);
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
          // With the defects of the outcome kept: a known issue that only shows in the state
          // (redis-hsetex-keepttl-expired-deadline in a transaction) must not be undone here.
          replay(kept_dialect, s.model_at_ms + *shift);
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
        adopt_unmodelled(side(), ks_, batch ? *batch : std::vector<Argv>{argv}, hlen_unknown_, tracking_model_);
        if (counter_base_) observe_counters();
        s.ok = true;
      }
    }
    count(argv, s.unmodelled.empty());
    history_.push_back(s);
    return s;
  }

  /// FUNCTION LOAD of model::sequence_function_library() unless the server has it
  /// (state/detail/send.hpp). Throws std::runtime_error if the server refuses.
  void load_sequence_function() { detail::ensure_sequence_function(side()); }

  /// The crash row (known_issues/table.hpp, KnownIssue::crashes) that says `argv` would crash
  /// the server under test (Options::server) or one of Options::crash_servers, given the model's
  /// state: run() then records the step under that row without sending it, model unchanged.
  /// nullptr when none does (state/known_divergence.hpp, crash_row()).
  const known_issues::KnownIssue* crashing(const Argv& argv) const {
    return crash_row(opt_.server, opt_.crash_servers, ks_, argv, history_.empty() ? 0 : history_.back().after_ms);
  }

  /// See dump_ref (state/detail/send.hpp).
  Argv resolve_dump_ref(const Argv& a) { return detail::resolve_dump_ref(side(), ks_, a, dump_ref); }

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
  std::string coverage_table() const { return state::coverage_table(coverage_); }
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
    KeyspaceDiffOptions o;
    o.time_tolerance_ms = opt_.time_tolerance_ms;
    o.check_encoding = opt_.check_encoding && limits_read_;
    o.hlen_unknown = &hlen_unknown_;
    o.owns = owns;
    const int64_t now = server_time();
    return keyspace_diff(side(), ks_, now, o);
  }

  /// The recorded steps as a script replayable with valkey-cli / redis-cli, each command
  /// followed by comment lines with the server's and the model's replies (state/history.hpp).
  std::string script() const { return state::script(history_); }

  /// A reply on one line: arrays as [a, b, ...] (state/keyspace_diff.hpp).
  static std::string oneline(const Reply& r) { return state::oneline(r); }

 private:
  /// A command sent inside MULTI: the server queues it or refuses it now (state/detail/transaction.hpp).
  Step queue_step(Step s) {
    s.server = c_->call(s.argv);
    s.before_ms = s.after_ms = tx_->before_ms;
    const bool known = detail::queue_in(*tx_, d_, s);
    if (opt_.mutate_model_reply) opt_.mutate_model_reply(s.argv, s.model);
    s.ok = s.model == s.server;
    count(s.argv, known);
    history_.push_back(s);
    return s;
  }

  /// One more modelled (or unmodelled) run of argv[0] in coverage().
  void count(const Argv& argv, bool modelled) {
    if (argv.empty()) return;
    auto& cov = coverage_[model::upper(argv[0])];
    ++(modelled ? cov.modelled : cov.unmodelled);
  }

  resp::Client* c_;  ///< the server under test (use_connection() moves it to another node)
  model::Dialect d_;
  Options opt_;
  model::Keyspace ks_;
  std::vector<Step> history_;
  std::optional<Argv> inflight_;  // the command of the run() under way (sent())
  bool limits_read_ = false;
  detail::Listeners listeners_;  ///< keyspace notifications and tracking invalidations (observe_*)
  uint64_t marker_seq_ = 0;
  std::vector<model::Event> background_model_;  ///< model events outside run(), not yet compared
  std::optional<observe::Counters> counter_base_;
  std::map<std::string, Coverage> coverage_;
  Cells cells_;  ///< cells(): command x field-state coverage
  std::optional<detail::Transaction> tx_;
  model::TrackingModel tracking_model_;
  std::map<std::string, std::unique_ptr<resp::Client>> sides_;  ///< read-backs per server (side())
  std::set<std::string> script_strings_;  ///< strings a script wrote (valkey-script-string-not-int-encoded)
  std::set<std::string> hlen_unknown_;  ///< keys re-read after an unmodelled command
};

}  // namespace expirykit::state
