// expirykit/process/replica_set.hpp: a primary with one or more replicas, all spawned by the
// kit, on loopback.
//
//   process::ReplicaSet rs({.replicas = 1});        // Valkey 9.1.2 by default, like Server
//   auto p = rs.primary().client();
//   p("HSETEX", "h", "PX", 60000, "FIELDS", 1, "a", "1");
//   rs.sync();                                      // every replica has applied all of it
//   auto r = rs.replica(0).client();                // read-only view of the same data
//
// Each node is a process::Server (own process group, killed with its parent, 0700 dir, loopback
// only, the same binary for all unless ReplicaSetOptions::replica_binary names another). The replicas start with `--replicaof 127.0.0.1 <primary port>`,
// and with `--masterauth <its requirepass>` when the primary's config has one (and no masterauth).
// The constructor returns once every replica reports master_link_status:up with no sync in
// progress. sync() reads the primary's master_repl_offset and waits until every replica's
// slave_repl_offset (the offset it has applied) reaches it: never a fixed sleep. These INFO
// replication fields exist on Valkey 9.1.2 and Redis 8.0.6 (checked live).
// The primary runs with repl-diskless-sync-delay 0, so a full sync starts at once instead of
// after the servers' default 5 s, and shutdown-timeout 0, so a restart does not wait for acks.
// After the primary restarts, a replica reconnects on its next replication cron tick (about once
// a second on both servers), so restart_primary() takes about a second (a partial resync where
// the restarted primary kept its replication ID, as Redis 8.0.6 does from its RDB, else a full
// sync); with Relink::now each replica is sent REPLICAOF NO ONE and REPLICAOF <primary> and
// connects at once, over a full sync (Relink says how, and what it leaves behind).
// Throws ServerError (start failures, a replica that does not link or catch up within
// Options::sync_timeout, with the INFO fields and log tails of the nodes involved). A replica
// that fails to load its primary's full sync (its log says "Failed trying to load the MASTER
// synchronization DB", "PRIMARY" on Valkey 8.0+: src/replication.c of both) twice during one
// wait fails it then, the log's warnings before that line in the error (e.g. "Can't handle RDB format version
// 13": an older release's replica of a newer primary), instead of retrying until the timeout
// while those lines scroll out of the log tail.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/process/errors.hpp>
#include <expirykit/process/options.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::process {

/// How the replicas follow a restarted primary (ReplicaSet::restart_primary).
enum class Relink {
  /// Each reconnects at its next replication cron tick (about once a second): a partial resync
  /// where the restarted primary kept its replication ID (Redis 8.0.6 from its RDB), else a full
  /// sync in the set's configuration.
  on_their_own,
  /// Each is sent REPLICAOF NO ONE, then REPLICAOF <primary>, and connects at once: a full sync
  /// (NO ONE gives the replica a new replication ID), written to disk by the primary (CONFIG SET
  /// repl-diskless-sync no until every replica has caught up, then its value before: so these
  /// syncs rewrite the primary's dump.rdb, which a later restart without a save loads) and loaded
  /// from the socket by the replica (CONFIG SET repl-diskless-load swapdb, which it keeps). On
  /// Valkey 9.1.2 a diskless sync, or a replica that saves the sync to disk before loading it,
  /// is taken up by a once-a-second cron: the replica linked (or the primary streamed to it) 0.3
  /// to 0.7 s after REPLICAOF, against 0.05 to 0.1 s this way (measured live; Redis 8.0.6 links
  /// in about 0.05 s either way).
  now,
};

struct ReplicaSetOptions {
  /// How the primary starts (binary, persistence, config...). The replicas take the same
  /// binary and config, with Persistence::off, plus replicaof.
  ServerOptions primary;
  int replicas = 1;
  /// The replicas' binary when it differs from the primary's (a rolling upgrade: an 8.6 replica
  /// of an 8.0 primary, or the other way round); empty: the primary's. A replica the primary's
  /// data cannot reach (an RDB version it cannot load) fails to link: ServerError with its log.
  std::filesystem::path replica_binary{};
  /// Longest wait for a link, a full sync or a catch-up.
  std::chrono::milliseconds sync_timeout{30000};
};

class ReplicaSet {
 public:
  using Options = ReplicaSetOptions;

