// Tests that fail, skip and crash on purpose. Not run by CTest: checks/catch2/integration_test.cpp
// runs this binary with a filter and checks its exit code, output and verdict lines.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/catch2/prop.hpp>
#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/catch2/verdict_kind.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::catch2::Verdict;
using expirykit::resp::Reply;

// Declared first: tests run in declaration order, and the crash must come before "passes".
TEST_CASE_METHOD(ServerFixture, "probe: crashes the server", "[.probe]") {
  try {
    client()("DEBUG", "SEGFAULT");
  } catch (const std::exception&) {
  }
}

TEST_CASE_METHOD(ServerFixture, "probe: passes", "[.probe]") { CHECK(client()("PING") == Reply::status("PONG")); }

TEST_CASE_METHOD(ServerFixture, "probe: passes with a warning", "[.probe]") {
  CHECK(client()("PING") == Reply::status("PONG"));
  WARN("CHANGED since redis-8.0: record redis-8.6's own now");
}

TEST_CASE_METHOD(ServerFixture, "probe: fails", "[.probe]") { CHECK(client()("ECHO", "got") == Reply::string("wanted")); }

TEST_CASE_METHOD(ServerFixture, "probe: skips", "[.probe]") { require(false, "a capability no server has"); }

TEST_CASE_METHOD(ServerFixture, "probe: leaves a key", "[.probe]") { CHECK(client()("SET", "left", "1") == Reply::ok()); }

TEST_CASE_METHOD(ServerFixture, "probe: sees a clean server", "[.probe]") { CHECK(client()("DBSIZE") == Reply::integer(0)); }

TEST_CASE_METHOD(ServerFixture, "probe: fails with context", "[.probe]") {
  const bool agree = client()("ECHO", "x") == Reply::string("y");
  INFO("HTTL h FIELDS 1 a -> server [5], model [4]");
  CHECK(agree);
}

TEST_CASE_METHOD(ServerFixture, "probe: changes the configuration", "[.probe]") {
  CHECK(client()("CONFIG", "SET", "hash-max-listpack-entries", "3", "notify-keyspace-events", "KEA") == Reply::ok());
}

TEST_CASE_METHOD(ServerFixture, "probe: sees the configuration it started with", "[.probe]") {
  // The server's own default (128 on Redis, 512 on Valkey 9.1), not what the other probe set.
  CHECK_FALSE(client()("CONFIG", "GET", "hash-max-listpack-entries") == Reply::array({Reply::string("hash-max-listpack-entries"), Reply::string("3")}));
  CHECK(client()("CONFIG", "GET", "notify-keyspace-events") == Reply::array({Reply::string("notify-keyspace-events"), Reply::string("")}));
}

TEST_CASE("probe: a configuration set for one test is back when that test ends", "[.probe]") {
  // A fixture made and ended here, watched from a connection of its own (which restores nothing).
  auto watch = expirykit::catch2::shared_target().client();
  const Reply before = watch("CONFIG", "GET", "notify-keyspace-events");
  {
    ServerFixture f;
    f.set_config_for_test("notify-keyspace-events", "KEA");
    CHECK(watch("CONFIG", "GET", "notify-keyspace-events") ==
          Reply::array({Reply::string("notify-keyspace-events"), Reply::string("AKE")}));
  }
  CHECK(watch("CONFIG", "GET", "notify-keyspace-events") == before);
}

TEST_CASE("probe: a false property", "[.probe]") {
  expirykit::catch2::prop("every int is below 10", [](int x) { RC_ASSERT(x < 10); });
}

TEST_CASE("probe: a true property", "[.probe]") {
  expirykit::catch2::prop("abs is non-negative", [](int x) { RC_ASSERT(x == INT32_MIN || std::abs(x) >= 0); });
}

TEST_CASE_METHOD(ServerFixture, "probe: restarts its own server", "[.probe]") {
  auto s = fresh_server({}, "restart");
  s->restart(expirykit::process::Shutdown::nosave);
  CHECK(s->client()("PING") == Reply::status("PONG"));
}

// known_issue() with an id that is not in known_issues/table.hpp: must fail, defect or not.
TEST_CASE_METHOD(ServerFixture, "probe: known issue with an unknown id and a defect", "[.probe]") {
  expirykit::catch2::known_issue(identity(), "no-such-issue", true, "observed something");
}
TEST_CASE_METHOD(ServerFixture, "probe: known issue with an unknown id and no defect", "[.probe]") {
  expirykit::catch2::known_issue(identity(), "no-such-issue", false, "all fine");
}

