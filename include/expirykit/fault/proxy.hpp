// expirykit/fault/proxy.hpp: a RESP proxy between a client (the kit, your suite) and a real
// server, with hooks that rewrite what goes through: the fault injector's transport.
//
//   fault::Proxy p({.upstream_port = server.port(), .hooks = fault::find("httl-plus-1s")->hooks});
//   resp::Client c("127.0.0.1", p.port());   // talks to the server through the fault
//   ...
//   p.stop();                                // or let the destructor do it
//
// Shape: listens on 127.0.0.1 (Options::listen_port, 0 = a free port the kernel picks: port()
// says which). Each accepted client connection gets its own connection to the upstream server
// and its own thread, which relays both directions as byte streams through a fault::Session
// (session.hpp: requests paired with replies, pushes of subscribed connections, MULTI/EXEC,
// hooks). Pipelined requests are parsed one by one and forwarded as they come; a message no hook
// changes is forwarded byte for byte. Both sockets are non-blocking with TCP_NODELAY (no Nagle
// delay on the kit's round trips); a side that stops reading is not read for more than 64 MiB
// of buffered output (back-pressure instead of unbounded memory). Options::reply_delay holds
// what the server sends for a fixed time before the client gets it: a correct server behind a
// slow wire, for showing that a suite's time margins hold with slower round trips.
//
// Closing: the client closing its side (EOF) half-closes the upstream connection once what the
// client sent is forwarded, and the connection ends when the server closes (a Valkey or Redis
// server closes a connection whose peer shut down writing), at the latest 30 s later. The
// server closing ends the connection once its last bytes reached the client (at most 5 s of
// waiting for a client that does not read). An error on either socket, a hook that throws, or an
// unreachable upstream closes both sides at once (Stats::errors, Stats::last_error).
//
// Threads: one acceptor thread plus one per live connection; finished connection threads are
// joined by the acceptor. stop() wakes every thread (a self-pipe each poll() watches), joins
// all of them and closes every socket; the destructor calls stop(). Hooks run on the connection
// threads, concurrently for different connections.
//
// Errors: the constructor throws std::invalid_argument for a port outside 0..65535 (listen) or
// 1..65535 (upstream) and std::system_error when it cannot create, bind or listen on the socket
// (e.g. the port is taken) or start the acceptor thread. Nothing else throws to the caller.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include <expirykit/fault/session.hpp>

namespace expirykit::fault {

class Proxy {
 public:
  struct Options {
    /// The server: a host name or numeric address, and its port (1..65535).
    std::string upstream_host = "127.0.0.1";
    int upstream_port = 0;
    /// Port to listen on, on 127.0.0.1; 0 picks a free one (see port()).
    int listen_port = 0;
    /// Hooks for each new connection; empty: everything passes through unchanged.
    HookFactory hooks;
    /// How long a new connection waits for the upstream connect before giving up (and closing
    /// the client's connection).
    std::chrono::milliseconds connect_timeout{3000};
    /// Added latency: what the server sends is held this long (from when the proxy read it)
    /// before it goes to the client, so every round trip takes at least this much longer, as on
    /// a slow network or a busy CI runner. 0: none. Negative: std::invalid_argument.
    std::chrono::milliseconds reply_delay{0};
  };
  /// Counters since construction.
  struct Stats {
    std::size_t accepted = 0;  ///< client connections accepted
    std::size_t active = 0;    ///< connections open now
    std::size_t errors = 0;    ///< connections closed because of an error (socket, hook, upstream)
    std::string last_error;    ///< the last such error, "" if none
  };

