// The main property on a cluster (property/cluster_property.hpp): random sequences through the
// cluster client, compared with the model command by command and node by node; then the same
// with a reshard or a failover at a drawn point of every sequence, while its hashes hold far,
// short and already-expired field TTLs (gen::property_sequence's set-ups). Budgets (before
// EXPIRYKIT_PROP_SCALE): sequences 100 per round for 10 s; legacy and atomic reshards 40
// sequences each; failovers 6 sequences (a failover takes 0.1 s on Valkey 9.1.2 and about 4 s on
// Redis 8.0.6 here; a failing failover case is not shrunk, every try would fail over again).
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>

#include <expirykit/catch2/cluster_fixture.hpp>
#include <expirykit/cluster/reshard.hpp>
#include <expirykit/property/cluster_property.hpp>

using namespace expirykit;
using catch2::ClusterFixture;
using catch2::current_test_name;
using property::PropertyBudget;

namespace {
void report(const property::PropertyResult& r, state::ClusterTwin& t) {
  const auto& rt = t.routing();
  std::string known;
  for (const auto& [id, n] : r.known_issues) known += " " + id + " (" + std::to_string(n) + " cases)";
  UNSCOPED_INFO(r.sequences << " sequences, " << r.commands << " commands in " << r.seconds << " s, seed " << r.seed
                            << "; routed: " << rt.one_slot << " on one slot, " << rt.crossslot << " CROSSSLOT, "
                            << rt.execabort << " refused transactions, " << rt.broadcast << " to every node, "
                            << rt.dropped << " left out (cluster_sequence)"
                            << (known.empty() ? "" : "; known server issues met and excused:" + known));
  if (!r.ok) FAIL(r.report);
  CHECK(r.commands > 0);
}
/// The disturbance of the reshard properties: the slot of one of the generators' keys moves to
/// another primary, the legacy way or by atomic slot migration.
std::function<std::string(state::ClusterTwin&)> reshard(bool atomic) {
  return [atomic](state::ClusterTwin& tw) {
    auto& c = tw.client();
    const std::string key = *rc::gen::elementOf(std::vector<std::string>{"h1", "h2", "h3", "s1"});
    const int slot = cluster::slot_of(key);
    const std::string target = c.primary_after(c.address_of(slot));
    const int64_t since = tw.twin().server_time();
    const auto rep = atomic ? cluster::move_slots_atomic(c, slot, slot, target) : cluster::move_slot_legacy(c, slot, target);
    tw.slots_moved({slot}, atomic ? std::nullopt : std::optional<int64_t>(since));
    return std::string(atomic ? "atomic migration" : "legacy reshard") + " of slot " + std::to_string(slot) + " (" + key + ", " +
           std::to_string(rep.keys) + " keys) " + rep.source + " -> " + rep.target;
  };
}
}  // namespace

TEST_CASE_METHOD(ClusterFixture, "Cluster: random sequences, server and model agree", "[cluster][properties]") {
  auto& t = twin();
  auto r = property::check_cluster_sequences(t, PropertyBudget{100, 40, 10, current_test_name()});
  report(r, t);
  CHECK(t.routing().crossslot > 0);
  CHECK(t.routing().one_slot > 0);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster: a legacy reshard (SETSLOT, MIGRATE) during random sequences",
                 "[cluster][properties][reshard]") {
  cluster();  // SKIPs on an external cluster
  auto& t = twin();
  report(property::check_cluster_sequences(t, PropertyBudget{40, 40, 0, current_test_name()}, "legacy reshard", reshard(false)), t);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster: an atomic slot migration (CLUSTER MIGRATESLOTS) during random sequences",
                 "[cluster][properties][reshard]") {
  cluster();
  require_atomic_slot_migration();
  auto& t = twin();
  report(property::check_cluster_sequences(t, PropertyBudget{40, 40, 0, current_test_name()}, "atomic slot migration", reshard(true)),
         t);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster: a failover (CLUSTER FAILOVER) during random sequences",
                 "[cluster][properties][failover]") {
  auto& cl = cluster();
  if (cl.replicas_per_primary() == 0) SKIP("the cluster has no replicas (EXPIRYKIT_CLUSTER_SHAPE)");
  auto& t = twin();
  PropertyBudget budget{6, 40, 0, current_test_name()};
  budget.shrink = false;  // each try fails over again: a failing case is reported as drawn
  auto r = property::check_cluster_sequences(t, budget, "failover",
                                          [&cl](state::ClusterTwin& tw) {
                                            const std::string key = *rc::gen::elementOf(std::vector<std::string>{"h1", "h2", "h3", "s1"});
                                            auto& owner = cl.owner_of(cluster::slot_of(key));
                                            const std::string owner_id = cl.id_of(owner);
                                            process::Server* rep = nullptr;
                                            for (const auto& n : cl.view_of(0))
                                              if (n.primary_id == owner_id) rep = &cl.node_by_id(n.id);
                                            if (!rep) throw std::runtime_error("no replica of " + owner.address());
                                            // The replica has applied every write before it takes over (a manual failover).
                                            cl.failover(*rep);
                                            std::set<int> served;
                                            for (const auto& n : cl.view_of(0))
                                              if (n.id == cl.id_of(*rep))
                                                for (const auto& [a, b] : n.slots)
                                                  for (int s = a; s <= b; ++s) served.insert(s);
                                            tw.failed_over(served);
                                            return "failover of " + owner.address() + " (serving " + key + ") to its replica " +
                                                   rep->address();
                                          });
  report(r, t);
}
