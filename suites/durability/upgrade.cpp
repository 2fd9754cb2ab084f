// Data and replication across releases, as an upgrade meets them: an RDB and an AOF written by
// the previous release of this server's flavor, loaded by this one; a replica of this release
// following a primary of the previous one, and the other way round where the older release can
// load what the newer one sends (an 8.0 replica cannot read an 8.6 full sync: RDB format 13,
// src/rdb.h RDB_VERSION; the check says so and is NOT SUPPORTED there).
//
// The previous release: EXPIRYKIT_UPGRADE_FROM (a provisioned name such as redis-8.0, or a
// server binary), else the newest provisioned line of this flavor older than the server under
// test (process::previous_line: redis-8.6 -> redis-8.0, valkey-9.1 -> valkey-8.1, redis-8.0 ->
// redis-7.0). When it has no field TTLs (valkey-8.1, redis-7.0) the data is plain hashes, strings
// and key TTLs; otherwise field TTLs too (far deadlines, listpack and hashtable hashes, key TTLs
// beside field TTLs). Compared after the load: every key, field, value and absolute expiry
// (state::Snapshot, to the millisecond), and OBJECT ENCODING of every hash as this release's
// dialect predicts for a load (model::loaded_encoding). With field TTLs on both sides the
// durability property then runs on the mixed pair (property/durable_property.hpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/config.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/server/info.hpp>
#include <expirykit/property/durable_property.hpp>
#include <expirykit/state/snapshot.hpp>

using namespace expirykit;
using resp::Reply;
namespace fs = std::filesystem;

namespace {

class Upgrade : public catch2::ServerFixture {
 protected:
  /// The previous release's binary (see the file comment); SKIPs when none is provisioned.
  fs::path previous() {
    require_own_server("starts servers of two releases");
    // What this server lacks comes first (NOT SUPPORTED), what this machine lacks after (SKIPPED).
    require_field_ttl();
    if (const auto& from = config().upgrade_from) {
      if (from->find('/') != std::string::npos) return *from;
      const auto p = process::provisioned_server(*from);
      if (p.empty()) FAIL("EXPIRYKIT_UPGRADE_FROM=" << *from << " names no provisioned server (ci/provision-servers " << *from << ")");
      return p;
    }
    const auto& id = identity();
    const auto l = process::previous_line(server::to_string(id.flavor), id.version.major, id.version.minor);
    // SKIPPED, not NOT SUPPORTED: what this machine has provisioned, not what the server lacks
    // (EXPIRYKIT_FAIL_NOT_SUPPORTED=1 must not fail it).
    if (!l)
      catch2::skip(catch2::Verdict::skipped,
                   "skipped on " + id.to_string() + ": no older " + std::string(server::to_string(id.flavor)) +
                       " release is provisioned to upgrade from (ci/provision-servers <flavor>-<major>.<minor>)");
    return process::provisioned_server(l->name);
  }
  fs::path current() { return target().owned()->binary(); }

  static server::Identity identity_of(process::Server& s) {
    auto c = s.client();
    return server::Identity::probe(c);
  }
  static std::optional<model::Dialect> dialect_of(const server::Identity& id) {
    return model::Dialect::for_server(server::to_string(id.flavor), id.version.major, id.version.minor);
  }

