// expirykit/catch2/replica_fixture.hpp: a primary + replica pair for each Catch2 v3 test.
//
//   TEST_CASE_METHOD(expirykit::catch2::ReplicaFixture, "HPERSIST reaches the replica") {
//     auto& p = primary();                              // connection to the primary
//     p("HSETEX", "h", "PX", 600000, "FIELDS", 1, "a", "1");
//     p("HPERSIST", "h", "FIELDS", 1, "a");
//     check_replica_agrees();                           // sync, snapshot both, diff field by field
//     CHECK(replica()("HTTL", "h", "FIELDS", 1, "a") == Reply::ints({-1}));
//   }
//
// With the model: both("HSET h a 1") runs a command on the primary and the model (twin()),
// check_replica_matches_model() compares the replica with the model; keys a known
// primary/replica divergence of this server touched are excused there and in
// check_replica_agrees(), and the test's verdict is then KNOWN ISSUE, naming it.
//
// The tests of one test binary share one process::ReplicaSet (a primary and one replica, the
// same binary as ServerFixture would use: EXPIRYKIT_SERVER or the provisioned default). Before
// each test the primary gets FLUSHALL SYNC and active expiry on, and the replica has caught up.
// A test that restarts the primary or needs AOF takes its own: fresh_replica_set(options).
// In external mode (EXPIRYKIT_SERVER_ADDR) every test SKIPs: the kit cannot attach a replica
// to a server it does not own. After each test the fixture checks that both nodes still answer
// PING; a crash fails that test with the crash report and the next test gets a new pair.
// identity(), require_field_ttl() and the other capability checks come from FixtureBase
// (catch2/fixture_base.hpp); whether the run is external is process/under_test.hpp's choice.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/fixture_base.hpp>
#include <expirykit/catch2/known_issue.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/state/replica_triggers.hpp>
#include <expirykit/state/snapshot.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::catch2 {

namespace detail {
inline std::unique_ptr<process::ReplicaSet>& shared_replica_set_slot() {
  static std::unique_ptr<process::ReplicaSet> rs;
  return rs;
}
}  // namespace detail

class ReplicaFixture : public FixtureBase {
 public:
  ReplicaFixture() = default;
  ReplicaFixture(const ReplicaFixture&) = delete;
  ReplicaFixture& operator=(const ReplicaFixture&) = delete;
  /// Fails the test (without throwing) if a node of the shared pair died or hangs; the next
  /// test then gets a new pair.
  ~ReplicaFixture() override {
    try {
      if (twin_) twin_->set_active_expire(true);
    } catch (...) {
    }
    auto& slot = detail::shared_replica_set_slot();
    if (!rs_ || rs_ != slot.get()) return;
    if (!nodes_answer({&slot->primary(), &slot->replica(0)},
                      [](process::Server&) { return std::string("a node of the primary+replica pair"); }))
      slot.reset();
  }

 protected:
  /// The shared pair, flushed and synced for this test. SKIPs in external mode.
  process::ReplicaSet& replica_set() {
    if (rs_) return *rs_;
    skip_if_external();
    auto& slot = detail::shared_replica_set_slot();
    if (!slot) {
      slot = std::make_unique<process::ReplicaSet>();
      const auto& v = slot->primary().binary_version();  // the banner ServerFixture prints too
      std::fprintf(stderr, "expirykit: replica tests run against %s %s, primary at %s, replica at %s (spawned: %s)%s\n",
                   v.flavor.c_str(), v.version.c_str(), slot->primary().address().c_str(),
                   slot->replica(0).address().c_str(), slot->primary().binary().string().c_str(),
                   detail::wire_delay_note().c_str());
    }
    rs_ = slot.get();
    primary_.emplace(rs_->primary().client());
    replica_.emplace(rs_->replica(0).client());
    reset_node(*primary_, "the primary " + rs_->primary().address());
    rs_->sync();
    return *rs_;
  }
  /// A connection to the primary / the replica of the shared pair (opened for this test).
  resp::Client& primary() {
    replica_set();
    return *primary_;
  }
  resp::Client& replica() {
    replica_set();
    return *replica_;
  }
  /// Waits until the replica has applied everything the primary sent so far (offsets, not sleeps).
  void sync() { replica_set().sync(); }

