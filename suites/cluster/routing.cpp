// cluster::Client against a live cluster: slots as the server computes them, commands reaching
// the slot's primary, CROSSSLOT surfaced as the reply, MOVED after a reshard and ASK while a slot
// migrates (valkey.io/topics/cluster-spec, "Redirection and resharding").
#include <catch2/catch_test_macros.hpp>

#include <random>

#include <expirykit/catch2/cluster_fixture.hpp>
#include <expirykit/cluster/reshard.hpp>

using namespace expirykit;
using catch2::ClusterFixture;
using catch2::current_test_name;
using resp::Reply;

TEST_CASE_METHOD(ClusterFixture, "Cluster routing: slot_of agrees with CLUSTER KEYSLOT", "[cluster]") {
  auto& c = client();
  std::mt19937 rng(12345);
  std::vector<std::string> keys = {"", "{", "}", "{}", "{}a", "a{}", "{a}", "x{a}y", "{a}{b}", "{{a}}", "a{b", "}{a}"};
  for (int i = 0; i < 300; ++i) {
    std::string k;
    const int n = static_cast<int>(rng() % 12);
    for (int j = 0; j < n; ++j) k += "ab{}:\x01\xff"[rng() % 8];
    keys.push_back(k);
  }
  auto& node = c.connection(c.primaries().front());
  for (const auto& k : keys) {
    INFO("key '" << k << "'");
    CHECK(node("CLUSTER", "KEYSLOT", k) == Reply::integer(cluster::slot_of(k)));
  }
}

TEST_CASE_METHOD(ClusterFixture, "Cluster routing: a command reaches its slot's primary; CROSSSLOT is the reply",
                 "[cluster]") {
  auto& c = client();
  // Routing needs no field TTLs: HSET and PEXPIRE every server has; the field TTL (HSETEX)
  // only where the server has it, so a control server checks the routing too.
  const bool field_ttl = identity().caps.field_ttl();
  for (int i = 0; i < 30; ++i) {
    const std::string k = "user:" + std::to_string(i);
    if (field_ttl) {
      REQUIRE(c("HSETEX", k, "PX", 600000, "FIELDS", 1, "tok", "x") == Reply::integer(1));
    } else {
      REQUIRE(c("HSET", k, "tok", "x") == Reply::integer(1));
      REQUIRE(c("PEXPIRE", k, 600000) == Reply::integer(1));
    }
    auto& owner = c.node_for_slot(cluster::slot_of(k));
    CHECK(owner("CLUSTER", "COUNTKEYSINSLOT", cluster::slot_of(k)).as_integer() >= 1);
    CHECK(owner("HEXISTS", k, "tok") == Reply::integer(1));
  }
  CHECK(c.primaries().size() >= 2);
  REQUIRE(cluster::slot_of("user:0") != cluster::slot_of("user:1"));
  const Reply r = c("COPY", "user:0", "user:1");
  INFO(r);
  CHECK(r.is_error_starting("CROSSSLOT"));
  CHECK(c("COPY", "{user:0}a", "{user:0}b") == Reply::integer(0));  // one slot: runs
  CHECK(c.stats().moved == 0);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster routing: ASK while a slot migrates, MOVED after it moved", "[cluster]") {
  cluster();  // SKIPs on an external cluster: this test reshards
  auto& c = client();
  const std::string key = "{mv}h";
  const int slot = cluster::slot_of(key);
  if (identity().caps.field_ttl()) {  // routing needs no field TTLs: HSET where the server lacks them
    REQUIRE(c("HSETEX", key, "PX", 600000, "FIELDS", 2, "a", "1", "b", "2") == Reply::integer(1));
  } else {
    REQUIRE(c("HSET", key, "a", "1", "b", "2") == Reply::integer(2));
  }
  const std::string source = c.address_of(slot);
  std::string target;
  for (const auto& p : c.primaries())
    if (p != source) target = p;
  cluster::Client stale(c.address_of(slot).substr(0, source.rfind(':')), std::stoi(source.substr(source.rfind(':') + 1)));
  Reply during;
  long asks = 0;
  cluster::LegacyMove o;
  o.while_importing = [&] {  // the key already sits on the target; the source answers ASK
    during = stale("HGET", key, "a");
    asks = stale.stats().ask;
  };
  const auto rep = cluster::move_slot_legacy(c, slot, target, o);
  CHECK(rep.keys == 1);
  CHECK(during == Reply::string("1"));
  CHECK(asks == 1);
  CHECK(stale.stats().moved == 0);
  CHECK(stale("HGET", key, "b") == Reply::string("2"));  // its map still names the source: MOVED
  CHECK(stale.stats().moved == 1);
  CHECK(stale.address_of(slot) == target);
  CHECK(c.address_of(slot) == target);
}
