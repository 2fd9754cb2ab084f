// cluster::slot_of and crc16 against the cluster specification's published values
// (valkey.io/topics/cluster-spec: "Key distribution model", "Hash tags", and its CRC16
// reference: CRC16("123456789") = 0x31C3); process::parse_cluster_nodes on a CLUSTER NODES text
// in the documented format (valkey.io/commands/cluster-nodes).
#include <catch2/catch_test_macros.hpp>

#include <set>

#include <expirykit/cluster/slot.hpp>
#include <expirykit/cluster/reshard.hpp>
#include <expirykit/process/cluster.hpp>

using namespace expirykit;

TEST_CASE("crc16 is the XMODEM variant of the cluster spec", "[cluster][slot]") {
  CHECK(cluster::crc16("123456789") == 0x31C3);
  CHECK(cluster::crc16("") == 0);
  static_assert(cluster::crc16("123456789") == 0x31C3);  // usable at compile time
}

TEST_CASE("slot_of: published slots and the hash tag rules", "[cluster][slot]") {
  CHECK(cluster::slot_of("foo") == 12182);   // CLUSTER KEYSLOT foo (valkey.io/commands/cluster-keyslot)
  CHECK(cluster::slot_of("somekey") == 11058);
  CHECK(cluster::slot_of("foo{hash_tag}") == 2515);
  CHECK(cluster::slot_of("bar{hash_tag}") == 2515);
  CHECK(cluster::slot_of("{user1000}.following") == cluster::slot_of("{user1000}.followers"));
  CHECK(cluster::slot_of("{user1000}.following") == cluster::slot_of("user1000"));
  CHECK(cluster::hash_tag("foo{}{bar}") == "foo{}{bar}");  // empty tag: the whole key
  CHECK(cluster::hash_tag("foo{{bar}}zap") == "{bar");    // from the first '{' to the first '}'
  CHECK(cluster::hash_tag("foo{bar}{zap}") == "bar");     // only the first tag counts
  CHECK(cluster::hash_tag("foo{bar") == "foo{bar");       // no closing brace
  CHECK(cluster::slot_of("") == 0);
  for (const char* k : {"a", "h1", "{x}", "\xff\xfe"}) {
    CHECK(cluster::slot_of(k) >= 0);
    CHECK(cluster::slot_of(k) < cluster::slot_count);
  }
}

TEST_CASE("The generators' keys h1, h2, h3, s1 lie in different slots (property/cluster_property.hpp)", "[cluster][slot]") {
  std::set<int> slots;
  for (const char* k : {"h1", "h2", "h3", "s1"}) slots.insert(cluster::slot_of(k));
  CHECK(slots.size() == 4);
}

TEST_CASE("parse_cluster_nodes reads ids, roles, primaries and slot ranges", "[cluster]") {
  const std::string text =
      "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,hostname4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected\n"
      "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002,hostname2 master - 0 1426238316232 2 connected 5461-10922\n"
      "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001,hostname1 myself,master - 0 0 1 connected 0-5460 [5461->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]\n"
      "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master,fail? - 0 1426238318243 3 connected 10923-16000 16383\n";
  const auto nodes = process::parse_cluster_nodes(text);
  REQUIRE(nodes.size() == 4);  // sorted by id
  CHECK(nodes[0].id == "07c37dfeb235213a872192d90877d0cd55635b91");
  CHECK_FALSE(nodes[0].primary);
  CHECK(nodes[0].primary_id == "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
  CHECK(nodes[0].address == "127.0.0.1:30004");
  CHECK(nodes[1].primary);
  CHECK(nodes[1].flags == "master,fail?");
  CHECK(nodes[1].slots == std::vector<std::pair<int, int>>{{10923, 16000}, {16383, 16383}});
  CHECK(nodes[3].flags == "myself,master");
  CHECK(nodes[3].myself);
  CHECK_FALSE(nodes[1].myself);
  CHECK(nodes[3].slots == std::vector<std::pair<int, int>>{{0, 5460}});  // the migrating entry is skipped
}

TEST_CASE("reshard's slot_view: the owner a CLUSTER NODES text names for a slot, at that owner's config epoch", "[cluster]") {
  const std::string text =
      "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 7 connected 5461-10922\n"
      "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 9 connected 0-5460 [5460->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]\n"
      "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 9 connected\n";
  const auto first = cluster::detail::slot_view(text, 0);
  CHECK(first.owner == "127.0.0.1:30001");
  CHECK(first.owner_id == "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca");
  CHECK(first.owner_epoch == 9);
  const auto migrating = cluster::detail::slot_view(text, 5460);  // still the source's: the migrating entry is no owner
  CHECK(migrating.owner == "127.0.0.1:30001");
  CHECK(migrating.owner_epoch == 9);
  const auto second = cluster::detail::slot_view(text, 5461);
  CHECK(second.owner == "127.0.0.1:30002");
  CHECK(second.owner_epoch == 7);
  const auto none = cluster::detail::slot_view(text, 16383);
  CHECK(none.owner.empty());
  CHECK(none.owner_id.empty());
  CHECK(none.owner_epoch == -1);
}
