// FLUSHALL ASYNC and FLUSHDB ASYNC over volatile fields (issue 22: "unsent: FLUSHALL ASYNC").
// An asynchronous flush empties the keyspace at once and frees the old one in a background
// thread (lazy free, upstream docs: FLUSHALL "ASYNC: flushes the databases asynchronously"). The
// volatile fields it dropped must be gone from the server's expiry bookkeeping too: none of them
// may expire later (no hexpired, no expired_fields), and a hash created again under the same
// name expires on its own deadlines only. The main property draws FLUSHALL / FLUSHDB with SYNC,
// ASYNC or neither among its commands (gen::around_command) on hashes of a few fields; here the
// hash has 1,000 fields, past the size at which the servers free an object in the background.
// The model (state::Twin: replies, keyspace notifications, INFO counters, the whole state) is the
// specification; active expiry runs (hz 100), the deadlines are 1 s and 1.5 s after the commands
// that set them and the waits are on the server's clock, so a loaded machine only makes them
// longer. Live on Valkey 9.1.2, Redis 8.0.6 and 8.6.3 (2026-12-06).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/server/info.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Argv;
using expirykit::resp::Reply;

namespace {
/// HLEN of `key` on `c` until it is `n` or `limit` passes; the last HLEN.
long long hlen_until(expirykit::resp::Client& c, const std::string& key, long long n, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  long long got = c("HLEN", key).as_integer();
  while (got != n && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    got = c("HLEN", key).as_integer();
  }
  return got;
}
}  // namespace

TEST_CASE_METHOD(TwinFixture, "FLUSHALL ASYNC and FLUSHDB ASYNC: flushed volatile fields never expire, a hash made again "
                              "under the same name expires on its own deadlines",
                 "[semantics][flush]") {
  require_field_ttl();
  auto& t = twin();
  auto& c = client();
  REQUIRE(c("CONFIG", "SET", "hz", "100") == Reply::ok());
  observe_events();
  observe_counters();
  const std::string flush = GENERATE(as<std::string>{}, "FLUSHALL", "FLUSHDB");
  INFO(flush << " ASYNC");
  Argv big{"HSET", "big"}, ttl{"HPEXPIRE", "big", "1000", "FIELDS", "500"};
  for (int i = 0; i < 1000; ++i) {
    big.push_back("f" + std::to_string(i));
    big.push_back("v" + std::to_string(i));
    if (i < 500) ttl.push_back("f" + std::to_string(i));
  }
  REQUIRE(both(big) == Reply::integer(1000));
  REQUIRE(both(ttl).is_array());
  REQUIRE(both("HSET small a 1 b 2") == Reply::integer(2));
  REQUIRE(both("HPEXPIRE small 1000 FIELDS 1 a") == Reply::ints({1}));
  const int64_t old_due = t.history().back().after_ms + 1000;  // the flushed fields' deadlines are at most this
  CHECK(both(flush + " ASYNC") == Reply::ok());
  CHECK(both("DBSIZE") == Reply::integer(0));
  CHECK(both("HLEN big") == Reply::integer(0));
  // The same name again: two fields, one due 1.5 s from now, after the old deadlines.
  REQUIRE(both("HSET big x 1 y 2") == Reply::integer(2));
  REQUIRE(both("HPEXPIRE big 1500 FIELDS 1 x") == Reply::ints({1}));
  const int64_t new_due = t.history().back().after_ms + 1500;
  t.wait_until_past(old_due, 50);
  // Past the old deadlines, with active expiry running: nothing of the old keyspace expires.
  CHECK(both("HLEN big") == Reply::integer(2));
  const auto quiet = t.compare_background_events();  // the model reclaims nothing: the server must not either
  INFO(expirykit::catch2::detail::one_per_line(quiet));
  CHECK(quiet.empty());
  check_counters();
  t.wait_until_past(new_due, 5);
  CHECK(hlen_until(c, "big", 1, std::chrono::seconds(10)) == 1);  // active expiry reached x
  t.reclaim_model();
  const auto events = t.compare_background_events();  // hexpired for x, nothing else
  INFO(expirykit::catch2::detail::one_per_line(events));
  CHECK(events.empty());
  check_counters();
  check_same_state();
  // The old keyspace was freed: nothing waits for the lazy-free thread any more.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  long long pending = 0;
  do {
    pending = expirykit::server::Info::fetch(c, "memory").get_int("lazyfree_pending_objects", 0);
    if (pending) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (pending && std::chrono::steady_clock::now() < end);
  CHECK(pending == 0);
}
