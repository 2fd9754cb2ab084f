// Twin::use_protocol (state/twin.hpp): the twin's connection on RESP3, each step's reply compared
// with the model in its RESP2 form and its RESP3 form checked (model/resp3.hpp), on the live
// server; and the main property and the durability property on RESP3 for a few seconds each. Needs a build with hiredis 1.x
// (build-asan/ in ci/test); with hiredis 0.14 use_protocol(3) throws and the rest SKIPs.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <stdexcept>
#include <string>

#include <expirykit/catch2/replica_fixture.hpp>
#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/property/durable_property.hpp>
#include <expirykit/property/property.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;
using expirykit::resp::Resp3Type;

TEST_CASE_METHOD(TwinFixture, "use_protocol(3): replies checked in both forms, HELLO lines in the script", "[state][resp3]") {
  auto& t = twin();
  CHECK_THROWS_AS(t.use_protocol(1), std::invalid_argument);
  if constexpr (!expirykit::resp::resp3_supported) {
    CHECK_THROWS_AS(t.use_protocol(3), std::logic_error);
    SKIP("RESP3 needs a build with hiredis 1.x");
  }
  t.flushall();
  t.use_protocol(3);
  REQUIRE(t.run("HSET h a 1 b 2 c 3").ok);
  REQUIRE(t.run("HPEXPIRE h 100000 FIELDS 1 a").ok);
  const Step all = t.run("HGETALL h");
  CHECK(all.ok);
  CHECK(all.protocol == 3);
  REQUIRE(all.server_resp3);
  CHECK(all.server_resp3->resp3_type() == Resp3Type::map);
  CHECK(all.server.resp3_type() == Resp3Type::plain);  // the RESP2 form the model is compared with
  const Step pairs = t.run("HRANDFIELD h -4 WITHVALUES");
  CHECK(pairs.ok);
  REQUIRE(pairs.server_resp3);
  CHECK(pairs.server_resp3->size() == 4);
  CHECK(pairs.server_resp3->elements()[0].size() == 2);  // [field, value] pairs
  CHECK(pairs.server.size() == 8);
  // Pipelined runs, a transaction and the kit's sequence script: every step agrees.
  const std::vector<Argv> cmds = {{"HGETEX", "h", "PX", "50000", "FIELDS", "2", "b", "zz"},
                                  {"MULTI"}, {"HGETALL", "h"}, {"HRANDFIELD", "h", "2", "WITHVALUES"}, {"HTTL", "h", "FIELDS", "1", "a"}, {"EXEC"},
                                  expirykit::model::sequence_eval({{"HGETALL", "h"}, {"HGET", "h", "zz"}}),
                                  {"HGETDEL", "h", "FIELDS", "1", "c"}, {"HSCAN", "h", "0"}};
  for (const auto& s : t.run_all(cmds)) {
    INFO(s.describe());
    CHECK(s.ok);
  }
  CHECK(t.compare_state().empty());
  t.use_protocol(2);
  const Step back = t.run("HGETALL h");
  CHECK(back.ok);
  CHECK_FALSE(back.server_resp3);
  const std::string script = t.script();
  CHECK_THAT(script, Catch::Matchers::ContainsSubstring("HELLO 3\nHSET h a 1 b 2 c 3\n"));
  CHECK_THAT(script, Catch::Matchers::ContainsSubstring("HELLO 2\nHGETALL h\n"));
  CHECK_THAT(script, Catch::Matchers::ContainsSubstring(R"(#   server (RESP3): {)"));
}

