// The Catch2 integration as a user sees it: exit codes, messages, verdict lines, and the
// fixture's handling of a crashed server, checked by running checks/catch2/probe_tests.cpp.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <boost/process.hpp>

#include <expirykit/catch2/fixture_base.hpp>
#include <expirykit/process/external_lock.hpp>
#include <expirykit/process/server.hpp>

#include "../common/env.hpp"
#include "../common/proc_locks.hpp"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
namespace bp = boost::process;

namespace {
struct Run {
  int code = -1;
  std::string out;
  std::vector<std::string> verdicts;  // lines of EXPIRYKIT_VERDICT_FILE
};
Run run_probe(const std::vector<std::string>& args, const std::string& external = "") {
  Run r;
  std::string vf = "/tmp/ekcheck-verdicts-" + std::to_string(::getpid());
  std::remove(vf.c_str());
  // The child inherits our environment with these set (and restored after the spawn). Not
  // boost::process::environment: its find() over-reads in Boost 1.74 (ASan heap-buffer-overflow
  // with some variable lengths).
  ekcheck::ScopedEnv verdicts("EXPIRYKIT_VERDICT_FILE", vf.c_str()), params("RC_PARAMS", "max_success=50"),
      addr("EXPIRYKIT_SERVER_ADDR", external.empty() ? nullptr : external.c_str());
  bp::ipstream out;
  bp::child c(EXPIRYKIT_CATCH2_PROBE, bp::args(args), (bp::std_out & bp::std_err) > out);
  for (std::string l; std::getline(out, l);) r.out += l + "\n";
  c.wait();
  r.code = c.exit_code();
  std::ifstream in(vf);
  for (std::string l; std::getline(in, l);) r.verdicts.push_back(l);
  std::remove(vf.c_str());
  return r;
}
}  // namespace

TEST_CASE("A failed reply check prints both replies as valkey-cli shows them, and a FAIL verdict", "[catch2]") {
  auto r = run_probe({"probe: fails"});
  INFO(r.out);
  CHECK(r.code != 0);
  CHECK_THAT(r.out, ContainsSubstring("\"got\"  (reply to: ECHO got) == \"wanted\""));
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: fails\tFAIL\t"));
  // The verdict names the command the reply answered, and ends with a replay line (escaped
  // newline: catch2/verdict.hpp) that re-runs exactly this test, which fails the same way.
  CHECK_THAT(r.verdicts[0], ContainsSubstring("(reply to: ECHO got)"));
  const auto at = r.verdicts[0].find("\\nreplay: ");
  REQUIRE(at != std::string::npos);
  std::string replay = r.verdicts[0].substr(at + 10);
  replay = replay.substr(0, replay.find('\t'));
  CHECK_THAT(replay, ContainsSubstring(EXPIRYKIT_CATCH2_PROBE) && ContainsSubstring("'probe: fails'"));
  bp::ipstream out;
  bp::child c("/bin/bash", "-c", replay, (bp::std_out & bp::std_err) > out);
  std::string replayed;
  for (std::string l; std::getline(out, l);) replayed += l + "\n";
  c.wait();
  INFO(replay << "\n" << replayed);
  CHECK(c.exit_code() != 0);
  CHECK_THAT(replayed, ContainsSubstring("\"got\"  (reply to: ECHO got) == \"wanted\"") && ContainsSubstring("test cases: 1 |"));
}

TEST_CASE("A failed boolean check's verdict leads with the INFO in scope", "[catch2]") {
  auto r = run_probe({"probe: fails with context"});
  INFO(r.out);
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("\tFAIL\tHTTL h FIELDS 1 a -> server [5], model [4]\\nCHECK( agree ) with false"));
}

