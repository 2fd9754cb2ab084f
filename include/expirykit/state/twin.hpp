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
//
// How run() goes (each part in its own header, internal ones in state/detail/):
//   1. before sending: a `@dump:` or `@stale:` reference resolved (detail/dump_ref,
//      stale_templates), a command a crash row
//      predicts held back (detail/observe_known_issues), a command inside MULTI queued
//      (detail/transaction), what the model will execute planned (detail/model_step);
//   2. the SERVER side: detail/send sends [markers] TIME command TIME [markers] and returns a
//      record of what the server showed (detail::Sent: reply, TIME window, events and
//      invalidations heard); nothing after this point sends the command again;
//   3. the MODEL side, check(): the coverage cell (coverage), the model tried at each millisecond
//      of the window (detail/trial), each attempt judged by every observation (detail/judge:
//      reply, detail/observe_events, detail/observe_tracking), the encoding and known issues
//      settled (detail/observe_encoding, detail/observe_known_issues: known_divergence), the
//      deadlines the server computed followed (detail/observe_deadlines: batch shift, adopt),
//      DUMP payloads remembered, a command outside the model adopted (adopt), the step recorded
//      (history). The counters and the whole state are compared on request (compare_counters:
//      detail/observe_counters; compare_state: keyspace_diff).
// run_all() runs a whole sequence so, with its commands sent in pipelined runs (detail/pipeline:
// where a run ends; detail/run_all: each step checked from its record, as run() checks it).
// begin_sequence() and compare_all() start and end a sequence in one round trip each
// (detail/sequence_ends).
// A new observation of every step is a header beside those, asked by detail/judge.hpp (or by
// check() when it is settled after the attempts), and its fields in Step (step.hpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/model/model.hpp>
#include <expirykit/model/resp3.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/state/adopt.hpp>
#include <expirykit/state/coverage.hpp>
#include <expirykit/state/detail/dump_ref.hpp>
#include <expirykit/state/stale_templates.hpp>
#include <expirykit/state/detail/listeners.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/detail/observe_counters.hpp>
#include <expirykit/state/detail/observe_deadlines.hpp>
#include <expirykit/state/detail/observe_encoding.hpp>
#include <expirykit/state/detail/observe_events.hpp>
#include <expirykit/state/detail/observe_known_issues.hpp>
#include <expirykit/state/detail/observe_tracking.hpp>
#include <expirykit/state/detail/pipeline.hpp>
#include <expirykit/state/detail/send.hpp>
#include <expirykit/state/detail/transaction.hpp>
#include <expirykit/state/detail/trial.hpp>
#include <expirykit/state/history.hpp>
#include <expirykit/state/keyspace_diff.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/run_stats.hpp>
#include <expirykit/state/step.hpp>
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
    limits_read_ = state::read_listpack_limits(*c_, ks_);
  }
  /// Reads hash-max-listpack-entries and -value again (CONFIG GET), as the constructor does:
  /// after a test changed them, later writes are modelled (and encodings compared) under the new
  /// limits. Returns false (encodings then not compared) when the server answers no limits.
  bool read_listpack_limits();


  /// From now on every run() also checks the keyspace notifications the command emitted,
  /// under notify-keyspace-events `flags` (set now, restored when the twin goes). A mismatch
  /// makes the step fail. Throws like observe::KeyspaceEvents.
  void observe_events(const std::string& flags = "KEA") {
    finish_begin();
    listeners_.listen_events(*c_, flags);
    ks_.take_events();
  }
  bool observing_events() const { return listeners_.events(); }
  /// Changes the notify-keyspace-events flags of an observing twin (e.g. one class only, to
  /// check classes: effects.hpp). No-op when not observing.
  void set_event_flags(const std::string& flags) {
    finish_begin();
    if (auto* e = listeners_.event_listener()) e->set_flags(*c_, flags);
  }
  bool observing_counters() const { return counters_.on(); }

  /// From now on every run() also checks the invalidation messages CLIENT TRACKING (default
  /// mode) sends for the twin's connection (model/tracking.hpp): REDIRECT to a connection of
  /// the twin's own on RESP2, pushes on the twin's connection itself on RESP3 (use_protocol()
  /// moves it); a mismatch makes the step fail. Throws like observe::Tracking.
  void observe_tracking() {
    finish_begin();
    listeners_.listen_tracking(*c_);
    tracking_model_ = model::TrackingModel{};
  }
  bool observing_tracking() const { return listeners_.tracking(); }
  const std::string& event_flags() const { return listeners_.event_flags(); }

  /// From now on the model's counters are compared with INFO (compare_counters()). Reads the
  /// server's stats as the base the model's counts are added to.
  void observe_counters() { counters_.start(side(), d_, ks_); }
  /// INFO counters vs the model (observe/counters.hpp); one line per difference. Empty if
  /// observe_counters() was not called.
  std::vector<std::string> compare_counters() {
    if (!counters_.on()) return {};
    return counters_.compare(side(), d_, ks_);
  }

  /// What the last compare_background_events() (or compare_all()) compared, beside the
  /// differences it returned: `server` the events the server sent outside commands (active
  /// expiry, lazy expiry by read-backs; keyevent channel, arrival order), `model` the model's,
  /// `invalidations` the tracking invalidations heard outside commands.
  const detail::Listeners::Background& last_background() const { return listeners_.last_background(); }
  /// Events that arrived outside any command (active expiry, lazy expiry by read-backs) since
  /// the last call, with the model's own (reclaim_model()), compared per key as multisets (the
  /// order of active expiry between keys is the server's). Returns one line per difference;
  /// empty when not observing.
  std::vector<std::string> compare_background_events() {
    finish_begin();
    const std::string token = "bg" + std::to_string(++marker_seq_);
    if (const auto markers = listeners_.background_markers(token); !markers.empty()) c_->pipeline(markers);
    return background_until(token);
  }

  resp::Client& client() {
    finish_begin();
    return *c_;
  }
  /// Points the twin at another server that shares this model's keyspace: the next commands,
  /// their TIME windows and the read-backs go to `c` (a cluster node: state/cluster_twin.hpp
  /// moves the twin to the node serving each command's slot). The model, history and coverage
  /// carry over. Throws std::logic_error inside a transaction, or while observing events or
  /// tracking (those observers listen on one connection).
  void use_connection(resp::Client& c) {
    if (&c == c_) return;
    finish_begin();
    if (tx_) throw std::logic_error("Twin::use_connection inside MULTI: the transaction lives on " + c_->address());
    if (listeners_.any())
      throw std::logic_error("Twin::use_connection while observing events or tracking on " + c_->address());
    if (c.address() != c_->address()) clock_.reset();  // another server, maybe another clock
    c_ = &c;
  }
  model::Keyspace& model() { return ks_; }
  const model::Dialect& dialect() const { return d_; }
  const Options& options() const { return opt_; }
  const std::vector<Step>& history() const { return history_; }
  void clear_history() {
    history_.clear();
    inflight_.reset();
    inflight_run_.clear();
  }
  /// The commands of history(), and the one run() was sending when it threw (a server that
  /// died, say), or those of the run_all() run under way that are not steps yet (written, some
  /// while its end was still being decided): what a crash triage replays (triage/crash_triage.hpp).
  std::vector<Argv> sent() const {
    std::vector<Argv> out;
    for (const auto& s : history_)
      if (detail::was_sent(s)) out.push_back(s.argv);
    if (inflight_) out.push_back(*inflight_);
    // The run_all() run under way: its commands not yet recorded as steps.
    const std::size_t checked = history_.size() > run_history_start_ ? history_.size() - run_history_start_ : 0;
    for (std::size_t i = checked; i < inflight_run_.size(); ++i) out.push_back(inflight_run_[i]);
    return out;
  }
  /// FLUSHALL SYNC on the server, an empty model (counters kept), no history, and the events
  /// that came before forgotten: a fresh start for a sequence. One round trip (FLUSHALL and the
  /// listeners' markers in one pipeline). On a server without persistence (no save points, no
  /// AOF: FLUSHALL would also save an RDB and stop a save in progress), right after a
  /// compare_all() (or compare_state()) that found keys in no database but 0 (INFO keyspace and
  /// the model), FLUSHDB SYNC instead, with INFO keyspace in the same pipeline to confirm that
  /// no database holds a key (else FLUSHALL SYNC follows in a second round trip): the same empty
  /// server (both forget every tracked key: CLIENT TRACKING in valkey.io/topics/
  /// client-side-caching), for about a third of the server's time on Redis 8.0.6 (FLUSHALL SYNC
  /// 104 us, FLUSHDB SYNC 38 us on an empty server, INFO commandstats; bench/RESULTS.md 9.10).
  /// The flush goes inside MULTI ... EXEC, where Redis 7.4 and later run it at once rather than
  /// in their lazyfree thread (state/detail/sequence_ends.hpp). Throws std::runtime_error when the
  /// server refuses it (an ACL rule, say), resp::ConnectionError when the connection breaks.
  void flushall() { flush({}, false); }
  /// flushall() for the next sequence of a property (property::run_sequence): when observing
  /// events and `event_flags` is not empty, notify-keyspace-events switched to it first
  /// (set_event_flags()); when observing counters, their base read again right after the
  /// FLUSHALL or FLUSHDB (observe_counters()); all in flushall()'s one round trip, so that nothing the
  /// server does between them (active expiry) falls outside the base. Throws like
  /// set_event_flags() and observe_counters().
  void begin_sequence(const std::string& event_flags = {});
  /// begin_sequence(event_flags)'s round trip sent now, its replies read (and the start
  /// completed) by the next begin_sequence() with the same flags: a property sends it before it
  /// draws the next sequence, so that the server flushes while the client draws
  /// (property::check_sequences). Any other member that sends (run(), side(), a
  /// prepare_stale_templates() that makes templates, ...) completes it first, and the next
  /// begin_sequence() then starts again. Throws like begin_sequence().
  void send_begin_sequence(const std::string& event_flags = {});
  // (Every public member that sends on a connection of the twin completes such a start first.)

  /// The protocol of the twin's connection from its next command on: 2 (RESP2, where a twin
  /// starts) or 3 (RESP3: HELLO 3 goes out before the next command the twin sends). On RESP3 a
  /// step's reply is compared with the model in its RESP2 form (model::resp2_form), and for a
  /// modelled command its RESP3 form is checked too (model/resp3.hpp: Step::resp3_diff fails
  /// the step); Step::protocol and the script's HELLO lines record it. Observed tracking moves
  /// with it (observe_tracking(); the model then tracks no key, as the server after CLIENT
  /// TRACKING OFF). The event listener and the read-back connection stay on RESP2. Throws std::invalid_argument for another protocol,
  /// std::logic_error for 3 in a build without RESP3 (resp::resp3_supported: hiredis 1.1 or
  /// later) or for a change inside a transaction; a server that refuses the HELLO makes that
  /// next command throw std::runtime_error (resp::Client::hello), the twin staying on its protocol.
  void use_protocol(int protocol);

  /// What use_protocol() set last (2 at first).
  int protocol() const { return protocol_; }

  /// The server's clock (TIME), Unix ms.
  int64_t server_time() {
    finish_begin();
    return saw_server_time(time_ms((*c_)("TIME")));
  }

  /// Runs `argv` on the server (between two TIMEs) and on the model; records the step.
  /// `RESTORE key ttl @dump:<src> ...` names the payload of DUMP <src> taken now (over the
  /// read-back connection; the model remembers which entry it stands for): generators cannot
  /// know payloads. A missing <src> gives an empty payload.
  static constexpr const char* dump_ref = "@dump:";
  /// The longest TIME window (ms) whose every millisecond run() tries; a longer window (a machine
  /// stalled for seconds) is checked at its first max_window_ms only.
  static constexpr int64_t max_window_ms = 10000;

  Step run(const Argv& argv_in) {
    finish_begin();
    inflight_ = argv_in;
    InFlight done{inflight_};  // until run() returns, the command counts as sent (sent())
    detail::ModelCommand mc = detail::model_command(stale_fields(argv_in) ? stale_.resolve(side(), ks_, argv_in)
                                                                           : resolve_dump_ref(argv_in));
    inflight_ = mc.argv;  // a RESTORE with the payload it resolved
    if (const auto* k = crashing(mc.argv)) return hold_back(mc.argv, k->id);  // the server would die
    if (tx_ && !detail::ends_transaction(mc.name)) return queue_step(mc.argv);
    detail::plan_batch(mc, tx_);  // one command, an EXEC's queued commands or the sequence script's
    if (mc.in_script && mc.name == "FCALL") load_sequence_function();
    detail::Sent sent = detail::send_command(*c_, listeners_, ++marker_seq_, mc, tx_);  // the server's side
    saw_server_time(sent.after_ms);
    saw_reply(sent.reply);
    detail::follow_transaction(tx_, mc.tx, sent.opened_transaction, sent.before_ms);
    return check(mc, std::move(sent));  // the model's side
  }

  /// run() of each of `cmds` in turn, with the same steps, checks and history, but sent to the
  /// server in runs of up to `max_run` commands in one round trip each
  /// (state/detail/pipeline.hpp: where a run must end; state/detail/run_all.hpp: how the steps are
  /// checked). With `stop_at_first`, the steps stop at the first that is not ok (the rest of its
  /// run was sent but is not checked). After a MULTI the server refuses inside a run, the rest of
  /// the run is recorded as outside the model (no TIME window of its own), keys re-read. Returns
  /// the steps checked. Throws what run() throws.
  std::vector<Step> run_all(const std::vector<Argv>& cmds, bool stop_at_first = true, std::size_t max_run = 64);
  /// What run_all() did since the twin was made (state/run_stats.hpp).
  using RunStats = state::RunStats;
  const RunStats& run_stats() const { return run_stats_; }
  /// run_all() sends a run's first commands once this many are sure to be in the run, while it
  /// still decides where the run ends (the server runs them meanwhile), then a part each time as
  /// many more are decided as went before (bench/RESULTS.md 9.13). A part ends with its last
  /// command's TIME and end markers; the next command opens its own window.
  static constexpr std::size_t kStreamAfter = 8;
  static_assert(kStreamAfter >= 2, "a run that ends up with one command goes alone (run()): nothing may go before");

  /// FUNCTION LOAD of model::sequence_function_library() unless the server has it
  /// (state/detail/send.hpp). Throws std::runtime_error if the server refuses.
  void load_sequence_function() {
    // Once per read-back connection: a server that restarted closed it (flush() and side() then
    // forget it), and nothing the kit sends deletes a function (FLUSHALL keeps them; DEBUG RELOAD
    // and LOADAOF load them back). A FUNCTION FLUSH sent around the twin: the FCALL that meets it
    // fails ("Function not found": saw_reply()), and the next one loads the library again.
    resp::Client& c = side();
    bool& loaded = sides_[c_->address()].function_loaded;
    if (loaded && c.open_and_quiet()) return;
    detail::ensure_sequence_function(c);
    loaded = true;
  }

  /// The crash row (known_issues/table.hpp, KnownIssue::crashes) that says `argv` would crash
  /// the server under test (Options::server) or one of Options::crash_servers, given the model's
  /// state: run() then records the step under that row without sending it, model unchanged.
  /// nullptr when none does (state/known_divergence.hpp, crash_row()).
  const known_issues::KnownIssue* crashing(const Argv& argv) const {
    return crash_row(opt_.server, opt_.crash_servers, ks_, argv, history_.empty() ? 0 : history_.back().after_ms);
  }

  /// See dump_ref (state/detail/dump_ref.hpp); a DUMP run_all() sent ahead for it (DumpAhead)
  /// is used when nothing went out since.
  Argv resolve_dump_ref(const Argv& a);
  /// Makes the stale templates (state/stale_templates.hpp) the `RESTORE key ttl @stale:<fields>`
  /// commands of `cmds` name, as run() would on first use, but all in one round trip: call it
  /// before flushall() and observe_counters() (property::run_sequence does) so that making them
  /// (database 9, read-back connection) falls outside what a sequence is checked on.
  void prepare_stale_templates(const std::vector<Argv>& cmds) {
    if (!stale_.missing(c_->address(), cmds)) return;  // side() would complete a begin sent ahead
    stale_.prepare(side(), cmds);
    saw_server_time(stale_.waited_until_ms());
  }

  /// The read-back connection (same server, opened on first use): its reads never register
  /// keys for the tracked connection nor change what a test observes on it. Tests polling the
  /// server while the twin observes tracking should poll over it.
  /// (A reference kept across a run_all() after compare_all_follows() would read that run_all()'s
  /// read-back replies: ask side() again.)
  resp::Client& side() {
    finish_begin();  // its reads come after a begin_sequence() sent ahead
    drop_compare_ahead();  // and after compare_all()'s, sent ahead by run_all()
    drop_dump_ahead();     // and after a DUMP it sent ahead
    auto& side = sides_[c_->address()];
    if (!side.c || !side.c->connected())
      side = Side{std::make_unique<resp::Client>(c_->host(), c_->port()), false, std::nullopt};
    return *side.c;
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
    finish_begin();
    return saw_server_time(server::wait_until_past(*c_, deadline_ms, margin_ms, limit));
  }

  /// Active expiry switched off (DEBUG SET-ACTIVE-EXPIRE 0) / on; returns the server's reply.
  /// Recorded in history() as a step outside the model (its window the TIME read with it), so
  /// script() and a crash triage's replay pause where the twin did; it is not counted in
  /// coverage().
  Reply set_active_expire(bool on);


  /// The server under test loaded its data from an RDB again (DEBUG RELOAD on any connection):
  /// the model becomes what the load leaves at the server's time now (model::Keyspace::
  /// after_load under Dialect::load_skips_due_fields: due fields skipped or kept as stored), the
  /// INFO counters re-based when observed (a load counts nothing), the history kept. For a load
  /// that replays an AOF (DEBUG LOADAOF) or a restart (new connections), compare with
  /// Snapshot / model::Keyspace::loaded instead. Throws std::logic_error while observing
  /// tracking (the load invalidates every tracked key: not modelled).
  void follow_load();


  /// Model: active expiry fully done at the server's current time.
  /// Its events (hexpired, del, expired) are compared by compare_background_events().
  std::size_t reclaim_model() {
    detail::keep_background(ks_, background_model_);
    return ks_.reclaim(server_time(), d_.hexpired_class);
  }

  /// Full-state comparison of every key either side knows: type, string value, hash fields and
  /// values (live ones, as HGETALL shows them), HLEN (stored fields, expired included), each
  /// field's HPEXPIRETIME and the key's PEXPIRETIME. Read-only on both sides (no command used
  /// deletes lazily). Returns one line per difference; empty means equal.
  /// With `owns`, only the keys it accepts are compared, on both sides (a cluster node's share:
  /// state/cluster_twin.hpp).
  std::vector<std::string> compare_state(const std::function<bool(const std::string&)>& owns = {}) {
    auto out = keyspace_diff(side(), ks_, diff_options(owns));  // TIME and KEYS * in one round trip
    if (owns) return out;  // a node's share of db 0 (state/cluster_twin.hpp)
    for (auto& d : compare_other_dbs()) out.push_back(std::move(d));
    return out;
  }
  /// compare_state() of every database but 0 that the model or the server holds keys in
  /// (INFO keyspace: one more round trip, and one per such database).
  std::vector<std::string> compare_other_dbs() { return compare_other_dbs(side()("INFO", "keyspace")); }
  /// compare_background_events(), compare_state() and compare_counters() (when observed), their
  /// lines in that order, in one round trip: the listeners' background markers, the INFO counters
  /// and compare_state()'s TIME, KEYS * and reads in one pipeline over the read-back connection
  /// (a marker cuts what the listeners heard wherever it is published from; the reads change no
  /// counter and emit nothing: they delete nothing lazily), the reads planned from the model at
  /// server_time_estimate() (state/keyspace_diff.hpp: keyspace_diff_pipelined; a key TTL due soon,
  /// or keys only the server holds, take a second round trip). What property::run_sequence checks
  /// after a sequence's last command. Throws what resp::Client throws.
  std::vector<std::string> compare_all();
  /// Says that compare_all() comes right after the next run_all() (property::run_sequence says
  /// so): when that run_all()'s last command ends a pipelined run, compare_all()'s pipeline goes
  /// on the read-back connection as soon as that run's replies are in, its reads planned from the
  /// speculative model after the run's commands (the one that cut the run, at the time estimated
  /// before it: state/detail/pipeline.hpp), so the server reads while the client checks the run.
  /// The next compare_all() judges those replies against the model after the checks when nothing
  /// else was sent on the twin's or the read-back connection since (a check that read the server
  /// back, a DISCARD, ...: else they are read and dropped, and it reads afresh), reading again the
  /// keys it would plan other reads for; the reads and the server they meet are those it would
  /// send itself, one client check earlier. A write from another connection between that
  /// run_all() and compare_all() is not seen (property::run_sequence leaves no such gap). A flush
  /// drops them. The next run_all() takes the word.
  void compare_all_follows() { compare_all_follows_ = true; }

  /// The recorded steps as a script replayable with valkey-cli / redis-cli, each command
  /// followed by comment lines with the server's and the model's replies (state/history.hpp).
  std::string script() const { return state::script(history_); }

  /// A reply on one line: arrays as [a, b, ...] (state/keyspace_diff.hpp).
  static std::string oneline(const Reply& r) { return state::oneline(r); }

 private:
  /// compare_other_dbs() given the reply of INFO keyspace (compare_all() reads it in its pipeline).
  std::vector<std::string> compare_other_dbs(const Reply& keyspace_info);
  /// Side::persistence_off of the server the twin points at, read over side() the first time.
  bool persistence_off();
  /// Forgets which servers hold the sequence function when `r` (a reply, or an element of one:
  /// an EXEC's) says a function was not found (load_sequence_function()).
  void saw_reply(const Reply& r);

  /// The background comparison up to the markers `token` (sent already).
  std::vector<std::string> background_until(const std::string& token);

  /// compare_all()'s pipeline sent on the read-back connection, its replies not yet read.
  struct CompareAhead {
    resp::Client* c = nullptr;           ///< the twin's connection then
    std::uint64_t c_sent = 0, side_sent = 0;  ///< commands_appended() of both right after it went
    std::string token;                   ///< its background markers' token
    std::vector<Argv> markers;           ///< those markers
    std::size_t counters_at = 0, keyspace_at = 0;  ///< replies to INFO stats and INFO keyspace
    bool counters = false;               ///< the INFO counters were read
    DiffAhead diff;
  };
  /// Sends compare_all()'s pipeline, its reads planned from `plan` at `estimate_ms` (Unix ms).
  CompareAhead send_compare_all(const model::Keyspace& plan, int64_t estimate_ms);
  /// compare_all()'s lines from what `a` read (`r`: its replies).
  std::vector<std::string> finish_compare_all(const CompareAhead& a, const std::vector<Reply>& r);
  /// A compare_all() pipeline sent ahead by run_all() (compare_all_follows()), not yet used.
  std::optional<CompareAhead> compare_ahead_;
  bool compare_all_follows_ = false;  ///< compare_all_follows() said so for the next run_all()
  /// Reads the replies of compare_ahead_ (the read-back connection is then in step again) and
  /// forgets it. A connection that broke meanwhile (a server that died or restarted) is closed
  /// by the read: side() and the next flush open another, as for any closed read-back.
  void drop_compare_ahead();
  /// A DUMP run_all() sent ahead, not used (resolve_dump_ref): its reply read and forgotten, as
  /// drop_compare_ahead() does.
  std::optional<detail::DumpAhead> dump_ahead_;
  void drop_dump_ahead();

  /// flushall() with `before` sent ahead of the FLUSHALL (or FLUSHDB), and the counters' base read after it
  /// when `rebase`, then the background markers, in one pipeline on the twin's connection;
  /// returns its replies (`before`'s first).
  std::vector<Reply> flush(std::vector<Argv> before, bool rebase) { return flush_finish(flush_send(std::move(before), rebase)); }
  /// flush() in two halves: the pipeline sent (the model and history reset), then its replies read.
  struct PendingFlush {
    resp::Client* c = nullptr;  ///< the connection it went on
    std::size_t replies = 0, n_before = 0;
    bool rebase = false;
    std::string token;
    std::optional<std::size_t> keyspace_at;  ///< FLUSHDB: the reply of the INFO keyspace that confirms it
  };
  /// `all_dbs`: FLUSHALL even when FLUSHDB would do (flushall()'s doc).
  PendingFlush flush_send(std::vector<Argv> before, bool rebase, bool all_dbs = false);
  std::vector<Reply> flush_finish(const PendingFlush& p);
  /// A begin_sequence() sent ahead (send_begin_sequence), not yet read.
  struct PendingBegin {
    std::string event_flags;
    bool set_flags = false;
    PendingFlush flush;
  };
  std::optional<PendingBegin> pending_begin_;
  /// Completes a begin_sequence() sent ahead, if any (its replies read, the counters rebased),
  /// then moves the twin's connection to use_protocol()'s protocol when it is on another.
  void finish_begin();

  KeyspaceDiffOptions diff_options(const std::function<bool(const std::string&)>& owns) const {
    KeyspaceDiffOptions o;
    o.time_tolerance_ms = opt_.time_tolerance_ms;
    o.check_encoding = opt_.check_encoding && limits_read_;
    o.hlen_unknown = &hlen_unknown_;
    o.owns = owns;
    return o;
  }

  /// Records `ms` (Unix ms), a server time read on this server before now, for
  /// server_time_estimate(); returns it. A time recorded late only weakens the estimate.
  int64_t saw_server_time(int64_t ms) { return clock_.saw(ms); }
  /// The server's time now (Unix ms) without a round trip, never later than its TIME would say
  /// (given one host clock): the latest of the server times read, each moved on by what this
  /// machine's steady clock counted since it was read (TIME when none was). run_all's
  /// speculation (state/detail/pipeline.hpp: chunk_end) runs the model there. At a time read
  /// before a wait (a stale template's, state/stale_templates.hpp, or the caller's own sleep) it
  /// took logically expired fields for live ones and let a run go on past a command whose known
  /// issue is settled from the state read right after it (main property, valkey-9.1,
  /// RC_PARAMS="seed=14775170713574078170": a COPY of a hash whose field had expired during the
  /// template's wait, then HGETEX on the copy in the same run; "h2: HLEN server 3, model 4").
  int64_t server_time_estimate() {
    if (const auto t = clock_.now()) return *t;
    return server_time();
  }

  /// Clears the command of the run() under way (sent()) when run() returns, not when it throws.
  struct InFlight {
    std::optional<Argv>& f;
    int before = std::uncaught_exceptions();
    ~InFlight() {
      if (std::uncaught_exceptions() == before) f.reset();
    }
  };

  /// How check() treats a step: `readbacks` false for a step of a pipelined run that is not its
  /// last (the server has moved on: no deadline is read back), `from_ms` a later millisecond of
  /// the window to start the model at (run_all trying another one).
  struct CheckMode {
    bool readbacks = true;
    int64_t from_ms = 0;
  };
  /// The model's side of a step: what the server showed for `mc` (`sent`, state/detail/send.hpp)
  /// checked against the model, which follows the server where the step says so; the step
  /// recorded. The read-backs (side()) see the server as it is now: right after the command.
  Step check(const detail::ModelCommand& mc, detail::Sent sent) { return check(mc, std::move(sent), CheckMode{}); }
  Step check(const detail::ModelCommand& mc, detail::Sent sent, CheckMode mode);

  /// The model side of the twin (state/detail/run_all.hpp: kept before a step whose millisecond
  /// may have to be tried again, and restored for that).
  struct ModelSide {
    model::Keyspace ks;
    model::TrackingModel tracking;
    std::vector<model::Event> background;
    Cells cells;
    std::map<std::string, Coverage> coverage;
    std::set<std::string> script_strings, hlen_unknown;
    std::size_t history = 0;
  };
  ModelSide model_side() const {
    return {ks_, tracking_model_, background_model_, cells_, coverage_, script_strings_, hlen_unknown_, history_.size()};
  }
  void restore(const ModelSide& m);

  /// One pipelined run of run_all (state/detail/run_all.hpp).
  /// `compare_plan`: send compare_all()'s pipeline planned from it right after the run's replies
  /// (compare_all_follows()).
  /// `dump_next`: the key a `RESTORE ... @dump:` right after the run names; its DUMP goes ahead.
  /// `started`: the run's first commands, sent while chunk_end decided its end (run_all).
  std::vector<Step> run_chunk(const std::vector<Argv>& cmds, bool stop_at_first, const model::Keyspace* compare_plan = nullptr,
                              const std::string& dump_next = {}, detail::RunSend* started = nullptr);
  /// Lays out and queues `a` as the next command of `run` (its batch planned), and counts it in
  /// flight (sent()). The sequence function is loaded before (run_all: before the run).
  void add_to_run(detail::RunSend& run, const Argv& a);

  /// A step whose command is outside the model (`e`): with Options::adopt_unmodelled, the keys
  /// its commands name (an EXEC's: every command the server queued) are re-read into the model
  /// (state/adopt.hpp), the counters re-based (unless every one leaves the model alone:
  /// leaves_model_alone), and the step is ok; else it fails.
  void unmodelled(const detail::ModelCommand& mc, const model::Unmodelled& e, detail::Trial& trial, Step& s);

  /// With Options::adopt_unmodelled: the keys `cmds` (outside the model) name re-read into the
  /// model (state/adopt.hpp), the counters re-based unless every one leaves the model alone, and
  /// step `s` ok. Without: nothing, `s` stays failed.
  void adopt(const std::vector<Argv>& cmds, Step& s);


  /// Whether the server's INFO counters are those of model state `k` (a known issue's defect
  /// against the spec: state/known_divergence.hpp); nullopt when not observing them.
  std::optional<bool> counters_match(const model::Keyspace& k) {
    if (!counters_.on()) return std::nullopt;
    return counters_.compare(side(), d_, k).empty();
  }

  /// A command a crash row held back (`row_id`): recorded, not sent, the model unchanged. The
  /// generators reached its coverage cell.
  Step hold_back(const Argv& argv, const std::string& row_id);


  /// A command sent inside MULTI: the server queues it or refuses it now (state/detail/transaction.hpp).
  Step queue_step(const Argv& argv) {
    finish_begin();
    return queued(argv, c_->call(argv));
  }
  /// The step of a command sent inside the open transaction, which the server answered `server`.
  Step queued(const Argv& argv, Reply server);


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
  std::vector<Argv> inflight_run_;  // the commands of the run_all() run under way (sent())
  std::size_t run_history_start_ = 0;  ///< history_.size() when that run started
  /// The server times read on the server the twin points at (saw_server_time); reset when
  /// use_connection() moves the twin to another server.
  server::ClockEstimate clock_;
  RunStats run_stats_;
  bool limits_read_ = false;
  detail::Listeners listeners_;  ///< keyspace notifications and tracking invalidations (observe_*)
  uint64_t marker_seq_ = 0;
  /// marker_seq_ right after a compare_all() that found keys in no database but 0 (0: none):
  /// the next flush may be FLUSHDB while it is still marker_seq_ (flushall()).
  uint64_t db0_only_at_seq_ = 0;
  std::vector<model::Event> background_model_;  ///< model events outside run(), not yet compared
  detail::CounterObservation counters_;  ///< INFO counters (observe_counters)
  std::map<std::string, Coverage> coverage_;
  Cells cells_;  ///< cells(): command x field-state coverage
  std::optional<detail::Transaction> tx_;
  model::TrackingModel tracking_model_;
  int protocol_ = 2;  ///< use_protocol(): the twin's connection is moved to it by finish_begin()
  struct Side {
    std::unique_ptr<resp::Client> c;
    bool function_loaded = false;  ///< known to hold the sequence function (load_sequence_function)
    /// No save points and no AOF (CONFIG GET save, appendonly), read once per connection: only
    /// then may a flush be FLUSHDB (FLUSHALL also saves an RDB and stops a save in progress).
    std::optional<bool> persistence_off;
  };
  std::map<std::string, Side> sides_;  ///< read-backs per server (side())
  StaleTemplates stale_;  ///< `@stale:` payloads made on this twin's servers
  std::set<std::string> script_strings_;  ///< strings a script wrote (valkey-script-string-not-int-encoded)
  std::set<std::string> hlen_unknown_;  ///< keys re-read after an unmodelled command
};

}  // namespace expirykit::state

#include <expirykit/state/detail/check_step.hpp>
#include <expirykit/state/detail/switches.hpp>
#include <expirykit/state/detail/run_all.hpp>
#include <expirykit/state/detail/sequence_ends.hpp>
