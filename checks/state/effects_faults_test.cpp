// The twin's effect observations catch planted faults (live: the provisioned default or
// EXPIRYKIT_SERVER). For each observation (keyspace events, INFO counters, OBJECT ENCODING,
// CLIENT TRACKING invalidations, the allowed-reply rule of HRANDFIELD) one test plants one wrong
// prediction in the model side and checks that the comparison reports it, and runs the same
// script unplanted and checks that it passes: each test can fail both ways.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/state/twin.hpp>

#include "../common/text.hpp"

using namespace expirykit;
using catch2::ServerFixture;
using catch2::TwinFixture;
using model::Dialect;
using resp::Argv;
using resp::Reply;
using state::Step;
using state::Twin;

namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }


/// A ServerFixture that builds twins with test hooks (state::Twin::Options) for its server.
class Faults : public ServerFixture {
 protected:
  Dialect dialect_or_skip() {
    const auto& id = identity();
    auto d = Dialect::for_server(server::to_string(id.flavor), id.version.major, id.version.minor);
    if (!d) SKIP("not supported by " << id.to_string() << ": no model dialect (no hash field TTLs)");
    return *d;
  }
  /// A twin of the shared server on client(), with `o` and this server's known issues; the
  /// server is flushed first (each twin starts from an empty keyspace).
  std::unique_ptr<Twin> make_twin(Twin::Options o = {}) {
    const Dialect d = dialect_or_skip();
    REQUIRE(client()("FLUSHALL", "SYNC") == Reply::ok());
    o.server = identity();
    return std::make_unique<Twin>(client(), d, o);
  }
};

bool is_hset(const Argv& a) { return !a.empty() && model::upper(a[0]) == "HSET"; }

}  // namespace

TEST_CASE_METHOD(Faults, "Effects fault: a wrong keyspace event of HSET fails the step and names both event lists",
                 "[state][effects][faults]") {
  require_field_ttl();
  // Unplanted: the same script passes and the subscriber saw exactly hset@h.
  {
    auto t = make_twin();
    t->observe_events();
    const Step s = t->run("HSET h a 1 b 2");
    INFO(s.describe());
    CHECK(s.ok);
    CHECK(s.events_diff.empty());
    REQUIRE(s.server_events.has_value());
    CHECK(model::to_string(s.server_events->keyevent) == "[hset@h]");
    CHECK(model::to_string(s.server_events->keyspace) == "[hset@h]");
  }
  SECTION("dropped") {
    Twin::Options o;
    o.mutate_model_events = [](const Argv& a, std::vector<model::Event>& es) {
      if (is_hset(a) && !es.empty()) es.erase(es.begin());
    };
    auto t = make_twin(o);
    t->observe_events();
    const Step s = t->run("HSET h a 1 b 2");
    const std::string msg = s.describe();
    INFO(msg);
    CHECK_FALSE(s.ok);
    CHECK(s.server == Reply::integer(2));
    CHECK(model::same_reply(s.argv, s.model, s.server));  // only the events were planted
    CHECK(s.known_issue.empty());
    CHECK(contains(s.events_diff, "__keyspace__ events: server [hset@h], model []"));
    CHECK(contains(s.events_diff, "__keyevent__ events: server [hset@h], model []"));
    CHECK(contains(msg, "events: server [hset@h], model []"));
    CHECK(contains(msg, "EVENTS DIFFER"));
  }
  SECTION("renamed") {
    Twin::Options o;
    o.mutate_model_events = [](const Argv& a, std::vector<model::Event>& es) {
      if (is_hset(a) && !es.empty()) es.front().name = "hdel";
    };
    auto t = make_twin(o);
    t->observe_events();
    const Step s = t->run("HSET h a 1 b 2");
    const std::string msg = s.describe();
    INFO(msg);
    CHECK_FALSE(s.ok);
    CHECK(model::same_reply(s.argv, s.model, s.server));
    CHECK(contains(s.events_diff, "__keyevent__ events: server [hset@h], model [hdel@h]"));
    CHECK(contains(msg, "events: server [hset@h], model [hdel@h]"));
  }
}

TEST_CASE_METHOD(Faults, "Effects fault: one expired field too many in the model's counters is reported by compare_counters()",
                 "[state][effects][faults]") {
  require_field_ttl();
  auto t = make_twin();
  t->observe_counters();
  for (const char* line : {"HSET h a 1 b 2", "HEXPIRE h 0 FIELDS 1 a"}) {
    const Step s = t->run(line);
    INFO(s.describe());
    REQUIRE(s.ok);
  }
  CHECK(t->history().back().server == Reply::ints({2}));
  // Unplanted: INFO agrees with the model (one expired field).
  CHECK(t->model().counters().expired_fields == 1);
  const auto clean = t->compare_counters();
  INFO("unplanted:\n" << ekcheck::lines(clean));
  CHECK(clean.empty());
  // Planted: one more expired field than the server counted.
  ++t->model().counters().expired_fields;
  const auto diffs = t->compare_counters();
  INFO("planted:\n" << ekcheck::lines(diffs));
  REQUIRE(diffs.size() == 1);
  CHECK(contains(diffs[0], "INFO stats " + t->dialect().info_expired_fields_stat + ": server "));
  // "server N, model N+1"
  const auto at = diffs[0].rfind(": server ");
  REQUIRE(at != std::string::npos);
  const std::string tail = diffs[0].substr(at + 9);
  const long long server_n = std::stoll(tail);
  CHECK(contains(tail, ", model " + std::to_string(server_n + 1)));
}

