// expirykit/resp/client.hpp: a blocking client on hiredis (0.14 and 1.x), RESP2 and RESP3.
//
// RAII: one Client owns one connection. Commands are binary-safe argument vectors.
// Server errors come back as Reply::error values; only connection failures (refused, reset,
// timeout, protocol error) throw ConnectionError, whose message names the address.
// A connection starts on RESP2. hello(3) moves it to RESP3 when the build's hiredis is 1.1 or
// later (resp3_supported; hiredis 0.14 cannot parse RESP3: never send HELLO 3 yourself there): replies
// then keep their RESP3 type beside their RESP2 one (resp/reply.hpp), and push messages
// (tracking invalidations, pub/sub) never take a command's place: they are kept for
// take_pushes().
// A server that wants a password gets AUTH right after the connect, with the credentials
// registered for its address (resp/credentials.hpp); an address with TLS settings (resp/tls.hpp)
// gets the TLS handshake before that. EXPIRYKIT_WIRE_DELAY_MS (or
// set_reply_delay()) makes every round trip that much slower: a test run on a slow wire.
// EXPIRYKIT_READ_SPIN_US (or set_read_spin()) is how long a read polls the socket for its reply
// before it sleeps in the kernel (300 us unless set; not over TLS).
#pragma once

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <expirykit/config.hpp>
#include <expirykit/resp/credentials.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/resp/tls.hpp>

namespace expirykit::resp {

/// Connecting failed, or the connection broke, timed out or saw a protocol error.
/// The message starts with "host:port: ". After it is thrown the Client is closed.
class ConnectionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Whether this build's hiredis handles RESP3: 1.1 or later (bookworm's 0.14 parses no RESP3;
/// 1.0.x hands a buffered push to redisGetReply as the command's reply, aborts on a push holding
/// a nil, and reads doubles as empty: fixed in v1.1.0, redis/hiredis b9b9f44, c8adea4, b455b33).
inline constexpr bool resp3_supported = HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1);

namespace detail {
inline Reply from_hiredis(const redisReply* r) {
  if (!r) return Reply::nil();
  switch (r->type) {
    case REDIS_REPLY_STRING: return Reply::string(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS: return Reply::status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER: return Reply::integer(r->integer);
    case REDIS_REPLY_NIL: return Reply::nil();
    case REDIS_REPLY_ARRAY: {
      std::vector<Reply> e;
      e.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) e.push_back(from_hiredis(r->element[i]));
      return Reply::array(std::move(e));
    }
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
    // RESP3 (after HELLO 3): kept as the RESP2 type of the same data (resp/reply.hpp).
    case REDIS_REPLY_MAP:
    case REDIS_REPLY_SET:
    case REDIS_REPLY_PUSH: {
      std::vector<Reply> e;  // a map's keys and values alternate, as hiredis keeps them
      e.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) e.push_back(from_hiredis(r->element[i]));
      return Reply::array(std::move(e)).as_resp3(r->type == REDIS_REPLY_MAP   ? Resp3Type::map
                                                 : r->type == REDIS_REPLY_SET ? Resp3Type::set
                                                                              : Resp3Type::push);
    }
    case REDIS_REPLY_DOUBLE: return Reply::string(std::string(r->str, r->len)).as_resp3(Resp3Type::double_);
    case REDIS_REPLY_BIGNUM: return Reply::string(std::string(r->str, r->len)).as_resp3(Resp3Type::big_number);
    case REDIS_REPLY_VERB: return Reply::string(std::string(r->str, r->len)).as_resp3(Resp3Type::verbatim);
    case REDIS_REPLY_BOOL: return Reply::integer(r->integer ? 1 : 0).as_resp3(Resp3Type::boolean);
#endif
    default:  // an attribute (RESP3 `|`): no command the kit sends is answered with one
      return Reply::error("expirykit: unexpected hiredis reply type " + std::to_string(r->type));
  }
}
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
/// The push messages a RESP3 connection received while a command's reply was awaited.
struct PushQueue {
  static constexpr std::size_t max = 65536;  ///< kept at most; older ones dropped (counted)
  std::deque<Reply> q;
  std::size_t dropped = 0;
};
inline void keep_push(void* privdata, void* reply) noexcept {  // called from hiredis's C frames
  std::unique_ptr<void, void (*)(void*)> guard(reply, freeReplyObject);
  auto* p = static_cast<PushQueue*>(privdata);
  if (!p) return;
  try {
    if (p->q.size() >= PushQueue::max) {
      p->q.pop_front();
      ++p->dropped;
    }
    p->q.push_back(from_hiredis(static_cast<redisReply*>(reply)));
  } catch (...) {  // out of memory: counted as dropped
    ++p->dropped;
  }
}
#endif
struct ReplyFree {
  void operator()(void* p) const { freeReplyObject(p); }
};
struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
inline timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}
}  // namespace detail

