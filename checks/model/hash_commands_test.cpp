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
  CHECK(s.run("HEXPIRE h 100 FIELDS 1 d") == Reply::ints({1}));  // revives the field
  CHECK(s.run("HGET h d") == S("4"));
  CHECK(s.run("HLEN h") == I(3));
  CHECK(s.run("HEXISTS h e") == I(0));
  CHECK(s.run("HLEN h") == I(2));
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
