// triage::triage_crash and the property drivers on servers that really crash: DEBUG SEGFAULT
// (every Valkey and Redis: a deliberate SIGSEGV, src/debug.c) and, where a known issue says the
// server has it, a crash that needs state (Valkey 9.1.2's HRANDFIELD on an empty hash).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/property/property.hpp>
#include <expirykit/state/twin.hpp>
#include <expirykit/triage/crash_triage.hpp>

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using resp::Argv;

namespace {
/// Sends `cmds` to `s` until the connection breaks (the server died).
void send_until_dead(process::Server& s, const std::vector<Argv>& cmds) {
  auto c = s.client();
  try {
    for (const auto& a : cmds) c.call(a);
  } catch (const resp::ConnectionError&) {
  }
}
}  // namespace

TEST_CASE_METHOD(catch2::ServerFixture, "Crash triage: DEBUG SEGFAULT among other commands shrinks to itself, replay verified",
                 "[triage]") {
  require_debug("DEBUG SEGFAULT");
  auto s = fresh_server({}, "a server to crash");
  const std::vector<Argv> cmds = {{"HSET", "h", "a", "1"}, {"SET", "k", "v"},       {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"},
                                  {"INCR", "n"},           {"DEBUG", "SEGFAULT"}, {"GET", "k"}};
  send_until_dead(*s, cmds);
  const auto t = triage::triage_crash(s->options(), cmds, s->log_path());
  INFO(t.message());
  REQUIRE(t.original.found);
  CHECK(t.original.signal == SIGSEGV);
  CHECK(t.reproducible);
  CHECK(t.minimal == std::vector<Argv>{{"DEBUG", "SEGFAULT"}});
  CHECK(t.script == "DEBUG SEGFAULT\n");
  CHECK(t.verified);  // the server's own CLI crashed a fresh server with the script
  CHECK(t.reproduced.argv == std::vector<std::string>{"DEBUG", "SEGFAULT"});  // hide-user-data-from-log no
  const std::string first = t.message().substr(0, t.message().find('\n'));
  CHECK_THAT(first, ContainsSubstring("SIGSEGV (signal 11)") && ContainsSubstring("crashing command: DEBUG SEGFAULT"));
  CHECK(t.attempts >= 2);
}

TEST_CASE_METHOD(catch2::ServerFixture, "Crash triage: a crash that needs state keeps the commands that make it (Valkey 9.1.2)",
                 "[triage]") {
  const auto* k = known_issues::find("valkey-empty-hash-hrandfield-crash");
  REQUIRE(k);
  if (!k->covers(identity())) SKIP("not supported by " << identity().to_string() << ": it has no HRANDFIELD crash to triage");
  auto s = fresh_server({}, "a server to crash");
  // Noise around the six commands the crash needs (the known issue's replay).
  const std::vector<Argv> cmds = {
      {"SET", "x", "1"},          {"DEBUG", "SET-ACTIVE-EXPIRE", "0"}, {"HSET", "other", "f", "v"}, {"HSET", "h", "a", "1"},
      {"INCR", "n"},              {"HPEXPIRE", "h", "1", "FIELDS", "1", "a"}, {"DEBUG", "SLEEP", "0.01"},
      {"HLEN", "other"},          {"COPY", "h", "h2"},                 {"GET", "x"},                {"HRANDFIELD", "h2"}};
  send_until_dead(*s, cmds);
  const auto t = triage::triage_crash(s->options(), cmds, s->log_path());
  INFO(t.message());
  REQUIRE(t.reproducible);
  CHECK(t.reproduced.command() == "HRANDFIELD");
  CHECK(t.reproduced.argv == std::vector<std::string>{"HRANDFIELD", "h2"});
  REQUIRE_FALSE(t.minimal.empty());
  CHECK(t.minimal.back() == Argv{"HRANDFIELD", "h2"});
  // What the crash needs stays (HPEXPIRE and its sleep, COPY); the noise goes.
  CHECK(t.minimal.size() <= 5);
  CHECK(std::find(t.minimal.begin(), t.minimal.end(), Argv{"COPY", "h", "h2"}) != t.minimal.end());
  CHECK(std::find(t.minimal.begin(), t.minimal.end(), Argv{"INCR", "n"}) == t.minimal.end());
  CHECK(t.verified);
}

TEST_CASE_METHOD(catch2::ServerFixture, "Crash triage in a property: no shrink on the dead server; the FAIL names the crash",
                 "[triage]") {
  require_debug("DEBUG SEGFAULT");
  auto d = model::Dialect::for_server(server::to_string(identity().flavor), identity().version.major, identity().version.minor);
  if (!d) SKIP("not supported by " << identity().to_string() << ": no model dialect");
  auto s = fresh_server({}, "a server to crash");
  auto c = s->client();
  state::Twin twin(c, *d);
  int cases = 0;
  property::PropertyBudget budget{20, 10};
  budget.sent = [&twin] { return twin.sent(); };
  const auto r = property::check_cases("a planted crash", budget, [&] {
    ++cases;
    twin.flushall();
    property::SequenceResult out;
    const int crash_at = *rc::gen::inRange(2, 6);
    for (int i = 0; i < 6; ++i) {
      twin.run(i == crash_at ? Argv{"DEBUG", "SEGFAULT"} : Argv{"HSET", "h" + std::to_string(i), "f", "v"});
      ++out.steps;
    }
    return out;
  });
  INFO(r.report);
  CHECK_FALSE(r.ok);
  CHECK(cases == 1);  // nothing ran on the dead server after the crash
  REQUIRE(r.crash);
  CHECK(r.crash->minimal == std::vector<Argv>{{"DEBUG", "SEGFAULT"}});
  CHECK(r.crash->verified);
  CHECK_THAT(r.summary, ContainsSubstring("server crashed: SIGSEGV") && ContainsSubstring("crashing command: DEBUG SEGFAULT"));
}