  /// Writes the data set (see the file comment) through `c`; field TTLs when `field_ttl`.
  static void write_data(resp::Client& c, bool field_ttl) {
    const int64_t now = server::now_ms(c);
    const int64_t far = now + 3'600'000, farther = now + 7'200'000;
    auto ok = [&](const resp::Argv& a) {
      const Reply r = c.call(a);
      INFO(resp::cli_line(a) << " -> " << r);
      REQUIRE_FALSE(r.is_error());
    };
    ok({"SET", "s:plain", "v"});
    ok({"SET", "s:ttl", "v", "PXAT", std::to_string(far)});
    ok({"HSET", "h:small", "a", "1", "b", "2"});
    ok({"HSET", "h:keyttl", "a", "1"});
    ok({"PEXPIREAT", "h:keyttl", std::to_string(far)});
    ok({"HSET", "h:long", "a", std::string(100, 'x')});  // past hash-max-listpack-value: hashtable
    resp::Argv big{"HSET", "h:big"};
    for (int i = 0; i < 600; ++i) big.insert(big.end(), {"f" + std::to_string(i), std::to_string(i)});
    ok(big);  // past hash-max-listpack-entries (512): hashtable
    if (!field_ttl) return;
    ok({"HSET", "t:small", "a", "1", "b", "2", "c", "3"});
    ok({"HPEXPIREAT", "t:small", std::to_string(far), "FIELDS", "2", "a", "b"});
    ok({"HSETEX", "t:hsetex", "PXAT", std::to_string(farther), "FIELDS", "2", "x", "1", "y", "2"});
    ok({"HSET", "t:both", "a", "1", "b", "2"});
    ok({"HPEXPIREAT", "t:both", std::to_string(far), "FIELDS", "1", "a"});
    ok({"PEXPIREAT", "t:both", std::to_string(farther)});
    resp::Argv bigttl{"HSET", "t:big"};
    for (int i = 0; i < 600; ++i) bigttl.insert(bigttl.end(), {"f" + std::to_string(i), std::to_string(i)});
    ok(bigttl);
    ok({"HPEXPIREAT", "t:big", std::to_string(far), "FIELDS", "3", "f1", "f2", "f3"});
    ok({"HSET", "t:persisted", "a", "1"});
    ok({"HPEXPIREAT", "t:persisted", std::to_string(far), "FIELDS", "1", "a"});
    ok({"HPERSIST", "t:persisted", "FIELDS", "1", "a"});
  }

  /// The hash at `key` of `snap` as the model holds it, with `enc` the encoding it had before.
  static model::Hash as_model_hash(const state::KeySnapshot& k, model::Encoding enc) {
    model::Hash h;
    for (const auto& [f, v] : k.fields) h.fields[f] = model::Field{v.value, v.expire_ms};
    h.encoding = enc;
    return h;
  }
  static model::Encoding encoding_of(const std::string& e) {
    return e == "listpackex" ? model::Encoding::listpackex : e == "hashtable" ? model::Encoding::hashtable : model::Encoding::listpack;
  }

  /// CHECKs that `loaded` (the new release, after loading) holds exactly what `before` (the old
  /// one) held, and that each hash has the encoding the new dialect predicts for a load.
  /// `replayed`: the data came back as commands (an AOF whose base was rewritten without the RDB
  /// preamble), so each hash was built anew: its encoding is that of a fresh write of its fields,
  /// not the one the previous release had (a Redis hash that had a field TTL keeps listpackex
  /// through an RDB, not through HSET; live 8.0.6 and 8.6.3).
  static void check_loaded(const state::Snapshot& before, const std::map<std::string, std::string>& enc_before,
                           process::Server& loaded, const std::string& how, bool replayed = false) {
    auto c = loaded.client();
    const auto after = state::Snapshot::take(c, how);
    const auto diffs = state::diff(before, after);
    std::string all;
    for (const auto& d : diffs) all += "  " + d + "\n";
    INFO(how << ": differences from what the previous release held:\n" << all);
    CHECK(diffs.empty());
    const auto id = server::Identity::probe(c);
    const auto d = dialect_of(id);
    model::ListpackLimits lim;
    const Reply e = c("CONFIG", "GET", "hash-max-listpack-entries");
    const Reply v = c("CONFIG", "GET", "hash-max-listpack-value");
    if (e.is_array() && e.size() == 2) lim.entries = std::stoul(e[1].str());
    if (v.is_array() && v.size() == 2) lim.value = std::stoul(v[1].str());
    for (const auto& [key, k] : before.keys) {
      if (k.type != "hash") continue;
      const auto h = as_model_hash(k, replayed ? model::Encoding::listpack : encoding_of(enc_before.at(key)));
      // Without a dialect (no field TTLs) the data has none: the rule both flavors share.
      const model::Encoding want =
          d ? model::loaded_encoding(*d, h, lim)
            : (h.fields.size() > lim.entries || std::any_of(h.fields.begin(), h.fields.end(), [&](const auto& f) {
                 return f.first.size() > lim.value || f.second.value.size() > lim.value;
               }))
                  ? model::Encoding::hashtable
                  : model::Encoding::listpack;
      const Reply got = c("OBJECT", "ENCODING", key);
      INFO(how << ": OBJECT ENCODING " << key << " (before: " << enc_before.at(key) << ")");
      CHECK(got == Reply::string(model::to_string(want)));
    }
  }

