// One example per model::Dialect fact, against the live server. Every command runs on the
// server AND the model (TwinFixture::both CHECKs that they agree), and the test then states the
// fact the dialect claims for this server, so neither the model nor the dialect can drift from
// what the server does. Run it once per server (EXPIRYKIT_SERVER=valkey-9.1 / redis-8.0).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/twin_fixture.hpp>

using namespace expirykit::catch2;
using expirykit::model::Grammar;
using expirykit::model::Rounding;

namespace {
Reply ints(std::initializer_list<long long> v) { return Reply::ints(v); }
}  // namespace

TEST_CASE_METHOD(TwinFixture, "Dialect: picked from the server identity; command set matches", "[dialect]") {
  twin();  // SKIPs on a server without a dialect
  const auto& id = identity();
  CHECK(dialect().name == id.line());
  CHECK(dialect().has_hsetex == id.caps.hsetex);
  CHECK(dialect().has_hgetex == id.caps.hgetex);
  CHECK(dialect().has_hgetdel == id.caps.hgetdel);
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hsetex_key_nx_xx", "[dialect]") {
  Reply r = both("HSETEX h NX FIELDS 1 a 1");
  if (dialect().hsetex_key_nx_xx) {
    CHECK(r == Reply::integer(1));
    CHECK(both("HSETEX h NX FIELDS 1 b 1") == Reply::integer(0));
    CHECK(both("HSETEX nokey XX FIELDS 1 a 1") == Reply::integer(0));
  } else {
    CHECK(r == Reply::error("ERR unknown argument: NX"));
  }
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: fields_token_checked", "[dialect]") {
  both("HSET h a 1");
  for (auto line : {"HTTL h FOO 1 a", "HPERSIST h FOO 1 a", "HPEXPIRETIME h FOO 1 a"}) {
    Reply r = both(line);
    CHECK(r.is_error() == dialect().fields_token_checked);
  }
  if (dialect().has_hgetdel) CHECK(both("HGETDEL h FOO 1 a").is_error() == dialect().fields_token_checked);
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hexpire_multiple_conditions", "[dialect]") {
  both("HSET h a 1");
  both("HEXPIRE h 100 FIELDS 1 a");
  Reply r = both("HEXPIRE h 200 XX GT FIELDS 1 a");
  CHECK((r == ints({1})) == dialect().hexpire_multiple_conditions);
}

