// What a REPLICA holds after writes on volatile hash fields. Every scenario runs its commands on
// the primary through state::Twin (each reply checked against the model of the server's
// dialect), then compares the replica with the primary (state::diff of two Snapshots after the
// replica caught up by replication offset: fields, values, absolute field expiries and HLEN, the
// stored count that includes logically expired, unreclaimed fields) and the replica with the
// model. Scenarios are tables (replica_cases.hpp); the expiry cases at the end poll the replica,
// and the first of them also observes the replica itself: its keyspace notifications (the
// primary's deletions, as model::expiry_propagated writes them, run there) and its expired-fields
// counter (a replica expires nothing).
//
// A replica never expires a field by itself: it hides a logically expired field from reads and
// keeps counting it in HLEN until the primary's HDEL arrives (state/snapshot.hpp; Redis docs
// "Replication": replicas do not expire keys, they wait for the primary's DEL). Relative TTL
// commands reach the replica as absolute times (HPEXPIREAT / HSETEX PXAT, see restart.cpp), so
// the replica's deadlines must equal the primary's to the millisecond.
//
// The scenarios on LOGICALLY EXPIRED fields pause active expiry on the primary (DEBUG
// SET-ACTIVE-EXPIRE 0), give fields a 1 ms TTL and wait on the server clock until it passed:
// this is where servers diverged before (valkey-io/valkey#3036, HSETEX KEEPTTL over expired
// fields), and where Valkey 9.1.2's COPY still does (known_issues/table.hpp).
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/catch2/replica_fixture.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/server/info.hpp>
#include <expirykit/state/snapshot.hpp>

#include "replica_cases.hpp"
#include "replica_events.hpp"

using expirykit::resp::Reply;
using expirykit::state::Snapshot;
using replica_cases::Scenario;
namespace state = expirykit::state;
namespace model = expirykit::model;
namespace observe = expirykit::observe;
namespace server = expirykit::server;

namespace {

/// The table runner: one scenario after the other on the shared pair, each from a flushed,
/// synced state and an empty model.
class ReplicaCases : public expirykit::catch2::ReplicaFixture {
 protected:
  void reset() {
    twin().set_active_expire(true);
    auto r = primary()("FLUSHALL", "SYNC");
    REQUIRE_FALSE(r.is_error());
    twin().model().clear();
    twin().clear_history();
    sync();
  }

  /// The scenario name and every command run so far with the server's and the model's replies.
  std::string context(const Scenario& s) { return "scenario: " + s.name + "\n" + twin().script(); }

  void run_all(const std::vector<Scenario>& table) {
    require_field_ttl();
    for (const auto& s : table) run(s);
  }

  /// Plays the scenario and CHECKs that the replica agrees with the primary and the model.
  void run(const Scenario& s) {
    const auto diffs = play(s);
    INFO(context(s) << diffs);
    CHECK(diffs.empty());
  }

  /// Plays every scenario of `table`, all of which a known server issue may affect: the
  /// replica's divergences are collected and reported once through known_issue() (KNOWN ISSUE on
  /// an affected release, FIXED when none diverges there, FAIL elsewhere). Replies and the
  /// primary's state are still CHECKed against the model scenario by scenario.
  void run_known_issue(const std::vector<Scenario>& table, const std::string& id) {
    require_field_ttl();
    std::string observed;
    for (const auto& s : table) {
      const auto diffs = play(s);
      if (!diffs.empty()) observed += "\n" + context(s) + diffs;
    }
    expirykit::catch2::known_issue(identity(), id, !observed.empty(), observed);
  }

