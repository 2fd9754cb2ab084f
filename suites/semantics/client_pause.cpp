// Field expiry while writes are paused (CLIENT PAUSE <ms> WRITE): neither active nor lazy expiry
// deletes anything until CLIENT UNPAUSE, so the data set stays as it was (upstream
// tests/unit/pause.tcl, "Test both active and passive expires are skipped during client pause",
// checks it for keys); reads still hide what is logically expired. This checks the same for hash
// fields: during the pause a field past its deadline reads as absent (HGET nil, HMGET nil, HTTL
// -2) while HLEN and DBSIZE still count it, no expiry counter moves and, once unpaused, active
// expiry reclaims every due field and key with one notification each (hexpired, del with a
// hash's last field, expired for a key TTL). Live on Valkey 9.1.2, Redis 8.0.6 and 8.6.3
// (2026-12-06, by hand first); Redis's HMGET also notifies hexpired during the pause although
// nothing is deleted (known_issues/table.hpp, redis-pause-hmget-notifies-hexpired).
// The deadlines are 200 ms after the commands that set them and the pause lasts until CLIENT
// UNPAUSE (its timeout, 60 s, only bounds a failed test), so a loaded machine only makes it
// longer.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>

using namespace expirykit;
using resp::Reply;

namespace {

/// CLIENT UNPAUSE when it goes, so a failed check does not leave the shared server paused.
class Unpause {
 public:
  explicit Unpause(resp::Client& c) : c_(c) {}
  ~Unpause() {
    try {
      c_("CLIENT", "UNPAUSE");
    } catch (...) {
    }
  }
  Unpause(const Unpause&) = delete;
  Unpause& operator=(const Unpause&) = delete;

 private:
  resp::Client& c_;
};

}  // namespace

TEST_CASE_METHOD(catch2::ServerFixture, "CLIENT PAUSE WRITE: no field expires while writes are paused, all go after",
                 "[semantics][pause]") {
  require_field_ttl();
  const model::Dialect d = require_dialect();
  auto& c = client();
  REQUIRE(c("CONFIG", "SET", "hz", "100") == Reply::ok());  // the reclamation after the pause: 10 ms cycles
  const auto base = observe::Counters::read(c, d);
  observe::KeyspaceEvents heard(c);
  REQUIRE(c("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
  REQUIRE(c("HSET", "g", "x", "1") == Reply::integer(1));
  REQUIRE(c("HSET", "r", "q", "1", "w", "2") == Reply::integer(2));
  REQUIRE(c("HPEXPIRE", "h", 200, "FIELDS", 1, "a") == Reply::ints({1}));
  REQUIRE(c("HPEXPIRE", "g", 200, "FIELDS", 1, "x") == Reply::ints({1}));
  REQUIRE(c("HPEXPIRE", "r", 200, "FIELDS", 1, "q") == Reply::ints({1}));
  REQUIRE(c("SET", "s", "v", "PX", 200) == Reply::ok());
  const int64_t set_at = server::time_ms(c("TIME"));
  {
    // What the setup notified, cut off before the pause (PUBLISH is paused with the writes).
    c.call(heard.marker("setup"));
    (void)heard.read_until("setup");
  }
  Unpause unpause(c);
  REQUIRE(c("CLIENT", "PAUSE", 60000, "WRITE") == Reply::ok());
  const int64_t passed = server::wait_until_past(c, set_at + 200, 50);
  INFO("paused at the server's " << set_at << " ms; every deadline (200 ms after) passed by " << passed);
  // Reads hide the logically expired fields and key; nothing is deleted, nothing counted.
  CHECK(c("HGET", "h", "a").is_nil());
  CHECK(c("HTTL", "h", "FIELDS", 2, "a", "b") == Reply::ints({-2, -1}));
  CHECK(c("HMGET", "r", "q", "w") == Reply::array({Reply::nil(), Reply::string("2")}));
  CHECK(c("GET", "s").is_nil());
  CHECK(c("EXISTS", "s") == Reply::integer(0));
  CHECK(c("HLEN", "h") == Reply::integer(2));
  CHECK(c("HLEN", "r") == Reply::integer(2));
  CHECK(c("HLEN", "g") == Reply::integer(1));
  CHECK(c("DBSIZE") == Reply::integer(4));
  {
    const auto now = observe::Counters::read(c, d);
    CHECK(now.expired_fields == base.expired_fields);
    CHECK(now.expired_keys == base.expired_keys);
  }
  REQUIRE(c("CLIENT", "UNPAUSE") == Reply::ok());
  // Active expiry reclaims what was due: a of h, the only field of g (g goes), q of r, and s.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (c("DBSIZE") != Reply::integer(2) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(c("DBSIZE") == Reply::integer(2));
  CHECK(c("HLEN", "h") == Reply::integer(1));
  CHECK(c("HLEN", "r") == Reply::integer(1));
  {
    const auto now = observe::Counters::read(c, d);
    CHECK(now.expired_fields == base.expired_fields + 3);
    CHECK(now.expired_keys == base.expired_keys + 1);
  }
  c.call(heard.marker("after"));
  std::multiset<std::string> got;
  for (const auto& e : heard.read_until("after").keyevent) got.insert(e.name + "@" + e.key);
  const std::multiset<std::string> want{"hexpired@h", "hexpired@g", "del@g", "hexpired@r", "expired@s"};
  auto shown = [](const std::multiset<std::string>& v) {
    std::string out;
    for (const auto& e : v) out += " " + e;
    return out;
  };
  std::multiset<std::string> with_defect = want;
  with_defect.insert("hexpired@r");  // the HMGET during the pause
  INFO("notified:" << shown(got) << "\nspecified:" << shown(want));
  if (got != want && got != with_defect) FAIL("neither the specification nor the recorded defect");
  if (d.flavor == "redis")
    catch2::known_issue(identity(), "redis-pause-hmget-notifies-hexpired", got == with_defect,
                        "notified:" + shown(got) + " (specified:" + shown(want) + ")");
  CHECK(got == want);
}
