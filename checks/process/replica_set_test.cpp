// process::ReplicaSet against the provisioned default server (or EXPIRYKIT_SERVER): start, link,
// sync by offsets, restart of the primary, read-only replicas, and a replica that cannot link.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <fstream>
#include <string>

#include <expirykit/process/replica_set.hpp>
#include <expirykit/server/info.hpp>

#include "proc_util.hpp"

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using resp::Reply;

namespace {
server::Info replication(process::Server& s) {
  auto c = s.client();
  return server::Info::fetch(c, "replication");
}
}  // namespace

TEST_CASE("A ReplicaSet starts with 1 and with 2 replicas, each linked to the primary", "[process][replica]") {
  const int n = GENERATE(1, 2);
  INFO(n << " replica(s)");
  process::ReplicaSet::Options o;
  o.replicas = n;
  process::ReplicaSet rs(o);
  REQUIRE(rs.replica_count() == static_cast<std::size_t>(n));
  const auto p = replication(rs.primary());
  CHECK(p.get("role") == "master");
  CHECK(p.get_int("connected_slaves", -1) == n);
  for (int i = 0; i < n; ++i) {
    auto& r = rs.replica(static_cast<std::size_t>(i));
    CHECK(r.port() != rs.primary().port());
    const auto info = replication(r);
    CHECK(info.get("role") == "slave");
    CHECK(info.get("master_link_status") == "up");
    CHECK(info.get("master_host") == "127.0.0.1");
    CHECK(info.get_int("master_port") == rs.primary().port());
    CHECK(info.get_int("master_sync_in_progress", -1) == 0);
  }
  CHECK_THROWS_WITH(rs.replica(static_cast<std::size_t>(n)),
                    Catch::Matchers::ContainsSubstring("no replica " + std::to_string(n) + ": this ReplicaSet has " +
                                                       std::to_string(n)));
  CHECK_THROWS_AS(rs.replica(static_cast<std::size_t>(n)), process::ServerError);
}

TEST_CASE("ReplicaSetOptions::replicas below 0 is a ServerError, not an empty set", "[process][replica]") {
  process::ReplicaSet::Options o;
  o.replicas = -1;
  CHECK_THROWS_WITH(process::ReplicaSet(o), Catch::Matchers::ContainsSubstring("replicas = -1: must be 0 or more"));
}

