// Replication topologies beyond one primary and one replica, with volatile hash fields: a
// replica promoted (REPLICAOF NO ONE; FAILOVER, where the primary hands over to its replica and
// becomes the new primary's replica: valkey.io/commands/failover,
// redis.io/docs/latest/commands/failover), and a chained replica (a replica of a replica).
//
// A replica never reclaims a field itself (replica.cpp); promoted, it must: the fields whose
// deadline passed while it was a replica (logically expired and unreclaimed there: the primary's
// active expiry was paused) and those whose deadline passes after the promotion go by its own
// active expiry, with its own keyspace notifications and INFO counters, as the model's active
// expiry says (model::Keyspace::reclaim). After FAILOVER the old primary, now a replica, runs the
// new primary's deletions (replica_events.hpp: hdel, del, never hexpired) and counts nothing.
// Live by hand first on Valkey 9.1.2 and Redis 8.0.6 (2026-12-06): the promoted node notified
// hexpired for each key and del for the key that lost its last field, and counted 2 expired
// fields; after FAILOVER the old primary notified hdel, hdel, del and counted none.
// A chained replica gets the primary's stream as its own replica passes it on (the same
// replication ID and offsets): the same fields and deadlines to the millisecond, the same
// deletions, and it follows again after the primary restarts from its RDB.
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

/// A primary and a replica of this test's own (their roles change; with `chained`, a second
/// replica that replicates the first), a twin on the primary, and the data every case starts
/// from.
class Topology : public expirykit::catch2::FixtureBase {
 protected:
  using resp_client = expirykit::resp::Client;

  /// After the test: each node still runs and answers PING, else the test fails with its exit
  /// status and log tail (FixtureBase::nodes_answer), named by the role it started in.
  ~Topology() override {
    if (!set_) return;
    try {
      std::vector<process::Server*> nodes{&set_->primary()};
      for (std::size_t i = 0; i < set_->replica_count(); ++i) nodes.push_back(&set_->replica(i));
      nodes_answer(nodes, [this](process::Server& s) {
        if (&s == &set_->primary()) return std::string("the node started as the primary");
        return std::string(&s == &set_->replica(0) ? "the node started as the replica" : "the sub-replica");
      });
    } catch (...) {
    }
  }

  const expirykit::server::Identity& identity() override {
    if (!p_) FAIL("identity() before start(): no servers yet");
    return probe_identity(*p_);
  }

