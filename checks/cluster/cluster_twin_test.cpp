// The cluster twin catches what it should, live on a kit-spawned cluster: a planted model bug is
// found through the cluster client and shrunk; a field TTL removed on one node behind the model's
// back is reported with that node; cluster_sequence() leaves out exactly the commands a cluster
// cannot run as the model predicts; with hiredis 1.x (build-asan/ in ci/test), the cluster
// property on RESP3 only, with a legacy reshard in every case.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/cluster_fixture.hpp>
#include <expirykit/cluster/reshard.hpp>
#include <expirykit/property/cluster_property.hpp>

using namespace expirykit;
using catch2::ClusterFixture;
using resp::Argv;
using resp::Reply;

TEST_CASE("cluster_sequence leaves out what a cluster cannot run as the model predicts", "[cluster]") {
  const std::vector<Argv> in = {{"HSET", "h1", "a", "1"},
                                {"MOVE", "h1", "1"},
                                {"SWAPDB", "0", "1"},
                                {"DBSIZE"},
                                {"COPY", "h1", "h2", "DB", "1"},
                                {"COPY", "h1", "h2"},  // kept: the server answers CROSSSLOT
                                {"RESTORE", "h2", "0", "@dump:h1"},
                                {"RESTORE", "{h1}x", "0", "@dump:h1"},
                                model::sequence_eval({{"HGET", "h1", "a"}, {"HGET", "h2", "a"}}),
                                model::sequence_eval({{"HGET", "h1", "a"}, {"HLEN", "h1"}})};
  const auto [out, dropped] = property::cluster_sequence(in);
  CHECK(dropped == 6);
  REQUIRE(out.size() == 4);
  CHECK(out[0][0] == "HSET");
  CHECK(out[1] == Argv{"COPY", "h1", "h2"});
  CHECK(out[2] == Argv{"RESTORE", "{h1}x", "0", "@dump:h1"});
  CHECK(out[3][0] == "EVAL");
}

TEST_CASE_METHOD(ClusterFixture, "Cluster twin: a planted model bug is caught through the cluster and shrunk",
                 "[cluster][harness]") {
  auto& base = twin();
  state::Twin::Options o = base.twin().options();
  // The model answers HTTL one second too long: the property must catch it on some shard.
  o.mutate_model_reply = [](const Argv& a, Reply& r) {
    if (model::upper(a[0]) == "HTTL" && r.is_array())
      for (auto& e : r.elements())
        if (e.is_integer() && e.as_integer() > 0) e = Reply::integer(e.as_integer() + 1);
  };
  state::ClusterTwin t(client(), base.dialect(), o);
  auto r = property::check_cluster_sequences(t, property::PropertyBudget{200, 40, 0, "planted"});
  INFO(r.report);
  REQUIRE_FALSE(r.ok);
  CHECK(r.summary.find("HTTL") != std::string::npos);
  CHECK(r.shrunk_len <= 16);  // a set-up prefix (<= 12 commands, it does not shrink) + HPEXPIRE, HTTL
}

