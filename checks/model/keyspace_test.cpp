// Keyspace: visibility, reclaim(), canonical comparison of unordered replies.
#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

#include "session.hpp"

using namespace ekcheck;
using expirykit::model::canonical;
using expirykit::model::same_reply;

TEST_CASE("reclaim() models active expiry fully done (valkey-hfe.md §11)", "[model][keyspace]") {
  Session s(Dialect::valkey_9_1());
  s.run("HSET h a 1 b 2");
  s.run("HSET g a 1");
  s.run("HPEXPIRE h 10 FIELDS 1 a");
  s.run("HPEXPIRE g 10 FIELDS 1 a");
  s.run("SET k v PX 10");
  s.advance(50);
  CHECK(s.ks.expired_unreclaimed(s.now) == 2);
  CHECK(s.ks.reclaim(s.now) == 2);
  CHECK(s.ks.raw("g") == nullptr);  // last field gone: key gone
  CHECK(s.ks.raw("k") == nullptr);
  REQUIRE(s.ks.raw("h") != nullptr);
  CHECK(s.ks.raw("h")->hash().fields.size() == 1);
  CHECK(s.ks.expired_unreclaimed(s.now) == 0);
}

TEST_CASE("reclaim() in logical time: a field due before its key's TTL expires as a field, one due at or after it goes with the key",
          "[model][keyspace]") {
  for (const auto& d : {Dialect::valkey_9_1(), Dialect::redis_8_0()}) {
    CAPTURE(d.name);
    Session s(d);
    const std::string t = std::to_string(s.now + 100), later = std::to_string(s.now + 200), sooner = std::to_string(s.now + 99);
    s.run("HSET k1 a 1 b 2");  // key and field a due at t: the key's TTL takes both
    s.run("HPEXPIREAT k1 " + t + " FIELDS 1 a");
    s.run("PEXPIREAT k1 " + t);
    s.run("HSET k2 a 1 b 2");  // every field due before the key: the hash empties, its key TTL never fires
    s.run("HPEXPIREAT k2 " + t + " FIELDS 2 a b");
    s.run("PEXPIREAT k2 " + later);
    s.run("HSET k3 a 1 b 2");  // the key due before its field a
    s.run("HPEXPIREAT k3 " + later + " FIELDS 1 a");
    s.run("PEXPIREAT k3 " + t);
    s.run("HSET k5 a 1 b 2");  // field a due before the key: it expires first, then the key
    s.run("HPEXPIREAT k5 " + sooner + " FIELDS 1 a");
    s.run("PEXPIREAT k5 " + t);
    (void)s.ks.take_events();
    s.advance(500);
    CHECK(s.ks.reclaim(s.now, d.hexpired_class) == 3);  // k2's a and b, k5's a
    std::multiset<std::string> got;
    for (const auto& e : s.ks.take_events()) got.insert(e.name + "@" + e.key);
    CHECK(got == std::multiset<std::string>{"expired@k1", "hexpired@k2", "del@k2", "expired@k3", "hexpired@k5", "expired@k5"});
    CHECK(s.ks.counters().expired_fields == 3);
    CHECK(s.ks.counters().expired_keys == 3);  // k1, k3, k5; not k2
    CHECK(s.ks.size() == 0);
  }
}

TEST_CASE("describe() escapes binary names and values as valkey-cli reads them, on one line", "[model][keyspace]") {
  // A NUL written raw into a failure message cut the conformance verdict line there.
  using namespace std::string_literals;
  Session s(Dialect::valkey_9_1());
  s.run(Argv{"HSET", "h 1", "b", "\0\x01\xff"s, "q", "say \"hi\""});
  s.run(Argv{"SET", "s", ""});
  CHECK(s.ks.describe("h 1", s.now) == R"("h 1": hash {b="\x00\x01\xff", q="say \"hi\""})");
  CHECK(s.ks.describe("s", s.now) == R"(s: string "")");
  CHECK(s.ks.describe("\n", s.now) == R"("\x0a": (missing))");
}

TEST_CASE("HGETALL/HKEYS/HVALS compare order-insensitively", "[model][canonical]") {
  const Argv getall{"HGETALL", "h"}, keys{"HKEYS", "h"}, get{"HMGET", "h", "a", "b"};
  CHECK(same_reply(getall, arr({S("a"), S("1"), S("b"), S("2")}), arr({S("b"), S("2"), S("a"), S("1")})));
  CHECK_FALSE(same_reply(getall, arr({S("a"), S("1"), S("b"), S("2")}), arr({S("a"), S("2"), S("b"), S("1")})));
  CHECK(same_reply(keys, arr({S("a"), S("b")}), arr({S("b"), S("a")})));
  CHECK_FALSE(same_reply(get, arr({S("1"), S("2")}), arr({S("2"), S("1")})));
  CHECK(canonical(keys, E("WRONGTYPE x")) == E("WRONGTYPE x"));
}

TEST_CASE("Unmodelled commands are reported, never guessed", "[model][apply]") {
  Session v(Dialect::valkey_9_1());
  CHECK_THROWS_AS(v.run("LPUSH l a"), expirykit::model::Unmodelled);
  CHECK_THROWS_AS(v.run("HSCAN h 7"), expirykit::model::Unmodelled);
  CHECK_THROWS_AS(v.run("SET k v IFEQ x"), expirykit::model::Unmodelled);
  Session r74(*Dialect::for_server("redis", 7, 4));
  CHECK_THROWS_AS(r74.run("HSETEX h FIELDS 1 a 1"), expirykit::model::Unmodelled);
}