TEST_CASE("A bad EXPIRYKIT_* value fails each test naming it, and the verdict lines are still written", "[catch2]") {
  ekcheck::ScopedEnv bad("EXPIRYKIT_KEEP_DIRS", "yes");
  auto r = run_probe({"probe: passes,probe: sees a clean server", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code != 0);
  REQUIRE(r.verdicts.size() == 2);
  for (const auto& v : r.verdicts)
    CHECK_THAT(v, ContainsSubstring("\tFAIL\t") && ContainsSubstring("EXPIRYKIT_KEEP_DIRS='yes' must be 1 or 0"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("the shared server could not be set up, see the first failing test"));
}

TEST_CASE("A passing test gives a PASS verdict with the server's identity", "[catch2]") {
  auto r = run_probe({"probe: passes"});
  INFO(r.out);
  CHECK(r.code == 0);
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: passes\tPASS\t"));
  CHECK((r.verdicts[0].find("\tvalkey ") != std::string::npos || r.verdicts[0].find("\tredis ") != std::string::npos));
}

TEST_CASE("A passing test's WARN messages are its verdict's detail (the memory gate's CHANGED since ...)", "[catch2]") {
  auto r = run_probe({"probe: passes with a warning,probe: passes", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code == 0);
  REQUIRE(r.verdicts.size() == 2);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: passes\tPASS\t\t"));  // no warning: no detail
  CHECK_THAT(r.verdicts[1],
             ContainsSubstring("probe: passes with a warning\tPASS\tCHANGED since redis-8.0: record redis-8.6's own now\t"));
}

TEST_CASE("require() skips with the reason and the server named", "[catch2]") {
  auto r = run_probe({"probe: skips"});
  INFO(r.out);
  CHECK(r.code == 4);  // Catch2: every selected test was skipped
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("\tNOT SUPPORTED\tnot supported by ") &&
                                ContainsSubstring(": a capability no server has"));
}

TEST_CASE("EXPIRYKIT_FAIL_NOT_SUPPORTED=1: a NOT SUPPORTED skip fails, a known issue and a plain skip stay skips",
          "[catch2]") {
  ekcheck::ScopedEnv strict("EXPIRYKIT_FAIL_NOT_SUPPORTED", "1");
  auto r = run_probe({"probe: skips,probe: skips plainly,probe: skips as a known issue", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code != 0);
  CHECK(r.code != 4);
  REQUIRE(r.verdicts.size() == 3);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: skips\tFAIL\tNOT SUPPORTED, a failure under "
                                              "EXPIRYKIT_FAIL_NOT_SUPPORTED=1: not supported by ") &&
                                ContainsSubstring(": a capability no server has"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("probe: skips plainly\tSKIPPED\t"));
  CHECK_THAT(r.verdicts[2], ContainsSubstring("probe: skips as a known issue\tKNOWN ISSUE\t"));
  CHECK_THAT(r.out, !ContainsSubstring("verdict_kind.hpp"));  // reported where skip() was called
}

TEST_CASE("A skip's verdict is the one catch2::skip() was given, never read from the message; a plain SKIP is SKIPPED",
          "[catch2]") {
  auto r = run_probe({"probe: skips plainly,probe: skips as a known gap,probe: skips as a known issue,probe: skips as fixed",
                      "--order", "decl"});
  INFO(r.out);
  CHECK(r.code == 4);  // Catch2: every selected test was skipped
  REQUIRE(r.verdicts.size() == 4);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: skips plainly\tSKIPPED\tnot supported by anything, says the prose\t"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("probe: skips as a known gap\tKNOWN GAP\tthe model cannot judge this yet\t"));
  CHECK_THAT(r.verdicts[2], ContainsSubstring("probe: skips as a known issue\tKNOWN ISSUE\tFIXED, says the prose"));
  CHECK_THAT(r.verdicts[3], ContainsSubstring("probe: skips as fixed\tFIXED\tno longer reproduces\t"));
  // Catch2 prints the message as for any SKIP, at the line that called catch2::skip().
  CHECK_THAT(r.out, ContainsSubstring("the model cannot judge this yet"));
  CHECK_THAT(r.out, ContainsSubstring("probe_tests.cpp:"));
  CHECK_THAT(r.out, !ContainsSubstring("verdict_kind.hpp"));
}

TEST_CASE("catch2::note(): the test goes on and ends with the weightiest noted verdict, unless a check fails; PASS is a misuse",
          "[catch2]") {
  auto r = run_probe({"probe: notes a known issue and goes on,probe: notes a known issue\\, then a check fails,"
                      "probe: notes the verdict PASS,probe: note_known_issue with an unknown id goes on and fails,"
                      "probe: notes a known issue\\, then a fix",
                      "--order", "decl"});
  INFO(r.out);
  CHECK(r.code != 0);
  REQUIRE(r.verdicts.size() == 5);
  CHECK_THAT(r.verdicts[3], ContainsSubstring("probe: notes a known issue, then a fix\tFIXED\tanother one fixed\t"));
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: notes a known issue and goes on\tKNOWN ISSUE\tseen and excused\t"));
  CHECK_THAT(r.out, ContainsSubstring("still running"));  // the test went on after the note
  CHECK_THAT(r.verdicts[1], ContainsSubstring("probe: notes a known issue, then a check fails\tFAIL\t"));
  CHECK_THAT(r.verdicts[2], ContainsSubstring("probe: notes the verdict PASS\tFAIL\t") &&
                                ContainsSubstring("which is not a noted verdict: a misuse"));
  CHECK_THAT(r.verdicts[4], ContainsSubstring("probe: note_known_issue with an unknown id goes on and fails\tFAIL\t") &&
                                ContainsSubstring("no known issue 'no-such-issue'"));
  CHECK_THAT(r.out, ContainsSubstring("ran after note_known_issue"));
  CHECK_THAT(r.out, !ContainsSubstring("verdict_kind.hpp"));  // reported where note() was called
}

TEST_CASE("A failed assertion before a skip is a FAIL; catch2::skip() with FAIL fails", "[catch2]") {
  auto r = run_probe({"probe: fails then skips as a known issue,probe: skips with the verdict FAIL", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code != 0);
  CHECK(r.code != 4);
  REQUIRE(r.verdicts.size() == 2);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: fails then skips as a known issue\tFAIL\t"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("probe: skips with the verdict FAIL\tFAIL\t") &&
                                ContainsSubstring("which is not a skip: a misuse"));
  CHECK_THAT(r.out, !ContainsSubstring("verdict_kind.hpp"));  // reported where skip() was called
}

TEST_CASE("A FAIL(message)'s verdict holds the message once, then the INFO in scope", "[catch2]") {
  // Catch2 v3 hands the listener FAIL's message both as the assertion's message and among the
  // info messages; a property report (`if (!r.ok) FAIL(r.report)`) must not be written twice.
  auto r = run_probe({"probe: fails with a message"});
  INFO(r.out);
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: fails with a message\tFAIL\tthe property report\\nsecond line"));
  const auto first = r.verdicts[0].find("the property report");
  CHECK(r.verdicts[0].find("the property report", first + 1) == std::string::npos);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("context in scope"));
}

TEST_CASE("A control byte in a failure message is escaped in the verdict file, one line per test", "[catch2]") {
  // Found by ci/conformance: a failure whose model state held a NUL cut its verdict line there
  // and glued the next test's verdict to it, so the report lost that test.
  auto r = run_probe({"probe: fails with a NUL in its message,probe: skips plainly", "--order", "decl"});
  INFO(r.out);
  REQUIRE(r.verdicts.size() == 2);  // declared in this order: the NUL's verdict, then another
  CHECK_THAT(r.verdicts[0], StartsWith("expirykit_catch2_probe\tprobe: fails with a NUL in its message\tFAIL\t"
                                       "value \"\\x00\\x01\xff\" then more"));
  CHECK_THAT(r.verdicts[1], StartsWith("expirykit_catch2_probe\tprobe: skips plainly\t"));
  for (const auto& v : r.verdicts) CHECK(std::count(v.begin(), v.end(), '\t') == 4);
}

TEST_CASE("Each test starts on a flushed server", "[catch2]") {
  auto r = run_probe({"probe: leaves a key,probe: sees a clean server", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE("A CONFIG SET made by one test is set back before the next test; the run names its server", "[catch2]") {
  auto r = run_probe({"probe: sees the configuration it started with,probe: changes the configuration,"
                      "probe: sees the configuration it started with", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, ContainsSubstring("expirykit: tests run against ") && ContainsSubstring(" at 127.0.0.1:"));
}

TEST_CASE("ServerFixture::set_config_for_test sets the value back when the test ends", "[catch2]") {
  auto r = run_probe({"probe: a configuration set for one test is back when that test ends"});
  INFO(r.out);
  CHECK(r.code == 0);
}

TEST_CASE("A server crash fails the test that caused it, with the crash report; the next test gets a new server",
          "[catch2]") {
  auto r = run_probe({"probe: crashes the server,probe: passes", "--order", "decl"});
  INFO(r.out);
  CHECK(r.code != 0);
  CHECK_THAT(r.out, ContainsSubstring("the server died during this test") && ContainsSubstring("signal 11") &&
                        ContainsSubstring("crashed by signal"));
  REQUIRE(r.verdicts.size() == 2);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: crashes the server\tFAIL"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("probe: passes\tPASS"));
}

TEST_CASE("prop() fails the test with RapidCheck's shrunk counterexample; a true property passes", "[catch2]") {
  auto bad = run_probe({"probe: a false property"});
  INFO(bad.out);
  CHECK(bad.code != 0);
  CHECK_THAT(bad.out, ContainsSubstring("Falsifiable") && ContainsSubstring("(10)") &&
                          ContainsSubstring("reproduce="));
  auto good = run_probe({"probe: a true property"});
  INFO(good.out);
  CHECK(good.code == 0);
}

TEST_CASE("External mode: tests run against the given server; a test that needs its own server is skipped",
          "[catch2]") {
  expirykit::process::Server external;
  REQUIRE(external.client()("SET", "mark", "external") == expirykit::resp::Reply::ok());
  auto r = run_probe({"probe: passes,probe: restarts its own server", "--order", "decl"}, external.address());
  INFO(r.out);
  CHECK(r.code == 0);
  REQUIRE(r.verdicts.size() == 2);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: passes\tPASS"));
  CHECK_THAT(r.verdicts[1], ContainsSubstring("\tSKIPPED\tneeds a server the kit spawns (restart)"));
  // It really used the external server: the fixture flushed it.
  CHECK(external.client()("EXISTS", "mark") == expirykit::resp::Reply::integer(0));
  auto own = run_probe({"probe: restarts its own server"});
  INFO(own.out);
  CHECK(own.code == 0);
}

TEST_CASE("External mode: a second test process on the same server waits for the first, and says so", "[catch2]") {
  // ctest -j runs each test case as a process; on one external server they flushed each other (a
  // new-user trial: 2 of 3 tests failed as server/model mismatches). This test holds the server's
  // lock as another test process would; the probe must wait for it, then pass.
  expirykit::process::Server external;
  std::optional<expirykit::process::ExternalLock> other(std::in_place, external.address());
  Run r;
  std::atomic<bool> done{false};
  std::thread t([&] {
    r = run_probe({"probe: passes"}, external.address());
    done = true;
  });
  // Release the lock only once the probe waits for it (a fixed 500 ms was too short for a probe
  // under ASan on a loaded machine: it came after the release and never waited).
  if (!std::ifstream("/proc/locks")) SKIP("no /proc/locks here: cannot tell when the probe waits for the lock");
  const auto path = expirykit::process::ExternalLock::path_for(external.address());
  CHECK(ekcheck::wait_for_waiter(path, [&] { return done.load(); }));
  CHECK_FALSE(done);  // it cannot have run while the lock is held
  other.reset();
  t.join();
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, ContainsSubstring("expirykit: another test process is using the external server " +
                                      external.address()) &&
                        ContainsSubstring("waiting for it to finish"));
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("probe: passes\tPASS"));
}

TEST_CASE("External mode's banner says how the kit reaches the server: AUTH and its user, never the password",
          "[catch2][auth]") {
  expirykit::process::ServerOptions o;
  o.set("requirepass", "banner-pw-4711");
  expirykit::process::Server external(o);
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", "banner-pw-4711"), user("EXPIRYKIT_SERVER_USER", nullptr);
    auto r = run_probe({"probe: passes"}, external.address());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring(external.address() + " (external); AUTH as the default user; every test FLUSHALLs it"));
    CHECK_THAT(r.out, !ContainsSubstring("banner-pw-4711"));
    REQUIRE(external.client()("ACL", "SETUSER", "bob", "on", ">bob-pw-0815", "~*", "&*", "+@all") ==
            expirykit::resp::Reply::ok());
  }
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", "bob-pw-0815"), user("EXPIRYKIT_SERVER_USER", "bob");
    auto r = run_probe({"probe: passes"}, external.address());
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring(external.address() + " (external); AUTH as user bob; every test FLUSHALLs it"));
    CHECK_THAT(r.out, !ContainsSubstring("bob-pw-0815"));
  }
  expirykit::process::Server plain;
  ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", nullptr), user("EXPIRYKIT_SERVER_USER", nullptr);
  auto r = run_probe({"probe: passes"}, plain.address());
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, ContainsSubstring(plain.address() + " (external); every test FLUSHALLs it"));
}

