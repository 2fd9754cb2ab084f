// Timed paths the random sequences do not produce (issue 22: "timed paths no generator
// produces"), as fixed examples on the live server beside the model (state::Twin): a TTL removed
// before its deadline and the deadline then passing, a key TTL and field TTLs due at the same
// millisecond, and a 1 ms field TTL set inside MULTI (time is frozen for the whole EXEC:
// valkey-hfe.md §14, redis-hfe.md §6). The model is the specification: every reply, the
// keyspace notifications, the INFO counters and the whole state after the deadline are checked
// against it.
// Timing: active expiry is paused (DEBUG SET-ACTIVE-EXPIRE 0), so what is due stays stored until
// a command reads it (lazy expiry, one deterministic path); deadlines are 2 s after the commands
// that must come before them, and the waits are on the server's clock (Twin::wait_until_past), so
// a loaded machine only makes them longer.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include <expirykit/catch2/twin_fixture.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Reply;

namespace {
/// The twin observing events and counters, active expiry paused; check_and_resume() at the end.
struct TimedPath : TwinFixture {
  expirykit::state::Twin& paused_twin() { return observing_twin(false); }
  /// Counters and the whole state against the model, then active expiry on again.
  void check_and_resume() {
    check_counters();
    check_same_state();
    REQUIRE(twin().set_active_expire(true) == Reply::ok());
  }
};
}  // namespace

TEST_CASE_METHOD(TimedPath, "Timed paths: HPERSIST and HGETEX PERSIST keep a field past its old deadline",
                 "[semantics][timed]") {
  auto& t = paused_twin();
  REQUIRE(both("HSET h a 1 b 2 c 3") == Reply::integer(3));
  // 2 s: the HPERSIST and HGETEX after it must come first, however slow the round trips.
  REQUIRE(both("HPEXPIRE h 2000 FIELDS 3 a b c") == Reply::ints({1, 1, 1}));
  const int64_t due = t.history().back().after_ms + 2000;  // the deadlines are at most this
  CHECK(both("HPERSIST h FIELDS 2 a c") == Reply::ints({1, 1}));
  if (t.dialect().has_hgetex) CHECK(both("HGETEX h PERSIST FIELDS 1 c").is_array());
  t.wait_until_past(due, 5);
  CHECK(both("HTTL h FIELDS 3 a b c") == Reply::ints({-1, -2, -1}));
  CHECK(both("HGET h a") == Reply::string("1"));
  CHECK(both("HGET h b").is_nil());
  CHECK(both("HLEN h").is_integer());
  check_and_resume();
}

TEST_CASE_METHOD(TimedPath, "Timed paths: a key TTL and field TTLs due at the same millisecond", "[semantics][timed]") {
  auto& t = paused_twin();
  REQUIRE(both("HSET h a 1 b 2") == Reply::integer(2));
  REQUIRE(both("HSET g a 1 b 2") == Reply::integer(2));
  const std::string at = std::to_string(t.server_time() + 2000);  // after the four commands that set it
  CHECK(both("HPEXPIREAT h " + at + " FIELDS 1 a") == Reply::ints({1}));
  CHECK(both("PEXPIREAT h " + at) == Reply::integer(1));
  CHECK(both("HPEXPIREAT g " + at + " FIELDS 2 a b") == Reply::ints({1, 1}));
  CHECK(both("PEXPIREAT g " + at) == Reply::integer(1));
  t.wait_until_past(std::stoll(at), 5);
  CHECK(both("HGET h b").is_nil());  // the key's TTL ran out with the field's: the key is gone
  CHECK(both("EXISTS h") == Reply::integer(0));
  CHECK(both("HLEN g") == Reply::integer(0));
  CHECK(both("EXISTS g") == Reply::integer(0));
  check_and_resume();
}

TEST_CASE_METHOD(TimedPath, "Timed paths: a 1 ms field TTL set inside MULTI is still there for the rest of the EXEC",
                 "[semantics][timed]") {
  auto& t = paused_twin();
  REQUIRE(both("HSET h a 1 b 2") == Reply::integer(2));
  REQUIRE(both("MULTI") == Reply::ok());
  both("HPEXPIRE h 1 FIELDS 1 a");
  both("HGET h a");
  both("HPTTL h FIELDS 1 a");
  both("HLEN h");
  const Reply exec = both("EXEC");
  // Time is frozen at EXEC: the field set to expire 1 ms later is still read within it.
  CHECK(exec == Reply::array({Reply::ints({1}), Reply::string("1"), Reply::ints({1}), Reply::integer(2)}));
  t.wait_until_past(t.history().back().after_ms + 1, 5);
  CHECK(both("HGET h a").is_nil());
  CHECK(both("HTTL h FIELDS 2 a b") == Reply::ints({-2, -1}));
  check_and_resume();
}
