// expirykit/bench/load.hpp: a load generator on hiredis: T threads x C connections x pipeline P.
//
//   bench::LoadOptions o;                  // host/port, threads, connections, pipeline, ...
//   o.port = target.port(); o.pipeline = 32; o.requests = 1'000'000; o.warmup_s = 1;
//   bench::Template t({"HGET", "h", "f:__rand_int__"}, 5000);   // valkey-benchmark placeholders
//   bench::LoadResult r = bench::Load(o, t).run();
//   r.ops_per_sec(); r.latency_ns.percentile(99.9);
//
// How it works (and why it keeps up with valkey-benchmark): every thread owns C connections and
// an epoll loop. A connection sends a batch of P requests, preformatted in RESP, in one write(),
// waits for the P replies and sends the next batch (the valkey-benchmark -P model). Replies are
// parsed by a hiredis reader without reply-object functions, which allocates nothing and yields
// just the reply type (errors are counted). A reply's latency is the time from its batch's
// write() to the read() that delivered it, in nanoseconds (steady clock).
//
// Phases: connect all (not timed) -> warm-up (warmup_s; replies not counted) -> measure (until
// `requests` replies were counted, or duration_s elapsed, whichever comes first) -> drain.
// A batch counts if it was sent while measuring; ops/s = counted replies / (last counted reply
// - start of measuring). Connections are per thread: total connections = threads * connections.
//
// What each request is (Generator, RequestContext, Rng, Template) is in bench/request.hpp, which
// this header includes.
#pragma once

#include <hiredis/hiredis.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <expirykit/bench/histogram.hpp>
#include <expirykit/bench/request.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::bench {

struct Progress {
  double elapsed_s = 0;    ///< seconds since measuring began (negative: still warming up)
  std::uint64_t ops = 0;   ///< replies counted so far
  bool measuring = false;
};

struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  unsigned threads = 1;      ///< load threads
  unsigned connections = 50; ///< connections per thread
  unsigned pipeline = 1;     ///< requests per batch on a connection (valkey-benchmark -P)
  /// Replies to count (all threads together); 0: no count limit (then duration_s must be set).
  std::uint64_t requests = 100000;
  double duration_s = 0;     ///< seconds to measure; 0: no time limit
  double warmup_s = 0;       ///< seconds of load before measuring (replies not counted)
  std::uint64_t seed = 0x5eed;
  /// Send one request on a separate connection first and throw if its reply is an error
  /// (e.g. "ERR unknown command 'HSETEX'"), so a run never measures error replies silently.
  bool probe = true;
  /// Sample INFO cpu before and after measuring (server_cpu_s in the result).
  bool server_cpu = true;
  /// Called on the calling thread about every tick_interval while the load runs.
  std::function<void(const Progress&)> on_tick;
  std::chrono::milliseconds tick_interval{1000};
};

struct LoadResult {
  std::uint64_t ops = 0;           ///< counted replies
  std::uint64_t errors = 0;        ///< counted replies that were errors
  std::uint64_t warmup_ops = 0;    ///< replies during warm-up (not counted)
  double elapsed_s = 0;            ///< start of measuring -> last counted reply, seconds
  double client_cpu_s = -1;        ///< this process's user+system CPU while measuring, seconds
  double server_cpu_s = -1;        ///< the server's used_cpu_user+used_cpu_sys delta, seconds (-1: unknown)
  Histogram latency_ns;            ///< per-reply latency, nanoseconds
  std::vector<std::uint64_t> ops_per_thread;
  double ops_per_sec() const { return elapsed_s > 0 ? static_cast<double>(ops) / elapsed_s : 0.0; }
};

class Load {
 public:
  /// Throws std::invalid_argument for zero threads/connections/pipeline or no stop condition.
  Load(LoadOptions opts, Generator gen) : opts_(std::move(opts)), gen_(std::move(gen)) {
    if (!opts_.threads || !opts_.connections || !opts_.pipeline)
      throw std::invalid_argument("bench::Load: threads, connections and pipeline must be >= 1");
    if (!opts_.requests && opts_.duration_s <= 0)
      throw std::invalid_argument("bench::Load: set requests or duration_s");
  }

