// expirykit/catch2/twin_fixture.hpp: a ServerFixture with the reference model beside the live
// server (state::Twin): every command goes to both, replies and state are compared.
//
//   TEST_CASE_METHOD(expirykit::catch2::TwinFixture, "HSET clears a field's TTL") {
//     both("HSET h a 1");  both("HPEXPIRE h 100000 FIELDS 1 a");  both("HSET h a 2");
//     CHECK(both("HTTL h FIELDS 1 a") == Reply::ints({-1}));
//     check_same_state();
//   }
// SKIPs on a server without a model dialect (no hash field TTLs) or without DEBUG.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <source_location>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/server/dialect_choice.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::catch2 {

using expirykit::model::Dialect;
using expirykit::resp::Reply;
using expirykit::state::Step;
using expirykit::state::Twin;

class TwinFixture : public ServerFixture {
 public:
  /// In scope in a TEST_CASE_METHOD's body too (a test's class derives from this one).
  using Dialect = expirykit::model::Dialect;
  using Reply = expirykit::resp::Reply;
  using Step = expirykit::state::Step;
  using Twin = expirykit::state::Twin;

  ~TwinFixture() override {
    try {
      if (twin_) twin_->set_active_expire(true);  // never leave an external server frozen
    } catch (...) {
    }
  }

 protected:
  /// As ServerFixture's, and also SKIPs where twin() would (no model dialect, or DEBUG off on an
  /// external server), so that a test's first `CHECK(both(...))` never meets that SKIP: a SKIP
  /// raised inside a CHECK is reported as a failed CHECK (Catch2's CATCH_CONFIG_FAST_COMPILE
  /// does not translate it). Creates nothing: the twin is still made at its first use.
  void require_field_ttl() {
    ServerFixture::require_field_ttl();
    if (!twin_) (void)twin_dialect();
  }

  /// twin() observing keyspace notifications (all classes) and INFO counters, with active expiry
  /// on or paused (DEBUG SET-ACTIVE-EXPIRE), after `hz` when not 0 (CONFIG SET hz: 100 meets
  /// deadlines within tens of ms; left set on the shared server). REQUIREs field TTLs (SKIP).
  Twin& observing_twin(bool active_expiry, int hz = 0) {
    require_field_ttl();
    if (hz) REQUIRE(client()("CONFIG", "SET", "hz", std::to_string(hz)) == Reply::ok());
    REQUIRE(twin().set_active_expire(active_expiry) == Reply::ok());
    observe_events();
    observe_counters();
    return twin();
  }

  /// The model twin of the shared server (its known issues excused and named, not failed);
  /// SKIPs on a server without a dialect or without DEBUG.
  Twin& twin() {
    if (!twin_) twin_ = std::make_unique<Twin>(client(), twin_dialect(), twin_options());
    return *twin_;
  }
  const Dialect& dialect() { return twin().dialect(); }

