// server/persistence.hpp on live servers (the provisioned default, or EXPIRYKIT_SERVER): each
// helper really makes the server write or load, and refusals become PersistenceError.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <fstream>
#include <string>
#include <thread>

#include <expirykit/process/server.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>
#include <expirykit/server/persistence.hpp>

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using resp::Reply;

namespace {
long long persistence_int(resp::Client& c, const char* field) { return server::Info::fetch(c, "persistence").get_int(field, -1); }
/// Lines of the server log containing `needle`.
int log_count(const process::Server& s, const std::string& needle) {
  std::ifstream in(s.log_path());
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.find(needle) != std::string::npos;
  return n;
}
/// Polls the server clock (TIME) until its Unix second is past `second`: LASTSAVE has
/// one-second resolution. Bounded: 3 s.
void wait_server_second_past(resp::Client& c, long long second) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (server::now_ms(c) / 1000 <= second && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}
}  // namespace

TEST_CASE("bgsave() returns once the save is done: LASTSAVE and rdb_saves advanced, dump.rdb written", "[server][persistence]") {
  process::Server s;
  auto c = s.client();
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  const long long lastsave = c("LASTSAVE").as_integer();
  const long long saves = persistence_int(c, "rdb_saves");
  REQUIRE(persistence_int(c, "rdb_changes_since_last_save") > 0);
  wait_server_second_past(c, lastsave);
  server::bgsave(c);
  // No polling here: bgsave() itself must have waited for the child to finish.
  CHECK(persistence_int(c, "rdb_bgsave_in_progress") == 0);
  CHECK(persistence_int(c, "rdb_saves") > saves);
  CHECK(c("LASTSAVE").as_integer() > lastsave);
  CHECK(persistence_int(c, "rdb_changes_since_last_save") == 0);
  CHECK(server::Info::fetch(c, "persistence").get("rdb_last_bgsave_status") == "ok");
  CHECK(std::filesystem::exists(s.dir() / "dump.rdb"));
}

TEST_CASE("bgrewriteaof() returns once the rewrite is done, with a new base file", "[server][persistence]") {
  process::ServerOptions o;
  o.persistence = process::Persistence::aof;
  process::Server s(o);
  auto c = s.client();
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  const long long rewrites = persistence_int(c, "aof_rewrites");
  server::bgrewriteaof(c);
  CHECK(persistence_int(c, "aof_rewrites") > rewrites);
  CHECK(persistence_int(c, "aof_rewrite_in_progress") == 0);
  CHECK(persistence_int(c, "aof_rewrite_scheduled") == 0);
  CHECK(server::Info::fetch(c, "persistence").get("aof_last_bgrewrite_status") == "ok");
  CHECK(log_count(s, "Background AOF rewrite finished successfully") >= 1);
}

TEST_CASE("bgrewriteaof() with appendonly off: the server still rewrites (base file and manifest)", "[server][persistence]") {
  // Found live on Valkey 9.1.2: BGREWRITEAOF is accepted with appendonly no ("Background append
  // only file rewriting started"), counts in aof_rewrites and writes appendonlydir/ with a base
  // file and a manifest.
  process::Server s;  // Persistence::off: appendonly no
  auto c = s.client();
  REQUIRE(c("CONFIG", "GET", "appendonly")[1] == Reply::string("no"));
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  const long long rewrites = persistence_int(c, "aof_rewrites");
  server::bgrewriteaof(c);
  CHECK(persistence_int(c, "aof_rewrites") == rewrites + 1);
  CHECK(persistence_int(c, "aof_enabled") == 0);
  CHECK(std::filesystem::exists(s.dir() / "appendonlydir" / "appendonly.aof.manifest"));
}

TEST_CASE("debug_reload() keeps the data, field TTLs included", "[server][persistence]") {
  process::Server s;
  auto c = s.client();
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  REQUIRE(c("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
  const bool field_ttl = !c("COMMAND", "INFO", "hpexpire")[0].is_nil();
  if (field_ttl) REQUIRE(c("HPEXPIRE", "h", 600000, "FIELDS", 1, "a") == Reply::ints({1}));
  const Reply times = c("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b");
  const int reloads = log_count(s, "DB reloaded by DEBUG RELOAD");
  server::debug_reload(c);
  CHECK(log_count(s, "DB reloaded by DEBUG RELOAD") == reloads + 1);
  CHECK(std::filesystem::exists(s.dir() / "dump.rdb"));
  CHECK(c("DBSIZE") == Reply::integer(2));
  CHECK(c("GET", "k") == Reply::string("v"));
  CHECK(c("HGET", "h", "a") == Reply::string("1"));
  CHECK(c("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b") == times);
}

TEST_CASE("debug_loadaof() replays the AOF: keys that never reached it are gone", "[server][persistence]") {
  process::ServerOptions o;
  o.persistence = process::Persistence::aof;
  process::Server s(o);
  auto c = s.client();
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  // DEBUG POPULATE creates keys without propagating anything to the AOF (seen on Valkey 9.1.2),
  // so only a real replay drops them.
  REQUIRE(c("DEBUG", "POPULATE", 5) == Reply::ok());
  REQUIRE(c("DBSIZE") == Reply::integer(7));
  server::debug_loadaof(c);
  CHECK(c("DBSIZE") == Reply::integer(2));
  CHECK(c("GET", "k") == Reply::string("v"));
  CHECK(c("HGET", "h", "a") == Reply::string("1"));
}

TEST_CASE("A refused SAVE and a failed BGSAVE are PersistenceErrors naming the command", "[server][persistence][bad-input]") {
  process::Server s;
  auto c = s.client();
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  // A directory where dump.rdb goes: the server's rename of its temp file fails ("Is a
  // directory"), even for root, which write permissions would not stop.
  std::filesystem::create_directories(s.dir() / "dump.rdb" / "occupied");
  try {
    server::save(c);
    FAIL("save() returned although SAVE could not write dump.rdb");
  } catch (const server::PersistenceError& e) {
    CHECK_THAT(e.what(), ContainsSubstring("SAVE refused") && ContainsSubstring("ERR"));
  }
  try {
    server::bgsave(c, std::chrono::seconds(10));
    FAIL("bgsave() returned although the background save could not write dump.rdb");
  } catch (const server::PersistenceError& e) {
    CHECK_THAT(e.what(), ContainsSubstring("BGSAVE failed") && ContainsSubstring("rdb_last_bgsave_status=err"));
  }
  // debug_reload() saves first: refused the same way, and the data stays.
  CHECK_THROWS_AS(server::debug_reload(c), server::PersistenceError);
  CHECK(c("GET", "k") == Reply::string("v"));
}

TEST_CASE("debug_loadaof() with appendonly off is refused as a PersistenceError, after the server emptied its data",
          "[server][persistence][bad-input]") {
  // Seen on Valkey 9.1.2: with appendonly no there is no AOF to load; DEBUG LOADAOF replies
  // "ERR Error trying to load the AOF files, check server logs." and has already emptied the
  // dataset (it flushes before loading). A caller must not use it as a harmless reload.
  process::Server s;  // appendonly no
  auto c = s.client();
  REQUIRE(c("SET", "k", "v") == Reply::ok());
  try {
    server::debug_loadaof(c);
    FAIL("debug_loadaof() returned on a server with appendonly no");
  } catch (const server::PersistenceError& e) {
    CHECK_THAT(e.what(), ContainsSubstring("DEBUG LOADAOF refused") && ContainsSubstring("Error trying to load the AOF"));
  }
  CHECK(c("DBSIZE") == Reply::integer(0));
}
