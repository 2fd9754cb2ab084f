// state::Twin::run_all (state/detail/run_all.hpp): the commands of a sequence sent in pipelined
// runs give the same verdicts as run() one by one, on the live server: the same number of steps,
// every step agreeing, the same model state as the server's after the sequence; most commands
// travel in runs; a command the model does not cover ends its run; a planted model bug fails
// the very step run() fails, with the steps after it left unchecked.
#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/gen/commands.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;

TEST_CASE_METHOD(TwinFixture, "run_all: pipelined runs give run()'s verdicts on generated sequences", "[state][run_all]") {
  auto& t = twin();
  t.observe_events();
  t.observe_tracking();
  t.observe_counters();
  const auto g = expirykit::gen::property_sequence(t.dialect(), 40);
  rc::Random random(20261204);
  std::size_t commands = 0;
  for (int i = 0; i < 60; ++i) {
    const std::vector<Argv> cmds = g(random.split(), 100).value();
    commands += cmds.size();
    for (const bool pipelined : {false, true}) {
      t.flushall();
      t.observe_counters();
      std::vector<expirykit::state::Step> steps;
      if (pipelined) {
        steps = t.run_all(cmds);
      } else {
        for (const auto& c : cmds) steps.push_back(t.run(c));
      }
      CAPTURE(i, pipelined, t.script());
      REQUIRE(steps.size() == cmds.size());
      for (const auto& s : steps) {
        INFO(s.describe());
        CHECK(s.ok);
      }
      CHECK(t.compare_background_events().empty());
      CHECK(t.compare_state().empty());
      CHECK(t.compare_counters().empty());
    }
  }
  const auto& rs = t.run_stats();
  // Most commands go in runs of several (the stale set-up's DEBUG commands alone).
  CHECK(rs.run_commands + rs.alone == commands);
  CHECK(rs.run_commands > commands / 2);
  CHECK(rs.runs < rs.run_commands / 3);
}

TEST_CASE_METHOD(TwinFixture, "run_all: a command outside the model ends its run; its keys are re-read", "[state][run_all]") {
  auto& t = twin();
  t.flushall();
  // OBJECT FREQ is not modelled: the server answers, the keys it names are read back into the
  // model before the next command (HLEN) is checked.
  const auto steps = t.run_all({{"HSET", "h", "a", "1", "b", "2"},
                                {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"},
                                {"OBJECT", "FREQ", "h"},
                                {"HLEN", "h"},
                                {"HTTL", "h", "FIELDS", "2", "a", "b"}});
  REQUIRE(steps.size() == 5);
  CHECK_FALSE(steps[2].unmodelled.empty());
  for (const auto& s : steps) {
    INFO(s.describe());
    CHECK(s.ok);
  }
  CHECK(t.compare_state().empty());
  // HSET and HPEXPIRE in one run; OBJECT FREQ closes it; HLEN and HTTL in the next.
  CHECK(t.run_stats().runs == 2);
  CHECK(t.run_stats().run_commands == 5);
}

TEST_CASE_METHOD(TwinFixture, "run_all: a planted model bug fails the step run() fails, and checking stops there",
                 "[state][run_all]") {
  const auto& id = identity();
  auto o = twin().options();
  o.mutate_model_reply = [](const Argv& a, Reply& r) {  // the bug: HLEN one too many
    if (expirykit::model::upper(a[0]) == "HLEN" && r.is_integer()) r = Reply::integer(r.as_integer() + 1);
  };
  Twin bad(client(), twin().dialect(), o);
  bad.flushall();
  const std::vector<Argv> cmds = {{"HSET", "h", "a", "1"}, {"HGET", "h", "a"}, {"HLEN", "h"}, {"HSET", "h", "b", "2"}, {"HLEN", "h"}};
  const auto steps = bad.run_all(cmds);
  REQUIRE(steps.size() == 3);  // the first failing step, no later one
  CHECK(steps[0].ok);
  CHECK(steps[1].ok);
  CHECK_FALSE(steps[2].ok);
  CHECK(steps[2].server == Reply::integer(1));
  CHECK(steps[2].model == Reply::integer(2));
  // Without stop_at_first every step is checked; the second HLEN fails too.
  bad.flushall();
  const auto all = bad.run_all(cmds, false);
  REQUIRE(all.size() == 5);
  CHECK_FALSE(all[4].ok);
  CHECK(all[3].ok);
  (void)id;
}

TEST_CASE_METHOD(TwinFixture, "run_all: a transaction travels whole in a run, with run()'s steps", "[state][run_all]") {
  // MULTI, its queued commands (one refused for its arity in the second block: EXECABORT) and
  // EXEC or DISCARD, between ordinary commands: one run, the same steps as run() gives.
  const std::vector<Argv> cmds = {{"HSET", "h", "a", "1", "b", "2"},
                                  {"MULTI"},
                                  {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"},
                                  {"HINCRBY", "h", "b", "5"},
                                  {"HPTTL", "h", "FIELDS", "1", "a"},
                                  {"EXEC"},
                                  {"HLEN", "h"},
                                  {"MULTI"},
                                  {"HSET", "h", "c"},
                                  {"HDEL", "h", "b"},
                                  {"EXEC"},
                                  {"MULTI"},
                                  {"HDEL", "h", "a"},
                                  {"DISCARD"},
                                  {"EXEC"},
                                  {"HGETALL", "h"}};
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  std::vector<std::vector<expirykit::state::Step>> both;
  for (const bool pipelined : {false, true}) {
    t.flushall();
    t.observe_counters();
    const auto before = t.run_stats();
    std::vector<expirykit::state::Step> steps;
    if (pipelined) {
      steps = t.run_all(cmds);
      CHECK(t.run_stats().runs - before.runs == 1);
      CHECK(t.run_stats().alone == before.alone);
    } else {
      for (const auto& c : cmds) steps.push_back(t.run(c));
    }
    CAPTURE(pipelined, t.script());
    REQUIRE(steps.size() == cmds.size());
    for (const auto& s : steps) {
      INFO(s.describe());
      CHECK(s.ok);
    }
    CHECK_FALSE(t.in_transaction());
    CHECK(t.compare_state().empty());
    CHECK(t.compare_counters().empty());
    both.push_back(steps);
  }
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    INFO(i);
    CHECK(both[0][i].server == both[1][i].server);
  }
  CHECK(both[1][5].server.is_array());
  CHECK(both[1][10].server.is_error());  // EXECABORT
  CHECK(both[1][14].server.is_error());  // EXEC without MULTI
  // The EXEC's window opens at its MULTI.
  CHECK(both[1][5].before_ms == both[1][1].before_ms);
}

TEST_CASE_METHOD(TwinFixture, "run_all: a transaction whose EXEC is missing goes alone and is queued one by one",
                 "[state][run_all]") {
  auto& t = twin();
  t.flushall();
  const auto before = t.run_stats();
  const auto steps = t.run_all({{"HSET", "h", "a", "1"}, {"MULTI"}, {"HGET", "h", "a"}, {"HLEN", "h"}});
  REQUIRE(steps.size() == 4);
  for (const auto& s : steps) {
    INFO(s.describe());
    CHECK(s.ok);
  }
  CHECK(steps[3].server == Reply::status("QUEUED"));
  CHECK(t.in_transaction());
  CHECK(t.run_stats().alone - before.alone == 4);  // a run ends before the MULTI: HSET goes alone too
  const auto exec = t.run(Argv{"EXEC"});
  INFO(exec.describe());
  CHECK(exec.ok);
  CHECK(exec.server == Reply::array({Reply::string("1"), Reply::integer(1)}));
}
