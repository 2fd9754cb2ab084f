// What a fork child (BGSAVE, BGREWRITEAOF, a replica's full sync) does with the data: it must
// save every key, whatever state its fields are in, and finish.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::resp::Reply;
namespace server = expirykit::server;

// A hash whose fields are all logically expired, copied (Valkey 9.1.2 leaves an empty hash,
// known_issues/table.hpp valkey-copy-expired-fields-replica), then BGSAVE: the save must finish
// within 10 s with status ok. On Valkey 9.1.2 the child asserts and hangs
// (valkey-empty-hash-fork-crash); the server is this test's own and is killed with its group.
TEST_CASE_METHOD(ServerFixture, "BGSAVE finishes after COPY of a hash whose fields are all logically expired",
                 "[durability][fork]") {
  require_field_ttl();
  auto srv = fresh_server({}, "a save that may hang");
  auto c = srv->client();
  REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "0") == Reply::ok());
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  REQUIRE(c("HPEXPIRE", "h", 1, "FIELDS", 1, "a") == Reply::ints({1}));
  server::wait_until_past(c, server::now_ms(c) + 2);
  REQUIRE(c("COPY", "h", "h2") == Reply::integer(1));
  const auto before = server::Info::fetch(c, "persistence").get_int("rdb_saves", -1);
  REQUIRE(c("BGSAVE").is_status());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  server::Info info = server::Info::fetch(c, "persistence");
  while (info.get_int("rdb_bgsave_in_progress") != 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    info = server::Info::fetch(c, "persistence");
  }
  const bool finished = info.get_int("rdb_bgsave_in_progress") == 0 && info.get_int("rdb_saves", -1) > before &&
                        info.get("rdb_last_bgsave_status").value_or("") == "ok";
  const std::string observed = "after 10 s: rdb_bgsave_in_progress=" + info.get("rdb_bgsave_in_progress").value_or("?") +
                               ", rdb_last_bgsave_status=" + info.get("rdb_last_bgsave_status").value_or("?") +
                               ", HLEN h2=" + c("HLEN", "h2").to_string();
  expirykit::catch2::known_issue(identity(), "valkey-empty-hash-fork-crash", !finished, observed);
  INFO(observed << "\n" << srv->log_tail(10));
  CHECK(finished);
}
