// Standalone failover with volatile hash fields (no cluster): a replica promoted with REPLICAOF
// NO ONE, and FAILOVER (the primary hands over to its replica and becomes the new primary's
// replica: valkey.io/commands/failover, redis.io/docs/latest/commands/failover). A replica never
// reclaims a field itself (replica.cpp); promoted, it must: the fields whose deadline passed while
// it was a replica (logically expired and unreclaimed there: the primary's active expiry was
// paused) and those whose deadline passes after the promotion go by its own active expiry, with
// its own keyspace notifications and INFO counters, as the model's active expiry says
// (model::Keyspace::reclaim). After FAILOVER the old primary, now a replica, runs the new
// primary's deletions (replica_events.hpp: hdel, del, never hexpired) and counts nothing.
// Live by hand first on Valkey 9.1.2 and Redis 8.0.6 (2026-12-06): the promoted node notified
// hexpired for each key and del for the key that lost its last field, and counted 2 expired
// fields; after FAILOVER the old primary notified hdel, hdel, del and counted none.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture_base.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>
#include <expirykit/state/snapshot.hpp>
#include <expirykit/state/twin.hpp>

#include "replica_cases.hpp"
#include "replica_events.hpp"

using expirykit::resp::Reply;
using expirykit::server::time_ms;
namespace model = expirykit::model;
namespace observe = expirykit::observe;
namespace process = expirykit::process;
namespace state = expirykit::state;

namespace {

/// A primary and a replica of this test's own (their roles change), a twin on the primary, and
/// the data every case starts from.
class Failover : public expirykit::catch2::FixtureBase {
 protected:
  using resp_client = expirykit::resp::Client;

  const expirykit::server::Identity& identity() override { return probe_identity(*p_); }

  /// Starts the pair; on the primary, with active expiry paused: h {a: 100 ms, b, c: 900 s},
  /// g {z: 100 ms} and k {x, y: 1500 ms}; waits until a and z are past their deadline on the
  /// server's clock and the replica has everything. The replica then holds a and z logically
  /// expired (HLEN counts them), and x and y live.
  void start() {
    if (process::external_server())
      SKIP("needs a primary and a replica the kit spawns; EXPIRYKIT_SERVER_ADDR is set (external server)");
    set_ = std::make_unique<process::ReplicaSet>();
    p_.emplace(set_->primary().client());
    r_.emplace(set_->replica(0).client());
    require_field_ttl();
    twin_ = std::make_unique<state::Twin>(*p_, require_dialect(), twin_options());
    twin_->set_active_expire(false);
    for (const char* line : {"HSET h a 1 b 2 c 3", "HPEXPIRE h 100 FIELDS 1 a", "HEXPIRE h 900 FIELDS 1 c",
                             "HSETEX g PX 100 FIELDS 1 z 1", "HSETEX k PX 1500 FIELDS 2 x 1 y 2"}) {
      const auto st = twin_->run(replica_cases::words(line));
      INFO(st.describe());
      REQUIRE(st.ok);
    }
    const model::Entry* g = twin_->model().raw("g");
    REQUIRE(g);
    const int64_t reached = twin_->wait_until_past(*g->hash().fields.at("z").expire_ms);
    REQUIRE(reached > *g->hash().fields.at("z").expire_ms);
    set_->sync();
    REQUIRE(replica()("HLEN", "h") == Reply::integer(3));
    REQUIRE(replica()("HLEN", "g") == Reply::integer(1));
    REQUIRE(replica()("HLEN", "k") == Reply::integer(2));
  }

  resp_client& primary() { return *p_; }
  resp_client& replica() { return *r_; }
  state::Twin& twin() { return *twin_; }
  const model::Dialect& dialect() { return twin_->dialect(); }
  /// The deadline of k's fields (Unix ms).
  int64_t late_deadline() { return *twin_->model().raw("k")->hash().fields.at("x").expire_ms; }