TEST_CASE_METHOD(ClusterFixture, "Cluster twin: a TTL lost on one node is reported with that node", "[cluster]") {
  auto& t = twin();
  t.flushall();
  for (const char* k : {"h1", "h2", "h3"}) {
    REQUIRE(t.run({"HSET", k, "a", "1", "b", "2"}).ok);
    REQUIRE(t.run({"HPEXPIRE", k, "600000", "FIELDS", "2", "a", "b"}).ok);
  }
  REQUIRE(t.compare_state().empty());
  auto& c = client();
  const std::string node = c.address_of(cluster::slot_of("h2"));
  REQUIRE(c.connection(node)("HPERSIST", "h2", "FIELDS", 1, "b") == Reply::ints({1}));  // behind the model's back
  const auto diffs = t.compare_state();
  REQUIRE(diffs.size() == 1);
  CHECK(diffs[0].rfind(node + ": h2", 0) == 0);
  CHECK(diffs[0].find("b") != std::string::npos);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster twin: flushall() empties every primary, logically expired keys and many keys too",
                 "[cluster]") {
  // ClusterTwin::flushall() empties the primaries after the first by DEL of what KEYS lists
  // (FLUSHALL is slow on Redis 8.0.6 cluster nodes); DBSIZE decides whether FLUSHALL must follow.
  auto& t = twin();
  t.flushall();
  auto& c = client();
  REQUIRE(c.primaries().size() >= 2);
  t.set_active_expire(false);  // keys that are logically expired stay stored: KEYS hides them
  for (const auto& node : c.primaries()) {
    auto& n = c.connection(node);
    // keys of this node's slots: {tag}name hashes into the tag's slot
    std::vector<std::string> here;
    for (int i = 0; here.size() < 3 && i < 100000; ++i) {
      const std::string tag = "t" + std::to_string(i);
      if (c.address_of(cluster::slot_of(tag)) == node) here.push_back(tag);
    }
    REQUIRE(here.size() == 3);
    REQUIRE(n("SET", "{" + here[0] + "}live", "1") == Reply::ok());
    REQUIRE(n("SET", "{" + here[1] + "}gone", "1", "PX", "1") == Reply::ok());
    if (node == c.primaries().back())  // more keys than the DEL path takes: FLUSHALL on this node
      for (int k = 0; k < 100; ++k) REQUIRE(n("HSET", "{" + here[2] + "}many" + std::to_string(k), "f", "v") == Reply::integer(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const auto& node : c.primaries()) {
    auto& n = c.connection(node);
    CHECK(n("DBSIZE").as_integer() >= 2);  // the expired key is still stored
  }
  t.flushall();
  for (const auto& node : c.primaries()) {
    INFO(node);
    CHECK(c.connection(node)("DBSIZE") == Reply::integer(0));
  }
}

TEST_CASE_METHOD(ClusterFixture,
                 "Cluster twin: a command naming an expired field right after a CROSSSLOT step still counts at the next "
                 "failover",
                 "[cluster][failover]") {
  // A CROSSSLOT step reads no TIME (after_ms 0); the replica triggers once judged the next
  // command at that 0, saw no field expired, and the failover then met a key the promoted replica
  // had changed (the failover property, valkey-9.1, seed 4997980277482661169).
  auto& cl = cluster();
  if (cl.replicas_per_primary() == 0) SKIP("the cluster has no replicas (EXPIRYKIT_CLUSTER_SHAPE)");
  auto& t = twin();
  t.flushall();
  t.set_active_expire(false);  // the expired field stays stored on the primary
  REQUIRE(t.run({"HSET", "h1", "a", "1", "b", "2"}).ok);
  REQUIRE(t.run({"HPEXPIRE", "h1", "1", "FIELDS", "1", "a"}).ok);
  t.twin().wait_until_past(t.twin().server_time() + 2);
  REQUIRE(t.run({"EXISTS", "h1", "h2"}).ok);  // two slots: CROSSSLOT, after_ms 0
  const state::Step s = t.run({"HGETDEL", "h1", "FIELDS", "2", "a", "b"});
  INFO(s.describe());
  REQUIRE(s.ok);
  const int slot = cluster::slot_of("h1");
  auto& owner = cl.owner_of(slot);
  process::Server* replica = nullptr;
  for (const auto& n : cl.view_of(0))
    if (n.primary_id == cl.id_of(owner)) replica = &cl.node_by_id(n.id);
  REQUIRE(replica);
  cl.failover(*replica);
  t.failed_over({slot});
  t.topology_changed("failover");
  const auto& id = t.twin().options().server;
  const auto* k = known_issues::find("valkey-expired-fields-propagated");
  if (id && k && k->covers(*id)) CHECK(t.known_issues().count(k->id) == 1);  // h1 re-read, not failed
  const auto diffs = t.compare_state();
  std::string all;
  for (const auto& d : diffs) all += d + "\n";
  INFO(all << state::cluster_script(t, {"h1", "h2"}));
  CHECK(diffs.empty());
  t.set_active_expire(true);
}

TEST_CASE_METHOD(ClusterFixture, "The cluster property on RESP3 only, a legacy reshard in every case: the cluster and the model agree",
                 "[cluster][resp3][property]") {
  if constexpr (!resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  cluster();  // SKIPs on an external cluster: the reshard changes its slot map
  auto& t = twin();
  // The slot of h1 moves to the next primary at a drawn point of each case (the legacy way:
  // cluster/reshard.hpp), with the twin's node connections on RESP3.
  auto reshard = [](state::ClusterTwin& tw) {
    auto& c = tw.client();
    const int slot = cluster::slot_of("h1");
    const int64_t since = tw.twin().server_time();
    const auto rep = cluster::move_slot_legacy(c, slot, c.primary_after(c.address_of(slot)));
    tw.slots_moved({slot}, since);
    return "legacy reshard of slot " + std::to_string(slot) + " " + rep.source + " -> " + rep.target;
  };
  int resp3_steps = 0;
  auto r = property::check_cluster_sequences(t, property::PropertyBudget{20, 30, 4, catch2::current_test_name()}, "RESP3",
                                             [&](state::ClusterTwin& tw) {
                                               for (const auto& [node, s] : tw.history()) resp3_steps += s.protocol == 3;
                                               return reshard(tw);
                                             },
                                             {3});
  INFO(r.report);
  CHECK(r.ok);
  CHECK(r.commands > 0);
  CHECK(resp3_steps > 0);  // the steps did run on RESP3
  // Afterwards the node connections are back on RESP2, as the client's other users expect.
  for (const auto& a : t.client().all_nodes()) CHECK(t.client().connection(a).protocol() == 2);
}

TEST_CASE_METHOD(ClusterFixture, "Cluster twin: after a failover the model takes what active expiry reclaimed, and only that",
                 "[cluster]") {
  // failed_over() reads the hashes with due fields on their primary: reclaimed (active expiry
  // on) there, the model reclaims them; still stored (active expiry off), the model keeps them.
  // No failover needed: the model side of failed_over() is what is checked.
  auto& t = twin();
  auto& c = client();
  for (const bool active : {true, false}) {
    INFO("active expiry " << (active ? "on" : "off"));
    t.flushall();  // active expiry on
    if (!active) t.set_active_expire(false);
    REQUIRE(t.run({"HSETEX", "h1", "PX", "100", "FIELDS", "1", "a", "1"}).ok);                 // due: the whole key
    REQUIRE(t.run({"HSETEX", "h2", "PX", "100", "FIELDS", "2", "a", "1", "b", "2"}).ok);         // due: a and b
    REQUIRE(t.run({"HSETEX", "h2", "PX", "600000", "FIELDS", "1", "c", "3"}).ok);                // not due
    std::this_thread::sleep_for(std::chrono::milliseconds(active ? 1500 : 300));  // active expiry: 10 cycles a second
    std::set<int> slots{cluster::slot_of("h1"), cluster::slot_of("h2")};
    const auto hlen = [&](const char* k) { return c.connection(c.address_of(cluster::slot_of(k)))("HLEN", k); };
    if (active) {
      REQUIRE(hlen("h1") == Reply::integer(0));  // reclaimed on the server: no key
      REQUIRE(hlen("h2") == Reply::integer(1));
      CHECK_FALSE(t.compare_state().empty());    // the model still stores them
    } else {
      REQUIRE(hlen("h1") == Reply::integer(1));  // stored, logically expired
      REQUIRE(hlen("h2") == Reply::integer(3));
    }
    t.failed_over(slots);
    CHECK(t.compare_state().empty());
    const auto* h2 = t.twin().model().raw("h2");
    REQUIRE(h2);
    CHECK(h2->hash().fields.size() == (active ? 1u : 3u));
    CHECK((t.twin().model().raw("h1") == nullptr) == active);
  }
}
