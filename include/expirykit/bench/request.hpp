// expirykit/bench/request.hpp: what a load thread writes (bench/load.hpp): the Generator that
// appends one RESP-encoded command per request, what it knows about the request
// (RequestContext, with the thread's Rng), and Template, a command with valkey-benchmark
// placeholders preformatted once and filled in place per request.
//
//   bench::Template t({"HGET", "h", "f:__rand_int__"}, 5000);   // like valkey-benchmark -r 5000
//   std::string out; bench::Rng rng; bench::RequestContext ctx{0, 1, 0, 0, &rng};
//   t(ctx, out);                                                 // one request, RESP-encoded
//
// The placeholders are valkey-benchmark's (__rand_int__, __rand_1st__ .. __rand_9th__, as its -r
// and --sequential fill them), plus __thread__ (expirykit only).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace expirykit::bench {

/// splitmix64: fast, good enough for picking keys; one per load thread.
struct Rng {
  std::uint64_t state;
  explicit Rng(std::uint64_t seed = 1) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (n > 0), by multiply-shift (bias below 2^-32 for n < 2^32).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

/// What a generator knows about the request it writes.
struct RequestContext {
  unsigned thread = 0;      ///< load thread, 0 .. threads-1
  unsigned threads = 1;     ///< number of load threads
  unsigned connection = 0;  ///< connection within the thread, 0 .. connections-1
  std::uint64_t seq = 0;    ///< requests this thread generated before this one (warm-up included)
  Rng* rng = nullptr;       ///< the thread's random generator
};

/// Appends one RESP-encoded command to `out`. Called on the load threads (one call at a time per
/// thread, concurrently across threads): it must not share mutable state between threads.
using Generator = std::function<void(RequestContext&, std::string& out)>;

/// Appends `argv` as a RESP array of bulk strings to `out`.
inline void append_resp(std::string& out, const std::vector<std::string_view>& argv) {
  out += '*';
  out += std::to_string(argv.size());
  out += "\r\n";
  for (auto a : argv) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out.append(a.data(), a.size());
    out += "\r\n";
  }
}

/// A command with valkey-benchmark placeholders, preformatted once, filled in place per request.
///  - `__rand_int__`: a 12-digit zero-padded number in [0, keyspace), fresh for each occurrence
///    (like `valkey-benchmark -r keyspace`); with sequential=true, the thread's next number in
///    turn (thread t starts at t * keyspace / threads), like --sequential;
///  - `__rand_1st__` .. `__rand_9th__`: like __rand_int__, one value per request for each name;
///  - `__thread__` (expirykit only): the load thread's index, 3 digits ("007").
/// With keyspace 0 the __rand_*__ placeholders stay literal, as valkey-benchmark leaves them
/// without -r.
class Template {
 public:
  explicit Template(std::vector<std::string> argv, std::uint64_t keyspace = 0, bool sequential = false)
      : argv_(std::move(argv)), keyspace_(keyspace), sequential_(sequential) {
    if (argv_.empty()) throw std::invalid_argument("bench::Template: empty command");
    // "__thread__" (10 bytes) becomes 3 digits: format with a 3-byte marker in its place. The
    // other placeholders are as long as their replacements, so RESP lengths stay valid.
    static constexpr std::string_view thread = "__thread__", marker = "\x01T\x01";
    std::vector<std::string> formatted = argv_;
    for (auto& a : formatted)
      for (std::size_t p; (p = a.find(thread)) != std::string::npos;) a.replace(p, thread.size(), marker);
    append_resp(bytes_, std::vector<std::string_view>(formatted.begin(), formatted.end()));
    static constexpr std::string_view rand_int = "__rand_int__";
    static constexpr std::string_view nth[] = {"__rand_1st__", "__rand_2nd__", "__rand_3rd__",
                                               "__rand_4th__", "__rand_5th__", "__rand_6th__",
                                               "__rand_7th__", "__rand_8th__", "__rand_9th__"};
    for (std::size_t pos = 0; pos < bytes_.size(); ++pos) {
      std::string_view rest(bytes_.data() + pos, bytes_.size() - pos);
      if (rest.starts_with(marker)) holes_.push_back({pos, -2, 3});
      if (keyspace_ == 0) continue;
      if (rest.starts_with(rand_int)) holes_.push_back({pos, -1, 12});
      for (int k = 0; k < 9; ++k)
        if (rest.starts_with(nth[k])) holes_.push_back({pos, k, 12});
    }
  }

  /// Writes the request for `ctx` (see the class comment).
  void operator()(RequestContext& ctx, std::string& out) const {
    const std::size_t base = out.size();
    out += bytes_;
    std::uint64_t nth[9];
    bool have[9] = {};
    std::uint64_t seq_value = 0;
    if (sequential_ && keyspace_) seq_value = (ctx.thread * keyspace_ / std::max(1u, ctx.threads) + ctx.seq) % keyspace_;
    for (const auto& h : holes_) {
      std::uint64_t v;
      if (h.kind == -2) v = ctx.thread;
      else if (sequential_) v = seq_value;
      else if (h.kind == -1) v = ctx.rng->below(keyspace_);
      else {
        if (!have[h.kind]) nth[h.kind] = ctx.rng->below(keyspace_), have[h.kind] = true;
        v = nth[h.kind];
      }
      char* p = out.data() + base + h.pos + h.digits;
      for (unsigned i = 0; i < h.digits; ++i, v /= 10) *--p = static_cast<char>('0' + v % 10);
    }
  }

  const std::vector<std::string>& argv() const { return argv_; }
  std::uint64_t keyspace() const { return keyspace_; }
  /// The command as typed, e.g. "HGET h f:__rand_int__".
  std::string to_string() const {
    std::string s;
    for (const auto& a : argv_) s += (s.empty() ? "" : " ") + a;
    return s;
  }

 private:
  struct Hole {
    std::size_t pos;  ///< offset in bytes_
    int kind;         ///< -1 rand_int, 0..8 rand_1st..9th, -2 thread
    unsigned digits;
  };
  std::vector<std::string> argv_;
  std::uint64_t keyspace_;
  bool sequential_;
  std::string bytes_;
  std::vector<Hole> holes_;
};

}  // namespace expirykit::bench