  /// Starts the primary, then the replicas; waits until each is linked and synced.
  explicit ReplicaSet(Options o = {}) : opts_(std::move(o)) {
    if (opts_.replicas < 0)
      throw ServerError("ReplicaSetOptions::replicas = " + std::to_string(opts_.replicas) + ": must be 0 or more");
    opts_.primary.set("repl-diskless-sync-delay", "0");
    // SHUTDOWN would otherwise wait up to 10 s for replicas to acknowledge the last offset
    // (they do once a second); callers that need that call sync() first.
    opts_.primary.set("shutdown-timeout", "0");
    primary_ = std::make_unique<Server>(opts_.primary);
    for (int i = 0; i < opts_.replicas; ++i) add_replica();
    wait_linked();
  }

  Server& primary() { return *primary_; }
  /// Replica `i` (0-based). Throws ServerError when there is no such replica.
  Server& replica(std::size_t i = 0) {
    if (i >= replicas_.size())
      throw ServerError("no replica " + std::to_string(i) + ": this ReplicaSet has " + std::to_string(replicas_.size()));
    return *replicas_[i];
  }
  std::size_t replica_count() const { return replicas_.size(); }
  const Options& options() const { return opts_; }

  /// Waits until every replica has applied the primary's whole replication stream as of this
  /// call (slave_repl_offset >= the primary's master_repl_offset) and is linked. Returns the
  /// offset waited for. Throws ServerError after sync_timeout, naming the replica, both offsets
  /// and the link status.
  long long sync() {
    auto pc = primary_->client();
    const auto pinfo = server::Info::fetch(pc, "replication");
    const long long target = pinfo.get_int("master_repl_offset", -1);
    const std::string replid = pinfo.get("master_replid").value_or("?");
    for (std::size_t i = 0; i < replicas_.size(); ++i) {
      // The replication ID too: a replica that has not yet noticed a restarted primary still
      // says "up" and may hold a larger offset of the old history.
      wait_for(i, "catch up with the primary's offset " + std::to_string(target) + " of replication ID " + replid,
               [&](const server::Info& info) {
                 return info.get("master_link_status").value_or("") == "up" &&
                        info.get("master_replid").value_or("") == replid && info.get_int("slave_repl_offset", -1) >= target;
               });
    }
    return target;
  }

  /// Waits until every replica is linked to the primary with no sync in progress (after the
  /// start, or after the primary restarted).
  void wait_linked() {
    for (std::size_t i = 0; i < replicas_.size(); ++i)
      wait_for(i, "link to the primary and finish the initial sync", [](const server::Info& info) {
        return info.get("master_link_status").value_or("") == "up" && info.get_int("master_sync_in_progress", 1) == 0;
      });
  }

  /// Restarts the primary in place (stop with `mode`, start in the same dir and port: it loads
  /// its RDB or AOF), then waits until the replicas are linked again and caught up. `relink`:
  /// whether the replicas reconnect on their own (up to a second) or are told to at once.
  void restart_primary(Shutdown mode = Shutdown::save, Relink relink = Relink::on_their_own) {
    const int port = primary_->port();
    primary_->restart(mode);
    if (primary_->port() != port)
      throw ServerError("the primary came back on port " + std::to_string(primary_->port()) + " instead of " +
                        std::to_string(port) + " (the old port was taken); its replicas cannot follow");
    auto pc = primary_->client();
    std::string diskless;  // Relink::now: the primary's repl-diskless-sync before, put back at the end
    if (relink == Relink::now) {
      const resp::Reply got = pc("CONFIG", "GET", "repl-diskless-sync");
      if (!got.is_array() || got.elements().size() != 2)
        throw ServerError("the primary answered CONFIG GET repl-diskless-sync with " + got.to_string());
      diskless = got.elements()[1].str();
      require_ok(pc("CONFIG", "SET", "repl-diskless-sync", "no"), "the primary", "CONFIG SET repl-diskless-sync no");
      for (std::size_t i = 0; i < replicas_.size(); ++i) relink_now(i);
    }
    wait_linked();
    sync();
    if (relink == Relink::now)
      require_ok(pc("CONFIG", "SET", "repl-diskless-sync", diskless), "the primary", "CONFIG SET repl-diskless-sync " + diskless);
  }

 private:
  static void require_ok(const resp::Reply& r, const std::string& who, const std::string& what) {
    if (r.is_error()) throw ServerError(who + " refused " + what + ": " + r.to_string());
  }

