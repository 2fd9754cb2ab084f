// An RDB load with active expiry paused (DEBUG RELOAD), followed by the twin
// (state::Twin::follow_load): what the load stores and counts, then lazy and active expiry of
// what it kept, each against the model (model::Keyspace::after_load under the dialect's
// load_skips_due_fields). redis-hfe.md checklist 90, 91 (rdb.tcl: an all-expired hash loads
// counted but empty; expired_subkeys 0 before access; lazy and active expiry after the load);
// valkey-hfe.md checklist 111 (an all-expired hash is skipped by the load).
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <thread>
#include <utility>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/server/info.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Reply;

TEST_CASE_METHOD(TwinFixture, "An RDB load with active expiry paused stores, counts and then expires what the dialect says",
                 "[durability][load]") {
  require_field_ttl();
  require_debug("DEBUG RELOAD");
  auto& t = twin();
  observe_counters();
  REQUIRE(t.set_active_expire(false) == Reply::ok());
  // "gone": every field due; "part": one of three due; "far": a deadline an hour away; "keep":
  // no TTL; "big": 150 fields, 100 of them due.
  REQUIRE(t.run("HSET gone a 1 b 2").ok);
  REQUIRE(t.run("HPEXPIRE gone 30 FIELDS 2 a b").ok);
  REQUIRE(t.run("HSET part a 1 b 2 c 3").ok);
  REQUIRE(t.run("HPEXPIRE part 30 FIELDS 1 a").ok);
  REQUIRE(t.run("HSETEX far PX 3600000 FIELDS 1 f 1").ok);
  REQUIRE(t.run("HSET keep x 1").ok);
  expirykit::resp::Argv big{"HSET", "big"}, due{"HPEXPIRE", "big", "30", "FIELDS", "100"};
  for (int i = 0; i < 150; ++i) big.insert(big.end(), {"f" + std::to_string(i), std::to_string(i)});
  for (int i = 0; i < 100; ++i) due.push_back("f" + std::to_string(i));
  REQUIRE(t.run(big).ok);
  REQUIRE(t.run(due).ok);
  t.wait_until_past(t.history().back().after_ms + 30, 5);
  check_counters();

  // INFO stats survive DEBUG RELOAD: the load itself must count no expired field or key.
  auto expired = [&] {
    const auto st = expirykit::server::Info::fetch(client(), "stats");
    return std::make_pair(st.get_int(dialect().info_expired_fields_stat), st.get_int("expired_keys"));
  };
  const auto expired_before = expired();
  REQUIRE(client()("DEBUG", "RELOAD") == Reply::ok());
  CHECK(expired() == expired_before);
  t.follow_load();
  // What was loaded: the model's keys; Valkey skips "gone" and every due field, Redis keeps them.
  const auto persistence = expirykit::server::Info::fetch(client(), "persistence");
  CHECK(persistence.get_int("rdb_last_load_keys_loaded") == static_cast<long long>(t.model().size()));
  CHECK(t.model().size() == (dialect().load_skips_due_fields ? 4u : 5u));
  check_same_state();  // HLEN counts the due fields a load kept
  check_counters();    // the model's counters from the load on (re-based by follow_load)

  // Lazy expiry of what the load kept (Redis deletes on access; Valkey has nothing due left).
  CHECK(both("HGET part a").is_nil());
  CHECK(both("HLEN big") == Reply::integer(dialect().load_skips_due_fields ? 50 : 150));
  CHECK(both("HMGET big f0 f149") == Reply::array({Reply::nil(), Reply::string("149")}));
  check_counters();
  check_same_state();

  // Active expiry of the rest: "gone" and "big"'s due fields (Redis), nothing (Valkey).
  REQUIRE(t.set_active_expire(true) == Reply::ok());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until &&
         (client()("EXISTS", "gone") != Reply::integer(0) || client()("HLEN", "big") != Reply::integer(50)))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.reclaim_model();
  check_same_state();
  check_counters();
  CHECK(both("HLEN big") == Reply::integer(50));
}