  /// Runs the load (blocking). Throws std::runtime_error if the probe reply is an error, and
  /// resp::ConnectionError / std::runtime_error naming the address if a connection fails.
  LoadResult run() {
    using clock = std::chrono::steady_clock;
    std::optional<resp::Client> ctl;
    if (opts_.probe || opts_.server_cpu) ctl.emplace(opts_.host, opts_.port);
    if (opts_.probe) probe(*ctl);

    phase_ = Phase::init;
    remaining_.assign(opts_.threads, 0);
    if (opts_.requests)
      for (unsigned t = 0; t < opts_.threads; ++t)
        remaining_[t] = opts_.requests / opts_.threads + (t < opts_.requests % opts_.threads ? 1 : 0);
    slots_ = std::vector<Slot>(opts_.threads);
    ready_ = 0;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < opts_.threads; ++t) threads.emplace_back([this, t] { thread_main(t); });
    while (ready_.load() < opts_.threads) std::this_thread::sleep_for(std::chrono::microseconds(200));

    auto finished = [&] {
      for (auto& s : slots_)
        if (!s.done.load()) return false;
      return true;
    };
    std::exception_ptr tick_error;  // a throwing on_tick aborts the run, rethrown after the join
    auto tick = [&](bool measuring, clock::time_point t0) {
      if (!opts_.on_tick || tick_error) return;
      Progress p;
      p.measuring = measuring;
      p.elapsed_s = std::chrono::duration<double>(clock::now() - t0).count();
      for (auto& s : slots_) p.ops += s.ops_published.load(std::memory_order_relaxed);
      try {
        opts_.on_tick(p);
      } catch (...) {
        tick_error = std::current_exception();
        phase_.store(Phase::abort);
        phase_.notify_all();
      }
    };
    const auto step = std::min<std::chrono::milliseconds>(opts_.tick_interval, std::chrono::milliseconds(5));
    // Warm-up.
    const auto w0 = clock::now();
    auto next_tick = w0 + opts_.tick_interval;
    if (opts_.warmup_s > 0) {  // without warm-up, the first batches are measured ones
      set_phase(Phase::warmup);
      const auto warm_end = w0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(opts_.warmup_s));
      while (clock::now() < warm_end && !finished()) {
        std::this_thread::sleep_for(step);
        if (clock::now() >= next_tick) tick(false, warm_end), next_tick += opts_.tick_interval;
      }
    }
    // Measure.
    double cpu0 = server_cpu(ctl);
    double ccpu0 = client_cpu();
    const auto t0 = clock::now();
    t0_ns_ = to_ns(t0);
    set_phase(Phase::measure);
    const auto stop_at = opts_.duration_s > 0
                             ? t0 + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(opts_.duration_s))
                             : clock::time_point::max();
    next_tick = t0 + opts_.tick_interval;
    bool stopped = false;
    while (!finished()) {
      std::this_thread::sleep_for(step);
      auto now = clock::now();
      if (!stopped && now >= stop_at) set_phase(Phase::stop), stopped = true;
      if (now >= next_tick) tick(true, t0), next_tick += opts_.tick_interval;
    }
    for (auto& th : threads) th.join();
    if (tick_error) std::rethrow_exception(tick_error);
    LoadResult r;
    r.client_cpu_s = client_cpu() - ccpu0;
    double cpu1 = server_cpu(ctl);
    if (cpu0 >= 0 && cpu1 >= 0) r.server_cpu_s = cpu1 - cpu0;
    std::int64_t last = t0_ns_;
    for (auto& s : slots_) {
      if (s.error) std::rethrow_exception(s.error);
      r.ops += s.ops;
      r.errors += s.errors;
      r.warmup_ops += s.warmup_ops;
      r.latency_ns.merge(s.latency);
      r.ops_per_thread.push_back(s.ops);
      if (s.ops) last = std::max(last, s.last_reply_ns);
    }
    r.elapsed_s = static_cast<double>(last - t0_ns_) / 1e9;
    return r;
  }

  const LoadOptions& options() const { return opts_; }

 private:
  enum class Phase : int { init, warmup, measure, stop, abort };
  struct Slot {
    std::uint64_t ops = 0, errors = 0, warmup_ops = 0;
    std::int64_t last_reply_ns = 0;
    Histogram latency;
    std::exception_ptr error;
    bool counted_ready = false;
    std::atomic<std::uint64_t> ops_published{0};
    std::atomic<bool> done{false};
  };
  struct Conn {
    redisContext* ctx = nullptr;
    redisReader* reader = nullptr;
    unsigned index = 0;
    unsigned inflight = 0;
    bool measured = false;
    std::int64_t sent_ns = 0;
    std::string out;
    ~Conn() {
      if (reader) redisReaderFree(reader);
      if (ctx) redisFree(ctx);
    }
  };

  static std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  static std::int64_t now_ns() { return to_ns(std::chrono::steady_clock::now()); }
  static double client_cpu() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  }
  double server_cpu(std::optional<resp::Client>& ctl) const {
    if (!ctl || !opts_.server_cpu) return -1;
    try {
      auto info = server::Info::fetch(*ctl, "cpu");
      return std::stod(info.get("used_cpu_user").value_or("-1")) + std::stod(info.get("used_cpu_sys").value_or("0"));
    } catch (const std::exception&) {
      return -1;
    }
  }
  /// Moves to phase `p` unless a thread has aborted the run.
  void set_phase(Phase p) {
    Phase cur = phase_.load();
    while (cur != Phase::abort && !phase_.compare_exchange_weak(cur, p)) {
    }
    phase_.notify_all();
  }

  void probe(resp::Client& c) {
    Rng rng(opts_.seed ^ 0xabcdefULL);
    RequestContext ctx{0, opts_.threads, 0, 0, &rng};
    std::string bytes;
    gen_(ctx, bytes);
    // A throwaway hiredis context so the full error text comes back.
    std::unique_ptr<redisContext, resp::detail::ContextFree> raw(redisConnect(opts_.host.c_str(), opts_.port));
    if (!raw || raw->err) throw std::runtime_error(c.address() + ": probe connection failed");
    if (redisAppendFormattedCommand(raw.get(), bytes.data(), bytes.size()) != REDIS_OK)
      throw std::runtime_error(c.address() + ": probe: cannot queue the request");
    void* rep = nullptr;
    if (redisGetReply(raw.get(), &rep) != REDIS_OK || !rep)
      throw std::runtime_error(c.address() + ": probe: no reply (" + std::string(raw->errstr) + ")");
    std::unique_ptr<void, resp::detail::ReplyFree> guard(rep);
    auto reply = resp::detail::from_hiredis(static_cast<redisReply*>(rep));
    if (reply.is_error())
      throw std::runtime_error(c.address() + ": the benchmark's first request was answered with an error: " +
                               reply.to_string() + " (request bytes: " + printable(bytes) + ")");
  }
  static std::string printable(const std::string& s) {
    std::string o;
    for (char ch : s) o += ch == '\r' ? std::string("\\r") : ch == '\n' ? std::string("\\n") : std::string(1, ch);
    return o.size() > 300 ? o.substr(0, 300) + "..." : o;
  }

  void thread_main(unsigned t) {
    Slot& slot = slots_[t];
    try {
      run_thread(t, slot);
    } catch (...) {
      slot.error = std::current_exception();
      phase_.store(Phase::abort);
      phase_.notify_all();
      if (!slot.counted_ready) ready_.fetch_add(1);  // do not hang run()
    }
    slot.done.store(true);
  }

  void run_thread(unsigned t, Slot& slot) {
    const unsigned C = opts_.connections;
    std::vector<Conn> conns(C);
    int ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) throw std::runtime_error("epoll_create1 failed");
    struct EpollFd {
      int fd;
      ~EpollFd() { ::close(fd); }
    } ep_guard{ep};
    const std::string addr = opts_.host + ":" + std::to_string(opts_.port);
    for (unsigned i = 0; i < C; ++i) {
      Conn& c = conns[i];
      c.index = i;
      timeval tv{5, 0};
      c.ctx = redisConnectWithTimeout(opts_.host.c_str(), opts_.port, tv);
      if (!c.ctx || c.ctx->err)
        throw std::runtime_error(addr + ": load connection " + std::to_string(i) + " failed: " +
                                 (c.ctx ? c.ctx->errstr : "out of memory"));
      c.reader = redisReaderCreateWithFunctions(nullptr);  // no reply objects: types only
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = i;
      if (::epoll_ctl(ep, EPOLL_CTL_ADD, c.ctx->fd, &ev) != 0) throw std::runtime_error("epoll_ctl failed");
    }
    Rng rng(opts_.seed + 0x1000003ULL * (t + 1));
    RequestContext ctx{t, opts_.threads, 0, 0, &rng};
    std::uint64_t& remaining = remaining_[t];

    auto send_batch = [&](Conn& c) -> bool {
      Phase ph = phase_.load(std::memory_order_acquire);
      if (ph == Phase::stop || ph == Phase::abort) return false;
      const bool measure = ph == Phase::measure;
      unsigned n = opts_.pipeline;
      if (measure && opts_.requests) {
        if (remaining == 0) return false;
        n = static_cast<unsigned>(std::min<std::uint64_t>(n, remaining));
        remaining -= n;
      }
      c.out.clear();
      ctx.connection = c.index;
      for (unsigned k = 0; k < n; ++k, ++ctx.seq) gen_(ctx, c.out);
      c.measured = measure;
      c.inflight = n;
      c.sent_ns = now_ns();
      const char* p = c.out.data();
      std::size_t left = c.out.size();
      while (left) {
        ssize_t w = ::write(c.ctx->fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) throw std::runtime_error(addr + ": write failed: " + std::strerror(errno));
        p += w;
        left -= static_cast<std::size_t>(w);
      }
      return true;
    };

    slot.counted_ready = true;
    ready_.fetch_add(1);
    phase_.wait(Phase::init);
    unsigned active = 0;
    for (auto& c : conns) active += send_batch(c) ? 1 : 0;
    std::vector<char> buf(1 << 18);
    std::vector<epoll_event> evs(C);
    std::uint64_t published = 0;
    while (active) {
      int n = ::epoll_wait(ep, evs.data(), static_cast<int>(C), 20);
      if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait failed: ") + std::strerror(errno));
      if (phase_.load(std::memory_order_relaxed) == Phase::abort) return;
      for (int e = 0; e < n; ++e) {
        Conn& c = conns[evs[e].data.u32];
        ssize_t r = ::read(c.ctx->fd, buf.data(), buf.size());
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r <= 0)
          throw std::runtime_error(addr + ": load connection " + std::to_string(c.index) +
                                   (r == 0 ? ": the server closed it" : std::string(": read failed: ") + std::strerror(errno)));
        const std::int64_t now = now_ns();
        if (redisReaderFeed(c.reader, buf.data(), static_cast<std::size_t>(r)) != REDIS_OK)
          throw std::runtime_error(addr + ": reader out of memory");
        for (;;) {
          void* rep = nullptr;
          if (redisReaderGetReply(c.reader, &rep) != REDIS_OK)
            throw std::runtime_error(addr + ": protocol error: " + std::string(c.reader->errstr));
          if (!rep) break;
          if (c.inflight == 0) throw std::runtime_error(addr + ": a reply nobody asked for (push message?)");
          --c.inflight;
          if (c.measured) {
            ++slot.ops;
            if (reinterpret_cast<std::uintptr_t>(rep) == REDIS_REPLY_ERROR) ++slot.errors;
            slot.latency.record(static_cast<std::uint64_t>(now - c.sent_ns));
            slot.last_reply_ns = now;
          } else {
            ++slot.warmup_ops;
          }
        }
        if (c.inflight == 0 && !send_batch(c)) --active;
      }
      if (slot.ops != published) slot.ops_published.store(published = slot.ops, std::memory_order_relaxed);
    }
  }

  LoadOptions opts_;
  Generator gen_;
  std::atomic<Phase> phase_{Phase::init};
  std::atomic<unsigned> ready_{0};
  std::vector<std::uint64_t> remaining_;
  std::vector<Slot> slots_;
  std::int64_t t0_ns_ = 0;
};

}  // namespace expirykit::bench