  /// Relink::now for replica `i`: repl-diskless-load swapdb, REPLICAOF NO ONE, REPLICAOF <primary>.
  /// A replica already loading a sync it started on its own answers LOADING: asked again every
  /// 5 ms until sync_timeout. If anything fails after NO ONE, it is pointed back at the primary
  /// (best effort) before the error is thrown, so it is not left a standalone primary.
  void relink_now(std::size_t i) {
    auto rc = replicas_[i]->client();
    const std::string who = "replica " + std::to_string(i) + " at " + replicas_[i]->address();
    require_ok(rc("CONFIG", "SET", "repl-diskless-load", "swapdb"), who, "CONFIG SET repl-diskless-load swapdb");
    const auto until = std::chrono::steady_clock::now() + opts_.sync_timeout;
    for (;;) {
      const resp::Reply r = rc("REPLICAOF", "NO", "ONE");
      if (!r.is_error_starting("LOADING") || std::chrono::steady_clock::now() > until) {
        require_ok(r, who, "REPLICAOF NO ONE");
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    try {
      require_ok(rc("REPLICAOF", primary_->host(), primary_->port()), who, "REPLICAOF " + primary_->address());
    } catch (...) {
      try {
        auto again = replicas_[i]->client();
        again("REPLICAOF", primary_->host(), primary_->port());
      } catch (...) {
      }
      throw;
    }
  }

  void add_replica() {
    ServerOptions r = opts_.primary;
    r.persistence = Persistence::off;
    r.seed_files.clear();
    r.port = 0;
    r.set("replicaof", primary_->host() + " " + std::to_string(primary_->port()));
    // A primary with requirepass: its replicas (the same config) authenticate with it too.
    if (const auto pass = r.get("requirepass"); pass && !pass->empty() && !r.get("masterauth"))
      r.set("masterauth", *pass);
    if (!opts_.replica_binary.empty()) r.binary = opts_.replica_binary;
    replicas_.push_back(std::make_unique<Server>(std::move(r)));
  }

  /// The last warnings ('#' lines, at most 4) of `log` after byte `from`, up to the second failed
  /// load of a full sync there (a retry failed too: not a transfer cut once), that line included;
  /// empty when there is no such second failure.
  static std::string failed_sync_load(const std::filesystem::path& log, std::uintmax_t from) {
    std::ifstream in(log);
    in.seekg(static_cast<std::streamoff>(from));
    std::string line;
    std::deque<std::string> warnings;
    int failures = 0;
    while (std::getline(in, line)) {
      if (line.find(" # ") != std::string::npos) {
        warnings.push_back(line);
        if (warnings.size() > 4) warnings.pop_front();
      }
      if (line.find("Failed trying to load the") == std::string::npos ||
          line.find("synchronization DB") == std::string::npos || ++failures < 2)
        continue;
      if (warnings.empty() || warnings.back() != line) warnings.push_back(line);
      std::string out;
      for (const auto& w : warnings) out += "  " + w + "\n";
      return out;
    }
    return {};
  }

  template <class Ready>
  void wait_for(std::size_t i, const std::string& what, Ready ready) {
    Server& rep = *replicas_[i];
    const auto until = std::chrono::steady_clock::now() + opts_.sync_timeout;
    std::error_code ec;
    const std::uintmax_t log_from = std::filesystem::file_size(rep.log_path(), ec);
    std::string last;
    for (int polls = 0;; ++polls) {
      rep.check_alive();
      primary_->check_alive();
      try {
        auto c = rep.client();
        auto info = server::Info::fetch(c, "replication");
        if (ready(info)) return;
        last = "master_link_status=" + info.get("master_link_status").value_or("?") +
               ", master_sync_in_progress=" + info.get("master_sync_in_progress").value_or("?") +
               ", slave_repl_offset=" + info.get("slave_repl_offset").value_or("?") +
               ", master_replid=" + info.get("master_replid").value_or("?");
      } catch (const resp::ConnectionError& e) {
        last = e.what();
      }
      if (const auto failed = polls % 25 ? std::string() : failed_sync_load(rep.log_path(), ec ? 0 : log_from); !failed.empty())
        throw ServerError("replica " + std::to_string(i) + " at " + rep.address() + " did not " + what +
                          ": it cannot load the primary's full sync (" + primary_->address() + "); its log says:\n" +
                          failed + "replica log:\n" + rep.log_tail(10) + "primary log:\n" + primary_->log_tail(10));
      if (std::chrono::steady_clock::now() > until) {
        auto pc = primary_->client();
        throw ServerError("replica " + std::to_string(i) + " at " + rep.address() + " did not " + what + " within " +
                          std::to_string(opts_.sync_timeout.count()) + " ms (" + last + "; primary " +
                          primary_->address() + " master_repl_offset=" +
                          server::Info::fetch(pc, "replication").get("master_repl_offset").value_or("?") +
                          ")\nreplica log:\n" + rep.log_tail(10) + "primary log:\n" + primary_->log_tail(10));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  Options opts_;
  std::unique_ptr<Server> primary_;
  std::vector<std::unique_ptr<Server>> replicas_;
};

}  // namespace expirykit::process
