// state/stale_templates.hpp on the live server: `RESTORE key 0 @stale:<fields>` gives a hash of
// logically expired, unreclaimed fields with no wait, the model agreeing on every read; making a
// template leaves nothing a checked sequence observes (keys, events, counters); the payload is
// made once per field list; a reference with an empty field name is refused.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/property/sequence.hpp>
#include <expirykit/state/stale_templates.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;
using expirykit::resp::Reply;

TEST_CASE_METHOD(TwinFixture, "RESTORE @stale: gives logically expired fields at once, as the model says", "[state][stale]") {
  observe_events();
  observe_counters();
  both("DEBUG SET-ACTIVE-EXPIRE 0");
  const auto t0 = std::chrono::steady_clock::now();
  both("RESTORE h 0 @stale:a,c");
  both("HSET h b 1");
  // HLEN counts the stored fields, logically expired ones included; reads hide them.
  CHECK(both("HLEN h") == Reply::integer(3));
  CHECK(both("HPEXPIRETIME h FIELDS 3 a b c") == Reply::ints({-2, -1, -2}));
  CHECK(both("HGETALL h") == Reply::strings({"b", "1"}));
  CHECK(both("HEXISTS h a") == Reply::integer(0));
  both("HSET h a 2");  // overwriting a logically expired field (the dialect's rule)
  check_same_state();
  check_counters();
  // The second key with the same fields reuses the payload: no new template, no wait.
  both("RESTORE h2 0 @stale:a,c");
  CHECK(both("HLEN h2") == Reply::integer(2));
  check_same_state();
  // The server's database 9, where templates are made, is left empty.
  auto& side = twin().side();
  CHECK(side.pipeline({{"SELECT", "9"}, {"DBSIZE"}, {"SELECT", "0"}})[1] == Reply::integer(0));
  UNSCOPED_INFO("two RESTOREs of stale templates took "
                << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()
                << " ms");
  both("DEBUG SET-ACTIVE-EXPIRE 1");
}

TEST_CASE_METHOD(TwinFixture, "Making stale templates is outside a checked sequence: no event, counter or key difference", "[state][stale]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  // Three new field lists: made by run_sequence before its FLUSHALL and counter base.
  const std::vector<Argv> cmds{{"DEBUG", "SET-ACTIVE-EXPIRE", "0"},
                               {"RESTORE", "h1", "0", "@stale:a"},
                               {"RESTORE", "h2", "0", "@stale:a,b,c,d"},
                               {"HSET", "h2", "e", "1"},
                               {"RESTORE", "h3", "0", "@stale:b,d"},
                               {"HGETALL", "h3"},
                               {"HLEN", "h3"},
                               {"HSETNX", "h1", "a", "x"}};
  // Active expiry stays off until the state is compared: switched on inside the sequence, it
  // reclaims h2's and h3's fields whenever its cycle comes, before or after the comparison (seen
  // in CI on a loaded machine: "h2: HLEN server 1, model 5" and hexpired events the model does
  // not expect).
  for (const bool pipelined : {true, false}) {
    CAPTURE(pipelined);
    expirykit::property::SequenceOptions o;
    o.pipelined = pipelined;
    const auto r = expirykit::property::run_sequence(t, cmds, o);
    INFO(r.report);
    CHECK(r.ok);
    t.set_active_expire(true);
  }
}

TEST_CASE("A @stale: reference names its fields; an empty name is refused", "[state][stale]") {
  using expirykit::state::stale_fields;
  CHECK(stale_fields({"RESTORE", "k", "0", "@stale:a,bb,c"}) == std::vector<std::string>{"a", "bb", "c"});
  CHECK_FALSE(stale_fields({"RESTORE", "k", "0", "@dump:x"}));
  CHECK_FALSE(stale_fields({"HSET", "k", "0", "@stale:a"}));
  CHECK_THROWS_AS(stale_fields({"RESTORE", "k", "0", "@stale:a,,b"}), std::invalid_argument);
  CHECK_THROWS_AS(stale_fields({"RESTORE", "k", "0", "@stale:"}), std::invalid_argument);
}