TEST_CASE("On an external server without DEBUG, TwinFixture's require_field_ttl() SKIPs before the first CHECK(both(...))",
          "[catch2]") {
  // A new-user trial's stumble: the SKIP came from inside the CHECK, which Catch2 counts as a
  // failure. The last --enable-debug-command on the command line wins.
  expirykit::process::ServerOptions o;
  o.config = {{"enable-debug-command", "no"}};
  expirykit::process::Server external(o);
  auto r = run_probe({"probe: a twin check as its first line"}, external.address());
  INFO(r.out);
  CHECK(r.code == 4);  // Catch2: every selected test was skipped
  REQUIRE(r.verdicts.size() == 1);
  CHECK_THAT(r.verdicts[0], ContainsSubstring("\tNOT SUPPORTED\tnot supported by ") &&
                                ContainsSubstring("as started: the DEBUG command") &&
                                ContainsSubstring("--enable-debug-command local"));
  auto own = run_probe({"probe: a twin check as its first line"});  // a spawned server has DEBUG
  INFO(own.out);
  CHECK(own.code == 0);
}

TEST_CASE("A failed twin check names the test's file and line and prints the steps so far as a script", "[catch2]") {
  auto r = run_probe({"probe: a twin check fails"});
  INFO(r.out);
  CHECK(r.code != 0);
  // The line of the failing both() in probe_tests.cpp, found by its marker comment.
  int line = 0, n = 0;
  std::ifstream src(std::string(CHECK_CATCH2_CHECKS_DIR) + "/catch2/probe_tests.cpp");
  for (std::string l; std::getline(src, l);) {
    ++n;
    if (l.find("// PROBE-FAILING-LINE") != std::string::npos) line = n;
  }
  REQUIRE(line > 0);
  CHECK_THAT(r.out, ContainsSubstring("called at ") && ContainsSubstring("probe_tests.cpp:" + std::to_string(line)));
  CHECK_THAT(r.out, ContainsSubstring("the test's steps so far") && ContainsSubstring("HPEXPIRE h 100000 FIELDS 1 a") &&
                        ContainsSubstring("<-- MISMATCH"));
}

