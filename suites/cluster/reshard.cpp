// Moving a slot whose hashes hold far, short and already-expired field TTLs (valkey-hfe.md
// upstream checklist 76, 77, 113; docs/semantics/): the keys arrive with every field's absolute
// expiry, a field whose deadline passes while the slot is importing is gone afterwards and only
// it, and the hashes later expire on the new owner. Checked two ways: the model (every primary's
// keys, values, HLEN, every HPEXPIRETIME and encodings: ClusterTwin::compare_state) and the
// keyspace snapshot of the source before against the target's after (state/snapshot.hpp), with
// the key counts of the slot on both nodes; the target's volatile-key count (INFO keyspace) and
// the notification of a past TTL given there (HGETEX EX 0). And 300 legacy moves back to back end
// with every node naming the same owner of each slot (cluster/reshard.hpp).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/cluster_fixture.hpp>
#include <expirykit/cluster/reshard.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/state/snapshot.hpp>

#include <map>
#include <set>
#include <vector>

using namespace expirykit;
using catch2::ClusterFixture;
using resp::Argv;
using resp::Reply;

namespace {
constexpr const char* tag = "{rs}";

/// 20 hashes of 4 fields (far TTL, 1 ms TTL, `short_ms` TTL, none) and one of 100 fields with
/// mixed TTLs, all in the slot of "{rs}", through the twin with active expiry paused; the
/// `short_ms` TTLs are set last; returns after the 1 ms deadlines have passed.
void fill(state::ClusterTwin& t, int short_ms) {
  t.set_active_expire(false);
  auto run = [&](const Argv& a) {
    const auto s = t.run(a);
    INFO(s.describe());
    REQUIRE(s.ok);
  };
  for (int i = 0; i < 20; ++i) {
    const std::string k = std::string(tag) + "k" + std::to_string(i);
    run({"HSET", k, "far", "1", "gone", "2", "short", "3", "plain", "4"});
    run({"HPEXPIRE", k, "3600000", "FIELDS", "1", "far"});
    run({"HPEXPIRE", k, "1", "FIELDS", "1", "gone"});
  }
  const std::string big = std::string(tag) + "big";
  Argv hset{"HSET", big};
  for (int f = 0; f < 100; ++f) hset.insert(hset.end(), {"f" + std::to_string(f), std::string(40, 'v')});
  run(hset);
  Argv far{"HSETEX", big, "PX", "7200000", "FIELDS", "50"}, gone{"HPEXPIRE", big, "1", "FIELDS", "25"};
  for (int f = 0; f < 50; ++f) far.insert(far.end(), {"f" + std::to_string(f), std::string(40, 'w')});
  for (int f = 50; f < 75; ++f) gone.push_back("f" + std::to_string(f));
  run(far);
  run(gone);
  // The short TTLs last: they must outlive the snapshots and the move that follow, so the time
  // the fill takes (85 round trips, slow on a busy machine) does not come out of their margin.
  for (int i = 0; i < 20; ++i)
    run({"HPEXPIRE", std::string(tag) + "k" + std::to_string(i), std::to_string(short_ms), "FIELDS", "1", "short"});
  t.twin().wait_until_past(t.twin().server_time() + 1);
}

std::string lines(const std::vector<std::string>& v) { return catch2::detail::one_per_line(v, "  "); }

/// The checks after the move: model, snapshot before vs after, key counts on both nodes.
void check_moved(state::ClusterTwin& t, const state::Snapshot& before, const std::string& source, const std::string& target,
                 long keys) {
  auto& c = t.client();
  const int slot = cluster::slot_of(tag);
  CHECK(c.address_of(slot) == target);
  CHECK(c.connection(source)("CLUSTER", "COUNTKEYSINSLOT", slot) == Reply::integer(0));
  CHECK(c.connection(target)("CLUSTER", "COUNTKEYSINSLOT", slot) == Reply::integer(keys));
  const auto model_diffs = t.compare_state();
  INFO("model vs cluster after the move:\n" << lines(model_diffs));
  CHECK(model_diffs.empty());
  const auto after = state::Snapshot::take(c.connection(target), "target after");
  const auto snap_diffs = state::diff(before, after);
  INFO("source before vs target after:\n" << lines(snap_diffs));
  CHECK(snap_diffs.empty());
}

/// Active expiry on again: the model reclaims what is due and the cluster must follow.
void check_later_expiry(state::ClusterTwin& t, int64_t until_ms) {
  t.set_active_expire(true);
  t.twin().wait_until_past(until_ms);
  std::vector<std::string> diffs;
  for (int i = 0; i < 200; ++i) {  // active expiry runs hz times a second: poll, 10 s at most
    t.twin().reclaim_model();
    diffs = t.compare_state();
    if (diffs.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO("after active expiry on the new owner:\n" << lines(diffs));
  CHECK(diffs.empty());
}

std::string first_other_primary(cluster::Client& c, const std::string& from) {
  for (const auto& p : c.primaries())
    if (p != from) return p;
  return from;
}

/// fill(), the slot moved to another primary (atomic or legacy), then check_moved() and
/// check_later_expiry().
void move_case(state::ClusterTwin& t, bool atomic) {
  t.flushall();
  // 3 s: the snapshot before, the move, the model compare and the snapshot after must all come
  // before the short deadlines (issue 22: 1.5 s, counted from before the fill, did not hold with
  // slower round trips); then check_later_expiry() waits for them.
  constexpr int short_ms = 3000;
  fill(t, short_ms);
  auto& c = t.client();
  const int slot = cluster::slot_of(tag);
  const std::string source = c.address_of(slot), target = first_other_primary(c, source);
  const auto before = state::Snapshot::take(c.connection(source), "source before");
  const auto& d = t.dialect();
  const observe::Counters source_before = observe::Counters::read(c.connection(source), d);
  const int64_t short_deadline = t.twin().server_time() + short_ms;
  const int64_t since = t.twin().server_time();
  const auto rep = atomic ? cluster::move_slots_atomic(c, slot, slot, target) : cluster::move_slot_legacy(c, slot, target);
  t.slots_moved({slot}, atomic ? std::nullopt : std::optional<int64_t>(since));
  t.topology_changed("moved");
  CHECK(rep.keys == 21);
  check_moved(t, before, source, target, 21);
  {
    // The volatile-key count travels with the keys (valkey-hfe.md checklist 76): INFO keyspace's
    // keys_with_volatile_items (Redis: subexpiry) on the target is the source's before the move,
    // the source's is 0.
    const observe::Counters src = observe::Counters::read(c.connection(source), d);
    const observe::Counters dst = observe::Counters::read(c.connection(target), d);
    INFO(d.info_keyspace_volatile << ": source before " << source_before.volatile_keys << ", after " << src.volatile_keys
                                  << "; target after " << dst.volatile_keys);
    CHECK(source_before.volatile_keys == 21);
    CHECK(dst.volatile_keys == source_before.volatile_keys);
    CHECK(src.volatile_keys == 0);
    CHECK(dst.keys == 21);
  }
  {
    // A past TTL on the new owner deletes the field there and notifies it there (HGETEX EX 0:
    // checklist 76; the dialect's past_ttl_event, hexpired on Valkey), model and node agreeing.
    observe::KeyspaceEvents heard(c.connection(target));
    const std::string k = std::string(tag) + "k0";
    const auto step = t.run({"HGETEX", k, "EX", "0", "FIELDS", "1", "plain"});
    INFO(step.describe());
    CHECK(step.ok);
    c.connection(target).call(heard.marker("hgetex"));
    std::multiset<std::string> got;
    for (const auto& e : heard.read_until("hgetex").keyevent) got.insert(e.name + "@" + e.key);
    std::string shown;
    for (const auto& e : got) shown += " " + e;
    INFO("the target notified:" << shown);
    if (!step.server.is_error()) {
      CHECK(got.count(d.past_ttl_event + "@" + k) == 1);
      CHECK(c("HEXISTS", k, "plain") == Reply::integer(0));
    }
    CHECK(t.compare_state().empty());
  }
  check_later_expiry(t, short_deadline);
}
}  // namespace

TEST_CASE_METHOD(ClusterFixture, "Reshard (legacy MIGRATE): far, short and expired field TTLs arrive intact",
                 "[cluster][reshard]") {
  cluster();
  move_case(twin(), false);
}

TEST_CASE_METHOD(ClusterFixture, "Reshard (atomic CLUSTER MIGRATESLOTS): far, short and expired field TTLs arrive intact",
                 "[cluster][reshard]") {
  cluster();
  require_atomic_slot_migration();
  move_case(twin(), true);
}

TEST_CASE_METHOD(ClusterFixture, "Reshard (legacy): a field whose deadline passes while its slot is importing",
                 "[cluster][reshard]") {
  cluster();
  auto& t = twin();
  t.flushall();
  t.set_active_expire(true);  // the importing node may reclaim it once due, never before
  auto& c = t.client();
  const std::string k = std::string(tag) + "imp";
  const int slot = cluster::slot_of(tag);
  REQUIRE(t.run({"HSET", k, "due", "1", "far", "2"}).ok);
  REQUIRE(t.run({"HPEXPIRE", k, "2000", "FIELDS", "1", "due"}).ok);
  REQUIRE(t.run({"HPEXPIRE", k, "3600000", "FIELDS", "1", "far"}).ok);
  const std::string source = c.address_of(slot), target = first_other_primary(c, source);
  const Reply expiries_before = c("HPEXPIRETIME", k, "FIELDS", 2, "due", "far");
  const int64_t due_ms = expiries_before[0].as_integer();
  Reply during_before, during_after, expiries_importing;
  int64_t read_at = 0;
  cluster::LegacyMove o;
  o.while_importing = [&] {
    auto& dst = c.connection(target);
    const auto r = dst.pipeline({{"ASKING"}, {"HLEN", k}, {"TIME"}});
    during_before = r[1];
    read_at = server::time_ms(r[2]);
    expiries_importing = dst.pipeline({{"ASKING"}, {"HPEXPIRETIME", k, "FIELDS", "2", "due", "far"}})[1];
    t.twin().wait_until_past(due_ms, 20);
    during_after = dst.pipeline({{"ASKING"}, {"HGET", k, "due"}})[1];
  };
  cluster::move_slot_legacy(c, slot, target, o);
  t.slots_moved({slot});
  t.topology_changed("moved");
  INFO("HPEXPIRETIME before " << expiries_before << ", on the importing node " << expiries_importing);
  if (read_at < due_ms) CHECK(during_before == Reply::integer(2));  // not expired before its deadline
  else WARN("the machine stalled past the 2 s deadline before the first read: not checked");
  CHECK(expiries_importing == expiries_before);       // the same absolute expiries, to the ms
  CHECK(during_after == Reply::nil());                // past it: gone, even while importing
  CHECK(c("HGET", k, "due") == Reply::nil());
  CHECK(c("HGET", k, "far") == Reply::string("2"));
  CHECK(c("HPEXPIRETIME", k, "FIELDS", 1, "far") == Reply::ints({expiries_before[1].as_integer()}));
  check_later_expiry(t, due_ms);
}

TEST_CASE_METHOD(ClusterFixture, "Reshard (legacy): moves back to back leave every node naming the same owner",
                 "[cluster][reshard]") {
  // The target's SETSLOT NODE raises its config epoch to one above the highest it knows; a
  // target that had not yet heard of the source's own last raise took an epoch below it and the
  // nodes named two owners for good (cluster/reshard.hpp detail::await_epoch_known). Without that
  // wait this case failed 2 runs of 5 on Redis 8.0.6 (a move's final wait ran out, the nodes
  // naming two owners). Each move goes to the primary after the slot's owner, each slot twice
  // in a row, so that the source was the previous move's target as often as it can be. On a
  // cluster of its own: a failure leaves the slot split, which later cases must not inherit.
  auto cl = fresh_cluster();
  cluster::Client c(cl->seed_host(), cl->seed_port());
  const std::vector<int> slots{cluster::slot_of("h1"), cluster::slot_of("h2"), cluster::slot_of("h3"), cluster::slot_of("s1")};
  std::map<int, std::string> owner;
  for (int i = 0; i < 300; ++i) {
    const int slot = slots[static_cast<std::size_t>(i / 2 % 4)];
    c.refresh();
    const std::string target = c.primary_after(c.address_of(slot));
    INFO("move " << i << " of slot " << slot << " to " << target);
    REQUIRE_NOTHROW(cluster::move_slot_legacy(c, slot, target));
    owner[slot] = target;
  }
  cl->wait_agreed();  // one slot map on every node, cluster_state:ok (throws with every view)
  for (auto* node : cl->nodes())
    for (const auto& n : cl->view_of(cl->index_of(*node)))
      for (const auto& [slot, addr] : owner)
        for (const auto& [a, b] : n.slots)
          if (slot >= a && slot <= b) {
            INFO(node->address() << " sees slot " << slot << " on " << n.address);
            CHECK(n.address == addr);
          }
}
