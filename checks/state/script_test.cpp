// Twin::script() (state/history.hpp) replays what the twin did: the twin's own switch of active
// expiry is in it (so a replay pauses where the twin did) and in sent() (a crash triage's
// replay), outside coverage(); the live server answers it.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>

#include <expirykit/catch2/twin_fixture.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;

TEST_CASE_METHOD(TwinFixture, "set_active_expire is a line of the script and of sent(), not of coverage()", "[state][script]") {
  auto& t = twin();
  t.flushall();
  REQUIRE(t.set_active_expire(false) == Reply::ok());
  REQUIRE(t.run("HSET h a 1").ok);
  REQUIRE(t.set_active_expire(true) == Reply::ok());
  const std::string script = t.script();
  CHECK_THAT(script, Catch::Matchers::StartsWith("DEBUG SET-ACTIVE-EXPIRE 0\n#   server: OK\n"));
  CHECK_THAT(script, Catch::Matchers::ContainsSubstring("HSET h a 1\n"));
  CHECK_THAT(script, Catch::Matchers::EndsWith("DEBUG SET-ACTIVE-EXPIRE 1\n#   server: OK\n#   model:  (unmodelled: the twin's own switch "
                                               "(Twin::set_active_expire): active expiry is the model's reclaim_model())\n"));
  const auto sent = t.sent();
  REQUIRE(sent.size() == 3);
  CHECK(sent.front() == Argv{"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
  CHECK(t.coverage().count("DEBUG") == 0);
  CHECK(t.history().back().after_ms >= t.history()[1].after_ms);  // its window: the TIME read with it
  // A refusal (not an OK) makes the step fail.
  CHECK(t.history().back().ok);
}