// Skips with a verdict (catch2/verdict_kind.hpp), and one without: the verdict line carries the
// verdict it was told, whatever the message says.
TEST_CASE("probe: fails with a message", "[.probe]") {
  INFO("context in scope");
  FAIL("the property report\nsecond line");
}
// A binary value in a failure message (a model state holding "\x00\x01\xff").
TEST_CASE("probe: fails with a NUL in its message", "[.probe]") {
  using namespace std::string_literals;
  FAIL("value \"\0\x01\xff\" then more"s);
}
TEST_CASE("probe: skips plainly", "[.probe]") { SKIP("not supported by anything, says the prose"); }
TEST_CASE("probe: skips as a known gap", "[.probe]") {
  expirykit::catch2::skip(Verdict::known_gap, "the model cannot judge this yet");
}
TEST_CASE("probe: skips as a known issue", "[.probe]") {
  expirykit::catch2::skip(Verdict::known_issue, "FIXED, says the prose; KNOWN ISSUE, says the verdict");
}
TEST_CASE("probe: skips as fixed", "[.probe]") { expirykit::catch2::skip(Verdict::fixed, "no longer reproduces"); }
// A failed assertion before the skip: FAIL. skip() with FAIL: not a skip, a failure.
TEST_CASE("probe: fails then skips as a known issue", "[.probe]") {
  CHECK(1 == 2);
  expirykit::catch2::skip(Verdict::known_issue, "too late");
}
TEST_CASE("probe: skips with the verdict FAIL", "[.probe]") { expirykit::catch2::skip(Verdict::fail, "a misuse"); }

// The README's twin pattern: require_field_ttl(), then a both() inside a CHECK.
TEST_CASE_METHOD(expirykit::catch2::TwinFixture, "probe: a twin check as its first line", "[.probe]") {
  require_field_ttl();
  CHECK(both("HSET h a 1") == Reply::integer(1));
}

// A twin check that fails: the server's field lost its TTL behind the model's back.
TEST_CASE_METHOD(expirykit::catch2::TwinFixture, "probe: a twin check fails", "[.probe]") {
  require_field_ttl();
  both("HSET h a 1");
  both("HPEXPIRE h 100000 FIELDS 1 a");
  CHECK(client()("HPERSIST", "h", "FIELDS", "1", "a") == Reply::ints({1}));  // the server only
  both("HTTL h FIELDS 1 a");  // PROBE-FAILING-LINE
}

// A twin check that fails on a big hash: a 300-field HSET of 100-byte values (a line of about
// 32,000 characters in the steps so far) and its HGETALL in the state difference, both cut in
// the message (catch2/fixture_base.hpp: cut_long_lines).
TEST_CASE_METHOD(expirykit::catch2::TwinFixture, "probe: a twin check fails on a big hash", "[.probe]") {
  require_field_ttl();
  expirykit::resp::Argv hset{"HSET", "big"};
  for (int i = 0; i < 300; ++i) hset.insert(hset.end(), {"f" + std::to_string(i), std::string(100, 'v')});
  both(hset);
  CHECK(client()("HDEL", "big", "f0") == Reply::integer(1));  // the server only
  check_same_state();
}

// catch2::note(): the verdict recorded, the test going on (catch2/verdict_kind.hpp).
TEST_CASE("probe: notes a known issue and goes on", "[.probe]") {
  expirykit::catch2::note(Verdict::known_issue, "seen and excused");
  WARN("still running");
}
TEST_CASE("probe: notes a known issue, then a check fails", "[.probe]") {
  expirykit::catch2::note(Verdict::known_issue, "seen and excused");
  CHECK(1 == 2);
}
TEST_CASE("probe: notes the verdict PASS", "[.probe]") { expirykit::catch2::note(Verdict::pass, "a misuse"); }
TEST_CASE("probe: notes a known issue, then a fix", "[.probe]") {
  expirykit::catch2::note(Verdict::known_issue, "one issue seen");
  expirykit::catch2::note(Verdict::fixed, "another one fixed");
  expirykit::catch2::note(Verdict::known_issue, "a third seen");
}
TEST_CASE_METHOD(ServerFixture, "probe: note_known_issue with an unknown id goes on and fails", "[.probe]") {
  CHECK_FALSE(expirykit::catch2::note_known_issue(identity(), "no-such-issue", true, "observed something"));
  WARN("ran after note_known_issue");
}