TEST_CASE("A failed twin check cuts the long lines of its message: the command and the state difference", "[catch2]") {
  auto r = run_probe({"probe: a twin check fails on a big hash"});
  CHECK(r.code != 0);
  // Catch2 wraps a message at 80 columns: compare with every run of whitespace as one space.
  auto flat = [](const std::string& text) {
    std::string out;
    for (const char c : text) {
      const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
      if (!space) out += c;
      else if (!out.empty() && out.back() != ' ') out += ' ';
    }
    return out;
  };
  const std::string f = flat(r.out);
  INFO(r.out.substr(0, 20000));
  // The HSET line (about 32,000 characters) and the HGETALL difference (about 60,000): each cut
  // to 4,000 around the note, its start and end kept.
  CHECK_THAT(f, ContainsSubstring("characters cut from this message"));
  CHECK_THAT(f, ContainsSubstring("HSET big f0") && ContainsSubstring("f299") && ContainsSubstring("HGETALL server"));
  CHECK(r.out.size() < 40000);  // whole: more than 90,000
}

TEST_CASE("cut_long_lines keeps short lines and newlines, and the start and end of a long line", "[catch2]") {
  using expirykit::catch2::detail::cut_long_lines;
  CHECK(cut_long_lines("") == "");
  CHECK(cut_long_lines("ab\n\ncd\n", 4) == "ab\n\ncd\n");
  CHECK(cut_long_lines("abcd", 4) == "abcd");
  CHECK(cut_long_lines("abcdefghij", 4) == "ab ... [6 characters cut from this message] ... ij");
  CHECK(cut_long_lines("x\nabcdefghij\ny", 4) == "x\nab ... [6 characters cut from this message] ... ij\ny");
  CHECK(cut_long_lines("abcdefghi", 5) == "ab ... [5 characters cut from this message] ... hi");
}