TEST_CASE_METHOD(TwinFixture, "Dialect: duplicate_flags_accepted", "[dialect]") {
  both("HSET h a 1");
  const bool acc = dialect().duplicate_flags_accepted;
  CHECK(!both("HEXPIRE h 100 NX NX FIELDS 1 a").is_error() == acc);
  if (dialect().has_hsetex) {
    CHECK(!both("HSETEX h EX 10 EX 20 FIELDS 1 a 1").is_error() == acc);
    if (acc) CHECK(both("HTTL h FIELDS 1 a") == ints({20}));  // the last value wins
    CHECK(!both("HSETEX h KEEPTTL KEEPTTL FIELDS 1 a 1").is_error() == acc);
  }
  if (dialect().has_hgetex) CHECK(!both("HGETEX h PERSIST PERSIST FIELDS 1 a").is_error() == acc);
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: wrongtype_before_args", "[dialect]") {
  both("SET s x");
  const bool first = dialect().wrongtype_before_args;
  for (auto line : {"HEXPIRE s -1 FIELDS 1 a", "HEXPIRE s 10 FIELDS 0 a", "HTTL s FIELDS 2 a", "HPERSIST s FIELDS 2 a"}) {
    Reply r = both(line);
    CHECK(r.is_error_starting("WRONGTYPE") == first);
  }
  // HSETEX checks its syntax first on both servers (redis-hfe.md §4).
  if (dialect().has_hsetex) CHECK_FALSE(both("HSETEX s FOO FIELDS 1 a 1").is_error_starting("WRONGTYPE"));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: sec_rounding of HTTL and HEXPIRETIME", "[dialect]") {
  const int64_t base = (twin().server_time() / 1000 + 100000) * 1000;  // a whole second, far ahead
  both("HSET h a 1 b 2 c 3");
  both({"HPEXPIREAT", "h", std::to_string(base + 500), "FIELDS", "1", "a"});
  both({"HPEXPIREAT", "h", std::to_string(base + 499), "FIELDS", "1", "b"});
  both({"HPEXPIREAT", "h", std::to_string(base + 1), "FIELDS", "1", "c"});
  const long long s = base / 1000;
  Reply r = both("HEXPIRETIME h FIELDS 3 a b c");
  if (dialect().sec_rounding == Rounding::nearest)
    CHECK(r == ints({s + 1, s, s}));
  else
    CHECK(r == ints({s + 1, s + 1, s + 1}));
  // Relative: 2400 ms left rounds to 2 (nearest) or 3 (ceiling).
  const int64_t now = twin().server_time();
  both({"HPEXPIREAT", "h", std::to_string(now + 2400), "FIELDS", "1", "a"});
  Reply t = client()("HTTL", "h", "FIELDS", 1, "a");
  CHECK(t == ints({dialect().sec_rounding == Rounding::nearest ? 2 : 3}));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: max_field_expire_ms", "[dialect]") {
  both("HSET h a 1");
  const auto max = dialect().max_field_expire_ms;
  CHECK(both({"HPEXPIREAT", "h", std::to_string(max), "FIELDS", "1", "a"}) == ints({1}));
  CHECK(both("HPEXPIRETIME h FIELDS 1 a") == ints({max}));
  CHECK(both({"HEXPIREAT", "h", std::to_string(max / 1000 + 1), "FIELDS", "1", "a"}).is_error_starting("ERR invalid expire time"));
  if (max < std::numeric_limits<int64_t>::max())
    CHECK(both({"HPEXPIREAT", "h", std::to_string(max + 1), "FIELDS", "1", "a"}).is_error_starting("ERR invalid expire time"));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: negative time error text", "[dialect]") {
  both("HSET h a 1");
  CHECK(both("HEXPIRE h -1 FIELDS 1 a") == Reply::error(expirykit::model::ErrorTexts::format(dialect().err.negative_time, "hexpire")));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: lazy_delete_on_read (active expiry off)", "[dialect][expired]") {
  both("HSET h a 1 b 2");
  expire_unreclaimed("h", {"a"});
  CHECK(both("HLEN h") == Reply::integer(2));  // both servers count it
  CHECK(both("HGET h a") == Reply::nil());
  CHECK(both("HLEN h") == Reply::integer(dialect().lazy_delete_on_read ? 1 : 2));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: a hash whose fields all expired", "[dialect][expired]") {
  both("HSET h a 1");
  expire_unreclaimed("h", {"a"});
  CHECK(both("EXISTS h") == Reply::integer(1));
  CHECK(both("HGETALL h") == Reply::array({}));
  CHECK(both("EXISTS h") == Reply::integer(1));  // hidden, not deleted
  both("HMGET h a");
  CHECK(both("EXISTS h") == Reply::integer(dialect().lazy_delete_on_read ? 0 : 1));
  CHECK(both("TYPE h") == Reply::status(dialect().lazy_delete_on_read ? "none" : "hash"));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hdel_expired_reply", "[dialect][expired]") {
  both("HSET h a 1 b 2");
  expire_unreclaimed("h", {"a"});
  CHECK(both("HDEL h a") == Reply::integer(dialect().hdel_expired_reply));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hset_expired_counts_new", "[dialect][expired]") {
  both("HSET h a 1 b 2");
  expire_unreclaimed("h", {"a"});
  CHECK(both("HSET h a 9") == Reply::integer(dialect().hset_expired_counts_new ? 1 : 0));
  CHECK(both("HTTL h FIELDS 1 a") == ints({-1}));
  CHECK(both("HLEN h") == Reply::integer(2));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hexpire_sees_expired", "[dialect][expired]") {
  both("HSET h a 1 b 2");
  expire_unreclaimed("h", {"a"});
  Reply r = both("HEXPIRE h 100 FIELDS 1 a");
  if (dialect().hexpire_sees_expired) {
    CHECK(r == ints({1}));
    CHECK(both("HGET h a") == Reply::string("1"));  // revived
  } else {
    CHECK(r == ints({-2}));
    CHECK(both("HGET h a") == Reply::nil());
  }
  CHECK(both("HPERSIST h FIELDS 1 b") == ints({-1}));
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: hsetex_keepttl_keeps_expired_deadline", "[dialect][expired]") {
  if (!dialect().has_hsetex) SKIP("no HSETEX");
  both("HSET h a 1 b 2");
  expire_unreclaimed("h", {"a"});
  CHECK(both("HSETEX h KEEPTTL FIELDS 1 a 9") == Reply::integer(1));
  if (dialect().hsetex_keepttl_keeps_expired_deadline) {
    CHECK(both("HTTL h FIELDS 1 a") == ints({-2}));
    CHECK(both("HGET h a") == Reply::nil());
  } else {
    CHECK(both("HTTL h FIELDS 1 a") == ints({-1}));
    CHECK(both("HGET h a") == Reply::string("9"));
  }
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: copy_skips_expired_fields", "[dialect][expired]") {
  both("HSET h a 1 b 2");
  both("HSET g a 1");
  expire_unreclaimed("h", {"a"});
  expire_unreclaimed("g", {"a"});
  CHECK(both("COPY h h2") == Reply::integer(1));
  CHECK(both("HLEN h2") == Reply::integer(dialect().copy_skips_expired_fields ? 1 : 2));
  CHECK(both("COPY g g2") == Reply::integer(1));
  CHECK(both("HLEN g2") == Reply::integer(dialect().copy_skips_expired_fields ? 0 : 1));
  check_same_state();
  // Active expiry: the copied empty hash (Valkey) has nothing to expire and stays.
  REQUIRE(twin().set_active_expire(true) == Reply::ok());
  twin().reclaim_model();
  auto t0 = std::chrono::steady_clock::now();
  auto reclaimed = [&] {
    return client()("EXISTS", "g") == Reply::integer(0) &&
           (dialect().copy_skips_expired_fields || client()("EXISTS", "g2") == Reply::integer(0));
  };
  while (!reclaimed() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(both("EXISTS g") == Reply::integer(0));
  CHECK(both("EXISTS g2") == Reply::integer(dialect().copy_skips_expired_fields ? 1 : 0) );
}

TEST_CASE_METHOD(TwinFixture, "Dialect: INFO stat and keyspace field names", "[dialect]") {
  both("HSET h a 1");
  both("HEXPIRE h 100 FIELDS 1 a");
  const std::string stats = client()("INFO", "stats").str();
  CHECK(stats.find(dialect().info_expired_fields_stat + ":") != std::string::npos);
  const std::string keyspace = client()("INFO", "keyspace").str();
  CHECK(keyspace.find(dialect().info_keyspace_volatile + "=") != std::string::npos);
}

TEST_CASE_METHOD(TwinFixture, "Dialect: ttl_encoding of a small hash with a TTL", "[dialect]") {
  both("HSET h a 1 b 2");
  both("HEXPIRE h 100 FIELDS 1 a");
  CHECK(client()("OBJECT", "ENCODING", "h") == Reply::string(dialect().ttl_encoding));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: fields_keyword_scan_from (a key named fields)", "[dialect]") {
  if (!dialect().has_hsetex) SKIP("no HSETEX");
  Reply r = both("HSETEX fields FIELDS 1 a 1");
  if (dialect().fields_keyword_scan_from == 1) {
    CHECK(r == Reply::error("ERR value is not an integer or out of range"));
    CHECK(both("HSETEX fields 2 a 1 b 2") == Reply::integer(1));  // the key doubles as FIELDS
    CHECK(both("HGETEX fields 2 a b") == Reply::array({Reply::string("1"), Reply::string("2")}));
  } else {
    CHECK(r == Reply::integer(1));
    CHECK(both("HGETEX fields FIELDS 1 a") == Reply::array({Reply::string("1")}));
  }
  check_same_state();
}
