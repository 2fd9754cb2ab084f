// Model-only checks of the field TTL commands. Every expectation is a fact from the reference
// files (section cited), not output copied from the model.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "session.hpp"

using namespace ekcheck;
using expirykit::model::Dialect;

static Dialect both() {
  return GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0());
}

TEST_CASE("HEXPIRE reply codes -2, 0, 1, 2 (valkey-hfe.md §5, redis-hfe.md §3)", "[model][hexpire]") {
  Session s(both());
  CAPTURE(s.d.name);
  s.run("HSET h a 1 b 2 c 3");
  CHECK(s.run("HEXPIRE h 100 FIELDS 2 a nope") == Reply::ints({1, -2}));
  CHECK(s.run("HEXPIRE h 200 NX FIELDS 1 a") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 0 FIELDS 1 b") == Reply::ints({2}));
  CHECK(s.run("HEXISTS h b") == I(0));
  CHECK(s.run("HPEXPIRE h 1 FIELDS 1 c") == Reply::ints({1}));  // 1 ms is in the future
  CHECK(s.run("HEXPIRE nokey 10 FIELDS 2 a b") == Reply::ints({-2, -2}));
  CHECK(s.run("EXISTS nokey") == I(0));
}

TEST_CASE("GT/LT: a field without TTL counts as infinite (valkey-hfe.md §5)", "[model][hexpire]") {
  Session s(both());
  s.run("HSET h p 1 v 2");
  s.run("HEXPIRE h 100 FIELDS 1 v");
  CHECK(s.run("HEXPIRE h 100 GT FIELDS 1 p") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 50 GT FIELDS 1 v") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 200 GT FIELDS 1 v") == Reply::ints({1}));
  CHECK(s.run("HEXPIRE h 100 LT FIELDS 1 p") == Reply::ints({1}));
  CHECK(s.run("HEXPIRE h 300 LT FIELDS 1 v") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 150 XX FIELDS 2 v nope") == Reply::ints({1, -2}));
}

TEST_CASE("Conditions are checked before a past time deletes (valkey-hfe.md §5, #3021)", "[model][hexpire]") {
  Session s(both());
  s.run("HSET h t 1 p 2");
  s.run("HEXPIRE h 1000 FIELDS 1 t");
  CHECK(s.run("HEXPIRE h 0 GT FIELDS 1 t") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 0 NX FIELDS 1 t") == Reply::ints({0}));
  CHECK(s.run("HEXPIRE h 0 XX FIELDS 1 p") == Reply::ints({0}));
  CHECK(s.run("HLEN h") == I(2));
  CHECK(s.run("HEXPIRE h 0 LT FIELDS 1 t") == Reply::ints({2}));
  CHECK(s.run("HEXPIREAT h 1 FIELDS 1 p") == Reply::ints({2}));
  CHECK(s.run("EXISTS h") == I(0));  // emptied hash disappears
}

TEST_CASE("Duplicate fields in one HEXPIRE are processed one by one", "[model][hexpire]") {
  SECTION("Valkey (valkey-hfe.md §5 [L])") {
    Session s(Dialect::valkey_9_1());
    s.run("HSET h a 1");
    CHECK(s.run("HEXPIRE h 100 FIELDS 3 a nope a") == Reply::ints({1, -2, 1}));
    CHECK(s.run("HEXPIRE h 0 FIELDS 3 a a nope") == Reply::ints({2, -2, -2}));
  }
  SECTION("Redis (redis-hfe.md §3 [V])") {
    Session s(Dialect::redis_8_0());
    s.run("HSET h f1 1 f2 2");
    CHECK(s.run("HEXPIRE h 100 FIELDS 2 f1 f1") == Reply::ints({1, 1}));
    CHECK(s.run("HEXPIRE h 100 NX FIELDS 2 f2 f2") == Reply::ints({1, 0}));
    CHECK(s.run("HEXPIRE h 0 FIELDS 2 f1 f1") == Reply::ints({2, -2}));
  }
}

TEST_CASE("HTTL / HEXPIRETIME second rounding per dialect (redis-hfe.md §3, valkey-hfe.md §6)", "[model][httl]") {
  SECTION("Valkey rounds to nearest") {
    Session s(Dialect::valkey_9_1());
    s.run("HSET h a 1 b 2 c 3 d 4");
    s.run("HPEXPIRE h 2600 FIELDS 1 a");
    s.run("HPEXPIRE h 2400 FIELDS 1 b");
    CHECK(s.run("HTTL h FIELDS 2 a b") == Reply::ints({3, 2}));
    s.run("HPEXPIREAT h 1900000000800500 FIELDS 1 c");
    s.run("HPEXPIREAT h 1900000000800499 FIELDS 1 d");
    CHECK(s.run("HEXPIRETIME h FIELDS 2 c d") == Reply::ints({1900000000801, 1900000000800}));
    CHECK(s.run("HPEXPIRETIME h FIELDS 1 c") == Reply::ints({1900000000800500}));
  }
  SECTION("Redis rounds up") {
    Session s(Dialect::redis_8_0());
    s.run("HSET h a 1 b 2 c 3 d 4");
    s.run("HPEXPIRE h 2400 FIELDS 1 a");
    s.run("HPEXPIRE h 1200 FIELDS 1 b");
    s.run("HPEXPIRE h 1500 FIELDS 1 c");
    s.run("HPEXPIRE h 400 FIELDS 1 d");
    CHECK(s.run("HTTL h FIELDS 4 a b c d") == Reply::ints({3, 2, 2, 1}));
    s.run("HPEXPIREAT h 1800000252003 FIELDS 1 a");
    CHECK(s.run("HEXPIRETIME h FIELDS 1 a") == Reply::ints({1800000253}));
  }
}

TEST_CASE("HTTL family: -1 without TTL, -2 missing (valkey-hfe.md §6)", "[model][httl]") {
  Session s(both());
  s.run("HSET h a 1 b 2");
  s.run("HPEXPIRE h 5000 FIELDS 1 a");
  CHECK(s.run("HPTTL h FIELDS 3 a b nope") == Reply::ints({5000, -1, -2}));
  CHECK(s.run("HPEXPIRETIME h FIELDS 3 a b nope") == Reply::ints({T0 + 5000, -1, -2}));
  CHECK(s.run("HTTL nokey FIELDS 2 a b") == Reply::ints({-2, -2}));
}

TEST_CASE("Largest accepted times (redis-hfe.md §4, valkey-hfe.md §5)", "[model][limits]") {
  SECTION("Valkey: LLONG_MAX") {
    Session s(Dialect::valkey_9_1());
    s.run("HSET h a 1 b 2");
    CHECK(s.run("HPEXPIREAT h 9223372036854775807 FIELDS 1 a") == Reply::ints({1}));
    CHECK(s.run("HPEXPIRETIME h FIELDS 1 a") == Reply::ints({9223372036854775807LL}));
    CHECK(s.run("HEXPIREAT h 9223372036854775 FIELDS 1 b") == Reply::ints({1}));
    CHECK(s.run("HEXPIRE h 9223372036854 FIELDS 1 b") == Reply::ints({1}));
    CHECK(s.run("HEXPIRE h 9223372036854775 FIELDS 1 b") == E("ERR invalid expire time in 'hexpire' command"));
    CHECK(s.run("HSETEX h EX 9223372036854 FIELDS 1 c 1") == I(1));
    CHECK(s.run("HSETEX h EX 9223372036854775 FIELDS 1 c 1") == E("ERR invalid expire time in 'hsetex' command"));
  }
  SECTION("Redis: 2^46-1 ms absolute") {
    Session s(Dialect::redis_8_0());
    s.run("HSET h a 1");
    CHECK(s.run("HPEXPIREAT h 70368744177663 FIELDS 1 a") == Reply::ints({1}));
    CHECK(s.run("HPEXPIREAT h 70368744177664 FIELDS 1 a") == E("ERR invalid expire time in 'hpexpireat' command"));
    CHECK(s.run("HEXPIREAT h 70368744178 FIELDS 1 a") == E("ERR invalid expire time in 'hexpireat' command"));
  }
}

TEST_CASE("Negative times and check order (redis-hfe.md §4, valkey-hfe.md §2)", "[model][errors]") {
  SECTION("Valkey: arguments before WRONGTYPE") {
    Session s(Dialect::valkey_9_1());
    s.run("SET str x");
    s.run("HSET h a 1");
    CHECK(s.run("HEXPIRE h -1 FIELDS 1 a") == E("ERR invalid expire time in 'hexpire' command"));
    CHECK(s.run("HEXPIRE str -1 FIELDS 1 a") == E("ERR invalid expire time in 'hexpire' command"));
    CHECK(s.run("HSETEX str EX abc FIELDS 1 a 1") == E(s.d.err.wrongtype));  // HSETEX: type before time
    CHECK(s.run("HEXPIRE h 10 NX XX FIELDS 1 a") ==
          E("ERR NX and XX, GT or LT options at the same time are not compatible"));
    CHECK(s.run("HEXPIRE h 10 GT LT FIELDS 1 a") == E("ERR GT and LT options at the same time are not compatible"));
    CHECK(s.run("HEXPIRE h 10 FOO FIELDS 1 a") == E("ERR Unsupported option FOO"));
    CHECK(s.run("HEXPIRE h 10 FIELDS 2 a") ==
          E("ERR numfields should be greater than 0 and match the provided number of fields"));
    CHECK(s.run("HTTL h FIELDS 2 a") == E("ERR syntax error"));
    CHECK(s.run("HEXPIRE h 1.5 FIELDS 1 a") == E("ERR value is not an integer or out of range"));
  }
  SECTION("Redis: WRONGTYPE first for HEXPIRE and HTTL") {
    Session s(Dialect::redis_8_0());
    s.run("SET str x");
    s.run("HSET h a 1");
    CHECK(s.run("HEXPIRE h -1 FIELDS 1 a") == E("ERR invalid expire time, must be >= 0"));
    CHECK(s.run("HEXPIRE str -1 FIELDS 1 a") == E(s.d.err.wrongtype));
    CHECK(s.run("HEXPIRE h 10 FIELDS 0 a") == E("ERR Parameter `numFields` should be greater than 0"));
    CHECK(s.run("HEXPIRE h 10 FIELDS 2 a") == E("ERR The `numfields` parameter must match the number of arguments"));
    CHECK(s.run("HEXPIRE h 10 NX NX FIELDS 1 a") == E("ERR Mandatory argument FIELDS is missing or not at the right position"));
    CHECK(s.run("HTTL h FIELDS 0 a") == E("ERR Number of fields must be a positive integer"));
  }
}

TEST_CASE("HSETEX: reply, FNX/FXX all-or-nothing, TTL rules (valkey-hfe.md §3, redis-hfe.md §3)", "[model][hsetex]") {
  Session s(both());
  CAPTURE(s.d.name);
  CHECK(s.run("HSETEX h EX 100 FIELDS 2 a 1 b 2") == I(1));
  CHECK(s.run("HTTL h FIELDS 2 a b") == Reply::ints({100, 100}));
  CHECK(s.run("HSETEX h FNX FIELDS 2 a 9 c 3") == I(0));  // a exists: nothing written
  CHECK(s.run("HEXISTS h c") == I(0));
  CHECK(s.run("HSETEX h FXX FIELDS 2 a 9 c 3") == I(0));  // c missing
  CHECK(s.run("HGET h a") == S("1"));
  CHECK(s.run("HSETEX h KEEPTTL FIELDS 2 a 5 c 3") == I(1));
  CHECK(s.run("HTTL h FIELDS 2 a c") == Reply::ints({100, -1}));
  CHECK(s.run("HSETEX h PX 5000 FIELDS 1 a 6") == I(1));  // overwrites, even to smaller
  CHECK(s.run("HPTTL h FIELDS 1 a") == Reply::ints({5000}));
  CHECK(s.run("HSETEX h FIELDS 1 a 7") == I(1));  // no option clears
  CHECK(s.run("HTTL h FIELDS 1 a") == Reply::ints({-1}));
  CHECK(s.run("HSETEX nokey FXX EX 10 FIELDS 1 a 1") == I(0));
  CHECK(s.run("EXISTS nokey") == I(0));
  CHECK(s.run("HSETEX nokey PX 0 FIELDS 1 a 1") == I(1));  // zero time: accepted, deletes
  CHECK(s.run("EXISTS nokey") == I(0));
  CHECK(s.run("HSETEX h EXAT 1 FIELDS 3 a 1 b 1 c 1") == I(1));
  CHECK(s.run("EXISTS h") == I(0));
  CHECK(s.run("HSETEX d FIELDS 2 x 1 x 2") == I(1));  // duplicates: last wins
  CHECK(s.run("HGET d x") == S("2"));
}

TEST_CASE("HSETEX key-level NX/XX and repeated options", "[model][hsetex]") {
  SECTION("Valkey 9.1 (valkey-hfe.md §2, §3 [L])") {
    Session s(Dialect::valkey_9_1());
    CHECK(s.run("HSETEX h XX FIELDS 1 a 1") == I(0));
    CHECK(s.run("EXISTS h") == I(0));
    CHECK(s.run("HSETEX h NX FIELDS 1 a 1") == I(1));
    CHECK(s.run("HSETEX h NX FIELDS 1 b 1") == I(0));
    CHECK(s.run("HSETEX h EX 10 EX 20 FIELDS 1 a 1") == I(1));
    CHECK(s.run("HTTL h FIELDS 1 a") == Reply::ints({20}));
    CHECK(s.run("HSETEX h EX 10 PX 20 FIELDS 1 a 1") == E("ERR syntax error"));
    CHECK(s.run("HSETEX h FIELDS 1 FIELDS 1") == I(1));  // first FIELDS is the keyword
    CHECK(s.run("HGET h FIELDS") == S("1"));
    // NX/XX, then time, then FNX: FNX with a past time on an existing field gives 0
    CHECK(s.run("HSETEX h FNX EX 0 FIELDS 1 a 1") == I(0));
    CHECK(s.run("HEXISTS h a") == I(1));
  }
  SECTION("Redis 8.0 (redis-hfe.md §2, §4 [V])") {
    Session s(Dialect::redis_8_0());
    CHECK(s.run("HSETEX h NX FIELDS 1 a 1") == E("ERR unknown argument: NX"));
    CHECK(s.run("HSETEX h EX 10 EX 20 FIELDS 1 a 1") ==
          E("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"));
    CHECK(s.run("HSETEX h FNX FXX FIELDS 1 a 1") == E("ERR Only one of FXX or FNX arguments can be specified"));
    CHECK(s.run("HSETEX h FIELDS 2 a 1") == E("ERR wrong number of arguments for 'hsetex' command"));
    CHECK(s.run("HSETEX h FIELDS 0 a 1") == E("ERR invalid number of fields"));
    CHECK(s.run("HSETEX h PX 5000 FXX FIELDS 1 a 2") == I(0));  // flags in any order
  }
}

TEST_CASE("HGETEX (valkey-hfe.md §4, redis-hfe.md §3)", "[model][hgetex]") {
  Session s(both());
  CAPTURE(s.d.name);
  s.run("HSET h a 1 b 2 c 3");
  CHECK(s.run("HGETEX h EX 100 FIELDS 2 a nope") == arr({S("1"), nil()}));
  CHECK(s.run("HTTL h FIELDS 2 a nope") == Reply::ints({100, -2}));
  CHECK(s.run("HGETEX h PX 500 FIELDS 1 a") == arr({S("1")}));  // overwrites, no GT/LT
  CHECK(s.run("HPTTL h FIELDS 1 a") == Reply::ints({500}));
  CHECK(s.run("HGETEX h PERSIST FIELDS 1 a") == arr({S("1")}));
  CHECK(s.run("HTTL h FIELDS 1 a") == Reply::ints({-1}));
  CHECK(s.run("HGETEX h EX 0 FIELDS 2 b b") == arr({S("2"), nil()}));
  CHECK(s.run("HGETEX nokey EX 10 FIELDS 2 a b") == arr({nil(), nil()}));
  CHECK(s.run("EXISTS nokey") == I(0));
  CHECK(s.run("HGETEX h PXAT 1 FIELDS 2 a c") == arr({S("1"), S("3")}));
  CHECK(s.run("EXISTS h") == I(0));
}

TEST_CASE("HPERSIST and HGETDEL (valkey-hfe.md §7, §8; redis-hfe.md §3)", "[model][hpersist]") {
  Session s(both());
  s.run("HSET h a 1 b 2");
  s.run("HEXPIRE h 100 FIELDS 1 a");
  CHECK(s.run("HPERSIST h FIELDS 3 a b nope") == Reply::ints({1, -1, -2}));
  s.run("HEXPIRE h 100 FIELDS 1 a");
  CHECK(s.run("HPERSIST h FIELDS 2 a a") == Reply::ints({1, -1}));
  CHECK(s.run("HGETDEL h FIELDS 3 a a nope") == arr({S("1"), nil(), nil()}));
  CHECK(s.run("HGETDEL h FIELDS 1 b") == arr({S("2")}));
  CHECK(s.run("EXISTS h") == I(0));
}
