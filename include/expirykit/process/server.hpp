// expirykit/process/server.hpp: a real Valkey/Redis server process owned by a test.
//
//   process::Server s;                       // provisioned Valkey 9.1.2, free port, temp dir
//   auto c = s.client();                     // resp::Client on 127.0.0.1:s.port()
//   s.stop(process::Shutdown::save);         // SHUTDOWN SAVE, wait for exit
//   s.start();                               // same dir: loads dump.rdb / the AOF
//   process::Server copy({.seed_files = {s.dir() / "dump.rdb"}});   // a new server loading it
//
// Guarantees:
//  - listens on 127.0.0.1 only, in its own 0700 temp dir (TempDir), removed on destruction;
//  - the server is in its own process group and gets SIGKILL when the process that created it
//    dies, however it dies (PR_SET_PDEATHSIG, checked against a race with getppid()); the
//    destructor kills the group and reaps it. Note: the death signal follows the *thread* that
//    spawned the server, so spawn servers from a thread that outlives them (e.g. the main one);
//  - what the server forks (BGSAVE, AOF rewrite, replication children) dies with the test process
//    too, even a SIGKILLed one, and the directory goes with it: a detail::Reaper (process/detail/reaper.hpp)
//    per Server kills the whole group and removes the directory when the test process is gone;
//  - start() waits until PING answers PONG (LOADING is waited out) from a process of the child's
//    own group (INFO server's process_id: another server that took the port first is not
//    taken for ours) and reports a server that exits or hangs with its exit status and log tail;
//  - a port taken by someone else is detected from the log ("Address already in use") and
//    another port is tried (up to 25 times), so parallel test binaries do not collide.
// Server options used, besides the caller's: --port, --bind 127.0.0.1, --dir, --logfile,
// --daemonize no, --enable-debug-command yes (DEBUG SET-ACTIVE-EXPIRE, DEBUG RELOAD), for
// Persistence::off, --save "" --appendonly no, and with ServerOptions::tls the TLS options it names.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

// Only the parts of Boost.Process v1 used here: <boost/process.hpp> whole parses in about 6 s, these
// in about 4 s (bench/RESULTS.md 8.3).
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/handles.hpp>
#include <boost/process/io.hpp>

#include <expirykit/config.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/process/options.hpp>
#include <expirykit/process/detail/reaper.hpp>
#include <expirykit/process/temp_dir.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::process {

enum class Shutdown { nosave, save };

namespace detail {
/// Runs in the child between fork and exec: own process group, die with the parent.
struct ChildSetup : boost::process::extend::handler {
  pid_t parent;
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  }
};

inline bool port_bindable(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;  // as the server does, so a port in TIME_WAIT after our own stop() counts as free
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

inline int random_port() {
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  // Below the kernel's default ephemeral range (32768-60999), so outgoing connections of
  // other programs do not take it between our check and the server's bind.
  return std::uniform_int_distribution<int>(20000, 32000)(rng);
}

inline std::string tail_of(const std::filesystem::path& p, std::size_t lines) {
  std::ifstream in(p);
  std::deque<std::string> q;
  for (std::string l; std::getline(in, l);) {
    q.push_back(l);
    if (q.size() > lines) q.pop_front();
  }
  std::string out;
  for (auto& l : q) out += "  | " + l + "\n";
  return out;
}

/// The crash report's opening lines (Valkey/Redis print "crashed by signal", "ASSERTION
/// FAILED" or "Guru Meditation" there), or "" when the log has none.
inline std::string crash_header(const std::filesystem::path& p, std::size_t lines = 8) {
  std::ifstream in(p);
  std::string out;
  std::size_t left = 0;
  for (std::string l; std::getline(in, l);) {
    if (!left && (l.find("crashed by signal") != std::string::npos || l.find("ASSERTION FAILED") != std::string::npos ||
                  l.find("Guru Meditation") != std::string::npos))
      left = lines;
    if (left) {
      out += "  | " + l + "\n";
      if (--left == 0) break;
    }
  }
  return out;
}

inline std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int s = WTERMSIG(status);
    const char* name = ::sigabbrev_np(s);
    return "was killed by signal " + std::to_string(s) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "ended with status " + std::to_string(status);
}
}  // namespace detail

class Server;

namespace detail {
/// Every Server alive in this process (for crash triage: which server died during a check).
struct Spawned {
  std::mutex mu;
  std::vector<Server*> all;
};
/// Never destroyed: a Server held by a static (process::Target's shared default server) is
/// destroyed at exit after any function-local static made later, and unregisters itself here.
inline Spawned& spawned() {
  static Spawned* s = new Spawned;
  return *s;
}
}  // namespace detail