  /// Starts the pair (and with `chained` a sub-replica of the replica); on the primary, with
  /// active expiry paused: h {a: 100 ms, b, c: 900 s}, g {z: 100 ms} and k {x, y: 1500 ms};
  /// waits until a and z are past their deadline on the server's clock and the replicas have
  /// everything. The replicas then hold a and z logically expired (HLEN counts them), and x and
  /// y live.
  void start(bool chained = false) {
    if (process::external_server())
      SKIP("needs a primary and a replica the kit spawns; EXPIRYKIT_SERVER_ADDR is set (external server)");
    process::ReplicaSet::Options o;
    o.replicas = chained ? 2 : 1;
    set_ = std::make_unique<process::ReplicaSet>(o);
    p_.emplace(set_->primary().client());
    r_.emplace(set_->replica(0).client());
    require_field_ttl();
    if (chained) {
      sub_.emplace(set_->replica(1).client());
      auto& r0 = set_->replica(0);
      REQUIRE((*sub_)("REPLICAOF", r0.host(), r0.port()) == Reply::status("OK"));
      // Linked to the first replica, its sync done (ReplicaSet::sync() then compares its offset
      // and replication ID with the primary's: a chain passes both on unchanged).
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (;;) {
        const auto info = expirykit::server::Info::fetch(*sub_, "replication");
        if (info.get("master_port") == std::to_string(r0.port()) && info.get("master_link_status") == "up" &&
            info.get_int("master_sync_in_progress", 1) == 0)
          break;
        if (std::chrono::steady_clock::now() > give_up)
          FAIL("the sub-replica did not link to the replica in 30 s: " << info.get("master_link_status").value_or("?"));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
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
    for (auto* c : {&*r_, sub_ ? &*sub_ : nullptr}) {
      if (!c) continue;
      REQUIRE((*c)("HLEN", "h") == Reply::integer(3));
      REQUIRE((*c)("HLEN", "g") == Reply::integer(1));
      REQUIRE((*c)("HLEN", "k") == Reply::integer(2));
    }
  }

  resp_client& primary() { return *p_; }
  resp_client& replica() { return *r_; }
  /// The chained replica (start(true)).
  resp_client& sub() { return *sub_; }
  process::ReplicaSet& set() { return *set_; }
  /// set().restart_primary(...), then a new connection to the primary (the twin keeps using it).
  void restart_primary() {
    set_->restart_primary(process::Shutdown::save, process::Relink::on_their_own);
    p_.emplace(set_->primary().client());
  }
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
  std::optional<resp_client> p_, r_, sub_;
  std::unique_ptr<state::Twin> twin_;
};

/// The replica's keyspace notifications from now on (every class, both channel families).
std::unique_ptr<observe::KeyspaceEvents> listen(expirykit::resp::Client& c) {
  observe::KeyspaceEvents::Options o;
  o.flags = "KEA";
  return std::make_unique<observe::KeyspaceEvents>(c, o);
}

}  // namespace

TEST_CASE_METHOD(Topology, "A replica promoted with REPLICAOF NO ONE reclaims the fields past their deadline itself",
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

TEST_CASE_METHOD(Topology, "FAILOVER: the new primary reclaims the fields past their deadline, the old one runs its deletions",
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

TEST_CASE_METHOD(Topology,
                 "A chained replica holds every field and deadline, runs the primary's deletions, and follows a "
                 "restarted primary",
                 "[durability][replica][chained]") {
  start(true);
  {
    // Both read before k's fields fall due (the setup's last deadline), so that the two show the
    // same fields live; a machine too slow for that says so instead of comparing.
    const auto p = state::Snapshot::take(primary(), "primary");
    const auto r = state::Snapshot::take(sub(), "sub-replica");
    if (r.at_ms < late_deadline()) {
      const auto diffs = state::diff(p, r);
      INFO("the sub-replica against the primary (deadlines to the millisecond, HLEN with the unreclaimed fields):\n"
           << replica_cases::lines(diffs));
      CHECK(diffs.empty());
    } else {
      WARN("the snapshots were read after k's fields fell due (" << r.at_ms << " >= " << late_deadline()
                                                                 << "): not compared before the reclamation");
    }
  }
  const auto base_replica = observe::Counters::read(replica(), dialect());
  const auto base_sub = observe::Counters::read(sub(), dialect());
  auto heard_replica = listen(replica());
  auto heard_sub = listen(sub());
  const model::Keyspace before = twin().model();
  twin().set_active_expire(true);
  wait_reclaimed(primary(), "the primary");
  set().sync();
  const int64_t now = time_ms(primary()("TIME"));
  model::Keyspace follows = reclaimed(now);
  (void)follows.take_events();
  follows.counters() = {};
  // Both replicas, the chained one too, run the primary's deletions and count none of them.
  const auto want = replica_events::from_primary_deletions(dialect(), before, follows, now, {"h", "g", "k"});
  check_node(replica(), "the replica", *heard_replica, want, follows, base_replica, now);
  check_node(sub(), "the sub-replica", *heard_sub, want, follows, base_sub, now);
  // Fields that fall due while the primary is down (valkey-hfe.md checklist 110): its active
  // expiry paused, "due" and one field of "part" pass their deadline, held by all three nodes.
  twin().set_active_expire(false);
  for (const char* line : {"HSETEX due PX 150 FIELDS 2 x 1 y 2", "HSET part keep 1 gone 2", "HPEXPIRE part 150 FIELDS 1 gone"}) {
    const auto st = twin().run(replica_cases::words(line));
    INFO(st.describe());
    CHECK(st.ok);
  }
  twin().wait_until_past(*twin().model().raw("part")->hash().fields.at("gone").expire_ms, 20);  // set last
  set().sync();
  CHECK(sub()("HLEN", "due") == Reply::integer(2));  // stored on the sub-replica, logically expired
  follows = reclaimed(time_ms(primary()("TIME")));
  follows.put("due", *twin().model().raw("due"));    // not reclaimed: active expiry was paused
  follows.put("part", *twin().model().raw("part"));
  // The primary restarts from its RDB; the replica reconnects on its own and the sub-replica
  // follows it (a partial resync where the primary kept its replication ID, else a full one).
  // The load drops the due fields (Valkey) or active expiry reclaims them at once (Redis): either
  // way their deletion must reach both replicas.
  restart_primary();
  // Writes after the restart reach the sub-replica through the relinked chain: each reply checked
  // by a twin of the restarted primary, whose model is what it loaded.
  state::Twin after(primary(), dialect(), twin_options());
  after.model() = follows.loaded(time_ms(primary()("TIME")));
  // The sub-replica's notifications for those writes (valkey-hfe.md checklist 73, chained): those
  // of what the primary wrote for them (model::written), run on a model of it.
  // Listen only once the load's (or active expiry's) deletions have reached the sub-replica.
  for (const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       !(sub()("EXISTS", "due") == Reply::integer(0) && sub()("HLEN", "part") == Reply::integer(1)) &&
       std::chrono::steady_clock::now() < give_up;)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  set().sync();
  auto heard_writes = listen(sub());
  model::Keyspace on_sub = after.model();
  (void)on_sub.take_events();
  bool predictable = true;
  for (const char* line : {"HPEXPIRE h 700000 FIELDS 1 b", "HSETEX n PX 900000 FIELDS 1 q 1", "HPERSIST h FIELDS 1 c"}) {
    const model::Keyspace was = after.model();
    const auto st = after.run(replica_cases::words(line));
    INFO(st.describe());
    CHECK(st.ok);
    const auto written = model::written(dialect(), st.argv, st.model, was, after.model(), st.model_at_ms);
    predictable = predictable && written.has_value();
    if (written)
      for (const auto& a : *written)
        if (a[0] != "MULTI" && a[0] != "EXEC")
          (void)model::apply(on_sub, dialect(), a, replica_events::before_any_deadline(on_sub, st.model_at_ms));
  }
  set().sync();
  sub().call(heard_writes->marker("after the writes"));
  {
    const auto got = replica_events::of(heard_writes->read_until("after the writes"));
    const auto want = replica_events::of(on_sub.take_events());
    INFO("the sub-replica notified:" << replica_events::shown(got)
                                     << "\nthe model of what the primary wrote says:" << replica_events::shown(want));
    CHECK(predictable);
    CHECK(got == want);
    CHECK(!want.empty());
  }
  const int64_t later = time_ms(primary()("TIME"));
  const auto m = state::Snapshot::of_model(after.model(), later);
  for (auto* who : {"primary", "replica", "sub-replica"}) {
    const std::string w = who;
    auto& c = w == "primary" ? primary() : w == "replica" ? replica() : sub();
    std::vector<std::string> diffs;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    do {  // Redis reclaims the loaded due fields by active expiry: give it (and the stream) time
      set().sync();
      diffs = state::diff(m, state::Snapshot::take(c, who));
    } while (!diffs.empty() && std::chrono::steady_clock::now() < give_up &&
             (std::this_thread::sleep_for(std::chrono::milliseconds(20)), true));
    INFO("after the primary's restart and three writes, the " << who << " against the model (fields due while "
         "the primary was down gone; polled up to 10 s):\n" << replica_cases::lines(diffs));
    CHECK(diffs.empty());
  }
}