  static std::map<std::string, std::string> encodings(resp::Client& c, const state::Snapshot& s) {
    std::map<std::string, std::string> out;
    for (const auto& [key, k] : s.keys)
      if (k.type == "hash") out[key] = c("OBJECT", "ENCODING", key).str();
    return out;
  }
};

}  // namespace

TEST_CASE_METHOD(Upgrade, "Upgrade: an RDB of the previous release loads here with every field, value and absolute expiry",
                 "[durability][upgrade]") {
  const fs::path from = previous();
  process::ServerOptions o;
  o.binary = from;
  o.persistence = process::Persistence::rdb;
  process::Server old(o);
  const auto old_id = identity_of(old);
  INFO("from " << old_id.to_string() << " (" << from.string() << ") to " << identity().to_string());
  auto c = old.client();
  write_data(c, old_id.caps.field_ttl() && identity().caps.field_ttl());
  const auto before = state::Snapshot::take(c, old_id.to_string());
  const auto enc = encodings(c, before);
  REQUIRE(c("SAVE") == Reply::ok());
  process::ServerOptions n;
  n.binary = current();
  n.persistence = process::Persistence::rdb;
  n.seed_files = {old.dir() / "dump.rdb"};
  process::Server loaded(n);
  check_loaded(before, enc, loaded, identity().to_string() + " loaded from " + old_id.to_string() + "'s dump.rdb");
}