  /// Flavor, version and capabilities of the primary (probed once per test). SKIPs in external
  /// mode.
  const server::Identity& identity() override { return probe_identity(primary()); }

  /// The model twin of the primary (state::Twin on the primary connection; known issues of this
  /// server excused and named, state/known_divergence.hpp). SKIPs on a server without a model
  /// dialect.
  state::Twin& twin() {
    if (!twin_) {
      auto d = require_dialect();
      twin_ = std::make_unique<state::Twin>(primary(), std::move(d), twin_options());
    }
    return *twin_;
  }

  /// Runs `line` on the primary and on the model (twin()); CHECKs that the replies agree, with
  /// the step and the caller's file and line as the message; returns the server's reply, which
  /// names its command when printed. As TwinFixture::both(): a step a known server issue excused
  /// makes the test's verdict KNOWN ISSUE (catch2/known_issue.hpp note_step_issues). Before
  /// sending, it notes the keys a known primary/replica divergence of this server may make differ
  /// (state/replica_triggers.hpp), which check_replica_agrees() and check_replica_matches_model()
  /// then excuse, naming the issue.
  resp::Reply both(const std::string& line, std::source_location where = std::source_location::current()) {
    return both(resp::parse_cli_line(line), where);
  }
  resp::Reply both(const resp::Argv& argv, std::source_location where = std::source_location::current()) {
    resp::Reply r = step(argv, where).server;
    r.set_sent(detail::cut_long_lines(resp::cli_line(argv)));
    return r;
  }
  /// both(), returning the whole step (state/step.hpp).
  state::Step step(const resp::Argv& argv, std::source_location where = std::source_location::current()) {
    auto& t = twin();
    std::optional<int64_t> now;  // TIME now, not the last step's (a wait may lie between); read only when needed
    for (const auto& trig : state::detail::replica_triggers())
      if (const auto* k = known_issues::find(trig.id); k && k->covers(identity())) {
        if (!now) now = t.server_time();
        for (const auto& key : trig.fires(t.model(), argv, *now)) diverged_.emplace(key, trig.id);
      }
    state::Step s = t.run(argv);
    INFO(detail::cut_long_lines(s.describe() +
                                (s.ok ? std::string()
                                      : detail::called_at(where) + "\nsteps so far:\n" + detail::cut_many_lines(t.script()))));
    CHECK(s.ok);
    note_step_issues(s, noted_issues_, where);
    return s;
  }