  /// Runs `line` on both sides; CHECKs that the replies agree; returns the server's reply, which
  /// names its command when printed (`CHECK(both("HTTL h FIELDS 1 a") == ...)` shows
  /// "(reply to: HTTL h FIELDS 1 a)"). Note: an error reply the model gives too (a mistyped
  /// command) agrees; CHECK the reply when the command must succeed. A failed step's message
  /// also names the caller's file and line (Catch2 reports this header's) and the test's steps so
  /// far as a valkey-cli script (Twin::script(), the failed one marked), which replays it.
  Reply both(const std::string& line, std::source_location where = std::source_location::current()) {
    return both(expirykit::resp::parse_cli_line(line), where);
  }
  Reply both(const expirykit::resp::Argv& argv, std::source_location where = std::source_location::current()) {
    Reply r = step(argv, where).server;
    r.set_sent(detail::cut_long_lines(expirykit::resp::cli_line(argv)));
    return r;
  }
  /// both(), returning the whole step instead of the server's reply (state/step.hpp: both
  /// replies, the TIME window, the events and invalidations each side gave, Step::known_issue
  /// when a known server issue excused it, Step::fixed_issue when a covered release no longer
  /// shows one). CHECKs Step::ok with the same message as both().
  Step step(const std::string& line, std::source_location where = std::source_location::current()) {
    return step(expirykit::resp::parse_cli_line(line), where);
  }
  Step step(const expirykit::resp::Argv& argv, std::source_location where = std::source_location::current()) {
    Step s = twin().run(argv);
    INFO(detail::cut_long_lines(s.describe() + (s.ok ? std::string() : failure_context(where))));
    CHECK(s.ok);
    note_step_issues(s, noted_issues_, where);  // KNOWN ISSUE / FIXED, never a silent PASS
    return s;
  }
  /// Sets a 1 ms TTL on `fields` of `key` (with active expiry off) and waits on the server
  /// clock until they have logically expired: the "expired but not reclaimed" state.
  void expire_unreclaimed(const std::string& key, const std::vector<std::string>& fields) {
    REQUIRE(twin().set_active_expire(false) == Reply::ok());
    expirykit::resp::Argv a{"HPEXPIRE", key, "1", "FIELDS", std::to_string(fields.size())};
    a.insert(a.end(), fields.begin(), fields.end());
    Step s = twin().run(a);
    REQUIRE(s.ok);
    twin().wait_until_past(s.after_ms + 1, 5);
  }
  /// Checks the keyspace notifications of every later both() call (Twin::observe_events; the
  /// server's notify-keyspace-events is restored when the test ends).
  void observe_events(const std::string& flags = "KEA") { twin().observe_events(flags); }
  /// Compares INFO counters with the model from here on: check_counters().
  void observe_counters() { twin().observe_counters(); }
  /// INFO counters agree with the model (CHECK, with the differences as the message, the
  /// caller's file and line and the steps so far).
  void check_counters(std::source_location where = std::source_location::current()) {
    check_no_differences(twin().compare_counters(), where);
  }
  /// Model and server hold the same data (CHECK, with the differences as the message, the
  /// caller's file and line and the steps so far).
  void check_same_state(std::source_location where = std::source_location::current()) {
    check_no_differences(twin().compare_state(), where);
  }
  /// Active expiry's outcome once it has run: turns active expiry on (DEBUG SET-ACTIVE-EXPIRE 1,
  /// as expire_unreclaimed() leaves it off), waits on the server's clock until `until_ms` (Unix
  /// ms, the last deadline set) has passed, then until the server holds what the model holds
  /// after active expiry (Twin::reclaim_model) or `limit` passes, polling compare_state()
  /// and, when observed, compare_counters() (read-only, every 20 ms: a key past its TTL reads as
  /// gone before active expiry reclaims it, INFO counts it until then); then CHECKs the state, the background events
  /// (compare_background_events(): hexpired, del, expired, per key) and, when observed, the INFO
  /// counters, each with the differences as the message. The server's hz sets how soon (hz 100:
  /// within tens of ms of a deadline, valkey-hfe.md §11). Throws std::runtime_error when the
  /// server's clock does not reach `until_ms` within `limit` after the time it is away.
  void check_active_expiry(int64_t until_ms, std::chrono::milliseconds limit = std::chrono::seconds(10),
                           std::source_location where = std::source_location::current()) {
    REQUIRE(twin().set_active_expire(true) == Reply::ok());
    const auto ahead = std::chrono::milliseconds(std::max<int64_t>(0, until_ms - twin().server_time()));
    twin().wait_until_past(until_ms, 5, ahead + limit);
    twin().reclaim_model();
    // The state alone cannot tell a key past its TTL that active expiry has not reached yet (every
    // read hides it) from one it reclaimed: INFO's key counts and expired_keys can, when observed.
    std::vector<std::string> state;
    auto settled = [&] {
      state = twin().compare_state();
      return state.empty() && (!twin().observing_counters() || twin().compare_counters().empty());
    };
    for (const auto end = std::chrono::steady_clock::now() + limit; !settled() && std::chrono::steady_clock::now() < end;)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    check_no_differences(state, where);
    check_no_differences(twin().compare_background_events(), where);
    check_counters(where);
  }

 private:
  /// The dialect the twin checks with, after the twin's own SKIPs (no model dialect, DEBUG off):
  /// what twin() and require_field_ttl() both ask.
  Dialect twin_dialect() {
    auto d = require_dialect();
    require_debug("DEBUG SET-ACTIVE-EXPIRE");
    return d;
  }
  /// CHECKs that `diffs` (compare_counters(), compare_state()) is empty, with the differences,
  /// one a line, and failure_context() as the message.
  void check_no_differences(const std::vector<std::string>& diffs, const std::source_location& where) {
    INFO(detail::cut_long_lines(detail::cut_many_lines(detail::one_per_line(diffs)) +
                                (diffs.empty() ? std::string() : failure_context(where))));
    CHECK(diffs.empty());
  }
  /// "called at <file>:<line>" and the twin's script: what a failed check adds to its message.
  std::string failure_context(const std::source_location& where) {
    return "\n" + detail::called_at(where) +
           "\nthe test's steps so far through the twin (both() and twin(); commands the test sent on "
           "client() itself are not in it; replay with valkey-cli / redis-cli):\n" +
           detail::cut_many_lines(twin().script());
  }

  std::unique_ptr<Twin> twin_;
  std::set<std::string> noted_issues_;  ///< note_step_issues(): the ids noted in this test
};

}  // namespace expirykit::catch2
