// Model-only checks of the classic hash commands around field TTLs, and of logically expired
// fields on each dialect. Facts from redis-hfe.md §5, §6 and valkey-hfe.md §9, §10.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "session.hpp"

using namespace ekcheck;
using expirykit::model::Dialect;

TEST_CASE("Which writes keep or clear a live field's TTL (redis-hfe.md §5, valkey-hfe.md §9)", "[model][hash]") {
  Session s(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
  CAPTURE(s.d.name);
  s.run("HSET h a 1 b 2 c 3 d 4");
  s.run("HEXPIRE h 100 FIELDS 4 a b c d");
  CHECK(s.run("HSET h a 10") == I(0));  // update counts 0
  CHECK(s.run("HINCRBY h b 5") == I(7));
  CHECK(s.run("HINCRBYFLOAT h c 0.5") == S("3.5"));
  CHECK(s.run("HSETNX h d 9") == I(0));
  CHECK(s.run("HTTL h FIELDS 4 a b c d") == Reply::ints({-1, 100, 100, 100}));
  CHECK(s.run("HMSET h d 5") == Reply::ok());
  CHECK(s.run("HTTL h FIELDS 1 d") == Reply::ints({-1}));
  s.run("HEXPIRE h 100 FIELDS 1 b");
  s.run("HDEL h b");
  s.run("HSET h b 1");  // delete then recreate: no TTL
  CHECK(s.run("HTTL h FIELDS 1 b") == Reply::ints({-1}));
}

TEST_CASE("Valkey: a logically expired field stays until active expiry (valkey-hfe.md §9, §10 [L])", "[model][expired]") {
  Session s(Dialect::valkey_9_1());
  s.run("HSET h a 1 b 2 c 3 d 4 e 5");
  s.run("HPEXPIRE h 10 FIELDS 5 a b c d e");
  s.advance(50);
  CHECK(s.run("HGET h a") == nil());
  CHECK(s.run("HEXISTS h a") == I(0));
  CHECK(s.run("HSTRLEN h a") == I(0));
  CHECK(s.run("HTTL h FIELDS 1 a") == Reply::ints({-2}));
  CHECK(s.run("HLEN h") == I(5));  // still counted
  CHECK(s.run("HGETALL h") == arr({}));
  CHECK(s.run("EXISTS h") == I(1));
  CHECK(s.run("TYPE h") == Reply::status("hash"));
  CHECK(s.run("HDEL h a") == I(0));
  CHECK(s.run("HPERSIST h FIELDS 1 a") == Reply::ints({-2}));
  CHECK(s.run("HEXPIRE h 100 FIELDS 1 a") == Reply::ints({-2}));
  CHECK(s.run("HGETDEL h FIELDS 1 a") == arr({nil()}));
  CHECK(s.run("HLEN h") == I(5));
  CHECK(s.run("HSET h b 9") == I(1));  // counts as new, HLEN unchanged
  CHECK(s.run("HLEN h") == I(5));
  CHECK(s.run("HINCRBY h c 5") == I(5));  // from 0, persistent
  CHECK(s.run("HTTL h FIELDS 1 c") == Reply::ints({-1}));
  CHECK(s.run("HSETEX h KEEPTTL FIELDS 1 d 1") == I(1));  // does not revive the old TTL
  CHECK(s.run("HTTL h FIELDS 1 d") == Reply::ints({-1}));
  CHECK(s.run("HSETEX h FXX FIELDS 1 e 1") == I(0));  // expired counts as missing
  CHECK(s.ks.reclaim(s.now) == 2);  // a and e
  CHECK(s.run("HLEN h") == I(3));
}

TEST_CASE("Redis: lazy deletion of expired fields on access (redis-hfe.md §6 [V])", "[model][expired]") {
  Session s(Dialect::redis_8_0());
  s.run("HSET h a 1 b 2 c 3 d 4 e 5");
  s.run("HPEXPIRE h 10 FIELDS 5 a b c d e");
  s.advance(50);
  CHECK(s.run("HLEN h") == I(5));
  CHECK(s.run("HKEYS h") == arr({}));  // hides without deleting
  CHECK(s.run("HLEN h") == I(5));
  CHECK(s.run("HGET h a") == nil());  // deletes a
  CHECK(s.run("HLEN h") == I(4));
  CHECK(s.run("HDEL h b") == I(1));
  CHECK(s.run("HSET h c 9") == I(0));  // treated as existing
  CHECK(s.run("HTTL h FIELDS 1 c") == Reply::ints({-1}));
  CHECK(s.run("HTTL h FIELDS 1 d") == Reply::ints({-2}));
  // The specification: an expired field is gone for HEXPIRE too (Redis 8.0.6 revives it: known
  // issue redis-hexpire-revives-expired-field, checks/model/known_issues_test.cpp).
  CHECK(s.run("HEXPIRE h 100 FIELDS 1 d") == Reply::ints({-2}));
  CHECK(s.run("HLEN h") == I(3));
  CHECK(s.run("HGET h d") == nil());  // deletes d
  CHECK(s.run("HLEN h") == I(2));
  CHECK(s.run("HEXISTS h e") == I(0));
  CHECK(s.run("HLEN h") == I(1));
}

TEST_CASE("Redis: the key goes with its last lazily expired field (redis-hfe.md §6, §13 #11)", "[model][expired]") {
  Session s(Dialect::redis_8_0());
  s.run("HSET g a 1");
  s.run("HPEXPIRE g 10 FIELDS 1 a");
  s.advance(50);
  CHECK(s.run("EXISTS g") == I(1));
  CHECK(s.run("HGETALL g") == arr({}));
  CHECK(s.run("EXISTS g") == I(1));
  CHECK(s.run("HMGET g a") == arr({nil()}));
  CHECK(s.run("EXISTS g") == I(0));
}

TEST_CASE("HINCRBY/HINCRBYFLOAT errors (live 9.1.2 and 8.0.6)", "[model][hash]") {
  Session s(GENERATE(Dialect::valkey_9_1(), Dialect::redis_8_0()));
  s.run("HSET h n abc m 9223372036854775807");
  CHECK(s.run("HINCRBY h n 1") == E("ERR hash value is not an integer"));
  CHECK(s.run("HINCRBY h m 1") == E("ERR increment or decrement would overflow"));
  CHECK(s.run("HINCRBY h x 1.5") == E("ERR value is not an integer or out of range"));
  CHECK(s.run("HINCRBYFLOAT h n 1") == E("ERR hash value is not a float"));
  CHECK(s.run("HINCRBYFLOAT h f 0.1") == S("0.1"));
  CHECK(s.run("HINCRBYFLOAT h f 0.2") == S("0.3"));
  CHECK(s.run("HINCRBYFLOAT h g 1e3") == S("1000"));
  CHECK(s.run("HINCRBYFLOAT h g inf") == E("ERR value is NaN or Infinity"));
}

TEST_CASE("Arity errors", "[model][errors]") {
  Session s(Dialect::valkey_9_1());
  CHECK(s.run("HSET h a") == E("ERR wrong number of arguments for 'hset' command"));
  CHECK(s.run("HSET h a 1 b") == E("ERR wrong number of arguments for 'hset' command"));
  CHECK(s.run("HEXPIRE k 10 FIELDS 0") == E("ERR wrong number of arguments for 'hexpire' command"));
  CHECK(s.run("HTTL k FIELDS 0") == E("ERR wrong number of arguments for 'httl' command"));
}

namespace {
/// The names@keys of the events `line` records (events pending before it are dropped).
std::vector<std::string> events_of(Session& s, const std::string& line) {
  s.ks.take_events();
  s.run(line);
  std::vector<std::string> out;
  for (const auto& e : s.ks.take_events()) out.push_back(e.name + "@" + e.key);
  return out;
}
}  // namespace

TEST_CASE("Valkey: one hexpired per command however many expired fields a write covers (live 9.1.2)",
          "[model][expired][events]") {
  // Live 9.1.2, notify-keyspace-events KEA: HSET and HSETEX KEEPTTL over two expired fields send
  // hexpired once, then hset.
  Session s(Dialect::valkey_9_1());
  for (const char* line : {"HSET h a 9 b 9", "HSETEX h KEEPTTL FIELDS 2 b x a y", "HSETEX h FNX FIELDS 2 a 1 b 2"}) {
    CAPTURE(line);
    s.run("HSET h a 1 b 2");
    s.run("HPEXPIRE h 1 FIELDS 2 a b");
    s.advance(10);
    const auto before = s.ks.counters().expired_fields;
    CHECK(events_of(s, line) == std::vector<std::string>{"hexpired@h", "hset@h"});
    CHECK(s.ks.counters().expired_fields == before + 2);  // one per field
  }
  // A field listed twice counts once (live 9.1.2: expired_fields + 1).
  s.run("HSET g a 1 b 2");
  s.run("HPEXPIRE g 1 FIELDS 2 a b");
  s.advance(10);
  const auto before = s.ks.counters().expired_fields;
  CHECK(events_of(s, "HSETEX g EX 1000 FIELDS 2 b 1.5 b -0.25") == std::vector<std::string>{"hexpired@g", "hset@g", "hexpire@g"});
  CHECK(s.ks.counters().expired_fields == before + 1);
}

TEST_CASE("Redis: HGETDEL, HGETEX and HSETEX FNX/FXX keep the key until their own event (live 8.0.6)",
          "[model][expired][events]") {
  // Live 8.0.6, notify-keyspace-events KEA, active expiry off, a expired 10 ms before.
  Session s(Dialect::redis_8_0());
  auto expired_a = [&](const std::string& key, const std::string& fields) {
    s.run("HSET " + key + " " + fields);
    s.run("HPEXPIRE " + key + " 1 FIELDS 1 a");
    s.advance(10);
  };
  expired_a("h2", "a 1 b 2");
  CHECK(events_of(s, "HGETDEL h2 FIELDS 3 b d a") == std::vector<std::string>{"hexpired@h2", "hdel@h2", "del@h2"});
  expired_a("h5", "a 1 b 2");
  CHECK(events_of(s, "HGETEX h5 PX 0 FIELDS 2 a b") == std::vector<std::string>{"hexpired@h5", "hdel@h5", "del@h5"});
  expired_a("h3", "a 1");
  CHECK(events_of(s, "HSETEX h3 FNX FIELDS 1 a 9") == std::vector<std::string>{"hexpired@h3", "hset@h3"});
  CHECK(s.run("HGET h3 a") == S("9"));
  expired_a("h4", "a 1");
  CHECK(events_of(s, "HSETEX h4 FXX FIELDS 1 a 9") == std::vector<std::string>{"hexpired@h4", "del@h4"});
  CHECK(s.run("EXISTS h4") == I(0));
  // The hash written into is the kept one, not a new key: it stays listpackex and counted in
  // subexpiry (live 8.0.6: `HSETEX h6 KEEPTTL FNX FIELDS 1 a 9` over an all-expired h6 gives
  // hexpired, hset; OBJECT ENCODING listpackex; INFO keyspace subexpiry=1).
  expired_a("h6", "a 1");
  CHECK(events_of(s, "HSETEX h6 KEEPTTL FNX FIELDS 1 a 9") == std::vector<std::string>{"hexpired@h6", "hset@h6"});
  CHECK(s.run("OBJECT ENCODING h6") == S("listpackex"));
  CHECK(s.run("HPEXPIRETIME h6 FIELDS 1 a") == arr({I(-1)}));
  CHECK(s.ks.raw("h6")->hash().maybe_indexed);
}

TEST_CASE("Redis's subexpiry: HDEL and HGETDEL of a hash's last field with a TTL take the hash out at once",
          "[model][counters]") {
  // src/t_hash.c hdelCommand / hgetdelCommand ("is it last HFE"); live 8.0.6, 2026-12-05:
  // subexpiry 1 -> 0 after HDEL of the only field with a TTL, listpackex and hashtable alike.
  Session s(Dialect::redis_8_0());
  s.run("HSET h a 1 b 2 c 3");
  s.run("HPEXPIRE h 100000 FIELDS 2 a b");
  s.run("HDEL h a");
  CHECK(s.ks.raw("h")->hash().maybe_indexed);  // b keeps its TTL
  CHECK(s.ks.volatile_indexed_at_most() == 1);
  s.run("HDEL h b");
  CHECK_FALSE(s.ks.raw("h")->hash().maybe_indexed);
  CHECK(s.ks.volatile_indexed_at_most() == 0);
  // After HPERSIST the hash may stay registered (lazy); an HDEL then finds no field with a TTL
  // and leaves the registration as it is.
  s.run("HPEXPIRE h 100000 FIELDS 1 c");
  s.run("HSET h d 4");
  s.run("HPERSIST h FIELDS 1 c");
  s.run("HDEL h d");
  CHECK(s.ks.volatile_indexed() == 0);
  CHECK(s.ks.volatile_indexed_at_most() == 1);
  s.run("HSET g a 1 b 2");
  s.run("HPEXPIRE g 100000 FIELDS 1 a");
  s.run("HGETDEL g FIELDS 1 a");
  CHECK_FALSE(s.ks.raw("g")->hash().maybe_indexed);
  CHECK(s.ks.volatile_indexed_at_most() == 1);  // h only
}