/// The Servers alive in this process now (kit-spawned ones only), oldest first.
inline std::vector<Server*> spawned_servers() {
  auto& s = detail::spawned();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.all;
}

class Server {
 public:
  /// Finds and vets the binary, creates the temp dir and starts the server (see start()).
  /// Throws ServerError (binary, dir, port or startup problem) with what to do;
  /// std::invalid_argument for a bad EXPIRYKIT_* value (config.hpp).
  explicit Server(ServerOptions opts = {})
      : opts_(std::move(opts)), binary_(find_server_binary(opts_.binary)), version_(vet_server_binary(binary_)),
        dir_(std::make_unique<TempDir>(opts_.temp_root)) {
    dir_->keep(opts_.keep_dir || config().keep_dirs);
    reaper_ = std::make_unique<detail::Reaper>(dir().string());
    reaper_->watch_group(0, dir_->kept());
    for (const auto& f : opts_.seed_files) {
      std::error_code ec;
      std::filesystem::copy(f, dir() / f.filename(),
                            std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing, ec);
      if (ec) throw ServerError("cannot copy seed file " + f.string() + " into " + dir().string() + ": " + ec.message());
    }
    start();
    auto& reg = detail::spawned();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.all.push_back(this);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server() {
    {
      auto& reg = detail::spawned();
      std::lock_guard<std::mutex> lock(reg.mu);
      std::erase(reg.all, this);
    }
    if (!credentials_address_.empty()) {
      resp::forget_credentials(credentials_address_, this);  // unless a newer server on this port set it since
      resp::forget_tls(credentials_address_, this);
    }
    try {
      kill();
    } catch (...) {
    }
  }

  /// Starts the server in dir() (again, after stop() or kill(): it loads what it saved there).
  /// Keeps the previous port when it is still free. Throws ServerError if it does not answer
  /// PING within ready_timeout or exits, with the log tail; the process is then gone; and,
  /// before anything starts, for ServerOptions::tls in a build without TLS.
  void start() {
    if (running()) return;
    if (opts_.tls && !resp::tls_supported)
      throw ServerError("ServerOptions::tls: this build of the kit has no TLS (resp/tls.hpp): it needs hiredis 1.x with "
                        "hiredis_ssl; Debian 12's libhiredis-dev is 0.14, without TLS (ci/hiredis1 builds 1.x with it)");
    const int attempts = opts_.port ? 1 : 25;
    std::string last_error;
    for (int i = 0; i < attempts; ++i) {
      int port = opts_.port ? opts_.port : (port_ && i == 0 ? port_ : detail::random_port());
      if (!opts_.port && !detail::port_bindable(port)) continue;
      port_ = port;
      if (opts_.cluster && !pick_bus_port(i == 0)) continue;
      register_credentials();
      spawn();
      auto outcome = wait_ready();
      if (!outcome) return;  // ready
      if (!opts_.port && outcome->find("Address already in use") != std::string::npos) {
        last_error = *outcome;
        continue;
      }
      throw ServerError(*outcome);
    }
    throw ServerError(opts_.port ? last_error
                                 : "could not find a free port for " + binary_.string() + " after 25 tries: " + last_error);
  }

  /// Graceful stop: SHUTDOWN NOSAVE or SHUTDOWN SAVE, then waits for the process to exit
  /// (stop_timeout), falling back to SIGKILL. Throws ServerDied if the server had already died
  /// or crashed while shutting down, ServerError if SHUTDOWN SAVE was refused.
  void stop(Shutdown mode = Shutdown::nosave) {
    if (!child_ && !exit_status_) return;  // not started, or stopped on purpose already
    check_alive();
    try {
      resp::Client c(host(), port_, {std::chrono::milliseconds(2000), opts_.stop_timeout});
      auto r = c("SHUTDOWN", mode == Shutdown::save ? "SAVE" : "NOSAVE");
      if (r.is_error()) throw ServerError(address() + ": SHUTDOWN refused: " + r.to_string() + "\n" + log_tail());
    } catch (const resp::ConnectionError&) {
      // expected: the server closes the connection as it exits
    }
    auto status = wait_exit(opts_.stop_timeout);
    exit_status_.reset();  // this exit was asked for
    if (!status) {
      kill();
      throw ServerError(address() + ": did not exit within " + std::to_string(opts_.stop_timeout.count()) +
                        " ms of SHUTDOWN; killed it\n" + log_tail());
    }
    if (!(WIFEXITED(*status) && WEXITSTATUS(*status) == 0))
      throw ServerDied(address() + ": " + detail::describe_status(*status) + " while shutting down\n" + log_tail());
  }
  /// SIGKILL to the server's process group, then reaps it. No-op when it is not running.
  void kill() {
    if (!child_) return;
    ::kill(-pgid_, SIGKILL);
    std::error_code ec;
    child_->wait(ec);
    // Reaping the leader does not wait for the rest of the group (e.g. a BGSAVE child).
    for (int i = 0; i < 500 && ::kill(-pgid_, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    child_.reset();
    exit_status_.reset();
    reaper_->watch_group(0, dir_->kept());
  }
  /// stop(mode) then start() in the same dir (and the same port when it is still free).
  void restart(Shutdown mode = Shutdown::save) {
    stop(mode);
    start();
  }

  /// True while the process runs. Reaps it (and remembers its status) once it has exited.
  bool running() {
    if (!child_) return false;
    int status = 0;
    pid_t r = ::waitpid(child_->id(), &status, WNOHANG);
    if (r == 0) return true;
    exit_status_ = status;
    child_->detach();  // already reaped by us; keep boost from waiting again
    ::kill(-pgid_, SIGKILL);
    child_.reset();
    reaper_->watch_group(0, dir_->kept());
    return false;
  }
  /// Throws ServerDied with the exit status and log tail if the server is not running
  /// (e.g. it crashed on an assertion). A server stopped on purpose counts as not running too.
  void check_alive() {
    if (running()) return;
    throw ServerDied(address() + " (" + binary_.filename().string() + " " + version_.version + ") is not running: " +
                     (exit_status_ ? detail::describe_status(*exit_status_) : "it was stopped") + "\n" + log_tail());
  }

  std::string host() const { return "127.0.0.1"; }
  int port() const { return port_; }
  /// The cluster bus port (ServerOptions::cluster), else 0.
  int bus_port() const { return bus_port_; }
  /// "127.0.0.1:port"
  std::string address() const { return host() + ":" + std::to_string(port_); }
  pid_t pid() const { return child_ ? child_->id() : -1; }
  const std::filesystem::path& dir() const { return dir_->path(); }
  const std::filesystem::path& binary() const { return binary_; }
  /// What the binary's --version said (flavor "valkey"/"redis", version "9.1.2").
  const BinaryVersion& binary_version() const { return version_; }
  const ServerOptions& options() const { return opts_; }
  std::filesystem::path log_path() const { return dir() / "server.log"; }
  /// The last `lines` lines of the server log and of its stdout/stderr, indented, for errors.
  std::string log_tail(std::size_t lines = 25) const {
    std::string out;
    if (auto crash = detail::crash_header(log_path()); !crash.empty())
      out += "--- " + log_path().string() + " (crash report) ---\n" + crash;
    out += "--- " + log_path().string() + " (last lines) ---\n" + detail::tail_of(log_path(), lines);
    std::string std_tail = detail::tail_of(dir() / "stdio.log", lines);
    if (!std_tail.empty()) out += "--- stdout/stderr ---\n" + std_tail;
    return out;
  }
  /// A new connection to this server.
  resp::Client client(resp::Client::Options o = {}) const { return resp::Client(host(), port_, o); }

 private:
  void spawn() {
    namespace bp = boost::process;
    std::vector<std::string> args = {"--port", std::to_string(port_), "--bind", "127.0.0.1",
                                     "--dir", dir().string(), "--logfile", log_path().string(),
                                     "--daemonize", "no", "--enable-debug-command", "yes"};
    if (const auto& t = opts_.tls) {  // TLS only, on the same port (ServerOptions::tls)
      args[1] = "0";
      args.insert(args.end(), {"--tls-port", std::to_string(port_), "--tls-cert-file", t->server_cert.string(),
                               "--tls-key-file", t->server_key.string(), "--tls-ca-cert-file", t->ca_cert.string(),
                               "--tls-auth-clients", "yes", "--tls-replication", "yes"});
      if (opts_.cluster) args.insert(args.end(), {"--tls-cluster", "yes"});
    }
    if (opts_.persistence == Persistence::off) {
      args.insert(args.end(), {"--save", "", "--appendonly", "no"});
    } else {
      args.insert(args.end(), {"--save", "3600 1 300 100 60 10000"});
      if (opts_.persistence == Persistence::aof)
        args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble",
                                 opts_.aof_rdb_preamble ? "yes" : "no"});
    }
    if (opts_.cluster)
      args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port",
                               std::to_string(bus_port_)});
    for (const auto& [k, v] : opts_.config) args.insert(args.end(), {"--" + k, v});
    args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
    std::error_code ec;
    auto stdio = (dir() / "stdio.log").string();
    child_ = std::make_unique<bp::child>(binary_.string(), bp::args(args), bp::std_in < bp::null,
                                         (bp::std_out & bp::std_err) > stdio, bp::limit_handles,
                                         detail::ChildSetup{{}, ::getpid()}, ec);
    if (ec) {
      child_.reset();
      throw ServerError("cannot start " + binary_.string() + ": " + ec.message());
    }
    pgid_ = child_->id();
    exit_status_.reset();
    reaper_->watch_group(pgid_, dir_->kept());
  }

  /// A free cluster bus port other than port_: the previous one when `keep` and it is still
  /// free, else a random one. false when none was found in 25 tries.
  bool pick_bus_port(bool keep) {
    if (keep && bus_port_ && bus_port_ != port_ && detail::port_bindable(bus_port_)) return true;
    for (int j = 0; j < 25; ++j) {
      const int b = detail::random_port();
      if (b != port_ && detail::port_bindable(b)) {
        bus_port_ = b;
        return true;
      }
    }
    return false;
  }

  /// Connections to this server's address authenticate with its config's last `requirepass`,
  /// and with nothing when it has none, and speak TLS when ServerOptions::tls says so, plain TCP
  /// otherwise (not external mode's fallbacks: resp/credentials.hpp, resp/tls.hpp).
  void register_credentials() {
    if (!credentials_address_.empty()) {
      resp::forget_credentials(credentials_address_, this);  // unless a newer server on this port set it since
      resp::forget_tls(credentials_address_, this);
    }
    std::optional<resp::Credentials> own;
    if (const auto pass = opts_.get("requirepass"); pass && !pass->empty()) own = resp::Credentials{"", *pass};
    credentials_address_ = address();
    resp::set_credentials(credentials_address_, own, this);
    resp::set_tls(credentials_address_, opts_.tls ? std::optional<resp::Tls>(opts_.tls->client()) : std::nullopt, this);
  }

  /// nullopt when ready; otherwise the error text (the process is gone by then).
  std::optional<std::string> wait_ready() {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const auto deadline = t0 + opts_.ready_timeout;
    std::string last;
    while (clock::now() < deadline) {
      if (!running()) {
        return "server " + binary_.string() + " on port " + std::to_string(port_) + " " +
               detail::describe_status(exit_status_.value_or(0)) + " during startup (bad config?)\n" + log_tail();
      }
      try {
        resp::Client c(host(), port_, {std::chrono::milliseconds(200), std::chrono::milliseconds(1000)});
        auto r = c("PING");
        if (r == resp::Reply::status("PONG")) {
          // Under ctest -j another test's server can take this port between port_bindable() and
          // our bind: it answers PING while ours exits with "Address already in use". Ready only
          // when the server that answers is in our child's process group.
          const auto pid = answering_pid(c);
          if (!pid || ::getpgid(*pid) == pgid_) return std::nullopt;
          last = "PONG from another process (pid " + std::to_string(*pid) + ") on this port";
        } else {
          last = r.to_string();  // e.g. LOADING
        }
      } catch (const resp::ConnectionError& e) {
        last = e.what();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(clock::now() - t0 < std::chrono::milliseconds(100) ? 1 : 10));
    }
    kill();
    return "server " + binary_.string() + " on port " + std::to_string(port_) + " did not answer PING within " +
           std::to_string(opts_.ready_timeout.count()) + " ms (last: " + last + "); killed it\n" + log_tail();
  }

  /// INFO server's process_id, or nullopt when the server does not say (INFO renamed away).
  static std::optional<pid_t> answering_pid(resp::Client& c) {
    const auto info = c("INFO", "server");
    if (!info.is_string()) return std::nullopt;
    const auto& text = info.str();
    const auto at = text.find("process_id:");
    if (at == std::string::npos) return std::nullopt;
    return static_cast<pid_t>(std::strtol(text.c_str() + at + 11, nullptr, 10));
  }

  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!running()) return exit_status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return std::nullopt;
  }

  std::string credentials_address_;  ///< the address register_credentials() last set
  ServerOptions opts_;
  std::filesystem::path binary_;
  BinaryVersion version_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<detail::Reaper> reaper_;  // after dir_: told to quit before the directory is removed
  std::unique_ptr<boost::process::child> child_;
  pid_t pgid_ = -1;
  int port_ = 0;
  int bus_port_ = 0;
  std::optional<int> exit_status_;
};

}  // namespace expirykit::process