  /// Resets, runs the setup, expires the `expire` fields, runs the commands (each reply CHECKed
  /// against the model), CHECKs the primary against the model, and returns the replica's
  /// differences from the primary and from the model ("" when it agrees with both).
  std::string play(const Scenario& s) {
    reset();
    const int64_t t0 = twin().server_time();
    for (const auto& line : s.setup) step(s, replica_cases::expand(line, t0));
    if (!s.expire.empty()) {
      // Logically expired, unreclaimed: active expiry off, 1 ms TTLs, wait on the server clock.
      twin().set_active_expire(false);
      int64_t latest = 0;
      for (const auto& spec : s.expire) {
        const auto words = replica_cases::words(spec);
        expirykit::resp::Argv a{"HPEXPIRE", words[0], "1", "FIELDS", std::to_string(words.size() - 1)};
        a.insert(a.end(), words.begin() + 1, words.end());
        step(s, a);
        INFO(context(s) << "the model must hold the fields just given a 1 ms TTL");
        const auto* e = twin().model().raw(words[0]);
        REQUIRE(e);
        for (std::size_t i = 1; i < words.size(); ++i) {
          auto f = e->hash().fields.find(words[i]);
          REQUIRE(f != e->hash().fields.end());
          REQUIRE(f->second.expire_ms);
          latest = std::max(latest, *f->second.expire_ms);
        }
      }
      const int64_t reached = twin().wait_until_past(latest);
      INFO(context(s) << "waited for the server clock to pass the 1 ms TTLs at " << latest);
      REQUIRE(reached > latest);
    }
    // The replica's keyspace notifications for the scenario's commands, from here on.
    sync();
    observe::KeyspaceEvents::Options eo;
    eo.flags = "KEA";
    observe::KeyspaceEvents heard(replica(), eo);
    // What the replica runs: what each command writes (model::written: Redis's lazy deletions of
    // the expired fields it looks up, then its own form), on a model of the replica that holds
    // every field live (a replica expires nothing itself).
    const model::Dialect& d = twin().dialect();
    model::Keyspace on_replica = twin().model();
    (void)on_replica.take_events();
    std::optional<std::string> unpredicted;  // the first command whose propagated form the model cannot say
    for (const auto& line : s.cmds) {
      const model::Keyspace before = twin().model();
      const auto st = step(s, replica_cases::expand(line, t0));
      const auto written = model::written(d, st.argv, st.model, before, twin().model(), st.model_at_ms);
      if (!written && !unpredicted) unpredicted = expirykit::resp::cli_line(st.argv);
      if (!unpredicted)
        for (const auto& a : *written)
          if (a[0] != "MULTI" && a[0] != "EXEC")  // a replica expires nothing: its fields are live to it
            (void)model::apply(on_replica, d, a, replica_events::before_any_deadline(on_replica, st.model_at_ms));
      if (line.rfind("HSETEX", 0) == 0 && (line.find(" NX ") != std::string::npos || line.find(" XX ") != std::string::npos)) {
        // Key-level NX/XX of HSETEX: Valkey 9.1 only; Redis replies an error (model/dialect.hpp).
        INFO(context(s));
        CHECK(st.server.is_error() == !twin().dialect().hsetex_key_nx_xx);
      }
    }
    sync();
    replica().call(heard.marker("after the commands"));
    const auto got = replica_events::of(heard.read_until("after the commands"));
    const auto want = replica_events::of(on_replica.take_events());
    std::string events;
    // Not compared is said, never a silent pass: the test case's verdict is KNOWN GAP.
    if (unpredicted)
      expirykit::catch2::note(expirykit::catch2::Verdict::known_gap,
                              context(s) + "the replica's keyspace notifications were not compared: model::written gives no "
                                           "propagated form for `" + *unpredicted + "`");
    if (!unpredicted && got != want)
      events = "the replica notified:" + replica_events::shown(got) +
               "\nthe model of what its primary wrote for it says:" + replica_events::shown(want) + "\n";
    return events + compare(s);
  }

  /// CHECKs the primary against the model; returns the replica's differences from the primary
  /// (after catching up) and from the model, "" when it agrees with both.
  std::string compare(const Scenario& s) {
    const auto diffs = replica_diffs();
    const int64_t now = twin().server_time();
    const auto m = Snapshot::of_model(twin().model(), now);
    const auto vs_model = state::diff(m, Snapshot::take(replica(), "replica"));
    const auto primary_vs_model = state::diff(m, Snapshot::take(primary(), "primary"));
    {
      INFO(context(s) << "primary vs model:\n" << replica_cases::lines(primary_vs_model));
      CHECK(primary_vs_model.empty());
    }
    if (diffs.empty() && vs_model.empty()) return "";
    return "replica vs primary:\n" + replica_cases::lines(diffs) + "replica vs model:\n" + replica_cases::lines(vs_model);
  }

