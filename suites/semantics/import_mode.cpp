// Field TTLs under Valkey's `import-mode yes` (valkey-hfe.md §1 exceptions and §11; upstream
// tests/unit/hashexpire.tcl, checklist 109; valkey#3006 / #2944): a past deadline no longer
// deletes. HPEXPIRE 0, HEXPIREAT and HSETEX / HGETEX with a past time store the field with that
// deadline, 0 included (reply 1, hexpire notified, no hdel), reads hide it as expired (HGETALL, HEXISTS,
// HRANDFIELD, HSCAN, HTTL -2) while HLEN counts it, and active expiry leaves it alone until
// import-mode is switched off; then every such field is reclaimed (hexpired once per key, del with
// a hash's last field, expired_fields counted). Established live on Valkey 9.1.2 (2026-12-06, by
// hand with valkey-cli first); the model has no import mode, so the expectations are those live
// facts. SKIPs where CONFIG GET import-mode answers nothing (Redis, older Valkey).
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/server/clock.hpp>

using namespace expirykit;
using resp::Reply;

TEST_CASE_METHOD(catch2::ServerFixture, "import-mode: past deadlines store the fields, reads hide them, "
                                        "active expiry waits until import-mode is off",
                 "[semantics][import-mode]") {
  require_field_ttl();
  const model::Dialect d = require_dialect();
  auto& c = client();
  const Reply mode = c("CONFIG", "GET", "import-mode");
  if (!mode.is_array() || mode.size() < 2) SKIP("no import-mode on this server (CONFIG GET answers " << mode << ")");
  if (!d.has_hsetex || !d.has_hgetex) SKIP("import-mode without HSETEX / HGETEX");
  REQUIRE(c("CONFIG", "SET", "hz", "100") == Reply::ok());  // the reclamation after: 10 ms cycles
  const auto base = observe::Counters::read(c, d);
  observe::KeyspaceEvents heard(c);
  // A failed check leaves import-mode on: ServerFixture sets every CONFIG parameter back before
  // the next test (catch2/fixture.hpp).
  REQUIRE(c("CONFIG", "SET", "import-mode", "yes") == Reply::ok());
  REQUIRE(c("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4") == Reply::integer(4));
  CHECK(c("OBJECT", "ENCODING", "h") == Reply::string("listpack"));
  // Each past deadline is set (1), not a deletion (2).
  CHECK(c("HPEXPIRE", "h", 0, "FIELDS", 1, "d") == Reply::ints({1}));
  const int64_t d_due = server::time_ms(c("TIME"));  // d's deadline is at most this: now + 0
  CHECK(c("HEXPIREAT", "h", 1, "FIELDS", 1, "c") == Reply::ints({1}));
  CHECK(c("HSETEX", "h", "EXAT", 1, "FIELDS", 2, "a", "1", "x", "5") == Reply::integer(1));
  REQUIRE(c("HSET", "g", "f", "1") == Reply::integer(1));
  CHECK(c("HGETEX", "g", "EXAT", 1, "FIELDS", 1, "f") == Reply::strings({"1"}));
  // A zero deadline is a deadline too, not "no TTL" (valkey#3006): stored, hidden, reclaimed after.
  REQUIRE(c("HSET", "z", "a", "1") == Reply::integer(1));
  CHECK(c("HSETEX", "z", "EXAT", 0, "FIELDS", 1, "zero", "1") == Reply::integer(1));
  CHECK(c("HPEXPIREAT", "z", 0, "FIELDS", 1, "a") == Reply::ints({1}));
  CHECK(c("HLEN", "z") == Reply::integer(2));
  CHECK(c("HEXPIRETIME", "z", "FIELDS", 2, "zero", "a") == Reply::ints({-2, -2}));
  CHECK(c("OBJECT", "ENCODING", "z") == Reply::string("hashtable"));
  // Stored, counted by HLEN, hidden from every read (once the server's clock is past d's "now").
  server::wait_until_past(c, d_due, 1);
  CHECK(c("HLEN", "h") == Reply::integer(5));
  CHECK(c("HLEN", "g") == Reply::integer(1));
  CHECK(c("OBJECT", "ENCODING", "h") == Reply::string("hashtable"));  // a field with a deadline
  CHECK(c("HGETALL", "h") == Reply::strings({"b", "2"}));
  CHECK(c("HEXISTS", "h", "a") == Reply::integer(0));
  CHECK(c("HGET", "g", "f").is_nil());
  CHECK(c("HTTL", "h", "FIELDS", 5, "a", "b", "c", "d", "x") == Reply::ints({-2, -1, -2, -2, -2}));
  CHECK(c("HRANDFIELD", "h", -5) == Reply::strings({"b", "b", "b", "b", "b"}));
  {
    const Reply scan = c("HSCAN", "h", 0);
    REQUIRE(scan.size() == 2);
    CHECK(scan[1] == Reply::strings({"b", "2"}));
  }
  // Active expiry (hz 100) leaves them: after 300 ms nothing is reclaimed or counted.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(c("HLEN", "h") == Reply::integer(5));
  CHECK(c("DBSIZE") == Reply::integer(3));
  CHECK(observe::Counters::read(c, d).expired_fields == base.expired_fields);
  REQUIRE(c("CONFIG", "SET", "import-mode", "no") == Reply::ok());
  // Then active expiry reclaims all seven: h keeps b, g and z go.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (c("DBSIZE") != Reply::integer(1) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(c("DBSIZE") == Reply::integer(1));
  for (int i = 0; i < 500 && c("HLEN", "h") != Reply::integer(1); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(c("HGETALL", "h") == Reply::strings({"b", "2"}));
  {
    const auto now = observe::Counters::read(c, d);
    CHECK(now.expired_fields == base.expired_fields + 7);
    CHECK(now.expired_keys == base.expired_keys);
  }
  c.call(heard.marker("after"));
  std::multiset<std::string> got;
  for (const auto& e : heard.read_until("after").keyevent) got.insert(e.name + "@" + e.key);
  std::string shown;
  for (const auto& e : got) shown += " " + e;
  INFO("notified:" << shown);
  // While importing: no hdel, no hexpired, a hexpire for each past deadline set.
  CHECK(got.count("hdel@h") == 0);
  CHECK(got.count("hexpire@h") == 3);
  CHECK(got.count("hexpire@g") == 1);
  CHECK(got.count("hexpire@z") == 2);
  // After: h's four in one or more cycles (one hexpired a cycle), g's one and its del.
  CHECK(got.count("hexpired@h") >= 1);
  CHECK(got.count("hexpired@g") == 1);
  CHECK(got.count("del@g") == 1);
  CHECK(got.count("del@z") == 1);
  CHECK(got.count("del@h") == 0);
}
