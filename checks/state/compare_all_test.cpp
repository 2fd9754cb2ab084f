// The twin's per-sequence round trips (state/twin.hpp): compare_all() reports, in one round trip
// (two when a key TTL is due within its margin or the server holds keys the model lacks), what
// compare_background_events(), compare_state() and compare_counters() report one by one; and
// begin_sequence() sets the event flags and the counters' base with its FLUSHALL (FLUSHDB right
// after a compare_all() that saw keys in database 0 only). On the live
// server, with differences planted behind the twin's back over a connection of the test's own.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/keyspace_diff.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;

namespace {
std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& l : v) out += l + "\n";
  return out;
}
std::set<char> letters(const std::string& s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE_METHOD(TwinFixture, "compare_all: what the three compare_*() report, whichever way the state is read",
                 "[state][compare_all]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  // Without `soon` every model key's reads travel with TIME and KEYS *; with it (a key TTL due
  // within the 2 s margin) they wait for the TIME.
  for (const bool soon : {false, true}) {
    CAPTURE(soon);
    t.begin_sequence("KEA");
    std::vector<Argv> cmds = {{"HSET", "h", "a", "1", "b", "2"},
                              {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"},
                              {"SET", "s", "v", "EX", "100"}};
    if (soon) cmds.push_back({"SET", "soon", "v", "PX", "1500"});
    for (const auto& s : t.run_all(cmds)) {
      INFO(s.describe());
      REQUIRE(s.ok);
    }
    CHECK(lines(t.compare_all()).empty());

    // Behind the twin's back: a field more in h, a key only the server holds (read in a second
    // round trip), a changed value of s, and `soon` changed (when there): background events,
    // state and counters all differ.
    expirykit::resp::Client other(client().host(), client().port());
    REQUIRE(other("HSET", "h", "c", "3").is_integer());
    REQUIRE(other("SET", "only_server", "1").is_status());
    REQUIRE(other("SET", "s", "w", "KEEPTTL").is_status());
    if (soon) REQUIRE(other("SET", "soon", "w", "KEEPTTL").is_status());
    const auto all = t.compare_all();
    // The same server state read again, one way at a time (the background events were taken).
    const auto state = t.compare_state();
    const auto counters = t.compare_counters();
    CAPTURE(lines(all), lines(state), lines(counters));
    REQUIRE(all.size() > state.size() + counters.size());  // background lines first
    const std::vector<std::string> tail(all.end() - static_cast<std::ptrdiff_t>(state.size() + counters.size()), all.end());
    std::vector<std::string> want = state;
    want.insert(want.end(), counters.begin(), counters.end());
    CHECK(tail == want);
    for (std::size_t i = 0; i < all.size() - tail.size(); ++i) CHECK(all[i].rfind("background event", 0) == 0);
    auto has = [&](const std::string& part) {
      return std::any_of(all.begin(), all.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
    };
    CHECK(has("h: HLEN server (integer) 3, model 2"));
    CHECK(has("only_server: TYPE server"));
    CHECK(has("s: GET server"));
    CHECK(has("INFO keyspace keys"));
    CHECK(has("soon: GET server") == soon);
    CHECK(has("background event"));
    {
      // What the background comparison heard, beside its differences (Twin::last_background):
      // the planted writes' events on the server's side, none on the model's.
      const auto& heard = t.last_background();
      auto named = [](const std::vector<expirykit::model::Event>& v, const std::string& name, const std::string& key) {
        return std::any_of(v.begin(), v.end(), [&](const auto& e) { return e.name == name && e.key == key; });
      };
      CHECK(named(heard.server, "hset", "h"));
      CHECK(named(heard.server, "set", "only_server"));
      CHECK(heard.model.empty());
    }
  }
}

TEST_CASE_METHOD(TwinFixture, "compare_state: a key's deadline is compared to the millisecond, whichever way the state is read",
                 "[state][compare_all]") {
  // A key TTL one millisecond later than the model's, a key TTL the model lacks and one the server
  // dropped, planted behind the twin's back: compare_state() (keyspace_diff) and compare_all()
  // (keyspace_diff_pipelined, its early path and, with a key TTL due within the margin, its
  // late one) name each. Before, only the key TTL's presence was compared, and a pipelined run's
  // choice point whose only trace was a key TTL set in a transaction could settle one
  // millisecond early (main property, valkey-9.1: "PTTL s1 server 599746999, model 599746998").
  auto& t = twin();
  for (const bool soon : {false, true}) {
    CAPTURE(soon);
    t.begin_sequence("");
    std::vector<Argv> cmds = {{"SET", "s", "v", "EX", "100"}, {"SET", "p", "v"}, {"HSET", "h", "a", "1"}, {"EXPIRE", "h", "100"}};
    if (soon) cmds.push_back({"SET", "soon", "v", "PX", "1500"});
    for (const auto& s : t.run_all(cmds)) {
      INFO(s.describe());
      REQUIRE(s.ok);
    }
    REQUIRE(lines(t.compare_all()).empty());
    expirykit::resp::Client other(client().host(), client().port());
    const auto s_at = other("PEXPIRETIME", "s");
    const auto h_at = other("PEXPIRETIME", "h");
    REQUIRE(s_at.is_integer());
    REQUIRE(h_at.is_integer());
    REQUIRE(other("PEXPIREAT", "s", std::to_string(s_at.as_integer() + 1)).as_integer() == 1);
    REQUIRE(other("EXPIRE", "p", "100").as_integer() == 1);
    REQUIRE(other("PERSIST", "h").as_integer() == 1);
    const std::vector<std::string> want{
        "h: key PEXPIRETIME server (integer) -1, model " + std::to_string(h_at.as_integer()),
        "p: key PEXPIRETIME server " + other("PEXPIRETIME", "p").to_string() + ", model -1",
        "s: key PEXPIRETIME server (integer) " + std::to_string(s_at.as_integer() + 1) + ", model " +
            std::to_string(s_at.as_integer())};
    CHECK(t.compare_state() == want);
    CHECK(t.compare_all() == want);
    // Within a tolerance of 1 ms, the planted millisecond is no difference.
    expirykit::state::KeyspaceDiffOptions o;
    o.check_encoding = false;
    o.time_tolerance_ms = 1;
    CHECK(expirykit::state::keyspace_diff(other, t.model(), o).size() == 2);
  }
}

TEST_CASE_METHOD(TwinFixture, "begin_sequence: the event flags and the counters' base come with the FLUSHALL",
                 "[state][compare_all]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  // A key expired behind the twin's back moves expired_keys: the counters differ until a new base.
  expirykit::resp::Client other(client().host(), client().port());
  REQUIRE(other("SET", "x", "v", "PX", "1").is_status());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(other("GET", "x").is_nil());
  CHECK_FALSE(t.compare_counters().empty());

  t.begin_sequence("Kh");
  CHECK(t.event_flags() == "Kh");
  const auto flags = other("CONFIG", "GET", "notify-keyspace-events");
  REQUIRE(flags.is_array());
  REQUIRE(flags.size() == 2);
  CHECK(letters(flags[1].str()) == letters("Kh"));
  CHECK(t.compare_counters().empty());
  // The step's events are checked under the new flags (keyspace channel, hash class only).
  const auto s = t.run(Argv{"HSET", "h", "a", "1"});
  INFO(s.describe());
  CHECK(s.ok);
  REQUIRE(s.server_events);
  CHECK(s.server_events->keyevent.empty());
  CHECK(s.server_events->keyspace.size() == 1);
  CHECK(lines(t.compare_all()).empty());

  // Flags the server refuses: it throws, the flags stay as they were.
  CHECK_THROWS_AS(t.begin_sequence("Kq!"), std::runtime_error);
  CHECK(t.event_flags() == "Kh");
}

TEST_CASE_METHOD(TwinFixture, "keyspace_diff_pipelined: a key read early is judged at the TIME read, not at the estimate",
                 "[state][compare_all]") {
  // The model holds k until 100 ms before the server's now; the estimate is 3 s old (a stalled
  // machine), so k's reads go with TIME (its key TTL is past estimate + the 2 s margin). A server
  // that still holds k must be reported as such: judged at the estimate, TYPE and GET agree.
  require_field_ttl();
  REQUIRE(client()("FLUSHALL", "SYNC") == expirykit::resp::Reply::ok());
  REQUIRE(client()("SET", "k", "v", "PX", "100000").is_status());
  const int64_t now = expirykit::server::time_ms(client()("TIME"));
  expirykit::model::Keyspace ks;
  ks.put("k", expirykit::model::Entry{std::string("v"), now - 100});
  std::vector<expirykit::resp::Reply> first;
  const auto diffs = expirykit::state::keyspace_diff_pipelined(client(), ks, now - 3000, {}, {{"PING"}}, first);
  CAPTURE(lines(diffs));
  REQUIRE(first.size() == 1);
  CHECK(first[0].str() == "PONG");
  REQUIRE(diffs.size() == 1);
  CHECK(diffs[0] == "k: TYPE server string, model none");
  // The model holding k, with the server's deadline, at the TIME read: they agree. (The deadline
  // read back: the key's absolute expiry is compared to the millisecond, and SET ran before
  // `now` was read, a millisecond or more earlier on a slow build.)
  const auto k_at = client()("PEXPIRETIME", "k");
  REQUIRE(k_at.is_integer());
  ks.raw("k")->expire_ms = k_at.as_integer();
  CHECK(lines(expirykit::state::keyspace_diff_pipelined(client(), ks, now - 3000, {}, {}, first)).empty());
}

TEST_CASE_METHOD(TwinFixture, "load_sequence_function: asked once per connection, loaded again after a FUNCTION FLUSH around the twin",
                 "[state][compare_all]") {
  auto& t = twin();
  t.begin_sequence();
  const Argv fcall = expirykit::model::sequence_fcall({{"HSET", "h", "a", "1"}, {"HLEN", "h"}});
  for (const bool pipelined : {false, true}) {
    CAPTURE(pipelined);
    auto run = [&] { return pipelined ? t.run_all({fcall, {"HLEN", "h"}}).front() : t.run(fcall); };
    const auto s = run();
    INFO(s.describe());
    CHECK(s.ok);
    // Behind the twin's back: the library is gone; the FCALL that meets it fails, naming it.
    expirykit::resp::Client other(client().host(), client().port());
    REQUIRE(other("FUNCTION", "FLUSH", "SYNC").is_status());
    const auto missing = run();
    CHECK_FALSE(missing.ok);
    CHECK(missing.server.to_string().find("Function not found") != std::string::npos);
    // The next one loads it again (the twin forgot it had checked).
    const auto again = run();
    INFO(again.describe());
    CHECK(again.ok);
    t.begin_sequence();
  }
}

TEST_CASE_METHOD(TwinFixture, "compare_state and compare_all compare every database either side holds keys in",
                 "[state][compare_all]") {
  // A key MOVEd to db 1 is compared there (Twin::compare_other_dbs); a difference planted in db 1
  // and a key only the server holds in db 2 are reported with their database, by both paths; the
  // connection the read-backs use is back on db 0 afterwards.
  require_field_ttl();
  auto& t = twin();
  t.begin_sequence();
  for (const auto& s : t.run_all({{"HSET", "h", "a", "1", "b", "2"},
                                  {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"},
                                  {"MOVE", "h", "1"}})) {
    INFO(s.describe());
    REQUIRE(s.ok);
  }
  CHECK(lines(t.compare_state()).empty());
  CHECK(lines(t.compare_all()).empty());
  auto& c = client();
  REQUIRE(c("SELECT", "1") == expirykit::resp::Reply::ok());
  REQUIRE(c("HPEXPIRE", "h", "200000", "FIELDS", "1", "a").is_array());  // behind the twin's back
  REQUIRE(c("SELECT", "2") == expirykit::resp::Reply::ok());
  REQUIRE(c("SET", "only", "here") == expirykit::resp::Reply::ok());
  REQUIRE(c("SELECT", "0") == expirykit::resp::Reply::ok());
  for (const auto& diffs : {t.compare_state(), t.compare_all()}) {
    const std::string all = lines(diffs);
    INFO(all);
    CHECK(all.find("db1 h: HPEXPIRETIME") != std::string::npos);
    CHECK(all.find("db2 only: TYPE server string") != std::string::npos);
    CHECK(diffs.size() == 2);
  }
  CHECK(t.compare_state().size() == 2);
  // keyspace_diff_db with an estimate (one pipeline when it can, as compare_all() calls it) and
  // without (two round trips) report the same.
  for (const bool estimate : {true, false}) {
    CAPTURE(estimate);
    auto& side = t.side();
    const auto diffs = estimate ? expirykit::state::keyspace_diff_db(side, t.model(), 1, {}, expirykit::server::time_ms(side("TIME")))
                                : expirykit::state::keyspace_diff_db(side, t.model(), 1, {});
    const std::string all = lines(diffs);
    INFO(all);
    CHECK(diffs.size() == 1);
    CHECK(all.find("db1 h: HPEXPIRETIME") != std::string::npos);
    CHECK(side("DBSIZE") == expirykit::resp::Reply::integer(0));
  }
  CHECK(t.side()("DBSIZE") == expirykit::resp::Reply::integer(0));  // db 0 again: empty
  REQUIRE(c("FLUSHALL") == expirykit::resp::Reply::ok());
}

TEST_CASE_METHOD(TwinFixture, "compare_all compares other databases with the counters observed, and with a key TTL due soon there",
                 "[state][compare_all]") {
  // The counters' INFO keyspace is the one that names the databases holding keys; a key whose TTL
  // is due within 2 s makes the reads of its database wait for the TIME (keyspace_diff with
  // SELECT before and SELECT 0 after). A difference planted in db 1 is reported either way.
  require_field_ttl();
  auto& t = twin();
  auto& c = client();
  const auto plant = [&] {
    REQUIRE(c("SELECT", "1") == expirykit::resp::Reply::ok());
    REQUIRE(c("HPEXPIRE", "h", "200000", "FIELDS", "1", "a").is_array());  // behind the twin's back; no count changes
    REQUIRE(c("SELECT", "0") == expirykit::resp::Reply::ok());
  };
  for (const bool soon : {false, true}) {
    CAPTURE(soon);
    if (!soon) t.observe_counters();
    t.begin_sequence();
    std::vector<Argv> cmds = {{"HSET", "h", "a", "1", "b", "2"}, {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"}, {"MOVE", "h", "1"}};
    if (soon) {
      cmds.push_back({"SET", "soon", "v", "PX", "2000"});
      cmds.push_back({"MOVE", "soon", "1"});
    }
    for (const auto& s : t.run_all(cmds)) {
      INFO(s.describe());
      REQUIRE(s.ok);
    }
    CHECK(lines(t.compare_all()).empty());
    plant();
    const auto diffs = t.compare_all();
    const std::string all = lines(diffs);
    INFO(all);
    CHECK(all.find("db1 h: HPEXPIRETIME") != std::string::npos);
    CHECK(diffs.size() == 1);
    CHECK(t.side()("DBSIZE") == expirykit::resp::Reply::integer(0));  // db 0 again: empty
  }
  REQUIRE(c("FLUSHALL") == expirykit::resp::Reply::ok());
}

namespace {
long long calls_of(expirykit::resp::Client& c, const std::string& command) {
  const auto r = c("INFO", "commandstats");
  const std::string key = "cmdstat_" + command + ":calls=";
  const auto at = r.is_string() ? r.str().find(key) : std::string::npos;
  return at == std::string::npos ? 0 : std::stoll(r.str().substr(at + key.size()));
}
}  // namespace

TEST_CASE_METHOD(TwinFixture, "begin_sequence after compare_all: FLUSHDB when only database 0 held keys, an empty server always",
                 "[state][compare_all]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  expirykit::resp::Client other(client().host(), client().port());
  const auto flushes = [&] { return std::pair{calls_of(other, "flushdb"), calls_of(other, "flushall")}; };
  const auto dbsize_of = [&](int db) {
    REQUIRE(other("SELECT", db) == expirykit::resp::Reply::ok());
    const auto n = other("DBSIZE");
    REQUIRE(other("SELECT", 0) == expirykit::resp::Reply::ok());
    return n;
  };
  t.begin_sequence("KEA");

  // Database 0 only, as compare_all saw it: FLUSHDB, and the counters' base read after it.
  REQUIRE(t.run(Argv{"HSET", "h", "a", "1"}).ok);
  REQUIRE(lines(t.compare_all()).empty());
  auto before = flushes();
  t.begin_sequence("KEA");
  CHECK(flushes() == std::pair{before.first + 1, before.second});
  CHECK(dbsize_of(0) == expirykit::resp::Reply::integer(0));
  CHECK(t.run(Argv{"HSET", "h", "b", "2"}).ok);
  CHECK(lines(t.compare_all()).empty());

  // A key another client put in database 3 after compare_all: the INFO keyspace read with the
  // FLUSHDB lists it, FLUSHALL follows, the model and the server start empty and agree.
  REQUIRE(other("SELECT", 3) == expirykit::resp::Reply::ok());
  REQUIRE(other("SET", "stray", "v") == expirykit::resp::Reply::ok());
  REQUIRE(other("SELECT", 0) == expirykit::resp::Reply::ok());
  before = flushes();
  t.begin_sequence("KEA");
  CHECK(flushes() == std::pair{before.first + 1, before.second + 1});
  CHECK(dbsize_of(3) == expirykit::resp::Reply::integer(0));
  CHECK(t.run(Argv{"HSET", "h", "c", "3"}).ok);
  CHECK(lines(t.compare_all()).empty());

  // A key the sequence itself moved to database 1: compare_all saw it there, FLUSHALL.
  REQUIRE(t.run(Argv{"MOVE", "h", "1"}).ok);
  REQUIRE(lines(t.compare_all()).empty());
  before = flushes();
  t.begin_sequence("KEA");
  CHECK(flushes() == std::pair{before.first, before.second + 1});
  CHECK(dbsize_of(1) == expirykit::resp::Reply::integer(0));

  // flushall() right after compare_all (no counters' base read: an INFO keyspace of its own).
  REQUIRE(t.run(Argv{"HSET", "h", "e", "5"}).ok);
  REQUIRE(lines(t.compare_all()).empty());
  before = flushes();
  t.flushall();
  CHECK(flushes() == std::pair{before.first + 1, before.second});
  CHECK(dbsize_of(0) == expirykit::resp::Reply::integer(0));

  // No compare_all since the last flush: FLUSHALL, as flushall() has always sent.
  REQUIRE(t.run(Argv{"HSET", "h", "d", "4"}).ok);
  before = flushes();
  t.flushall();
  CHECK(flushes() == std::pair{before.first, before.second + 1});
  CHECK(t.compare_counters().empty());
}

TEST_CASE_METHOD(TwinFixture, "begin_sequence after compare_all on a server with save points: FLUSHALL, which also saves",
                 "[state][compare_all]") {
  // FLUSHALL writes an RDB when save points are set (and stops a save under way); FLUSHDB does
  // not: a restart after it would load the previous sequence's keys. The twin reads CONFIG GET
  // save / appendonly once per connection.
  expirykit::resp::Client other(client().host(), client().port());
  const auto saved = other("CONFIG", "GET", "save");
  REQUIRE(saved.is_array());
  REQUIRE(saved.size() == 2);
  REQUIRE(other("CONFIG", "SET", "save", "3600 1") == expirykit::resp::Reply::ok());
  auto& t = twin();
  t.begin_sequence();
  REQUIRE(t.run(Argv{"HSET", "h", "a", "1"}).ok);
  REQUIRE(lines(t.compare_all()).empty());
  const long long flushdb = calls_of(other, "flushdb"), flushall = calls_of(other, "flushall");
  t.begin_sequence();
  CHECK(calls_of(other, "flushdb") == flushdb);
  CHECK(calls_of(other, "flushall") == flushall + 1);
  REQUIRE(other("CONFIG", "SET", "save", saved[1].str()) == expirykit::resp::Reply::ok());
}

TEST_CASE_METHOD(TwinFixture, "compare_all_follows: compare_all's reads go with the last run and are judged after its checks",
                 "[state][compare_all]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  const std::vector<Argv> cmds = {{"HSET", "h", "a", "1", "b", "2"},
                                  {"HPEXPIREAT", "h", "4102444800000", "FIELDS", "1", "a"},
                                  {"SET", "s", "v", "PXAT", "4102444800000"},
                                  {"HGET", "h", "b"}};
  const auto ahead = [&] { return t.run_stats().compares_ahead; };
  // A step whose TIME window spans two milliseconds and that changed a deadline is a choice
  // point, and its run's check reads the server back (Twin::compare_state), which drops what was
  // sent ahead, as it must: used in every run without one (a loaded machine makes some).
  auto before = ahead();
  bool used = false;
  for (int i = 0; i < 20 && !used; ++i) {
    t.begin_sequence("KEA");
    before = ahead();
    const auto choices = t.run_stats().choice_points;
    t.compare_all_follows();
    for (const auto& s : t.run_all(cmds)) REQUIRE(s.ok);
    CHECK(lines(t.compare_all()).empty());
    if (t.run_stats().choice_points == choices) {
      CHECK(ahead() == before + 1);
      used = true;
    }
  }
  CHECK(used);

  // A command sent after the run: its reads would miss field c (and the HSET's event and
  // counters), so compare_all drops them and reads afresh.
  t.begin_sequence("KEA");
  before = ahead();
  t.compare_all_follows();
  for (const auto& s : t.run_all(cmds)) REQUIRE(s.ok);
  REQUIRE(t.run(Argv{"HSET", "h", "c", "3"}).ok);
  CHECK(lines(t.compare_all()).empty());
  CHECK(ahead() == before);

  // Without compare_all_follows() nothing goes ahead; a flush drops what did.
  t.begin_sequence("KEA");
  for (const auto& s : t.run_all(cmds)) REQUIRE(s.ok);
  CHECK(lines(t.compare_all()).empty());
  t.compare_all_follows();
  for (const auto& s : t.run_all(cmds)) REQUIRE(s.ok);
  t.begin_sequence("KEA");
  CHECK(t.run(Argv{"HSET", "h", "z", "1"}).ok);
  CHECK(lines(t.compare_all()).empty());
  CHECK(ahead() == before);
}

TEST_CASE_METHOD(TwinFixture, "run_all: the sleep set-up's keyless DEBUG commands keep compare_all sent ahead",
                 "[state][compare_all][run_all]") {
  // DEBUG SET-ACTIVE-EXPIRE and DEBUG SLEEP are outside the model but name no key and change no
  // counter (state/adopt.hpp: leaves_model_alone): nothing is read back for them and
  // compare_all() uses what went ahead. A run goes on past the first and ends after the sleep
  // (the next is laid out from the server's time after it). Field a expires during the sleep.
  require_debug("DEBUG SET-ACTIVE-EXPIRE, DEBUG SLEEP");
  require_field_ttl();
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  const std::vector<Argv> cmds = {{"DEBUG", "SET-ACTIVE-EXPIRE", "0"},
                                  {"HSET", "h", "a", "1", "b", "2"},
                                  {"HPEXPIRE", "h", "1", "FIELDS", "1", "a"},
                                  {"SET", "s1", "v"},
                                  {"DEBUG", "SLEEP", "0.002"},
                                  {"HGET", "h", "a"},
                                  {"HGETALL", "h"},
                                  {"HLEN", "h"}};
  // The first sight of each DEBUG command asks the server which keys it names (COMMAND GETKEYS
  // over the read-back connection, which drops what went ahead); a keyless one is remembered.
  t.begin_sequence("KEA");
  for (const auto& s : t.run_all(cmds)) REQUIRE(s.ok);
  bool used = false;
  for (int i = 0; i < 20 && !used; ++i) {
    t.begin_sequence("KEA");
    const auto before = t.run_stats();
    t.compare_all_follows();
    const auto steps = t.run_all(cmds);
    REQUIRE(steps.size() == cmds.size());
    for (const auto& s : steps) {
      INFO(s.describe());
      CHECK(s.ok);
    }
    CHECK(steps[5].server.is_nil());  // a expired during the sleep
    CHECK(t.run_stats().runs == before.runs + 2);
    CHECK(t.run_stats().alone == before.alone);
    CHECK(lines(t.compare_all()).empty());
    // A choice point (the 1 ms TTL's window spanning two milliseconds) reads the state back after
    // the run, which drops what went ahead, as it must.
    if (t.run_stats().choice_points == before.choice_points) {
      CHECK(t.run_stats().compares_ahead == before.compares_ahead + 1);
      used = true;
    }
  }
  CHECK(used);
  REQUIRE(client()("DEBUG", "SET-ACTIVE-EXPIRE", "1") == expirykit::resp::Reply::ok());
}

TEST_CASE("leaves_model_alone: DEBUG SET-ACTIVE-EXPIRE and DEBUG SLEEP, no other command", "[state][run_all]") {
  using expirykit::state::leaves_model_alone;
  CHECK(leaves_model_alone({"DEBUG", "SLEEP", "0.002"}));
  CHECK(leaves_model_alone({"debug", "set-active-expire", "0"}));
  CHECK_FALSE(leaves_model_alone({"DEBUG", "RELOAD"}));
  CHECK_FALSE(leaves_model_alone({"DEBUG", "SLEEP"}));
  CHECK_FALSE(leaves_model_alone({"TOUCH", "h"}));
}

TEST_CASE_METHOD(TwinFixture, "keyspace_diff_finish: keys planned from another model than the one judged are read again",
                 "[state][compare_all]") {
  using namespace expirykit::state;
  auto& t = twin();
  t.flushall();
  for (const auto& s : t.run_all({{"HSET", "h", "a", "1"}, {"SET", "s", "v"}, {"SET", "gone", "1"}})) REQUIRE(s.ok);
  const expirykit::model::Keyspace plan = t.model();
  // After the plan: h gains a field with a TTL, s becomes a hash, gone goes, n comes.
  for (const auto& s : t.run_all({{"HSET", "h", "b", "2"},
                                  {"HPEXPIRE", "h", "100000", "FIELDS", "1", "b"},
                                  {"DEL", "s", "gone"},
                                  {"HSET", "s", "f", "v"},
                                  {"SET", "n", "1"}}))
    REQUIRE(s.ok);
  expirykit::resp::Client side(client().host(), client().port());
  KeyspaceDiffOptions o;
  o.check_encoding = false;
  const auto judged = [&](const expirykit::model::Keyspace& against) {
    const int64_t estimate = expirykit::server::time_ms(side("TIME"));
    const DiffAhead a = keyspace_diff_send(side, plan, estimate, o, {{"PING"}});
    std::vector<expirykit::resp::Reply> first;
    auto diffs = keyspace_diff_finish(a, keyspace_diff_read(a), against, o, first);
    CHECK(first == std::vector<expirykit::resp::Reply>{expirykit::resp::Reply::status("PONG")});
    return diffs;
  };
  CHECK(lines(judged(t.model())).empty());
  // Judged against the plan itself, the server's changes show.
  const auto against_plan = lines(judged(plan));
  CHECK(against_plan.find("h: HGETALL server") != std::string::npos);
  CHECK(against_plan.find("s: TYPE server hash, model string") != std::string::npos);
  CHECK(against_plan.find("n: TYPE server string, model none") != std::string::npos);
  // And a difference the run did not make is found on a re-read key too.
  REQUIRE(client()("HSET", "h", "c", "3").is_integer());
  const auto planted = lines(judged(t.model()));
  CAPTURE(planted);
  CHECK(planted.find("h: HLEN server (integer) 3, model 2") != std::string::npos);
}

TEST_CASE_METHOD(TwinFixture, "flushall: a WATCH sent around the twin whose key changed does not keep the keyspace",
                 "[state][compare_all]") {
  auto& t = twin();
  t.flushall();
  REQUIRE(t.run(Argv{"SET", "w", "1"}).ok);
  // The flush's EXEC meets the changed key and runs nothing; the flush goes again.
  REQUIRE(t.client()("WATCH", "w") == expirykit::resp::Reply::ok());
  expirykit::resp::Client other(client().host(), client().port());
  REQUIRE(other("SET", "w", "2") == expirykit::resp::Reply::ok());
  t.flushall();
  CHECK(other("DBSIZE") == expirykit::resp::Reply::integer(0));
  CHECK(t.run(Argv{"HSET", "h", "a", "1"}).ok);
  CHECK(lines(t.compare_all()).empty());
}