  state::Step step(const Scenario& s, const expirykit::resp::Argv& argv) {
    auto st = twin().run(argv);
    INFO(context(s) << "step: " << st.describe());
    CHECK(st.ok);
    return st;
  }

  /// Polls the replica (bounded) until `done(replica)`; FAILs naming what was waited for.
  template <class F>
  void poll_replica(const std::string& what, F done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done(replica())) {
      if (std::chrono::steady_clock::now() > give_up) FAIL("waited 10 s for the replica: " << what);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
};

}  // namespace

TEST_CASE_METHOD(ReplicaCases, "Replica after HSETEX in every flag form, past times included", "[durability][replica]") {
  run_all(replica_cases::hsetex());
}

TEST_CASE_METHOD(ReplicaCases, "Replica after the HEXPIRE family with each condition, on existing and missing fields",
                 "[durability][replica]") {
  run_all(replica_cases::hexpire_family());
}

TEST_CASE_METHOD(ReplicaCases, "Replica after the HEXPIRE family with past times, with and without conditions",
                 "[durability][replica]") {
  run_all(replica_cases::hexpire_past());
}

TEST_CASE_METHOD(ReplicaCases,
                 "Replica after HPERSIST, HGETEX, HGETDEL, HDEL, HINCRBY, HINCRBYFLOAT and KEEPTTL on volatile fields",
                 "[durability][replica]") {
  run_all(replica_cases::other_writes());
}

TEST_CASE_METHOD(ReplicaCases, "Replica after writes on logically expired, unreclaimed fields, stored counts included",
                 "[durability][replica]") {
  run_all(replica_cases::on_expired());
}

// The primary treats a logically expired field as missing; commands that name it next to a live
// field must not revive or delete it on the replica (valkey-io/valkey#4732, seen live on 9.1.2).
TEST_CASE_METHOD(ReplicaCases, "Replica after HPERSIST, HEXPIRE*, HDEL and HGETDEL naming an expired and a live field",
                 "[durability][replica]") {
  run_known_issue(replica_cases::on_expired_valkey_4732(), "valkey-expired-fields-propagated");
}

// Valkey 9.1.2 (live): COPY leaves logically expired fields out of the primary's copy
// (model/dialect.hpp copy_skips_expired_fields) but the replica, which executes the propagated
// COPY, copies them: an all-expired source gives an EMPTY hash on the primary, HLEN 1 on the
// replica.
TEST_CASE_METHOD(ReplicaCases, "Replica after COPY of a hash that stores logically expired fields", "[durability][replica]") {
  run_known_issue(replica_cases::copy_expired(), "valkey-copy-expired-fields-replica");
}

// Valkey 9.1.2 (live, found by the durability property with adversarial key names): HSETEX strips
// NX/XX/FNX/FXX from the command it propagates, the key too when it is named like one of them.
TEST_CASE_METHOD(ReplicaCases, "Replica after HSETEX on a key named like one of its flags (NX, XX, FNX, FXX)",
                 "[durability][replica]") {
  run_known_issue(replica_cases::hsetex_flag_named_key(), "valkey-hsetex-flag-named-key");
}

// Valkey 9.1.2 (live, found by the durability property): duplicate flags are accepted (last wins,
// model/dialect.hpp duplicate_flags_accepted) but the propagated HSETEX keeps a second expiry.
TEST_CASE_METHOD(ReplicaCases, "Replica after HSETEX over every expired field of a key with a TTL keeps the key TTL",
                 "[durability][replica]") {
  require_field_ttl();
  // One defect, one row per server line: Valkey propagates it for KEEPTTL, Redis for FNX.
  run_known_issue(replica_cases::hsetex_over_expired_key_ttl(),
                  identity().flavor == expirykit::server::Flavor::valkey ? "valkey-hsetex-keepttl-replica-drops-key-ttl"
                                                                         : "redis-hsetex-fnx-replica-drops-key-ttl");
}

TEST_CASE_METHOD(ReplicaCases, "Replica after other writes over every expired field of a key with a TTL",
                 "[durability][replica]") {
  run_all(replica_cases::writes_over_expired_key_ttl());
}

TEST_CASE_METHOD(ReplicaCases, "Replica after HSETEX with its expiry option given twice", "[durability][replica]") {
  run_known_issue(replica_cases::hsetex_repeated_expiry(), "valkey-hsetex-repeated-expiry");
}

TEST_CASE_METHOD(ReplicaCases, "A field that expires on the primary disappears on the replica, and the key with its last field",
                 "[durability][replica]") {
  require_field_ttl();
  const Scenario s{"active expiry of fields reaches the replica",
                   {"HSET h a 1 b 2 c 3", "HPEXPIRE h 200 FIELDS 1 a", "HSETEX k PX 300 FIELDS 2 x 1 y 2",
                    "HEXPIRE h 600 FIELDS 1 c"},
                   {},
                   {}};
  reset();
  // Active expiry paused while setting up, so that the replica demonstrably holds every field
  // first, whatever the machine's load: only the primary's HDEL may remove them there.
  twin().set_active_expire(false);
  for (const auto& line : s.setup) step(s, replica_cases::words(line));
  sync();
  CHECK(replica()("HLEN", "h") == Reply::integer(3));
  CHECK(replica()("HLEN", "k") == Reply::integer(2));
  // The replica's own observations: from here on it hears keyspace notifications, and its
  // expired-fields counter is read before and after.
  const model::Dialect& d = twin().dialect();
  const int64_t replica_expired = server::Info::fetch(replica(), "stats").get_int(d.info_expired_fields_stat);
  observe::KeyspaceEvents::Options eo;
  eo.flags = "KEA";
  observe::KeyspaceEvents heard(replica(), eo);
  const model::Keyspace before = twin().model();
  twin().set_active_expire(true);
  poll_replica("HLEN h to drop to 2 after field a expired on the primary (HPEXPIRE 200 ms)",
               [](auto& r) { return r("HLEN", "h") == Reply::integer(2); });
  poll_replica("key k to disappear after its last field expired on the primary (HSETEX PX 300)",
               [](auto& r) { return r("EXISTS", "k") == Reply::integer(0); });
  // The primary reclaimed both (that is what the replica was told); the model after reclaiming.
  const int64_t now = twin().server_time();
  twin().model().reclaim(now);
  // The replica expires nothing itself: it notifies what running the primary's deletions makes
  // (replica_events.hpp), and its expired-fields counter stays put.
  sync();
  replica().call(heard.marker("after expiry"));
  const auto got = replica_events::of(heard.read_until("after expiry"));
  const auto want = replica_events::from_primary_deletions(d, before, twin().model(), now, {"h", "k"});
  INFO("the replica notified:" << replica_events::shown(got)
                               << "\nthe model of the primary's deletions says:" << replica_events::shown(want));
  CHECK(got == want);
  CHECK(want.count({"del", "k"}) == 1);  // the model's side is not empty: k went with its last field
  CHECK(server::Info::fetch(replica(), "stats").get_int(d.info_expired_fields_stat) == replica_expired);
  CHECK(replica()("HGETALL", "h").size() == 4);
  CHECK(replica()("HPTTL", "h", "FIELDS", 2, "b", "c")[0] == Reply::integer(-1));
  const auto diffs = compare(s);
  INFO(context(s) << diffs);
  CHECK(diffs.empty());
}

TEST_CASE_METHOD(ReplicaCases, "HSETEX KEEPTTL in MULTI after HPEXPIRE 1, the replica paused: both end without the field",
                 "[durability][replica]") {
  // valkey-hfe.md checklist 106: the transaction keeps the 1 ms deadline (time is frozen inside
  // it), the field expires on the primary right after, and a replica that was busy (DEBUG SLEEP)
  // while all of it happened ends without the field too, as the model says.
  require_field_ttl();
  if (!twin().dialect().has_hsetex) SKIP("HSETEX: not on this server");
  require_debug("DEBUG SLEEP");
  const Scenario s{"HSETEX KEEPTTL in MULTI after HPEXPIRE 1, the replica paused", {}, {}, {}};
  reset();
  step(s, replica_cases::words("HSET h f 1 keep 1"));
  sync();
  expirykit::resp::Client pauser(replica().host(), replica().port());
  pauser.append({"DEBUG", "SLEEP", "0.5"});  // the replica's main thread busy for 0.5 s
  pauser.send();
  for (const char* line : {"MULTI", "HPEXPIRE h 1 FIELDS 1 f", "HSETEX h KEEPTTL FIELDS 1 f 2", "EXEC"})
    step(s, replica_cases::words(line));
  const auto f = twin().model().raw("h")->hash().fields.at("f");
  REQUIRE(f.expire_ms);  // KEEPTTL kept the 1 ms deadline
  twin().wait_until_past(*f.expire_ms, 5);
  CHECK(pauser.read() == Reply::ok());  // the sleep is over
  poll_replica("field f gone on the replica (the primary's active expiry deletes it)",
               [](auto& r) { return r("HTTL", "h", "FIELDS", 1, "f") == Reply::ints({-2}); });
  CHECK(primary()("HTTL", "h", "FIELDS", 1, "f") == Reply::ints({-2}));
  twin().reclaim_model();
  const auto diffs = compare(s);
  INFO(context(s) << diffs);
  CHECK(diffs.empty());
}

TEST_CASE_METHOD(ReplicaCases, "A replica attached after the writes gets every field and deadline by a full sync",
                 "[durability][replica]") {
  // valkey-hfe.md checklist 69: the other cases attach the replica first and stream every write;
  // here the primary writes alone, then the replica attaches and loads the primary's RDB
  // (INFO stats sync_full grows): values, deadlines to the millisecond and HLEN as the model's.
  require_field_ttl();
  const Scenario s{"full sync of volatile fields", {}, {}, {}};
  reset();
  struct Reattach {  // the pair is shared: the replica follows the primary again whatever happens
    std::function<void()> again;
    bool done = false;
    ~Reattach() {
      if (done) return;
      try {
        again();
      } catch (...) {
      }
    }
  } reattach{[this] {
    replica()("REPLICAOF", primary().host(), std::to_string(primary().port()));
    replica_set().wait_linked();
  }};
  REQUIRE(replica()("REPLICAOF", "NO", "ONE") == Reply::ok());
  REQUIRE(replica()("FLUSHALL") == Reply::ok());
  Argv big{"HSET", "big"};
  for (int i = 0; i < 200; ++i) big.insert(big.end(), {"f" + std::to_string(i), std::to_string(i)});
  step(s, big);
  Argv due{"HPEXPIRE", "big", "700000", "FIELDS", "100"};
  for (int i = 0; i < 100; ++i) due.push_back("f" + std::to_string(i));
  step(s, due);
  for (const char* line : {"HSET h a 1 b 2 c 3", "HPEXPIRE h 600000 FIELDS 1 a", "HSET p z 1", "HPEXPIREAT h 4000000000000 FIELDS 1 b"})
    step(s, replica_cases::words(line));
  if (twin().dialect().has_hsetex) step(s, replica_cases::words("HSETEX k PX 900000 FIELDS 2 x 1 y 2"));
  const auto full = [&] { return server::Info::fetch(primary(), "stats").get_int("sync_full"); };
  const long long before = full();
  REQUIRE(replica()("REPLICAOF", primary().host(), std::to_string(primary().port())) == Reply::ok());
  reattach.done = true;
  replica_set().wait_linked();
  sync();
  CHECK(full() > before);  // a full sync, not a partial one
  const auto diffs = compare(s);
  INFO(context(s) << diffs);
  CHECK(diffs.empty());
}
