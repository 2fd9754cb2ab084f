// The model is the specification: behaviours that are server defects are rows of
// known_issues/table.hpp, not Dialect facts. For each row the model can replay
// (KnownIssue::reproduce): the specified replies on the dialects, and the replies of the live
// server that has the defect once the row's defect is switched on (live values: valkey-cli /
// redis-cli against Valkey 9.1.2 and Redis 8.0.6 on loopback, DEBUG SET-ACTIVE-EXPIRE 0, fields
// given HPEXPIRE 1 and read after 10 ms). Also: numfields at the extremes, per dialect.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <climits>

#include <expirykit/known_issues/table.hpp>

#include "session.hpp"

using namespace ekcheck;
using expirykit::model::Defects;
namespace server = expirykit::server;
namespace known_issues = expirykit::known_issues;

namespace {
/// `d` with the defect of the row `id` on (the row must exist and be replayable).
Dialect with_row(Dialect d, const std::string& id) {
  const known_issues::KnownIssue* k = known_issues::find(id);
  REQUIRE(k);
  REQUIRE(k->reproduce.any());
  d.defects = k->reproduce;
  return d;
}
/// A session whose hash h has a live field b and a field a that expired 10 ms ago (unreclaimed).
Session expired_a(Dialect d) {
  Session s(std::move(d));
  s.run("HSET h a 1 b 2");
  s.run("HPEXPIRE h 1 FIELDS 1 a");
  s.advance(10);
  return s;
}
}  // namespace

TEST_CASE("Every Dialect factory is the specification: no defect switched on", "[model][known-issues]") {
  for (const auto& d : {Dialect::valkey_9_1(), Dialect::valkey_9_0(), Dialect::redis_8_0(), Dialect::redis_7_4()}) {
    CAPTURE(d.name);
    CHECK_FALSE(d.defects.any());
  }
  // Each replayable row switches on exactly its own defect, and no two rows share one.
  std::vector<Defects> seen;
  for (const auto& k : known_issues::table()) {
    if (!k.reproduce.any()) continue;
    CAPTURE(k.id);
    CHECK(!k.commands.empty());
    for (const auto& other : seen) CHECK_FALSE((other | k.reproduce) == other);
    seen.push_back(k.reproduce);
  }
  CHECK(seen.size() == 6);
}