/// Anything convertible to one command argument: strings as bytes, integers in decimal.
template <class T>
concept Arg = std::convertible_to<T, std::string_view> || std::integral<T>;

template <Arg T>
std::string to_arg(const T& v) {
  if constexpr (std::integral<T>) return std::to_string(v);
  else return std::string(std::string_view(v));
}

class Client {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{2000};
    /// Per-reply read/write timeout; 0 disables it (blocks forever).
    std::chrono::milliseconds command_timeout{30000};
  };

  /// Connects to host:port, starts TLS when tls_for(address()) names settings, then sends AUTH
  /// when credentials_for(address()) names some. Throws ConnectionError ("127.0.0.1:7000:
  /// Connection refused"; "127.0.0.1:7000: TLS handshake failed: ..."; "127.0.0.1:7000: AUTH as
  /// the default user refused: WRONGPASS ..." without the password; TLS settings in a build
  /// without TLS: resp/tls.hpp).
  Client(std::string host, int port) : Client(std::move(host), port, Options{}) {}
  Client(std::string host, int port, Options opts)
      : host_(std::move(host)),
        port_(port),
        delay_(partial_config().wire_delay_ms),
        spin_(partial_config().read_spin_us) {
    ctx_.reset(redisConnectWithTimeout(host_.c_str(), port_, detail::to_timeval(opts.connect_timeout)));
    if (!ctx_) throw ConnectionError(address() + ": cannot allocate a hiredis context");
    if (ctx_->err) fail("cannot connect");
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
    ctx_->privdata = pushes_.get();  // a stable address: the Client may move
    redisSetPushCallback(ctx_.get(), &detail::keep_push);
#endif
    const auto t = tls_for(address());
    if (t) {
      // The handshake waits at most connect_timeout (a plain port never answers it), then the
      // command timeout (none: 0) applies.
      if (redisSetTimeout(ctx_.get(), detail::to_timeval(opts.connect_timeout)) != REDIS_OK)
        fail("cannot set the connect timeout");
      tls_ = std::make_unique<detail::TlsSession>(ctx_.get(), *t, opts.connect_timeout,
                                                  [this](const std::string& why) { fail(why.c_str()); });
    }
    if ((t || opts.command_timeout.count() > 0) &&
        redisSetTimeout(ctx_.get(), detail::to_timeval(opts.command_timeout)) != REDIS_OK)
      fail("cannot set the command timeout");
    if (const auto cr = credentials_for(address())) {
      append(cr->user.empty() ? Argv{"AUTH", cr->password} : Argv{"AUTH", cr->user, cr->password});
      const Reply r = read();
      if (r.is_error()) {
        ctx_.reset();
        throw ConnectionError(address() + ": AUTH as " + (cr->user.empty() ? "the default user" : "user " + cr->user) +
                              " refused: " + r.str());
      }
    }
  }
  Client(Client&&) noexcept = default;
  Client& operator=(Client&&) noexcept = default;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  /// "host:port"
  std::string address() const { return host_ + ":" + std::to_string(port_); }
  bool connected() const { return ctx_ != nullptr; }
  /// Open, with nothing to read: no reply pending and no close by the server (which a server
  /// that exited or restarted since leaves), found without a round trip (poll with no wait).
  bool open_and_quiet() const {
    if (!ctx_) return false;
    pollfd p{ctx_->fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

  /// Added latency: after sending what is queued, wait `d` before reading, once per round trip
  /// (call(), pipeline(), the first read() after append(); not read_for()), so every round trip
  /// is that much slower, as on a slow network or a busy CI runner. Starts as
  /// EXPIRYKIT_WIRE_DELAY_MS (config.hpp; unset: none, 0 ms); the AUTH of the constructor waits
  /// it too. For showing that a suite's time margins hold with slower round trips.
  void set_reply_delay(std::chrono::milliseconds d) { delay_ = d; }
  std::chrono::milliseconds reply_delay() const { return delay_; }
  /// How long a read polls the socket for the reply it waits for (a non-blocking peek, then
  /// sched_yield(), over and over) before it blocks in the kernel: the reply is then read as it
  /// lands instead of after the kernel wakes the reader, which on a virtual machine costs more
  /// than a small command (bench/RESULTS.md 9.11); the processor is given up to anything else
  /// runnable between polls. 0 (or less): blocks at once. After 8 reads in a row whose polling ran out, the next 64
  /// reads block at once (replies slower than the spin: a loaded machine, a long command).
  /// read_for() polls no longer than its timeout. Starts as EXPIRYKIT_READ_SPIN_US (config.hpp;
  /// unset: 300 us). Not on TLS connections (the TLS layer buffers what the socket delivered).
  void set_read_spin(std::chrono::microseconds d) {
    spin_ = d;
    spin_misses_ = spin_pause_ = 0;
  }
  std::chrono::microseconds read_spin() const { return spin_; }

  /// HELLO `protocol` (2 or 3) on this connection: later replies arrive in that protocol
  /// (redis.io/docs/latest/commands/hello). Returns the server's reply (its fields: server,
  /// version, proto, ...; a map under RESP3). Throws std::invalid_argument for another protocol,
  /// std::logic_error for 3 in a build whose hiredis is 0.14 (resp3_supported), std::runtime_error
  /// when the server refuses (its error text), ConnectionError on I/O failure.
  Reply hello(int protocol) {
    if (protocol != 2 && protocol != 3) throw std::invalid_argument("hello: protocol " + std::to_string(protocol) + " (2 or 3)");
    if (protocol == 3 && !resp3_supported)
      throw std::logic_error(address() + ": RESP3 needs hiredis 1.1 or later; this build has hiredis " + std::to_string(HIREDIS_MAJOR) +
                             "." + std::to_string(HIREDIS_MINOR) + " (docs/guide/resp3.md)");
    Reply r = call({"HELLO", std::to_string(protocol)});
    if (r.is_error()) throw std::runtime_error(address() + ": HELLO " + std::to_string(protocol) + " refused: " + r.str());
    protocol_ = protocol;
    return r;
  }
  /// 2 (RESP2) until hello(3) succeeds; what the last successful hello() set. A HELLO sent
  /// through call() or pipeline() is not seen here.
  int protocol() const { return protocol_; }
  /// The push messages (RESP3 `>`: CLIENT TRACKING invalidations, pub/sub messages) received
  /// since the last call, oldest first, each an array marked Resp3Type::push. Always empty on
  /// RESP2 and with hiredis 0.14. At most 65,536 are kept; dropped_pushes() counts older ones
  /// dropped. (read_for() returns a push it reads itself, as the reply it waited for.)
  std::vector<Reply> take_pushes() {
    std::vector<Reply> out;
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
    if (!pushes_) return out;  // moved from
    out.assign(std::make_move_iterator(pushes_->q.begin()), std::make_move_iterator(pushes_->q.end()));
    pushes_->q.clear();
#endif
    return out;
  }
  std::size_t dropped_pushes() const {
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
    return pushes_ ? pushes_->dropped : 0;
#else
    return 0;
#endif
  }

  /// Sends one command and waits for its reply (Reply::sent() names the command). Throws
  /// ConnectionError on I/O failure.
  Reply call(const Argv& argv) {
    append(argv);
    Reply r = read();
    r.set_sent(cli_line(argv));
    return r;
  }
  /// call("HEXPIRE", "k", 10, "FIELDS", 1, "f"): arguments as strings or integers.
  template <Arg... A>
  Reply operator()(const A&... args) {
    return call(Argv{to_arg(args)...});
  }

  /// Sends all commands at once, then reads all replies (one round trip). Server errors
  /// are replies in the result; ConnectionError if the connection breaks.
  std::vector<Reply> pipeline(const std::vector<Argv>& cmds) {
    for (const auto& c : cmds) append(c);
    std::vector<Reply> out;
    out.reserve(cmds.size());
    for (std::size_t i = 0; i < cmds.size(); ++i) out.push_back(read());
    return out;
  }

  /// Keeps the last `max` commands this connection sends (0: stop keeping them), for a crash
  /// triage of what a test sent (triage/crash_triage.hpp; catch2::ServerFixture turns it on).
  void record(std::size_t max) {
    record_max_ = max;
    while (recorded_.size() > max) recorded_.pop_front();
  }
  /// The commands kept by record(), oldest first (at most the last `max`).
  std::vector<Argv> recorded() const { return {recorded_.begin(), recorded_.end()}; }
  void clear_recorded() { recorded_.clear(); }

  /// Queues a command in the output buffer (sent on the next read()).
  void append(const Argv& argv) {
    check_open();
    unsent_ = true;
    ++appended_;
    if (record_max_) {
      if (recorded_.size() >= record_max_) recorded_.pop_front();
      recorded_.push_back(argv);
    }
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK)
      fail("cannot queue command");
  }
  /// The commands append() queued on this connection since it was made (call() and pipeline()
  /// queue theirs with it): a caller that sent ahead tells by it that nothing went out since.
  std::uint64_t commands_appended() const { return appended_; }
  /// Writes the commands append() queued now, without reading (read() reads their replies
  /// later, in order). Throws ConnectionError on I/O failure.
  void send() {
    check_open();
    flush();
  }
  /// Flushes queued commands and reads the next reply (blocking, up to command_timeout).
  Reply read() {
    check_open();
    if (unsent_ && delay_.count() > 0) {  // Options::reply_delay: send, then wait
      flush();
      std::this_thread::sleep_for(delay_);
    }
    unsent_ = false;
    spin_until_readable();
    void* raw = nullptr;
    if (redisGetReply(ctx_.get(), &raw) != REDIS_OK) fail("read failed");
    std::unique_ptr<void, detail::ReplyFree> guard(raw);
    return detail::from_hiredis(static_cast<redisReply*>(raw));
  }
  /// Reads the next reply if one arrives within `timeout` (e.g. a pub/sub message after
  /// SUBSCRIBE); std::nullopt on timeout, and the connection stays usable.
  std::optional<Reply> read_for(std::chrono::milliseconds timeout) {
    check_open();
    flush();
    unsent_ = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(ctx_->reader, &raw) != REDIS_OK) fail("protocol error");
      if (raw) {
        std::unique_ptr<void, detail::ReplyFree> guard(raw);
        return detail::from_hiredis(static_cast<redisReply*>(raw));
      }
      if (spin_until_readable(deadline)) {
        if (redisBufferRead(ctx_.get()) != REDIS_OK) fail("read failed");
        continue;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{ctx_->fd, POLLIN, 0};
      int n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n < 0 && errno != EINTR) fail("poll failed");
      if (n > 0 && redisBufferRead(ctx_.get()) != REDIS_OK) fail("read failed");
    }
  }

  void close() { ctx_.reset(); }

 private:
  /// Writes what append() queued (blocking, up to command_timeout).
  void flush() {
    int done = 0;
    while (!done)
      if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) fail("write failed");
  }
  /// set_read_spin(): polls the socket until it has bytes (or an end or error: the read reports
  /// it), for at most spin_ and not past `deadline`, when hiredis holds nothing unparsed; sends
  /// what append() queued first. Returns whether the socket became readable while polling. After
  /// 8 reads in a row whose polling ran out (replies slower than the spin: a loaded machine, a long
  /// command), the next 64 reads block at once, so a slow phase costs little processor time.
  bool spin_until_readable(std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    if (spin_.count() <= 0 || tls_ || ctx_->reader->pos < ctx_->reader->len) return false;
    if (spin_pause_ > 0) {
      --spin_pause_;
      return false;
    }
    flush();
    const auto until = std::min(deadline, std::chrono::steady_clock::now() + spin_);
    for (;;) {
      char byte = 0;
      if (::recv(ctx_->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 ||
          (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        spin_misses_ = 0;
        return true;
      }
      if (std::chrono::steady_clock::now() >= until) {
        if (++spin_misses_ >= 8) {
          spin_misses_ = 0;
          spin_pause_ = 64;
        }
        return false;
      }
      sched_yield();
    }
  }
  void check_open() const {
    if (!ctx_) throw ConnectionError(address() + ": connection is closed (an earlier error closed it)");
  }
  [[noreturn]] void fail(const char* what) {
    std::string msg = address() + ": " + what;
    if (ctx_ && ctx_->err) {
      msg += ": ";
      msg += ctx_->errstr;
      // hiredis's "Protocol error, got "H" as reply type byte" when, say, an HTTP server answers
      // (or a RESP3 reply reaches hiredis 0.14: docs/semantics/deps.md).
      if (ctx_->err == REDIS_ERR_PROTOCOL)
        msg += " (not valid RESP2: another service, an HTTP server say, listening on " + address() + "? or a RESP3 reply?)";
    }
    ctx_.reset();
    throw ConnectionError(msg);
  }

  std::string host_;
  int port_;
  // Before ctx_, so the destructor frees it last; in any order safe (SSL_new holds a reference
  // on the SSL_CTX: resp/tls.hpp).
  std::unique_ptr<detail::TlsSession> tls_;
  std::unique_ptr<redisContext, detail::ContextFree> ctx_;
  std::chrono::milliseconds delay_{0};
  std::chrono::microseconds spin_{0};  // set_read_spin()
  int spin_misses_ = 0, spin_pause_ = 0;  // spin_until_readable(): polls in a row that ran out, reads left to block at once
  bool unsent_ = false;  // append() queued something read() has not sent yet
  std::uint64_t appended_ = 0;  // commands_appended()
  int protocol_ = 2;
#if HIREDIS_MAJOR > 1 || (HIREDIS_MAJOR == 1 && HIREDIS_MINOR >= 1)  // resp3_supported
  std::unique_ptr<detail::PushQueue> pushes_ = std::make_unique<detail::PushQueue>();
#endif
  std::size_t record_max_ = 0;
  std::deque<Argv> recorded_;
};

}  // namespace expirykit::resp