  /// Polls `c` (bounded: 10 s) until a, z, x and y are reclaimed there (HLEN h 2, g and k gone);
  /// FAILs naming `who`.
  static void wait_reclaimed(resp_client& c, const std::string& who) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!(c("HLEN", "h") == Reply::integer(2) && c("EXISTS", "g", "k") == Reply::integer(0))) {
      if (std::chrono::steady_clock::now() > give_up)
        FAIL("waited 10 s for " << who << " to reclaim h.a, g and k: HLEN h " << c("HLEN", "h").to_string()
                                << ", EXISTS g k " << c("EXISTS", "g", "k").to_string());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  /// The model once active expiry reclaimed everything due at `now` (Unix ms): its events and
  /// counters are the reclamation's alone.
  model::Keyspace reclaimed(int64_t now) {
    model::Keyspace m = twin_->model();
    (void)m.take_events();
    m.counters() = {};
    m.reclaim(now, dialect().hexpired_class);
    return m;
  }

  /// CHECKs that `c`, named `who`, heard (`heard`, up to a marker sent now) the events `want`,
  /// holds what `m` holds at `now`, and has the INFO counters of `m` over `base`.
  void check_node(resp_client& c, const std::string& who, observe::KeyspaceEvents& heard,
                  const replica_events::Heard& want, const model::Keyspace& m, const observe::Counters& base, int64_t now) {
    c.call(heard.marker("checked"));
    const auto got = replica_events::of(heard.read_until("checked"));
    INFO(who << " notified:" << replica_events::shown(got) << "\nthe model says:" << replica_events::shown(want));
    CHECK(got == want);
    CHECK(want.count({"del", "k"}) == 1);  // the model's side is not empty: k went with its last fields
    const auto counters = observe::compare(observe::Counters::read(c, dialect()), observe::Counters::of_model(m, base), dialect());
    INFO(who << "'s INFO counters against the model's:\n" << replica_cases::lines(counters));
    CHECK(counters.empty());
    const auto diffs = state::diff(state::Snapshot::of_model(m, now), state::Snapshot::take(c, who));
    INFO(who << " against the model:\n" << replica_cases::lines(diffs));
    CHECK(diffs.empty());
  }

 private:
  std::unique_ptr<process::ReplicaSet> set_;
  std::optional<resp_client> p_, r_;
  std::unique_ptr<state::Twin> twin_;
};

/// The replica's keyspace notifications from now on (every class, both channel families).
std::unique_ptr<observe::KeyspaceEvents> listen(expirykit::resp::Client& c) {
  observe::KeyspaceEvents::Options o;
  o.flags = "KEA";
  return std::make_unique<observe::KeyspaceEvents>(c, o);
}

}  // namespace

TEST_CASE_METHOD(Failover, "A replica promoted with REPLICAOF NO ONE reclaims the fields past their deadline itself",
                 "[durability][replica][failover]") {
  start();
  const auto base = observe::Counters::read(replica(), dialect());
  auto heard = listen(replica());
  REQUIRE(replica()("REPLICAOF", "NO", "ONE") == Reply::status("OK"));
  INFO("k's fields were still live when the replica was promoted: "
       << (time_ms(replica()("TIME")) < late_deadline() ? "yes" : "no (a slow machine: every deadline had passed)"));
  wait_reclaimed(replica(), "the promoted replica");
  const int64_t now = time_ms(replica()("TIME"));
  model::Keyspace m = reclaimed(now);
  const auto want = replica_events::of(m.take_events());  // hexpired (and del): its own active expiry
  check_node(replica(), "the promoted replica", *heard, want, m, base, now);
  // The old primary, left alone with its active expiry paused, still holds every field.
  CHECK(primary()("HLEN", "h") == Reply::integer(3));
  CHECK(primary()("EXISTS", "g", "k") == Reply::integer(2));
}

TEST_CASE_METHOD(Failover, "FAILOVER: the new primary reclaims the fields past their deadline, the old one runs its deletions",
                 "[durability][replica][failover]") {
  start();
  const auto base_new = observe::Counters::read(replica(), dialect());
  const auto base_old = observe::Counters::read(primary(), dialect());
  auto heard_new = listen(replica());
  auto heard_old = listen(primary());
  REQUIRE(primary()("FAILOVER") == Reply::status("OK"));
  // The handover: the old primary waits for its replica's offset, then follows it.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto role = [](resp_client& c) { return c("ROLE")[0].str(); };
  while (!(role(primary()) == "slave" && role(replica()) == "master" &&
           expirykit::server::Info::fetch(primary(), "replication").get("master_link_status") == "up")) {
    if (std::chrono::steady_clock::now() > give_up)
      FAIL("FAILOVER did not hand over in 10 s: old primary " << primary()("ROLE").to_string() << ", old replica "
                                                             << replica()("ROLE").to_string());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  wait_reclaimed(replica(), "the new primary");
  wait_reclaimed(primary(), "the old primary (now a replica)");
  const int64_t now = time_ms(replica()("TIME"));
  const model::Keyspace before = twin().model();
  model::Keyspace m = reclaimed(now);
  const auto own = replica_events::of(m.take_events());
  check_node(replica(), "the new primary", *heard_new, own, m, base_new, now);
  // The old primary expires nothing itself: it notifies what the new primary's deletions make
  // and counts none of them (its counters: base_old's stats, the model's keyspace).
  model::Keyspace follows = m;
  follows.counters() = {};
  check_node(primary(), "the old primary (now a replica)", *heard_old,
             replica_events::from_primary_deletions(dialect(), before, m, now, {"h", "g", "k"}), follows, base_old, now);
}
