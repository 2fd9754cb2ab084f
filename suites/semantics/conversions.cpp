// A hash that changes encoding while it holds volatile fields (listpack or listpackex to
// hashtable; Valkey 9.1.2 keeps a hash with a volatile field as hashtable already), each step against the model with its encoding compared: lazy expiry of fields that
// expired before the conversion (redis-hfe.md checklist 74), active expiry after a live conversion
// of a hash past hash-max-listpack-entries (75), and 2 KB values kept in a listpack under a
// raised hash-max-listpack-value, their deadlines set out of insertion order, one persisted, then
// reclaimed by active expiry (76); a past-time HSETEX leaving a listpack (valkey-hfe.md 109).
#include <catch2/catch_test_macros.hpp>

#include <string>

#include <expirykit/catch2/twin_fixture.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Argv;
using expirykit::resp::Reply;

namespace {
std::string S(long long v) { return std::to_string(v); }
}  // namespace

TEST_CASE_METHOD(TwinFixture, "Fields expired before a conversion to hashtable stay expired after it", "[semantics][encoding]") {
  require_field_ttl();
  auto& t = twin();
  observe_counters();
  REQUIRE(t.run("HSET h a 1 b 2 c 3").ok);
  expire_unreclaimed("h", {"a", "b"});  // active expiry off, a and b past their deadline
  CHECK(both("OBJECT ENCODING h").is_string());
  // A value past hash-max-listpack-value (64 bytes by default) converts the hash.
  CHECK(both({"HSET", "h", "long", std::string(300, 'x')}) == Reply::integer(1));
  CHECK(both("OBJECT ENCODING h") == Reply::string("hashtable"));
  CHECK(both("HGET h a").is_nil());
  CHECK(both("HMGET h b c") == Reply::array({Reply::nil(), Reply::string("3")}));
  CHECK(both("HEXISTS h b") == Reply::integer(0));
  check_same_state();
  check_counters();
  check_active_expiry(t.server_time());
}

TEST_CASE_METHOD(TwinFixture, "Active expiry reclaims the fields of a hash converted while they waited", "[semantics][encoding][active]") {
  require_field_ttl();
  auto& t = twin();
  observe_events();
  observe_counters();
  REQUIRE(client()("CONFIG", "SET", "hz", "100") == Reply::ok());
  REQUIRE(t.set_active_expire(false) == Reply::ok());  // check_active_expiry turns it on
  // 100 fields with deadlines spread over 300 ms (a listpack(ex) hash on Redis; Valkey keeps a
  // hash with volatile fields as hashtable), then fields without TTL until the hash passes
  // hash-max-listpack-entries (512 by default on both) and converts midway.
  const Reply entries = client()("CONFIG", "GET", "hash-max-listpack-entries");
  REQUIRE((entries.is_array() && entries.size() == 2));
  const int more_fields = std::stoi(entries[1].str()) - 100 + 50;
  Argv first{"HSET", "h"};
  for (int i = 0; i < 100; ++i) first.insert(first.end(), {"v" + S(i), S(i)});
  REQUIRE(t.run(first).ok);
  const int64_t t0 = t.server_time();
  Argv at{"HPEXPIREAT", "h", "", "FIELDS", "1", ""};
  for (int i = 0; i < 100; ++i) {
    at[2] = S(t0 + 600 + 3 * i);
    at[5] = "v" + S(i);
    REQUIRE(t.run(at).ok);
  }
  Argv more{"HSET", "h"};
  for (int i = 0; i < more_fields; ++i) more.insert(more.end(), {"p" + S(i), S(i)});
  REQUIRE(t.run(more).ok);
  CHECK(both("OBJECT ENCODING h") == Reply::string("hashtable"));
  check_same_state();
  check_active_expiry(t0 + 600 + 3 * 99);
  CHECK(both("HLEN h") == Reply::integer(more_fields));
}