TEST_CASE_METHOD(TwinFixture, "The main property on RESP3 only: the server and the model agree", "[state][resp3][property]") {
  if constexpr (!expirykit::resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  // Every sequence on RESP3 (EXPIRYKIT_PROTOCOL unset draws RESP2 or RESP3 per sequence).
  twin().use_protocol(3);
  expirykit::property::PropertyBudget budget(30, 30, 4, current_test_name());
  auto& t = twin();
  int resp3_steps = 0;
  const auto sequence_gen = expirykit::gen::property_sequence(t.dialect(), budget.max_len);
  const auto res = expirykit::property::check_cases("RESP3 sequences", budget, [&] {
    expirykit::property::SequenceOptions opt;
    opt.protocol = 3;
    const auto cmds = *sequence_gen;
    auto out = expirykit::property::run_sequence(t, cmds, opt);
    for (const auto& s : t.history()) resp3_steps += s.protocol == 3;
    return out;
  });
  INFO(res.report);
  CHECK(res.ok);
  CHECK(resp3_steps > 0);
}

TEST_CASE_METHOD(TwinFixture, "Tracking in band on RESP3: invalidations as pushes on the tracked connection", "[state][resp3][tracking]") {
  if constexpr (!expirykit::resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  auto c = target().client();
  auto other = target().client();
  CHECK_THROWS_AS(expirykit::observe::Tracking(c, {.in_band = true}), std::logic_error);  // c still on RESP2
  c.hello(3);
  {
    expirykit::observe::Tracking trk(c, {.in_band = true});
    CHECK(trk.in_band());
    CHECK(trk.redirect_id() == 0);
    CHECK(c("GET", "k") == expirykit::resp::Reply::nil());  // k tracked
    other.pipeline({{"SET", "k", "1"}, trk.marker("m1")});     // the marker from another connection
    CHECK(trk.read_until("m1") == expirykit::model::Invalidations{"k"});
    CHECK(c("GET", "k") == expirykit::resp::Reply::string("1"));
    c.pipeline({{"SET", "k", "2"}, trk.marker("m2")});         // its own write, its own marker
    CHECK(trk.read_until("m2") == expirykit::model::Invalidations{"k"});
    c.pipeline({{"FLUSHALL"}, trk.marker("m3")});
    CHECK(trk.read_until("m3") == expirykit::model::Invalidations{std::nullopt});
  }
  CHECK(c("PING") == expirykit::resp::Reply::status("PONG"));  // unsubscribed, tracking off: usable
}

TEST_CASE_METHOD(TwinFixture, "The twin's tracking follows use_protocol: steps and background on RESP3", "[state][resp3][tracking]") {
  if constexpr (!expirykit::resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  auto& t = twin();
  t.observe_tracking();
  t.use_protocol(3);
  t.flushall();
  REQUIRE(t.run("HSET h a 1").ok);
  REQUIRE(t.run("HGET h a").ok);  // h tracked
  const Step w = t.run("HSET h a 2");
  CHECK(w.ok);
  REQUIRE(w.server_invalidations);
  CHECK(*w.server_invalidations == expirykit::model::Invalidations{"h"});
  REQUIRE(t.run("HSET g x 1").ok);
  REQUIRE(t.run("HGET g x").ok);  // g tracked
  // A write behind the twin's back: the push arrives on the twin's connection, outside any step.
  auto other = target().client();
  CHECK(other("HSET", "g", "x", "3") == expirykit::resp::Reply::integer(0));
  const auto bg = t.compare_background_events();
  REQUIRE(bg.size() == 1);
  CHECK(bg[0] == "background invalidations: server [g], model []");
  // Back on RESP2: REDIRECT again, and the model tracks nothing until read again.
  t.use_protocol(2);
  REQUIRE(t.run("HGET h a").ok);
  const Step w2 = t.run("HDEL h a");
  CHECK(w2.ok);
  REQUIRE(w2.server_invalidations);
  CHECK(*w2.server_invalidations == expirykit::model::Invalidations{"h"});
}

TEST_CASE_METHOD(ReplicaFixture, "The durability property on RESP3 only: every copy agrees with the model",
                 "[state][resp3][property][durability]") {
  if constexpr (!expirykit::resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  require_field_ttl();
  const auto dialect = twin().dialect();
  expirykit::process::ReplicaSetOptions o;
  o.primary.persistence = expirykit::process::Persistence::aof;
  o.primary.set("hz", "100");
  auto set = fresh_replica_set(o);
  expirykit::process::Server loader;
  expirykit::resp::Client c = set->primary().client();
  expirykit::state::Twin::Options topt;
  topt.server = identity();
  expirykit::state::Twin t(c, dialect, topt);
  expirykit::property::Copies copies{*set, loader};
  expirykit::property::DurableOptions opt;
  opt.server = identity();
  opt.protocols = {3};
  const auto r = expirykit::property::check_durable_sequences(
      t, copies, expirykit::property::PropertyBudget{6, 20, 4, current_test_name()}, opt);
  INFO(r.report);
  CHECK(r.ok);
  int resp3_steps = 0;
  for (const auto& s : t.history()) resp3_steps += s.protocol == 3;
  CHECK(resp3_steps > 0);
  CHECK(c.protocol() == 3);
}