TEST_CASE_METHOD(Faults, "Effects fault: a wrong encoding after a field TTL is reported by compare_state() as OBJECT ENCODING",
                 "[state][effects][faults]") {
  require_field_ttl();
  auto t = make_twin();
  for (const char* line : {"HSET h a 1 b 2", "HEXPIRE h 1000 FIELDS 1 a"}) {
    const Step s = t->run(line);
    INFO(s.describe());
    REQUIRE(s.ok);
  }
  const std::string ttl_enc = t->dialect().flavor == "valkey" ? "hashtable" : "listpackex";
  REQUIRE(t->model().raw("h"));
  CHECK(model::to_string(t->model().raw("h")->hash().encoding) == ttl_enc);
  CHECK(client()("OBJECT", "ENCODING", "h") == Reply::string(ttl_enc));
  // Unplanted: equal.
  const auto clean = t->compare_state();
  INFO("unplanted:\n" << ekcheck::lines(clean));
  CHECK(clean.empty());
  // Planted: the model forgets the conversion.
  t->model().raw("h")->hash().encoding = model::Encoding::listpack;
  const auto diffs = t->compare_state();
  INFO("planted:\n" << ekcheck::lines(diffs));
  REQUIRE(diffs.size() == 1);
  CHECK(contains(diffs[0], "h: OBJECT ENCODING server "));
  CHECK(contains(diffs[0], ttl_enc));
  CHECK(contains(diffs[0], "model listpack"));
}

TEST_CASE_METHOD(Faults, "Effects fault: a missing tracking invalidation fails the step", "[state][effects][faults]") {
  require_field_ttl();
  const std::vector<std::string> script = {"HSET h a 1", "HGET h a", "HSET h a 2"};
  {
    auto t = make_twin();
    t->observe_tracking();
    for (const auto& line : script) {
      const Step s = t->run(line);
      INFO(s.describe());
      CHECK(s.ok);
      CHECK(s.tracking_diff.empty());
    }
    const Step& last = t->history().back();
    REQUIRE(last.server_invalidations.has_value());
    CHECK(*last.server_invalidations == model::Invalidations{std::string("h")});
  }
  Twin::Options o;
  o.mutate_model_invalidations = [](const Argv&, model::Invalidations& inv) {
    if (!inv.empty()) inv.erase(inv.begin());
  };
  auto t = make_twin(o);
  t->observe_tracking();
  Step last;
  for (const auto& line : script) last = t->run(line);
  const std::string msg = last.describe();
  INFO(msg);
  CHECK(t->history()[0].ok);
  CHECK(t->history()[1].ok);
  CHECK_FALSE(last.ok);
  CHECK(model::same_reply(last.argv, last.model, last.server));
  CHECK(contains(last.tracking_diff, "invalidations: server [h], model []"));
  CHECK(contains(msg, "TRACKING DIFFERS"));
}

TEST_CASE_METHOD(TwinFixture, "Effects fault: an HRANDFIELD reply with a logically expired field is not allowed",
                 "[state][effects][faults]") {
  struct Form {
    std::string line;
    Reply fabricated;  ///< well-formed, but with the expired field a in it
    Reply valid;       ///< an allowed reply (live fields b=2 and c=3)
  };
  const std::vector<Form> forms = {
      {"HRANDFIELD k1", Reply::string("a"), Reply::string("c")},
      {"HRANDFIELD k2 2", Reply::strings({"b", "a"}), Reply::strings({"c", "b"})},
      {"HRANDFIELD k3 -3", Reply::strings({"b", "a", "c"}), Reply::strings({"b", "b", "b"})},
      {"HRANDFIELD k4 2 WITHVALUES", Reply::strings({"b", "2", "a", "1"}), Reply::strings({"c", "3", "b", "2"})},
      {"HRANDFIELD k5 -2 WITHVALUES", Reply::strings({"a", "1", "a", "1"}), Reply::strings({"c", "3", "c", "3"})},
  };
  for (const auto& f : forms) {
    const std::string key = f.line.substr(11, 2);
    both("HSET " + key + " a 1 b 2 c 3");
    expire_unreclaimed(key, {"a"});  // active expiry off from here on
    REQUIRE(client()("HLEN", key) == Reply::integer(3));
    const Step s = twin().run(f.line);
    INFO(s.describe());
    // Unplanted: the real server's reply passes, and so does another allowed reply.
    CHECK(s.ok);
    CHECK(model::same_reply(s.argv, s.model, s.server));
    CHECK(model::same_reply(s.argv, s.model, f.valid));
    // Planted: the same shape with the expired field in it.
    INFO("fabricated: " << f.fabricated.to_string());
    CHECK_FALSE(model::same_reply(s.argv, s.model, f.fabricated));
    CHECK_FALSE(state::replies_match(s.argv, s.model, f.fabricated, twin().options().time_tolerance_ms));
  }
  check_same_state();
  CHECK(twin().set_active_expire(true) == Reply::ok());
}