TEST_CASE("cut_many_lines keeps a short text, and the first and last lines of a long one", "[catch2]") {
  using expirykit::catch2::detail::cut_many_lines;
  CHECK(cut_many_lines("", 4) == "");
  CHECK(cut_many_lines("1\n2\n3\n4\n", 4) == "1\n2\n3\n4\n");
  CHECK(cut_many_lines("1\n2\n3\n4\n5\n6\n7\n", 4) == "1\n2\n... [3 lines cut from this message] ...\n6\n7\n");
  CHECK(cut_many_lines("1\n2\n3\n4\n5", 2) == "1\n... [3 lines cut from this message] ...\n5");
}

TEST_CASE("known_issue() with an id missing from the table fails whether or not the defect was seen", "[catch2]") {
  for (const char* name : {"probe: known issue with an unknown id and a defect", "probe: known issue with an unknown id and no defect"}) {
    auto r = run_probe({name});
    INFO(name << "\n" << r.out);
    CHECK(r.code != 0);
    CHECK(r.code != 4);  // not a skip: a typo must not turn a failure into KNOWN ISSUE or FIXED
    CHECK_THAT(r.out, ContainsSubstring("no known issue 'no-such-issue' in known_issues/table.hpp"));
    REQUIRE(r.verdicts.size() == 1);
    CHECK_THAT(r.verdicts[0], ContainsSubstring(std::string(name) + "\tFAIL\t"));
  }
}