TEST_CASE_METHOD(TwinFixture, "2 KB values in a listpack under a raised hash-max-listpack-value, deadlines out of order",
                 "[semantics][encoding][active]") {
  require_field_ttl();
  auto& t = twin();
  set_config_for_test("hash-max-listpack-value", "4096");
  REQUIRE(t.read_listpack_limits());
  observe_events();
  observe_counters();
  REQUIRE(client()("CONFIG", "SET", "hz", "100") == Reply::ok());
  REQUIRE(t.set_active_expire(false) == Reply::ok());
  Argv h{"HSET", "h"};
  for (int i = 0; i < 6; ++i) h.insert(h.end(), {"f" + S(i), std::string(2048, static_cast<char>('a' + i))});
  REQUIRE(t.run(h).ok);
  CHECK(both("OBJECT ENCODING h") == Reply::string("listpack"));
  // Deadlines in another order than the fields were written: f4 first, f0 last; f5 none.
  const int64_t t0 = t.server_time();
  const int order[] = {4, 1, 3, 0};
  for (int k = 0; k < 4; ++k)
    REQUIRE(t.run({"HPEXPIREAT", "h", S(t0 + 500 + 100 * (3 - k) + 50), "FIELDS", "1", "f" + S(order[k])}).ok);
  REQUIRE(t.run({"HPEXPIREAT", "h", S(t0 + 100000), "FIELDS", "1", "f2"}).ok);  // persisted next
  CHECK(both("HPERSIST h FIELDS 1 f2") == Reply::ints({1}));
  CHECK(both("HTTL h FIELDS 6 f0 f1 f2 f3 f4 f5").is_array());
  CHECK(both("HGETALL h").is_array());
  CHECK(both("HRANDFIELD h -3 WITHVALUES").is_array());
  check_same_state();  // the encoding too: the 2 KB values stay in a listpack(ex)
  check_active_expiry(t0 + 500 + 100 * 3 + 50);
  CHECK(both("HLEN h") == Reply::integer(2));  // f2 (persisted) and f5 (never volatile)
}

TEST_CASE_METHOD(TwinFixture, "DEBUG LISTPACK on a hash with volatile fields in a listpack", "[semantics][encoding]") {
  // redis-hfe.md checklist 73: the debug dump of a listpackex (Redis keeps field TTLs in the
  // listpack) answers "Listpack structure printed on stdout" (live 8.0.6, 8.6.3) and the
  // server, and the hash, are as before. Valkey keeps such a hash
  // as hashtable: DEBUG LISTPACK refuses it with an error, and nothing changes either.
  require_field_ttl();
  require_debug("DEBUG LISTPACK");
  REQUIRE(both("HSET h a 1 b 2 c 3") == Reply::integer(3));
  CHECK(both("HPEXPIRE h 100000 FIELDS 2 a b") == Reply::ints({1, 1}));
  const Reply enc = both("OBJECT ENCODING h");
  const Reply r = client()("DEBUG", "LISTPACK", "h");
  INFO("OBJECT ENCODING h: " << enc << "; DEBUG LISTPACK h: " << r);
  if (enc == Reply::string("listpackex")) CHECK(r == Reply::status("Listpack structure printed on stdout"));
  else CHECK(r.is_error());
  CHECK(client()("PING") == Reply::status("PONG"));
  CHECK(both("HTTL h FIELDS 3 a b c").is_array());
  check_same_state();
}

TEST_CASE_METHOD(TwinFixture, "A past-time HSETEX deletes its fields and leaves the rest of the hash a listpack",
                 "[semantics][encoding]") {
  // valkey-hfe.md checklist 109: HSETEX with EXAT 0 (or any past time) is valid, deletes the
  // fields it names and stores no deadline, so the hash that survives keeps its listpack
  // encoding (Valkey); the key goes when it deletes the last field. Reply, events, counters, state and
  // encoding against the model.
  require_field_ttl();
  auto& t = twin();
  if (!t.dialect().has_hsetex) SKIP("no HSETEX in this dialect");
  observe_events();
  observe_counters();
  REQUIRE(both("HSET h a 1 b 2 c 3") == Reply::integer(3));
  CHECK(both("OBJECT ENCODING h") == Reply::string("listpack"));
  CHECK(both("HSETEX h EXAT 0 FIELDS 1 a 9").is_integer());
  CHECK(both("HSETEX h PXAT 1 FIELDS 2 b 9 new 9").is_integer());  // a stored field and a new one
  CHECK(both("HGETALL h") == Reply::strings({"c", "3"}));
  // Valkey: listpack (checklist 109); Redis 8.0.6 and 8.6.3 turn a listpack that HSETEX wrote
  // into listpackex even when no deadline is stored (live, 2026-12-06; the model's encoding rule).
  CHECK(both("OBJECT ENCODING h") == Reply::string(t.dialect().flavor == "valkey" ? "listpack" : "listpackex"));
  CHECK(both("HSETEX h EXAT 1 FIELDS 1 c 9").is_integer());  // the last field: the key goes
  CHECK(both("EXISTS h") == Reply::integer(0));
  check_counters();
  check_same_state();
}