TEST_CASE("A write on the primary is on every replica right after sync(), 200 times in a row", "[process][replica]") {
  process::ReplicaSet::Options o;
  o.replicas = 2;
  process::ReplicaSet rs(o);
  auto p = rs.primary().client();
  auto r0 = rs.replica(0).client();
  auto r1 = rs.replica(1).client();
  long long last = -1;
  int mismatches = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string k = "k" + std::to_string(i % 7), v = "v" + std::to_string(i);
    // Alternating string and hash writes; the same keys are overwritten so a stale read shows.
    if (i % 2 == 0) REQUIRE(p("SET", k, v) == Reply::ok());
    else REQUIRE(p("HSET", "h", "f", v).is_integer());
    const long long off = rs.sync();
    CHECK(off > last);  // each write moved the primary's offset
    last = off;
    for (auto* r : {&r0, &r1}) {
      const Reply got = i % 2 == 0 ? (*r)("GET", k) : (*r)("HGET", "h", "f");
      if (got != Reply::string(v)) {
        ++mismatches;
        UNSCOPED_INFO("write " << i << ": replica read " << got << ", primary wrote \"" << v << "\"");
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("A replica is read-only: writes get READONLY", "[process][replica]") {
  process::ReplicaSet rs;
  auto r = rs.replica(0).client();
  const Reply w = r("SET", "k", "v");
  INFO(w);
  CHECK(w.is_error_starting("READONLY"));
  CHECK(r("EXISTS", "k") == Reply::integer(0));
}

TEST_CASE("restart_primary() keeps the replicas following", "[process][replica]") {
  const auto relink = GENERATE(process::Relink::on_their_own, process::Relink::now);
  CAPTURE(relink == process::Relink::now ? "Relink::now" : "Relink::on_their_own");
  process::ReplicaSet::Options o;
  o.replicas = 2;
  process::ReplicaSet rs(o);
  const pid_t before = rs.primary().pid();
  const int port = rs.primary().port();
  const Reply diskless_before = rs.primary().client()("CONFIG", "GET", "repl-diskless-sync");
  REQUIRE(rs.primary().client()("SET", "old", "1") == Reply::ok());
  rs.sync();
  const auto t0 = std::chrono::steady_clock::now();
  rs.restart_primary(process::Shutdown::save, relink);
  INFO("restart_primary took " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count()
                               << " ms");
  CHECK(rs.primary().pid() != before);
  CHECK(rs.primary().port() == port);
  auto p = rs.primary().client();
  CHECK(p("GET", "old") == Reply::string("1"));  // SHUTDOWN SAVE + load
  REQUIRE(p("SET", "new", "2") == Reply::ok());
  rs.sync();
  for (std::size_t i = 0; i < rs.replica_count(); ++i) {
    auto r = rs.replica(i).client();
    CHECK(replication(rs.replica(i)).get("master_link_status") == "up");
    CHECK(r("GET", "old") == Reply::string("1"));
    CHECK(r("GET", "new") == Reply::string("2"));
  }
  // Without a save the primary comes back with its last dump.rdb (the one SHUTDOWN SAVE wrote
  // above or, with Relink::now, the one its disk-based full sync wrote right after that restart:
  // "old" but not "new" either way), and the replicas, which hold "new", follow it there.
  rs.restart_primary(process::Shutdown::nosave, relink);
  auto p2 = rs.primary().client();
  CHECK(p2("DBSIZE") == Reply::integer(1));
  CHECK(p2("GET", "new").is_nil());
  REQUIRE(p2("SET", "third", "3") == Reply::ok());
  rs.sync();
  for (std::size_t i = 0; i < rs.replica_count(); ++i) {
    auto r = rs.replica(i).client();
    CHECK(r("GET", "old") == Reply::string("1"));
    CHECK(r("GET", "new").is_nil());
    CHECK(r("GET", "third") == Reply::string("3"));
  }
  // Relink::now told each replica to leave and rejoin (its log: "MASTER MODE enabled (user
  // request ...", "PRIMARY MODE" on Valkey 8.0+), once per restart; on_their_own never.
  for (std::size_t i = 0; i < rs.replica_count(); ++i) {
    std::ifstream log(rs.replica(i).log_path());
    int told = 0;
    for (std::string line; std::getline(log, line);) told += line.find("MODE enabled (user request") != std::string::npos;
    CHECK(told == (relink == process::Relink::now ? 2 : 0));
  }
  // The primary's setting is back as it was; the replicas keep swapdb under Relink::now.
  CHECK(rs.primary().client()("CONFIG", "GET", "repl-diskless-sync") == diskless_before);
  for (std::size_t i = 0; i < rs.replica_count(); ++i) {
    const Reply load = rs.replica(i).client()("CONFIG", "GET", "repl-diskless-load");
    if (relink == process::Relink::now)
      CHECK(load == Reply::array({Reply::string("repl-diskless-load"), Reply::string("swapdb")}));
    else
      CHECK(load == Reply::array({Reply::string("repl-diskless-load"), Reply::string("disabled")}));
  }
}

TEST_CASE("A replica that cannot link fails within sync_timeout, naming the replica, offsets and logs",
          "[process][replica][bad-input]") {
  // requirepass cannot be used for this: the kit's readiness PING then gets NOAUTH and the
  // primary itself never counts as started. Renaming PSYNC and SYNC away (rename-command,
  // valkey.conf) makes the primary answer the replica's handshake with an unknown-command error.
  process::ReplicaSet::Options o;
  o.primary.extra_args = {"--rename-command", "PSYNC", "", "--rename-command", "SYNC", ""};
  o.sync_timeout = std::chrono::milliseconds(1500);
  std::string msg;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    process::ReplicaSet rs(o);
    FAIL("the ReplicaSet started although the primary refuses PSYNC and SYNC");
  } catch (const process::ServerError& e) {
    msg = e.what();
  }
  const auto took = std::chrono::steady_clock::now() - t0;
  INFO(msg);
  CHECK(took < std::chrono::seconds(10));
  CHECK_THAT(msg, ContainsSubstring("replica 0 at 127.0.0.1:") &&
                      ContainsSubstring("did not link to the primary and finish the initial sync within 1500 ms") &&
                      ContainsSubstring("master_link_status=down") && ContainsSubstring("slave_repl_offset=") &&
                      ContainsSubstring("master_repl_offset=") && ContainsSubstring("replica log:") &&
                      ContainsSubstring("primary log:"));
  // The replica's log tail shows why: the primary's error reply to its handshake.
  CHECK_THAT(msg, ContainsSubstring("PSYNC") || ContainsSubstring("SYNC"));
  CHECK(ekcheck::eventually([] { return ekcheck::servers_of(::getpid()).empty(); }));
}
