// One example per model::Dialect fact, against the live server. Every command runs on the
// server AND the model (TwinFixture::both CHECKs that they agree), and the test then states the
// fact the dialect claims for this server, so neither the model nor the dialect can drift from
// what the server does. CTest runs it against valkey-9.1, redis-8.0 and redis-8.6.
// Server defects are not facts: they are rows of known_issues/table.hpp, checked by
// known_issue_examples_test.cpp and suites/semantics/known_issues.cpp.
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

TEST_CASE_METHOD(TwinFixture, "Dialect: hexpire_multiple_conditions", "[dialect]") {
  both("HSET h a 1");
  both("HEXPIRE h 100 FIELDS 1 a");
  Reply r = both("HEXPIRE h 200 XX GT FIELDS 1 a");
  CHECK((r == ints({1})) == dialect().hexpire_multiple_conditions);
}

TEST_CASE_METHOD(TwinFixture, "Dialect: duplicate_flags_accepted", "[dialect]") {
  both("HSET h a 1");
  const bool acc = dialect().duplicate_flags_accepted;
  // Redis 8.6's keyword parser takes a repeated HEXPIRE condition once (keyword_order_free).
  CHECK(!both("HEXPIRE h 100 NX NX FIELDS 1 a").is_error() == (acc || dialect().keyword_order_free));
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

TEST_CASE_METHOD(TwinFixture, "Dialect: hsetex_numfields_max (HSETEX numfields above INT_MAX)", "[dialect]") {
  if (!dialect().has_hsetex) SKIP("no HSETEX");
  const Reply at_max = both("HSETEX h FIELDS 2147483647 a 1");
  const Reply above = both("HSETEX h FIELDS 2147483648 a 1");
  const Reply top = both("HSETEX h FIELDS 9223372036854775807 a 1");
  CHECK(at_max.is_error());
  if (dialect().hsetex_numfields_max == 2147483647) {
    // In range: the count check (Redis 8.6's keyword parser answers it with its bare text).
    CHECK(at_max == Reply::error(dialect().keyword_order_free ? dialect().err.wrong_args_bare : dialect().arity_error("hsetex")));
    CHECK(above == Reply::error(dialect().err.hsetex_numfields_invalid));
    CHECK(top == Reply::error(dialect().err.hsetex_numfields_invalid));
  } else {
    CHECK(above == at_max);  // one text for any count that does not match
    CHECK(top == at_max);
  }
  CHECK(both("EXISTS h") == Reply::integer(0));
}

TEST_CASE_METHOD(TwinFixture, "Dialect: keyword_order_free (options after FIELDS, 8.6 texts)", "[dialect]") {
  both("HSET h a 1 b 2");
  const bool free = dialect().keyword_order_free;
  const Reply after = both("HEXPIRE h 100 FIELDS 1 a NX");
  CHECK((after == ints({1})) == free);
  if (dialect().has_hsetex) CHECK((both("HSETEX h FIELDS 1 c 3 PX 100000 FNX") == Reply::integer(1)) == free);
  if (dialect().has_hgetex) CHECK((both("HGETEX h FIELDS 1 b PERSIST") == Reply::array({Reply::string("2")})) == free);
  if (free) {
    CHECK(both("HEXPIRE h 100 NX XX FIELDS 1 a") == Reply::error("ERR Multiple condition flags specified"));
    CHECK(both("HEXPIRE h 100 FIELDS 1 a FIELDS 1 b") == Reply::error("ERR FIELDS keyword specified multiple times"));
    CHECK(both("HEXPIRE h 100 FIELDS 1 a b") == Reply::error("ERR unknown argument: b"));
    // The argument is printed with %s: up to its first NUL byte.
    CHECK(both(expirykit::resp::Argv{"HEXPIRE", "h", "100", "FIELDS", "1", "a", std::string("b\0c", 3)}) ==
          Reply::error("ERR unknown argument: b"));
    CHECK(both(expirykit::resp::Argv{"HSETEX", "h", "FIELDS", "1", "a", "v", std::string("\0\xff\xfe", 3)}) ==
          Reply::error("ERR unknown argument: "));
    CHECK(both("HEXPIRE h 100 FIELDS 2 a") == Reply::error("ERR wrong number of arguments"));
    CHECK(both("HSETEX h FIELDS 1 a v EX") == Reply::error("ERR missing expire time"));
    CHECK(both("HSETEX h PERSIST FIELDS 1 a v") == Reply::error("ERR unknown argument"));
    CHECK(both("HGETEX h KEEPTTL FIELDS 1 a") == Reply::error("ERR unknown argument"));
    CHECK(both("HGETEX h FIELDS 0 a") == Reply::error("ERR invalid number of fields"));
    CHECK(both("HGETEX h EX 10 FIELDS 1 a PERSIST") ==
          Reply::error("ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified"));
  }
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "Dialect: restore_past_ttl_counts_expired", "[dialect]") {
  observe_counters();
  both("HSET h a 1");
  both("RESTORE h2 1 @dump:h ABSTTL");  // an absolute TTL of 1 ms after the epoch: long past
  CHECK(both("EXISTS h2") == Reply::integer(0));
  check_counters();  // expired_keys + 1 where the dialect says so, unchanged otherwise
  check_same_state();
}