  /// Syncs, then the differences between the primary's and the replica's snapshots (empty: they
  /// agree, field values and absolute expiries included).
  std::vector<std::string> replica_diffs(state::DiffOptions opt = {}) {
    sync();
    auto p = state::Snapshot::take(primary(), "primary");
    auto r = state::Snapshot::take(replica(), "replica");
    return state::diff(p, r, opt);
  }
  /// Syncs, then the differences between the model (twin(), at the primary's time) and the
  /// replica's snapshot. `opt.stored_counts` is off by default here: the model reclaims only
  /// when told (Twin::reclaim_model), the replica whenever its primary's expiry reaches it; so
  /// HLEN is not compared, and a hash with no live field is left out on both sides.
  std::vector<std::string> replica_model_diffs(state::DiffOptions opt = {.stored_counts = false},
                                               std::source_location where = std::source_location::current()) {
    sync();
    auto m = state::Snapshot::of_model(twin().model(), twin().server_time(), "model");
    auto r = state::Snapshot::take(replica(), "replica");
    if (!opt.stored_counts)  // a hash whose every field expired: whether it is stored yet is the reclaimer's timing
      for (auto* snap : {&m, &r})
        std::erase_if(snap->keys, [](const auto& kv) { return kv.second.type == "hash" && kv.second.fields.empty(); });
    return excuse_diverged(m, r, opt, where);
  }
  /// CHECKs that the replica holds what the model holds (replica_model_diffs()), with every
  /// difference and the caller's file and line as the message; differences on keys a known
  /// divergence excused (see both()) make the test's verdict KNOWN ISSUE instead.
  void check_replica_matches_model(state::DiffOptions opt = {.stored_counts = false},
                                   std::source_location where = std::source_location::current()) {
    const auto diffs = replica_model_diffs(opt, where);
    if (diffs.empty()) {
      SUCCEED("the replica holds what the model holds");
      return;
    }
    FAIL_CHECK(detail::cut_long_lines("the replica differs from the model:\n" +
                                      detail::cut_many_lines(detail::one_per_line(diffs)) + detail::called_at(where) +
                                      "\nsteps so far:\n" + detail::cut_many_lines(twin().script())));
  }
  /// CHECKs that the replica holds what the primary holds, with every difference as the message
  /// and the caller's file and line (Catch2 reports this header's). Keys a known divergence
  /// touched in a step() (both()) are excused and noted as its KNOWN ISSUE; commands sent on
  /// primary() directly name no issue, so on a failure the message lists the known issues of
  /// this server that involve replicas (known_issues::replica_issues()), each with its report,
  /// for the test to name the one it meets with catch2::known_issue(identity(), "<id>",
  /// observed) (catch2/known_issue.hpp).
  void check_replica_agrees(state::DiffOptions opt = {}, std::source_location where = std::source_location::current()) {
    sync();
    auto diffs =
        excuse_diverged(state::Snapshot::take(primary(), "primary"), state::Snapshot::take(replica(), "replica"), opt, where);
    if (diffs.empty()) {
      SUCCEED("the replica holds what the primary holds");
      return;
    }
    std::string known;
    for (const auto* k : known_issues::replica_issues(identity()))
      known += "  " + k->id + " (" + k->report + "): " + k->what + "\n";
    if (!known.empty())
      known = "Known issues of " + identity().to_string() +
              " that involve replicas, which may be what this is (if one is, name it with "
              "catch2::known_issue(identity(), \"<id>\", true) instead of this check; replay scripts in "
              "known_issues/table.hpp):\n" + known;
    FAIL_CHECK(detail::cut_long_lines("the replica differs from the primary:\n" +
                                      detail::cut_many_lines(detail::one_per_line(diffs)) + known +
                                      detail::called_at(where)));
  }

  /// A primary+replica set of this test's own (restarts, AOF, more replicas). SKIPs in
  /// external mode.
  std::unique_ptr<process::ReplicaSet> fresh_replica_set(process::ReplicaSet::Options opts = {}) {
    skip_if_external();
    return std::make_unique<process::ReplicaSet>(std::move(opts));
  }

 private:
  /// diff(a, b) without the keys a known divergence noted by step() excused; each such key that
  /// did differ is noted as its KNOWN ISSUE (catch2::note), once per issue and test.
  std::vector<std::string> excuse_diverged(state::Snapshot a, state::Snapshot b, const state::DiffOptions& opt,
                                           const std::source_location& where) {
    std::map<std::string, std::vector<std::string>> by_key;  // a key may be excused by several issues
    for (const auto& [key, id] : diverged_) by_key[key].push_back(id);
    for (const auto& [key, ids] : by_key) {
      state::Snapshot ka, kb;
      if (auto it = a.keys.find(key); it != a.keys.end()) ka.keys.insert(*it);
      if (auto it = b.keys.find(key); it != b.keys.end()) kb.keys.insert(*it);
      ka.source = a.source;
      kb.source = b.source;
      const auto d = state::diff(ka, kb, opt);
      if (!d.empty())
        for (const auto& id : ids) note_issue(Verdict::known_issue, id, b.source + " vs " + a.source + ", " + d.front(), noted_issues_, where);
      a.keys.erase(key);
      b.keys.erase(key);
    }
    return state::diff(a, b, opt);
  }

  static void skip_if_external() {
    if (process::external_server())
      SKIP("needs a primary and a replica the kit spawns; EXPIRYKIT_SERVER_ADDR is set (external server)");
  }

  process::ReplicaSet* rs_ = nullptr;
  std::optional<resp::Client> primary_, replica_;
  std::unique_ptr<state::Twin> twin_;
  std::multimap<std::string, std::string> diverged_;  ///< key -> known issue id (step())
  std::set<std::string> noted_issues_;                 ///< ids noted in this test
};

}  // namespace expirykit::catch2