TEST_CASE_METHOD(Upgrade, "Upgrade: an AOF of the previous release (rewritten base and incremental part) loads here likewise",
                 "[durability][upgrade]") {
  const fs::path from = previous();
  const bool preamble = GENERATE(true, false);
  process::ServerOptions o;
  o.binary = from;
  o.persistence = process::Persistence::aof;
  o.aof_rdb_preamble = preamble;
  process::Server old(o);
  const auto old_id = identity_of(old);
  INFO("from " << old_id.to_string() << " to " << identity().to_string() << ", aof-use-rdb-preamble "
               << (preamble ? "yes" : "no"));
  auto c = old.client();
  const bool ttl = old_id.caps.field_ttl() && identity().caps.field_ttl();
  write_data(c, ttl);
  // The base file: a rewrite of what is there now; then more writes go to the incremental part.
  REQUIRE_FALSE(c("BGREWRITEAOF").is_error());
  for (int i = 0; i < 500; ++i) {
    const Reply r = c("INFO", "persistence");
    if (r.str().find("aof_rewrite_in_progress:0") != std::string::npos &&
        r.str().find("aof_rewrite_scheduled:0") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  c("HSET", "after:rewrite", "a", "1");
  c("SET", "after:s", "v", "PXAT", std::to_string(server::now_ms(c) + 3'600'000));
  if (ttl) c("HSETEX", "after:ttl", "PXAT", std::to_string(server::now_ms(c) + 3'600'000), "FIELDS", "1", "f", "v");
  const auto before = state::Snapshot::take(c, old_id.to_string());
  const auto enc = encodings(c, before);
  old.stop(process::Shutdown::nosave);  // appendfsync always: every write is in the AOF
  process::ServerOptions n;
  n.binary = current();
  n.persistence = process::Persistence::aof;
  n.seed_files = {old.dir() / "appendonlydir"};
  process::Server loaded(n);
  check_loaded(before, enc, loaded, identity().to_string() + " loaded from " + old_id.to_string() + "'s appendonlydir",
               !preamble);
}

TEST_CASE_METHOD(Upgrade, "Upgrade: a replica of this release follows a primary of the previous one",
                 "[durability][upgrade][replica]") {
  const fs::path from = previous();
  process::ReplicaSetOptions o;
  o.primary.binary = from;
  o.primary.persistence = process::Persistence::aof;
  o.replica_binary = current();
  auto set = std::make_unique<process::ReplicaSet>(o);
  const auto old_id = identity_of(set->primary());
  INFO("primary " << old_id.to_string() << ", replica " << identity().to_string());
  auto c = set->primary().client();
  const bool ttl = old_id.caps.field_ttl() && identity().caps.field_ttl();
  write_data(c, ttl);
  set->sync();
  {
    auto rc = set->replica().client();
    const auto diffs = state::diff(state::Snapshot::take(c, "primary " + old_id.to_string()),
                                   state::Snapshot::take(rc, "replica " + identity().to_string()));
    std::string all;
    for (const auto& d : diffs) all += "  " + d + "\n";
    INFO("replica vs primary after the data set:\n" << all);
    CHECK(diffs.empty());
  }
  const auto d = dialect_of(old_id);
  if (!ttl || !d) return;  // plain data only: compared above
  // The durability property on the mixed pair: commands go to the (old) primary and its model;
  // the (new) replica, an RDB load by the new release and the primary's own AOF are compared.
  process::ServerOptions lo;
  lo.binary = current();
  process::Server loader(lo);
  state::Twin::Options topt;
  topt.server = old_id;
  // The (new) replica applies what the (old) primary accepts: its crash rows hold commands back
  // too (found here: an 8.6.3 replica dies on the HSETEX an 8.0.6 primary propagates, known
  // issue redis-hsetex-duplicate-field-hashtable-crash).
  topt.crash_servers = {identity()};
  state::Twin t(c, *d, topt);
  property::Copies copies{*set, loader};
  property::DurableOptions opt;
  opt.server = old_id;
  auto r = property::check_durable_sequences(t, copies, property::PropertyBudget{10, 30, 5, catch2::current_test_name()}, opt);
  UNSCOPED_INFO(r.sequences << " sequences, " << r.commands << " commands in " << r.seconds << " s, seed " << r.seed);
  if (!r.ok) FAIL(r.report);
  CHECK(r.commands > 0);
}

TEST_CASE_METHOD(Upgrade, "Upgrade: a replica of the previous release follows a primary of this one, where it can",
                 "[durability][upgrade][replica]") {
  const fs::path from = previous();
  process::ReplicaSetOptions o;
  o.primary.binary = current();
  o.replica_binary = from;
  std::unique_ptr<process::ReplicaSet> set;
  try {
    set = std::make_unique<process::ReplicaSet>(o);
  } catch (const process::ServerError& e) {
    // An older replica that cannot load the newer release's full sync: "Can't handle RDB format
    // version" in its log (Valkey and Redis src/rdb.c rdbLoadRio), which the ReplicaSet quotes
    // once a second load has failed (process/replica_set.hpp), long before its sync timeout.
    const std::string what = e.what();
    // SKIPPED: an expected property of the release pair (the file comment), not a lack of the
    // server under test that EXPIRYKIT_FAIL_NOT_SUPPORTED=1 should fail.
    if (what.find("RDB format version") != std::string::npos || what.find("Can't handle RDB") != std::string::npos)
      catch2::skip(catch2::Verdict::skipped, "skipped on " + identity().to_string() +
                                                 " as a primary of the previous release: its replica " +
                                                 "cannot load this release's full sync (RDB format):\n" + what);
    throw;
  }
  const auto old_id = identity_of(set->replica());
  INFO("primary " << identity().to_string() << ", replica " << old_id.to_string());
  auto c = set->primary().client();
  const bool ttl = old_id.caps.field_ttl() && identity().caps.field_ttl();
  write_data(c, ttl);
  set->sync();
  auto rc = set->replica().client();
  const auto diffs = state::diff(state::Snapshot::take(c, "primary " + identity().to_string()),
                                 state::Snapshot::take(rc, "replica " + old_id.to_string()));
  std::string all;
  for (const auto& d : diffs) all += "  " + d + "\n";
  INFO("replica vs primary after the data set:\n" << all);
  CHECK(diffs.empty());
}

TEST_CASE_METHOD(Upgrade, "Upgrade: a replica of a release without field TTLs cannot full-sync them and holds back "
                          "no replica of this release",
                 "[durability][upgrade][replica]") {
  // valkey-hfe.md checklist 112: a primary holding field TTLs and a replica of a release without
  // them (Valkey 8.1) never completes a full sync: the primary's fork, writing the RDB at the
  // replica's version, stops at the hash with "Can't store key (db 0) in RDB version 11" (live
  // Valkey 9.1.2 -> 8.1.1, 2026-12-06); a Redis 7.0 replica already stops at the RDB format
  // ("Can't handle RDB format version" in its own log). Meanwhile a replica of this release,
  // attached after it, syncs every field and absolute expiry. SKIPPED where the previous release
  // has field TTLs itself (redis-8.6 -> redis-8.0: the case above).
  const fs::path from = previous();
  process::ServerOptions old_opts;
  old_opts.binary = from;
  process::Server old_replica(old_opts);
  const auto old_id = identity_of(old_replica);
  if (old_id.caps.field_ttl())
    catch2::skip(catch2::Verdict::skipped, "skipped on " + identity().to_string() + ": the previous release " +
                                               old_id.to_string() + " has field TTLs itself");
  process::ServerOptions po;
  po.binary = current();
  po.set("repl-diskless-sync-delay", "0");
  po.set("shutdown-timeout", "0");
  process::Server primary(po);
  auto pc = primary.client();
  write_data(pc, true);
  const std::string primary_at = primary.host() + " " + std::to_string(primary.port());
  auto oc = old_replica.client();
  REQUIRE(oc("REPLICAOF", primary.host(), std::to_string(primary.port())).is_status());
  process::ServerOptions no = po;
  no.set("replicaof", primary_at);
  process::Server new_replica(no);
  auto nc = new_replica.client();
  INFO("primary " << identity().to_string() << " at " << primary.address() << ", replica of the previous release "
                  << old_id.to_string() << " at " << old_replica.address() << ", replica of this release at "
                  << new_replica.address());
  // The replica of this release: linked, caught up, the same data to the millisecond.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto linked = [](resp::Client& c) {
    const auto info = server::Info::fetch(c, "replication");
    return info.get("master_link_status") == "up" && info.get("master_sync_in_progress") == "0";
  };
  while (!linked(nc) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(linked(nc));
  const auto want = state::Snapshot::take(pc, "primary");
  auto diffs = state::diff(want, state::Snapshot::take(nc, "replica of this release"));
  while (!diffs.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    diffs = state::diff(want, state::Snapshot::take(nc, "replica of this release"));
  }
  std::string all;
  for (const auto& d : diffs) all += "  " + d + "\n";
  INFO("replica of this release vs primary:\n" << all);
  CHECK(diffs.empty());
  // The older one: its sync refused, named in a log, nothing loaded, never linked.
  auto refused = [&]() -> std::string {
    for (const auto& [who, log] : {std::pair{"primary", primary.log_path()}, std::pair{"old replica", old_replica.log_path()}}) {
      std::ifstream in(log);
      for (std::string line; std::getline(in, line);)
        if (line.find("Can't store key") != std::string::npos || line.find("Can't handle RDB format") != std::string::npos)
          return std::string(who) + ": " + line;
    }
    return {};
  };
  std::string why = refused();
  while (why.empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    why = refused();
  }
  INFO("primary log:\n" << primary.log_tail(10) << "old replica log:\n" << old_replica.log_tail(10));
  CHECK_FALSE(why.empty());
  // Valkey to Valkey: the primary writes the RDB at the replica's version (REPLCONF VERSION) and
  // refuses the hash there; a primary that sent its own format would show only the replica's
  // "Can't handle RDB format" and fail this.
  if (identity().flavor == server::Flavor::valkey && old_id.flavor == server::Flavor::valkey)
    CHECK(why.rfind("primary: ", 0) == 0);
  UNSCOPED_INFO("the refusal: " << why);
  const auto old_info = server::Info::fetch(oc, "replication");
  CHECK(old_info.get("master_link_status") != std::optional<std::string>("up"));
  CHECK(oc("DBSIZE") == Reply::integer(0));
  // And the primary still serves, its new replica in step with a write after all that.
  REQUIRE(pc("HSET", "after", "a", "1").is_integer());
  REQUIRE(pc("HPEXPIRE", "after", 3'600'000, "FIELDS", 1, "a") == Reply::ints({1}));
  const auto until2 = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (nc("HLEN", "after") != Reply::integer(1) && std::chrono::steady_clock::now() < until2)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(nc("HPEXPIRETIME", "after", "FIELDS", 1, "a") == pc("HPEXPIRETIME", "after", "FIELDS", 1, "a"));
}
