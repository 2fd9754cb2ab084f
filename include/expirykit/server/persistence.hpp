// expirykit/server/persistence.hpp: make a server write or reload its data, and wait until it
// has, over one connection (no process control: works on any server that allows the commands).
//
//   server::save(c);                    // SAVE: dump.rdb written when it returns
//   server::bgsave(c);                  // BGSAVE, then waits for the child to finish
//   server::bgrewriteaof(c);            // BGREWRITEAOF, then waits for the rewrite to finish
//   server::debug_reload(c);            // DEBUG RELOAD: save + flush + load the RDB in place
//   server::debug_loadaof(c);           // DEBUG LOADAOF: flush + replay the AOF in place
//
// Every function throws PersistenceError naming the command, the server's reply or the INFO
// persistence fields it waited on, when the server refuses, reports a failed save or rewrite,
// or does not finish within `timeout`. Waiting polls INFO persistence every few ms: no fixed
// sleep. The fields read (rdb_bgsave_in_progress, rdb_last_bgsave_status, aof_rewrite_in_progress,
// aof_rewrite_scheduled, aof_last_bgrewrite_status, loading) exist under these names on Valkey
// 9.1.2 and Redis 8.0.6 (checked live). DEBUG needs enable-debug-command (always on for servers
// the kit spawns, process/server.hpp).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include <expirykit/resp/client.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::server {

class PersistenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void require_ok(const resp::Reply& r, const std::string& what) {
  if (r.is_error()) throw PersistenceError(what + " refused: " + r.to_string());
}

/// Polls INFO persistence until `done(info)`; throws with the last INFO values on timeout.
template <class Done>
Info wait_persistence(resp::Client& c, const std::string& what, std::chrono::milliseconds timeout, Done done) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    Info info = Info::fetch(c, "persistence");
    if (done(info)) return info;
    if (std::chrono::steady_clock::now() > until)
      throw PersistenceError(what + " did not finish within " + std::to_string(timeout.count()) +
                             " ms (rdb_bgsave_in_progress=" + info.get("rdb_bgsave_in_progress").value_or("?") +
                             ", aof_rewrite_in_progress=" + info.get("aof_rewrite_in_progress").value_or("?") +
                             ", aof_rewrite_scheduled=" + info.get("aof_rewrite_scheduled").value_or("?") +
                             ", loading=" + info.get("loading").value_or("?") + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace detail

/// Waits until the server runs no save or AOF rewrite (in progress or scheduled), e.g. the
/// fork a replica's full sync started.
inline void wait_idle(resp::Client& c, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  detail::wait_persistence(c, "the running save or AOF rewrite", timeout, [](const Info& i) {
    return i.get_int("rdb_bgsave_in_progress") == 0 && i.get_int("aof_rewrite_in_progress") == 0 &&
           i.get_int("aof_rewrite_scheduled") == 0;
  });
}

/// SAVE (blocking): the RDB file (dir/dbfilename) is complete when this returns. A save or
/// rewrite already running in a child (SAVE is then refused: "Background save already in
/// progress", seen on Redis 8.0.6 right after a replica's full sync) is waited out first.
inline void save(resp::Client& c, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    wait_idle(c, timeout);
    resp::Reply r = c("SAVE");
    if (!r.is_error() || r.str().find("in progress") == std::string::npos || std::chrono::steady_clock::now() > until)
      return detail::require_ok(r, "SAVE");
  }
}

/// BGSAVE, then waits until no save is in progress and the last one reported "ok". A BGSAVE
/// already running (or an AOF rewrite, which makes the server schedule it) is waited out too.
inline void bgsave(resp::Client& c, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const long long before = Info::fetch(c, "persistence").get_int("rdb_saves", -1);
  resp::Reply r = c("BGSAVE", "SCHEDULE");
  detail::require_ok(r, "BGSAVE SCHEDULE");
  // rdb_saves counts completed saves (both servers); without it, fall back to in-progress flags.
  auto info = detail::wait_persistence(c, "BGSAVE", timeout, [&](const Info& i) {
    if (i.get_int("rdb_bgsave_in_progress") != 0) return false;
    return before < 0 ? i.get_int("rdb_changes_since_last_save", 1) == 0 : i.get_int("rdb_saves", -1) > before;
  });
  if (info.get("rdb_last_bgsave_status").value_or("ok") != "ok")
    throw PersistenceError("BGSAVE failed: rdb_last_bgsave_status=" + info.get("rdb_last_bgsave_status").value_or("?"));
}

/// BGREWRITEAOF, then waits until the rewrite is neither scheduled nor running and the last
/// one reported "ok". A save or rewrite already running is waited out first (a second
/// BGREWRITEAOF would be refused). With appendonly no the servers still write the files
/// (appendonlydir/ base and manifest; Valkey 9.1.2, checked by checks/server).
inline void bgrewriteaof(resp::Client& c, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  wait_idle(c, timeout);
  const long long before = Info::fetch(c, "persistence").get_int("aof_rewrites", -1);
  detail::require_ok(c("BGREWRITEAOF"), "BGREWRITEAOF");
  auto info = detail::wait_persistence(c, "BGREWRITEAOF", timeout, [&](const Info& i) {
    if (i.get_int("aof_rewrite_in_progress") != 0 || i.get_int("aof_rewrite_scheduled") != 0) return false;
    return before < 0 || i.get_int("aof_rewrites", -1) > before;
  });
  if (info.get("aof_last_bgrewrite_status").value_or("ok") != "ok")
    throw PersistenceError("BGREWRITEAOF failed: aof_last_bgrewrite_status=" +
                           info.get("aof_last_bgrewrite_status").value_or("?"));
}

/// DEBUG RELOAD: the server saves its RDB, empties its dataset and loads the file back, in
/// place (the same load code as a restart, without a new process). `nosave`: load the RDB file
/// that is already in the directory (DEBUG RELOAD NOSAVE), e.g. one copied from another server.
inline void debug_reload(resp::Client& c, bool nosave = false) {
  detail::require_ok(nosave ? c("DEBUG", "RELOAD", "NOSAVE") : c("DEBUG", "RELOAD"),
                     nosave ? "DEBUG RELOAD NOSAVE" : "DEBUG RELOAD");
}

/// DEBUG LOADAOF: the server flushes its AOF, empties its dataset and replays the AOF (base
/// file and increments, as a restart would). Requires appendonly yes: with appendonly no the
/// server refuses ("Error trying to load the AOF files") AFTER emptying its dataset (Valkey
/// 9.1.2, checked by checks/server).
inline void debug_loadaof(resp::Client& c) { detail::require_ok(c("DEBUG", "LOADAOF"), "DEBUG LOADAOF"); }

}  // namespace expirykit::server
