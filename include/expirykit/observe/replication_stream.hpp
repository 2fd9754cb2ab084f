// expirykit/observe/replication_stream.hpp: the replication stream a primary sends its replicas,
// read by connecting as one.
//
//   observe::ReplicationStream stream("127.0.0.1", port);        // PSYNC ? -1: a full sync, skipped
//   c("HEXPIRE", "h", "100", "FIELDS", "1", "a");
//   auto offset = server::Info::fetch(c, "replication").get_int("master_repl_offset");
//   std::vector<resp::Argv> got = stream.read_until(offset);      // {{"HPEXPIREAT", "h", "<abs ms>", ...}}
//
// The handshake (the replica side of the protocol as both servers speak it: valkey.io/topics/
// replication for PSYNC and diskless syncs, src/replication.c of both for the wire format,
// syncWithMaster or syncWithPrimary, readSyncBulkPayload): `REPLCONF
// capa eof capa psync2` (+OK), then `PSYNC ? -1`, answered `+FULLRESYNC <replid> <offset>`, a few
// keep-alive newlines while the primary prepares the snapshot, and the snapshot as `$<length>`
// and that many bytes, or (diskless, the default since Redis 7.0 and Valkey 7.2) `$EOF:<40-byte
// mark>` and the bytes up to the same mark. The snapshot is read and dropped. What follows is the
// stream: the commands as the primary propagates them (model/propagation.hpp), RESP arrays, with
// a SELECT before the first command of a database, the primary's PING every
// repl-ping-replica-period and a REPLCONF GETACK for WAIT or a failover. Each byte of it moves
// the replication offset by one, so the primary's `master_repl_offset` (INFO replication) says
// when everything up to a command has been read. The replica acknowledges (`REPLCONF ACK
// <offset>`) after the snapshot and after each second without data: after a diskless snapshot
// the primary holds the stream back until a first ACK comes (putReplicaOnline's wait for an ACK
// in src/replication.c), and drops a replica silent for repl-timeout. Plain TCP only (no TLS); the
// primary must not require a password (AUTH is not sent). A diskless primary waits
// repl-diskless-sync-delay (5 s by default) before it sends the snapshot: set it to 0 first for a
// quick start. The snapshot's end comes before the primary's snapshot child exits, and a FLUSHALL
// in that moment ends the child and drops this replica (live 9.1.2): before one, wait until no
// child runs (server::wait_idle, server/persistence.hpp).
#pragma once

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/observe/aof.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::observe {

/// The stream could not be opened or read: what() names the primary, the step and what came.
struct ReplicationStreamError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ReplicationStream {
 public:
  /// Connects to the primary at host:port as a replica and reads past its full sync. `timeout`
  /// bounds the handshake with the snapshot, and each read_until(); the connect itself is a
  /// blocking one (meant for servers on this host). Throws ReplicationStreamError
  /// (the server refused the handshake, e.g. NOAUTH; the connection closed; the timeout passed).
  ReplicationStream(const std::string& host, int port, std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : where_(host + ":" + std::to_string(port)), timeout_(timeout) {
    try {
      // One deadline for the whole handshake: the primary sends keep-alive newlines meanwhile.
      const auto deadline = std::chrono::steady_clock::now() + timeout_;
      connect(host, port);
      send({"REPLCONF", "capa", "eof", "capa", "psync2"});
      expect_line("+OK", "REPLCONF capa", deadline);
      send({"PSYNC", "?", "-1"});
      std::string line = read_line("PSYNC", deadline);
      while (line.empty()) line = read_line("PSYNC", deadline);  // keep-alive newlines
      if (line.rfind("+FULLRESYNC ", 0) != 0) fail("PSYNC ? -1 answered '" + line + "', not +FULLRESYNC");
      offset_ = number(line.substr(line.rfind(' ') + 1), "the +FULLRESYNC offset");
      skip_snapshot(deadline);
      online_ = true;
      acknowledge();
    } catch (...) {
      if (fd_ >= 0) ::close(fd_);  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~ReplicationStream() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReplicationStream(const ReplicationStream&) = delete;
  ReplicationStream& operator=(const ReplicationStream&) = delete;

  /// The replication offset read up to: the primary's master_repl_offset at the sync, plus each
  /// byte of the stream read since.
  long long offset() const { return offset_; }

  /// Reads until the stream reaches `primary_offset` (the primary's master_repl_offset after the
  /// commands of interest); returns the commands read since the last call, in order (SELECT,
  /// PING, REPLCONF, MULTI and EXEC included). Throws ReplicationStreamError when `timeout` passes
  /// first (it names both offsets) or the connection closes, AofError for bytes that are not
  /// RESP arrays.
  std::vector<resp::Argv> read_until(long long primary_offset) {
    std::vector<resp::Argv> out;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      std::size_t consumed = 0;
      auto cmds = parse_aof(buf_, "the replication stream of " + where_, &consumed);
      buf_.erase(0, consumed);
      offset_ += static_cast<long long>(consumed);
      out.insert(out.end(), std::make_move_iterator(cmds.begin()), std::make_move_iterator(cmds.end()));
      if (offset_ >= primary_offset) return out;
      if (!fill(deadline))
        fail("the stream stopped at offset " + std::to_string(offset_) + " before " + std::to_string(primary_offset) +
             " (timeout " + std::to_string(timeout_.count()) + " ms)");
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ReplicationStreamError("replication stream of " + where_ + ": " + why);
  }
  /// `text` as a whole non-negative number, else fail() naming `what`.
  long long number(const std::string& text, const char* what) const {
    long long n = 0;
    if (text.empty() || text.size() > 18) fail(std::string(what) + " '" + text + "' is not a number");
    for (char ch : text) {
      if (ch < '0' || ch > '9') fail(std::string(what) + " '" + text + "' is not a number");
      n = n * 10 + (ch - '0');
    }
    return n;
  }

  void connect(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0)
      fail(std::string("cannot resolve: ") + ::gai_strerror(rc));
    int err = 0;
    for (addrinfo* ai = res; ai && fd_ < 0; ai = ai->ai_next) {
      const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) fd_ = fd;
      else {
        err = errno;
        ::close(fd);
      }
    }
    ::freeaddrinfo(res);
    if (fd_ < 0) fail(std::string("cannot connect: ") + std::strerror(err));
  }

  void send(const resp::Argv& argv) {
    std::string out = "*" + std::to_string(argv.size()) + "\r\n";
    for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    for (std::size_t sent = 0; sent < out.size();) {
      const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(std::string("send: ") + std::strerror(errno));
      sent += static_cast<std::size_t>(n);
    }
  }

  /// REPLCONF ACK at the offset read up to (no answer comes).
  void acknowledge() { send({"REPLCONF", "ACK", std::to_string(offset_)}); }

  /// More bytes into buf_ before `deadline`; false when it passed first. Once the stream is
  /// online, acknowledges after each second without data. Fails when the primary closes the
  /// connection.
  bool fill(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail(std::string("poll: ") + std::strerror(errno));
      if (r == 0) {
        if (online_) acknowledge();
        continue;
      }
      char chunk[65536];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) fail("the primary closed the connection");
      if (n < 0) fail(std::string("recv: ") + std::strerror(errno));
      buf_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  }

  /// One line up to "\n" (its "\r" dropped), read during the handshake.
  std::string read_line(const char* step, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const std::size_t eol = buf_.find('\n');
      if (eol != std::string::npos) {
        std::string line = buf_.substr(0, eol);
        buf_.erase(0, eol + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (!fill(deadline)) fail(std::string(step) + ": no answer within " + std::to_string(timeout_.count()) + " ms");
    }
  }
  void expect_line(const std::string& want, const char* step, std::chrono::steady_clock::time_point deadline) {
    const std::string got = read_line(step, deadline);
    if (got != want) fail(std::string(step) + " answered '" + got + "', not '" + want + "'");
  }

  /// The full sync's snapshot: `$<length>` and that many bytes, or `$EOF:<mark>` and the bytes up
  /// to the same 40-byte mark. Read and dropped.
  void skip_snapshot(std::chrono::steady_clock::time_point deadline) {
    std::string head = read_line("the snapshot", deadline);
    while (head.empty()) head = read_line("the snapshot", deadline);
    if (head.rfind("$EOF:", 0) == 0) {
      const std::string mark = head.substr(5);
      if (mark.size() != 40) fail("a diskless snapshot mark of " + std::to_string(mark.size()) + " bytes, not 40");
      for (;;) {
        const std::size_t at = buf_.find(mark);
        if (at != std::string::npos) {
          buf_.erase(0, at + mark.size());
          return;
        }
        if (buf_.size() > mark.size()) buf_.erase(0, buf_.size() - mark.size());  // keep a tail the mark may start in
        if (!fill(deadline)) fail("the diskless snapshot did not end within " + std::to_string(timeout_.count()) + " ms");
      }
    }
    if (head.empty() || head[0] != '$') fail("the snapshot began '" + head + "', not $<length> or $EOF:<mark>");
    auto left = static_cast<std::size_t>(number(head.substr(1), "the snapshot length"));
    for (;;) {  // dropped as it arrives
      const std::size_t take = std::min(left, buf_.size());
      buf_.erase(0, take);
      left -= take;
      if (left == 0) return;
      if (!fill(deadline)) fail("the snapshot did not arrive within " + std::to_string(timeout_.count()) + " ms");
    }
  }

  std::string where_;
  std::chrono::milliseconds timeout_;
  int fd_ = -1;
  bool online_ = false;  ///< past the snapshot: fill() acknowledges
  std::string buf_;
  long long offset_ = 0;
};

}  // namespace expirykit::observe
