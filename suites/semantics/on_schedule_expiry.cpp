// On-schedule active expiry of hash fields: fields are reclaimed by the server's active expiry
// (not merely hidden from reads) soon after their deadline, and the server's expired-fields
// counter counts each exactly once. Counter name: INFO stats expired_fields on Valkey 9.x,
// expired_subkeys on Redis 7.4/8.0 (valkey-hfe.md §15, redis-hfe.md §9, both verified live).
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::resp::Argv;
using expirykit::resp::Reply;
using expirykit::server::Info;

namespace {
// The expired-fields counter, whichever name this server uses; fails the test if it has none.
long long expired_fields_counter(expirykit::resp::Client& c) {
  auto info = Info::fetch(c, "stats");
  for (const char* name : {"expired_fields", "expired_subkeys"})
    if (info.has(name)) return info.get_int(name);
  FAIL("INFO stats has neither expired_fields (Valkey) nor expired_subkeys (Redis)");
  return 0;
}
void sleep_until_server_ms(expirykit::resp::Client& c, long long target_ms) {
  for (long long now = expirykit::server::now_ms(c); now < target_ms; now = expirykit::server::now_ms(c))
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<long long>(target_ms - now, 50)));
}
}  // namespace

TEST_CASE_METHOD(ServerFixture,
                 "On-schedule expiry: 2,000 fields with a 2 s TTL are reclaimed within one 200 ms poll after the "
                 "deadline, counted once each",
                 "[semantics][timing]") {
  require_field_ttl();
  auto& c = client();
  constexpr int n = 2000;
  constexpr long long ttl_ms = 2000, poll_ms = 200;
  Argv hset = {"HSET", "h"};
  Argv expire;
  for (int i = 0; i < n; ++i) {
    hset.push_back("f" + std::to_string(i));
    hset.push_back("v" + std::to_string(i));
  }
  REQUIRE(c.call(hset) == Reply::integer(n));
  const long long counter_before = expired_fields_counter(c);
  const long long deadline = expirykit::server::now_ms(c) + ttl_ms;
  expire = {"HPEXPIREAT", "h", std::to_string(deadline), "FIELDS", std::to_string(n)};
  for (int i = 0; i < n; ++i) expire.push_back("f" + std::to_string(i));
  auto r = c.call(expire);
  REQUIRE(r.is_array());
  REQUIRE(r.size() == static_cast<std::size_t>(n));
  for (const auto& e : r.elements()) REQUIRE(e == Reply::integer(1));

  // Not early: shortly before the deadline every field is still there.
  sleep_until_server_ms(c, deadline - 300);
  if (expirykit::server::now_ms(c) < deadline - 50) {  // the check is only meaningful if we are in time
    CHECK(c("HLEN", "h") == Reply::integer(n));
    CHECK(c("HGET", "h", "f1999") == Reply::string("v1999"));
  }
  // Poll every 200 ms from the deadline on. The first poll at or after deadline + 200 ms must
  // find the hash reclaimed (key gone: the last field took it along).
  sleep_until_server_ms(c, deadline);
  long long gone_at = -1, now = 0;
  for (int i = 0; i < 50 && gone_at < 0; ++i) {
    now = expirykit::server::now_ms(c);
    if (c("EXISTS", "h") == Reply::integer(0)) gone_at = now;
    else if (now >= deadline + poll_ms) break;
    else sleep_until_server_ms(c, std::min(now + poll_ms, deadline + poll_ms));
  }
  INFO("deadline " << deadline << ", last poll at +" << (now - deadline) << " ms, HLEN then "
                   << c("HLEN", "h") << " (Valkey counts unreclaimed expired fields in HLEN)");
  CHECK(gone_at >= 0);
  if (gone_at < 0) {  // late: wait up to 10 s more so the counter check below still means something
    while (expirykit::server::now_ms(c) < deadline + 10000 && c("EXISTS", "h") == Reply::integer(1))
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  // Every field expired exactly once.
  CHECK(c("EXISTS", "h") == Reply::integer(0));
  CHECK(expired_fields_counter(c) - counter_before == n);
}
