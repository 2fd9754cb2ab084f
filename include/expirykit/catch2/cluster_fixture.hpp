// expirykit/catch2/cluster_fixture.hpp: a cluster for each Catch2 v3 test.
//
//   TEST_CASE_METHOD(expirykit::catch2::ClusterFixture, "a field TTL on every shard") {
//     auto& c = client();                              // cluster::Client, every primary flushed
//     c("HSETEX", "user:1", "PX", 60000, "FIELDS", 1, "tok", "x");
//     CHECK(c("HTTL", "user:1", "FIELDS", 1, "tok") == Reply::ints({60}));
//     auto r = property::run_cluster_sequence(twin(),      // flushes, runs both sides, compares
//                                          {{"HSETEX", "u:2", "PX", "5000", "FIELDS", "1", "t", "x"},
//                                           {"HTTL", "u:2", "FIELDS", "1", "t"}});
//     CHECK(r.ok);
//   }
//
// The tests of one test binary share one process::Cluster: 3 primaries with 1 replica each
// (EXPIRYKIT_CLUSTER_SHAPE="<primaries>x<replicas>" changes it), the binary ServerFixture would
// use (EXPIRYKIT_SERVER or the provisioned default). The first cluster() or client() call of a
// test waits until the nodes agree on one slot map (process::Cluster::wait_agreed(), so a test
// that resharded or failed over leaves a settled cluster to the next); client() then sends
// FLUSHALL SYNC and DEBUG SET-ACTIVE-EXPIRE 1 to every primary (state::ClusterTwin::flushall()
// also to the replicas). After each test the fixture checks that every node still answers PING:
// a crash fails that test with the crash report and the next test gets a new cluster.
// External mode: EXPIRYKIT_CLUSTER_SEED=host:port names a running cluster instead; client() and
// twin() use it (flushing its primaries!), and cluster() SKIPs, so tests that reshard or fail
// over through process::Cluster are skipped there. The shape, the seed and whether the run is
// external are process/under_test.hpp's choice (process::cluster_shape(), external_cluster(),
// external_server()); identity(), require_field_ttl() and the other capability checks come from
// FixtureBase (catch2/fixture_base.hpp).
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>
#include <utility>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/fixture_base.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/cluster/client.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/process/cluster.hpp>
#include <expirykit/process/external_lock.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/state/cluster_twin.hpp>

namespace expirykit::catch2 {

namespace detail {
inline std::unique_ptr<process::Cluster>& shared_cluster_slot() {
  static std::unique_ptr<process::Cluster> cl;
  return cl;
}
}  // namespace detail

class ClusterFixture : public FixtureBase {
 public:
  ClusterFixture() = default;
  ClusterFixture(const ClusterFixture&) = delete;
  ClusterFixture& operator=(const ClusterFixture&) = delete;
  /// Fails the test (without throwing) if a node of the shared cluster died or hangs; the next
  /// test then gets a new cluster.
  ~ClusterFixture() override {
    auto& slot = detail::shared_cluster_slot();
    if (!cl_ || cl_ != slot.get()) return;
    if (!nodes_answer(slot->nodes(), [](process::Server& s) { return "cluster node " + s.address(); })) slot.reset();
  }

 protected:
  /// The shared cluster the kit spawned, settled (wait_agreed()). SKIPs in external mode.
  process::Cluster& cluster() {
    if (cl_) return *cl_;
    skip_if_external();
    auto& slot = detail::shared_cluster_slot();
    if (!slot) slot = std::make_unique<process::Cluster>(process::cluster_shape());
    cl_ = slot.get();
    cl_->wait_agreed();
    return *cl_;
  }
  /// A cluster client for this test, every primary flushed (FLUSHALL SYNC) with active expiry on.
  cluster::Client& client() {
    if (client_) return *client_;
    if (const auto seed = process::external_cluster()) {
      // One test process of this machine at a time on an external cluster (process/external_lock.hpp).
      static process::ExternalLock lock(seed->text);
      client_ = std::make_unique<cluster::Client>(seed->host, seed->port);
    } else {
      auto& cl = cluster();
      client_ = std::make_unique<cluster::Client>(cl.seed_host(), cl.seed_port());
    }
    for (const auto& a : client_->primaries()) reset_node(client_->connection(a), "the primary " + a);
    return *client_;
  }
  /// Flavor, version and capabilities of the first primary (probed once per test).
  const server::Identity& identity() override {
    return probe_identity(client().connection(client().primaries().front()));
  }
  /// SKIPs on a server without atomic slot migration (CLUSTER MIGRATESLOTS: Valkey 9.0+,
  /// valkey.io/commands/cluster-migrateslots).
  void require_atomic_slot_migration() {
    const auto& id = identity();
    require(id.flavor == server::Flavor::valkey && id.version.major >= 9,
            "atomic slot migration (CLUSTER MIGRATESLOTS, Valkey 9.0+)");
  }
  /// The model twin of the cluster (state::ClusterTwin over client(); known issues of this server
  /// excused and named). SKIPs on a server without a model dialect.
  state::ClusterTwin& twin() {
    if (!twin_) {
      auto d = require_dialect();
      twin_ = std::make_unique<state::ClusterTwin>(client(), std::move(d), twin_options());
    }
    return *twin_;
  }
  /// A cluster of this test's own (another shape, config or binary; default: the run's shape,
  /// process::cluster_shape()). SKIPs in external mode.
  std::unique_ptr<process::Cluster> fresh_cluster(process::ClusterOptions opts = process::cluster_shape()) {
    skip_if_external();
    return std::make_unique<process::Cluster>(std::move(opts));
  }

 private:
  static void skip_if_external() {
    if (process::external_cluster()) SKIP("needs a cluster the kit spawns; EXPIRYKIT_CLUSTER_SEED names an external one");
    if (process::external_server())
      SKIP("needs a cluster; EXPIRYKIT_SERVER_ADDR names one external server (set EXPIRYKIT_CLUSTER_SEED for an external cluster)");
  }

  process::Cluster* cl_ = nullptr;
  std::unique_ptr<cluster::Client> client_;
  std::unique_ptr<state::ClusterTwin> twin_;
};

}  // namespace expirykit::catch2
