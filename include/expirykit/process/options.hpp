// expirykit/process/options.hpp: how to start a server.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/process/tls_certificates.hpp>

namespace expirykit::process {

enum class Persistence {
  off,  ///< save "" and appendonly no: nothing written unless a test asks (BGSAVE, SAVE)
  rdb,  ///< the server's default save points ("3600 1 300 100 60 10000"); dump.rdb in dir()
  aof,  ///< appendonly yes, appendfsync always, plus the rdb save points; the AOF's base file
        ///< (written by a rewrite) is an RDB unless ServerOptions::aof_rdb_preamble is false
};

struct ServerOptions {
  /// Binary to run; empty: EXPIRYKIT_SERVER, then the provisioned default (see discovery.hpp).
  std::filesystem::path binary;
  /// Config overrides, passed as `--name value` on the command line (after the kit's own,
  /// so they win), e.g. {"hash-max-listpack-entries", "0"}.
  std::vector<std::pair<std::string, std::string>> config;
  Persistence persistence = Persistence::off;
  /// With Persistence::aof: aof-use-rdb-preamble. true (the servers' default): a rewrite writes
  /// the base file as an RDB; false: as commands (field TTLs as absolute ms, e.g. Valkey's
  /// `HSETEX key PXAT <ms> FIELDS 1 f v`).
  bool aof_rdb_preamble = true;
  /// Files copied into the server's directory before its first start, e.g. a dump.rdb or an
  /// appendonlydir/ taken from another server, so the new server loads them (a directory is
  /// copied recursively under its own name).
  std::vector<std::filesystem::path> seed_files;
  /// Raw extra command-line arguments, appended last.
  std::vector<std::string> extra_args;
  /// Fixed port; 0 picks a free one (retried on bind failure, safe under `ctest -j`).
  int port = 0;
  /// Cluster mode: `--cluster-enabled yes --cluster-config-file nodes.conf --cluster-port <bus>`,
  /// the bus port picked free like the port (and kept across restarts while free). Used by
  /// process::Cluster (process/cluster.hpp), which also assigns slots and meets the nodes.
  bool cluster = false;
  /// TLS: the server speaks TLS only, on port() (`--port 0 --tls-port <port>`), with
  /// tls->server_cert / server_key, tls->ca_cert as the CA of its clients, `--tls-auth-clients
  /// yes` and `--tls-replication yes` (with cluster, `--tls-cluster yes`); the kit's connections
  /// to it present tls->client() (resp/tls.hpp). Make the files with make_test_certificates()
  /// (process/tls_certificates.hpp). Needs a build with TLS (resp::tls_supported).
  std::optional<TlsCertificates> tls;
  /// How long start() waits for PING to answer PONG (a loaded 2-core machine needs < 1 s).
  std::chrono::milliseconds ready_timeout{15000};
  /// How long stop() waits for a graceful shutdown before SIGKILL.
  std::chrono::milliseconds stop_timeout{20000};
  /// Parent of the server's 0700 temp dir; empty: $TMPDIR, else /tmp.
  std::filesystem::path temp_root;
  /// Keep the temp dir (data, logs) after the Server is destroyed; also EXPIRYKIT_KEEP_DIRS=1.
  bool keep_dir = false;

  ServerOptions& set(std::string name, std::string value) {
    config.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  /// The value of `name` in `config`: the last one set, as the server's command line takes it;
  /// nullopt when it is not set.
  std::optional<std::string> get(const std::string& name) const {
    for (auto it = config.rbegin(); it != config.rend(); ++it)
      if (it->first == name) return it->second;
    return std::nullopt;
  }
};

}  // namespace expirykit::process