TEST_CASE("COPY of logically expired fields: specification vs valkey-copy-skips-expired-fields", "[model][known-issues]") {
  SECTION("specification, both dialects: every stored field is copied with its deadline") {
    Session s = expired_a(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
    CAPTURE(s.d.name);
    s.run("HSET g a 1");
    s.run("HPEXPIRE g 1 FIELDS 1 a");
    s.advance(10);
    CHECK(s.run("COPY h h2") == I(1));
    CHECK(s.run("HLEN h2") == I(2));
    CHECK(s.run("COPY g g2") == I(1));
    CHECK(s.run("HLEN g2") == I(1));
    CHECK(s.ks.reclaim(s.now) == 4);  // active expiry takes a from h, h2, g and g2
    CHECK(s.run("EXISTS g g2") == I(0));
  }
  SECTION("the defect replays Valkey 9.1.2") {
    Session s = expired_a(with_row(Dialect::valkey_9_1(), "valkey-copy-skips-expired-fields"));
    s.run("HSET g a 1");
    s.run("HPEXPIRE g 1 FIELDS 1 a");
    s.advance(10);
    CHECK(s.run("COPY h h2") == I(1));
    CHECK(s.run("HLEN h2") == I(1));  // live 9.1.2: 1
    CHECK(s.run("COPY g g2") == I(1));
    CHECK(s.run("EXISTS g2") == I(1));  // live 9.1.2: an empty hash that exists
    CHECK(s.run("HLEN g2") == I(0));
    s.ks.reclaim(s.now);
    CHECK(s.run("EXISTS g g2") == I(1));  // live 9.1.2: g reclaimed, the empty g2 stays
  }
  SECTION("Valkey 9.1.2 on the empty copy: HGETALL shows nothing, HMGET deletes it without an event") {
    Session s(with_row(Dialect::valkey_9_1(), "valkey-copy-skips-expired-fields"));
    s.run("HSET g a 1");
    s.run("HPEXPIRE g 1 FIELDS 1 a");
    s.advance(10);
    CHECK(s.run("COPY g g2") == I(1));
    CHECK(s.run("HGETALL g2") == arr({}));
    CHECK(s.run("EXISTS g2") == I(1));  // live 9.1.2
    // Its DUMP payload ("\x04\x00..." live) is refused by RESTORE, before any TTL (live 9.1.2).
    s.ks.remember_dump("<g2>", *s.ks.raw("g2"));
    CHECK(s.run("RESTORE x 0 <g2>") == E("ERR Bad data format"));
    CHECK(s.run("RESTORE x 1 <g2> ABSTTL") == E("ERR Bad data format"));
    CHECK(s.run("RESTORE g2 0 <g2>") == E("BUSYKEY Target key name already exists."));
    s.ks.take_events();
    CHECK(s.run("HMGET g2 b") == arr({nil()}));
    CHECK(s.ks.take_events().empty());  // live 9.1.2: no notification
    CHECK(s.run("EXISTS g2") == I(0));  // live 9.1.2
  }
}

TEST_CASE("HSETEX KEEPTTL over an expired field: specification vs redis-hsetex-keepttl-expired-deadline",
          "[model][known-issues]") {
  SECTION("specification, both dialects: written as a new field without TTL (Valkey 9.1.2 live)") {
    Session s = expired_a(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
    CAPTURE(s.d.name);
    CHECK(s.run("HSETEX h KEEPTTL FIELDS 1 a 9") == I(1));
    CHECK(s.run("HPEXPIRETIME h FIELDS 1 a") == Reply::ints({-1}));
    CHECK(s.run("HGET h a") == S("9"));
    CHECK(s.run("HLEN h") == I(2));
  }
  SECTION("the defect replays Redis 8.0.6") {
    Session s = expired_a(with_row(Dialect::redis_8_0(), "redis-hsetex-keepttl-expired-deadline"));
    CHECK(s.run("HSETEX h KEEPTTL FIELDS 1 a 9") == I(1));
    CHECK(s.run("HPEXPIRETIME h FIELDS 1 a") == Reply::ints({-2}));  // live 8.0.6
    CHECK(s.run("HGET h a") == nil());                                 // live 8.0.6; deletes it
    CHECK(s.run("HLEN h") == I(1));                                    // live 8.0.6
  }
}

TEST_CASE("HEXPIRE* on an expired field: specification vs redis-hexpire-revives-expired-field", "[model][known-issues]") {
  SECTION("specification, both dialects: -2 whatever the condition or time, nothing changes") {
    Session s = expired_a(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
    CAPTURE(s.d.name);
    for (const char* line : {"HEXPIRE h 100 GT FIELDS 1 a", "HEXPIRE h 100 NX FIELDS 1 a", "HEXPIRE h 100 XX FIELDS 1 a",
                             "HPEXPIRE h 0 FIELDS 1 a", "HEXPIRE h 100 FIELDS 1 a"}) {
      CAPTURE(line);
      CHECK(s.run(line) == Reply::ints({-2}));  // live 9.1.2 for each
    }
    CHECK(s.run("HLEN h") == I(2));
    CHECK(s.run("HPERSIST h FIELDS 1 a") == Reply::ints({-2}));
    CHECK(s.run("HGET h a") == nil());
  }
  SECTION("the defect replays Redis 8.0.6") {
    const Dialect d = with_row(Dialect::redis_8_0(), "redis-hexpire-revives-expired-field");
    Session s = expired_a(d);
    CHECK(s.run("HTTL h FIELDS 1 a") == Reply::ints({-2}));           // live 8.0.6
    CHECK(s.run("HPERSIST h FIELDS 1 a") == Reply::ints({-2}));       // live 8.0.6
    CHECK(s.run("HEXPIRE h 100 NX FIELDS 1 a") == Reply::ints({0}));  // live 8.0.6: it "has" a TTL
    CHECK(s.run("HEXPIRE h 100 XX FIELDS 1 a") == Reply::ints({1}));  // live 8.0.6: revived
    CHECK(s.run("HGET h a") == S("1"));                               // live 8.0.6
    Session t = expired_a(d);
    CHECK(t.run("HEXPIRE h 100 GT FIELDS 1 a") == Reply::ints({1}));  // live 8.0.6
    Session u = expired_a(d);
    CHECK(u.run("HEXPIRE h 0 FIELDS 1 a") == Reply::ints({2}));  // live 8.0.6: deleted by the command
    CHECK(u.run("HLEN h") == I(1));
  }
}

TEST_CASE("A key named fields: specification vs valkey-fields-keyword-scan-includes-key", "[model][known-issues]") {
  SECTION("specification, both dialects (Redis 8.0.6 live)") {
    Session s(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
    CAPTURE(s.d.name);
    CHECK(s.run("HSETEX fields FIELDS 1 a 1") == I(1));
    CHECK(s.run("HGETEX fields FIELDS 1 a") == arr({S("1")}));
    CHECK(s.run("HGETEX fields EX 100 FIELDS 1 a") == arr({S("1")}));
    CHECK(s.run("HSETEX fields 2 a 1 b 2").is_error());  // live 8.0.6: ERR unknown argument: 2
    CHECK(s.run("HGETALL fields") == arr({S("a"), S("1")}));
  }
  SECTION("the defect replays Valkey 9.1.2") {
    Session s(with_row(Dialect::valkey_9_1(), "valkey-fields-keyword-scan-includes-key"));
    const Reply not_int = E("ERR value is not an integer or out of range");
    CHECK(s.run("HSETEX fields FIELDS 1 a 1") == not_int);   // live 9.1.2
    CHECK(s.run("HSETEX fields 2 a 1 b 2") == I(1));         // live 9.1.2
    CHECK(s.run("HGETEX fields FIELDS 1 a") == not_int);     // live 9.1.2
    CHECK(s.run("HGETEX Fields EX 100 FIELDS 1 x") == not_int);  // live 9.1.2 (any case)
    CHECK(s.run("HGETALL fields") == arr({S("a"), S("1"), S("b"), S("2")}));
  }
}

TEST_CASE("The FIELDS token: specification vs valkey-fields-token-unchecked", "[model][known-issues]") {
  const Reply syntax = E("ERR syntax error");
  SECTION("specification: Valkey 9.0 and 9.1 answer a syntax error (9.1.2 live)") {
    Session s(GENERATE(Dialect::valkey_9_1(), Dialect::valkey_9_0()));
    CAPTURE(s.d.name);
    s.run("HSET key field value");
    CHECK(s.run("HPERSIST key a 1 field") == syntax);
    CHECK(s.run("HTTL key FOO 1 field") == syntax);
    CHECK(s.run("HPEXPIRETIME key FOO 1 field") == syntax);
    if (s.d.has_hgetdel) CHECK(s.run("HGETDEL key persist 1 field") == syntax);
  }
  SECTION("the defect replays the reports (valkey-io/valkey#4045, #4300; no affected server here)") {
    Session s(with_row(Dialect::valkey_9_1(), "valkey-fields-token-unchecked"));
    s.run("HSET key field value");
    CHECK(s.run("HPERSIST key a 1 field") == Reply::ints({-1}));
    CHECK(s.run("HTTL key FOO 1 field") == Reply::ints({-1}));
    CHECK(s.run("HGETDEL key persist 1 field") == arr({S("value")}));
    CHECK(s.run("HGETDEL key foobar 1 field") == arr({nil()}));
  }
}

TEST_CASE("HMGET of a hash's last expired field: specification vs redis-hmget-deletes-hash-silently",
          "[model][known-issues]") {
  auto events = [](Session& s, const std::string& line) {
    s.ks.take_events();
    s.run(line);
    std::vector<std::string> out;
    for (const auto& e : s.ks.take_events()) out.push_back(e.name + "@" + e.key);
    return out;
  };
  auto setup = [](Session& s) {
    s.run("HSET h1 a 1");
    s.run("HSET h3 a 1 b 1");
    s.run("HSET h4 a 1 b 1");
    s.run("HPEXPIRE h1 1 FIELDS 1 a");
    s.run("HPEXPIRE h3 1 FIELDS 2 a b");
    s.run("HPEXPIRE h4 1 FIELDS 2 a b");
    s.advance(10);
  };
  SECTION("specification (Redis): the lazy deletion is notified, as HGET does (live 8.0.6 for HGET)") {
    Session s(Dialect::redis_8_0());
    setup(s);
    CHECK(events(s, "HMGET h1 a") == std::vector<std::string>{"hexpired@h1", "del@h1"});
    CHECK(s.run("EXISTS h1") == I(0));
  }
  SECTION("the defect replays Redis 8.0.6 (live, notify-keyspace-events KEA)") {
    Session s(with_row(Dialect::redis_8_0(), "redis-hmget-deletes-hash-silently"));
    setup(s);
    const auto before = s.ks.counters().expired_fields;
    s.ks.take_events();
    CHECK(s.run("HMGET h1 a") == arr({nil()}));
    const auto ev = s.ks.take_events();  // live: no notification, the key is signalled (tracking)
    CHECK(ev == std::vector<expirykit::model::Event>{{"(signal)", "h1", expirykit::model::signal_only_class}});
    CHECK_FALSE(expirykit::model::class_enabled("KEA", ev.front().cls));
    CHECK(s.ks.counters().expired_fields == before + 1);      // live: expired_subkeys + 1
    CHECK(s.run("EXISTS h1") == I(0));                        // live
    CHECK(events(s, "HMGET h3 a b") == std::vector<std::string>{"hexpired@h3", "del@h3"});  // live
    CHECK(events(s, "HMGET h4 b x") == std::vector<std::string>{"hexpired@h4"});            // live
    CHECK(s.run("EXISTS h4") == I(1));
  }
}

// numfields at the extremes, on a hash h = {a: 1} and a string s, each command on a fresh
// keyspace. Every expected reply was read live (valkey-cli -p <port> <command> against Valkey
// 9.1.2 and redis-cli against Redis 8.0.6, both started with --save '' --appendonly no, for n in
// 0, 1, INT_MAX, INT_MAX+1, 2^63-1, 2^63, -1).
TEST_CASE("numfields at 0, 1, INT_MAX, INT_MAX+1, 2^63-1, 2^63, -1 (live 9.1.2 and 8.0.6)", "[model][numfields]") {
  const std::vector<std::string> extremes = {"0", "1", "2147483647", "2147483648", "9223372036854775807",
                                             "9223372036854775808", "-1"};
  const std::string wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
  const std::vector<std::string> cmds = {"HSETEX", "HGETEX", "HGETDEL", "HEXPIRE", "HPERSIST", "HTTL"};
  auto argv = [](const std::string& cmd, const std::string& key, const std::string& n) {
    if (cmd == "HSETEX") return Argv{cmd, key, "FIELDS", n, "a", "1"};
    if (cmd == "HEXPIRE") return Argv{cmd, key, "100", "FIELDS", n, "a"};
    return Argv{cmd, key, "FIELDS", n, "a"};
  };
  // The reply to n = 1 on h.
  auto ok_reply = [](const std::string& cmd) {
    if (cmd == "HSETEX") return I(1);
    if (cmd == "HGETEX" || cmd == "HGETDEL") return arr({S("1")});
    if (cmd == "HEXPIRE") return Reply::ints({1});
    return Reply::ints({-1});
  };
  SECTION("Valkey 9.1: every count that is not the number of fields gives the numfields text (HTTL*: syntax "
          "error), arguments before the key type; 2^63 is not an integer") {
    for (const auto& cmd : cmds)
      for (const auto& key : {"h", "s"})
        for (const auto& n : extremes) {
          Session s(Dialect::valkey_9_1());
          s.run("HSET h a 1");
          s.run("SET s x");
          CAPTURE(cmd, key, n);
          Reply want;
          if (n == "1") want = std::string(key) == "h" ? ok_reply(cmd) : E(wrongtype);
          else if (n == "9223372036854775808") want = E("ERR value is not an integer or out of range");
          else if (cmd == "HTTL") want = E("ERR syntax error");
          else want = E("ERR numfields should be greater than 0 and match the provided number of fields");
          CHECK(s.run(argv(cmd, key, n)) == want);
        }
  }
  SECTION("Redis 8.0: HSETEX takes [1, INT_MAX] before the arity check, arguments before the type; the others take "
          "a positive long long, the type first") {
    for (const auto& cmd : cmds)
      for (const auto& key : {"h", "s"})
        for (const auto& n : extremes) {
          Session s(Dialect::redis_8_0());
          s.run("HSET h a 1");
          s.run("SET s x");
          CAPTURE(cmd, key, n);
          const bool hash = std::string(key) == "h";
          Reply want;
          if (cmd == "HSETEX") {
            if (n == "1") want = hash ? I(1) : E(wrongtype);
            else if (n == "2147483647") want = E("ERR wrong number of arguments for 'hsetex' command");
            else want = E("ERR invalid number of fields");  // 0, -1, above INT_MAX, not a long long
          } else if (!hash) {
            want = E(wrongtype);
          } else if (n == "1") {
            want = ok_reply(cmd);
          } else if (n == "2147483647" || n == "2147483648" || n == "9223372036854775807") {
            want = E("ERR The `numfields` parameter must match the number of arguments");
          } else if (cmd == "HEXPIRE") {
            want = E("ERR Parameter `numFields` should be greater than 0");
          } else {
            want = E("ERR Number of fields must be a positive integer");
          }
          CHECK(s.run(argv(cmd, key, n)) == want);
        }
  }
  SECTION("Redis 8.0 HSETEX: FIELDS among the last three arguments is the arity error before numfields is read") {
    Session s(Dialect::redis_8_0());
    CHECK(s.run("HSETEX h PX 10 FIELDS abc") == E("ERR wrong number of arguments for 'hsetex' command"));  // live
    CHECK(s.run("HSETEX h FIELDS 2147483648 a") == E("ERR wrong number of arguments for 'hsetex' command"));  // live
    CHECK(s.run("HSETEX h FIELDS abc a 1") == E("ERR invalid number of fields"));                            // live
    CHECK(s.run("HSETEX h FIELDS 2147483648 a 1 b") == E("ERR invalid number of fields"));                   // live
    CHECK(s.d.hsetex_numfields_max == INT_MAX);
  }
}