  explicit Proxy(Options o) : opt_(std::move(o)) {
    if (opt_.listen_port < 0 || opt_.listen_port > 65535)
      throw std::invalid_argument("fault proxy: listen port " + std::to_string(opt_.listen_port) + " is not in 0..65535");
    if (opt_.upstream_port <= 0 || opt_.upstream_port > 65535)
      throw std::invalid_argument("fault proxy: upstream port " + std::to_string(opt_.upstream_port) +
                                  " is not in 1..65535");
    if (opt_.reply_delay.count() < 0)
      throw std::invalid_argument("fault proxy: reply delay " + std::to_string(opt_.reply_delay.count()) +
                                  " ms is negative");
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) throw sys_error("cannot create a pipe");
    wake_r_ = p[0];
    wake_w_ = p[1];
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0) {
      close_all_fds();
      throw sys_error("cannot create a socket");
    }
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(opt_.listen_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 128) != 0) {
      auto e = sys_error("cannot listen on 127.0.0.1:" + std::to_string(opt_.listen_port));
      close_all_fds();
      throw e;
    }
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    try {
      acceptor_ = std::thread([this] { accept_loop(); });
    } catch (...) {
      close_all_fds();
      throw;
    }
  }
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;
  ~Proxy() { stop(); }

  /// The port it listens on (127.0.0.1).
  int port() const { return port_; }
  /// "127.0.0.1:<port>"
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  /// Stops accepting, closes every connection (both sides), joins every thread. Idempotent;
  /// safe from any thread but a hook's.
  void stop() {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (stopped_) return;
    stopping_ = true;
    const char b = 1;
    [[maybe_unused]] auto n = ::write(wake_w_, &b, 1);  // never drained: every poll() wakes
    if (acceptor_.joinable()) acceptor_.join();
    for (auto& c : conns_)
      if (c.thread.joinable()) c.thread.join();
    conns_.clear();
    close_all_fds();
    stopped_ = true;
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return stats_;
  }

 private:
  static constexpr std::size_t kMaxBuffered = std::size_t{64} << 20;

  struct Conn {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  /// Closes an fd when it goes out of scope.
  struct Fd {
    int fd = -1;
    explicit Fd(int f) : fd(f) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  };

  static std::system_error sys_error(const std::string& what) {
    return std::system_error(errno, std::generic_category(), "fault proxy: " + what);
  }
  void close_all_fds() {
    for (int* fd : {&listen_fd_, &wake_r_, &wake_w_})
      if (*fd >= 0) {
        ::close(*fd);
        *fd = -1;
      }
  }
  void record(bool error, const std::string& what = {}) {
    std::lock_guard<std::mutex> lock(stats_mu_);
    if (error) {
      ++stats_.errors;
      stats_.last_error = what;
    }
  }

  void accept_loop() {
    while (!stopping_) {
      pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_r_, POLLIN, 0}};
      const int n = ::poll(p, 2, 500);
      if (stopping_) break;
      for (auto it = conns_.begin(); it != conns_.end();) {  // reap finished connections
        if (*it->done) {
          it->thread.join();
          it = conns_.erase(it);
        } else {
          ++it;
        }
      }
      if (n <= 0 || !(p[0].revents & POLLIN)) continue;
      const int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) continue;
      auto done = std::make_shared<std::atomic<bool>>(false);
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.accepted;
        ++stats_.active;
      }
      try {
        conns_.push_back(Conn{std::thread([this, c, done] {
                                serve(c);
                                {
                                  std::lock_guard<std::mutex> lock(stats_mu_);
                                  --stats_.active;
                                }
                                *done = true;
                              }),
                              done});
      } catch (const std::exception& e) {  // no thread: drop the connection
        ::close(c);
        std::lock_guard<std::mutex> lock(stats_mu_);
        --stats_.active;
        ++stats_.errors;
        stats_.last_error = std::string("cannot start a connection thread: ") + e.what();
      }
    }
  }

  static void nodelay(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }

  /// A non-blocking connected socket to the upstream, or -1 (error recorded).
  int connect_upstream() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const std::string where = opt_.upstream_host + ":" + std::to_string(opt_.upstream_port);
    if (int rc = ::getaddrinfo(opt_.upstream_host.c_str(), std::to_string(opt_.upstream_port).c_str(), &hints, &res);
        rc != 0) {
      record(true, "upstream " + where + ": " + ::gai_strerror(rc));
      return -1;
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, &::freeaddrinfo);
    std::string why = "no address";
    for (addrinfo* ai = res; ai; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
        why = std::strerror(errno);
        ::close(fd);
        continue;
      }
      pollfd p[2] = {{fd, POLLOUT, 0}, {wake_r_, POLLIN, 0}};
      const int n = ::poll(p, 2, static_cast<int>(opt_.connect_timeout.count()));
      int err = 0;
      socklen_t len = sizeof err;
      if (n > 0 && (p[0].revents & (POLLOUT | POLLERR | POLLHUP)) &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        nodelay(fd);
        return fd;
      }
      why = n == 0 ? "connect timed out" : err ? std::strerror(err) : "interrupted";
      ::close(fd);
    }
    record(true, "upstream " + where + ": " + why);
    return -1;
  }

  /// Relays one client connection until either side is done (see the header comment).
  void serve(int client_fd) {
    Fd cfd(client_fd);
    nodelay(client_fd);
    Fd ufd(connect_upstream());
    if (ufd.fd < 0) return;
    try {
      Session session(opt_.hooks ? opt_.hooks() : Hooks{});
      using clock = std::chrono::steady_clock;
      std::string to_up, to_client;
      // Options::reply_delay: what the server sent, each read with the time it may go on.
      std::deque<std::pair<clock::time_point, std::string>> held;
      std::size_t held_bytes = 0;
      bool client_eof = false, up_eof = false, up_shut = false;
      auto give_up_at = clock::time_point::max();
      char buf[64 * 1024];
      while (!stopping_) {
        const auto now = clock::now();
        while (!held.empty() && held.front().first <= now) {
          held_bytes -= held.front().second.size();
          to_client += held.front().second;
          held.pop_front();
        }
        if (up_eof && to_client.empty() && held.empty()) return;
        if (now > give_up_at) return;
        if (up_eof) to_up.clear();  // the server is gone: what the client sends now goes nowhere
        const short cev = static_cast<short>((!client_eof && !up_eof && to_up.size() < kMaxBuffered ? POLLIN : 0) |
                                             (!to_client.empty() ? POLLOUT : 0));
        const short uev = static_cast<short>((!up_eof && to_client.size() + held_bytes < kMaxBuffered ? POLLIN : 0) |
                                             (!to_up.empty() && !up_shut ? POLLOUT : 0));
        pollfd p[3] = {{cev ? cfd.fd : -1, cev, 0}, {uev ? ufd.fd : -1, uev, 0}, {wake_r_, POLLIN, 0}};
        int wait_ms = 1000;
        if (!held.empty())
          wait_ms = static_cast<int>(std::clamp<long long>(
              std::chrono::ceil<std::chrono::milliseconds>(held.front().first - now).count(), 0, 1000));
        if (::poll(p, 3, wait_ms) < 0) {
          if (errno == EINTR) continue;
          throw sys_error("poll");
        }
        if (p[2].revents) return;  // stop()
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
          const ssize_t n = ::recv(cfd.fd, buf, sizeof buf, 0);
          if (n > 0) session.from_client(std::string_view(buf, static_cast<std::size_t>(n)), to_up);
          else if (n == 0) client_eof = true;
          else if (errno != EAGAIN && errno != EINTR) return;  // reset by the client: nothing to deliver
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
          const ssize_t n = ::recv(ufd.fd, buf, sizeof buf, 0);
          if (n > 0) {
            if (opt_.reply_delay.count() == 0) {
              session.from_upstream(std::string_view(buf, static_cast<std::size_t>(n)), to_client);
            } else {
              std::string out;
              session.from_upstream(std::string_view(buf, static_cast<std::size_t>(n)), out);
              held_bytes += out.size();
              held.emplace_back(clock::now() + opt_.reply_delay, std::move(out));
            }
          } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            up_eof = true;
            give_up_at = std::min(give_up_at, clock::now() + opt_.reply_delay + std::chrono::seconds(5));
          }
        }
        if (!to_up.empty() && !up_shut && !send_some(ufd.fd, to_up)) {
          record(true, "upstream connection broke while sending");
          return;
        }
        if (!to_client.empty() && !send_some(cfd.fd, to_client)) return;  // the client went away
        if (client_eof && to_up.empty() && !up_shut) {
          ::shutdown(ufd.fd, SHUT_WR);
          up_shut = true;
          give_up_at = std::min(give_up_at, clock::now() + std::chrono::seconds(30));
        }
      }
    } catch (const std::exception& e) {
      record(true, e.what());
    }
  }

  /// Sends what the socket takes now; false on a broken connection.
  static bool send_some(int fd, std::string& out) {
    while (!out.empty()) {
      const ssize_t n = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        out.erase(0, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      if (n < 0 && errno == EINTR) continue;
      return false;
    }
    return true;
  }

  Options opt_;
  int listen_fd_ = -1, wake_r_ = -1, wake_w_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::list<Conn> conns_;  // touched by the acceptor only, and by stop() after joining it
  std::mutex stop_mu_;
  bool stopped_ = false;
  mutable std::mutex stats_mu_;
  Stats stats_;
};

}  // namespace expirykit::fault
