// expirykit/memory/layouts.hpp: key layouts whose memory cost memory::Probe measures.
//
// A Layout is a recipe: the commands that build N items, what one "item" is (a key, a hash
// field, a value), which keys to sample for the encoding census, and what the server must
// support. Layouts are plain data plus two small functions, so a user can write their own:
//
//   memory::Layout mine{.name = "session-hash", .unit = "key", .items = n, .steps = n,
//                       .command = [](std::string_view pre, std::size_t i) { ... },
//                       .key_count = n, .key = [](std::string_view pre, std::size_t i) { ... }};
//
// Every key name starts with a prefix chosen by the Probe (the warm-up load uses another one),
// so the same recipe can be loaded twice on one server.
//
// The built-in layouts (all() lists them, by_name() finds one) follow issue 4 and the published
// measurements (docs/semantics/redis-hfe.md §8, valkey-hfe.md §13, servers.md):
//   string-ex        SET <p>user:<i>:auth_token <v> EX ttl                  item = key
//   hash1-hsetex     HSETEX <p>user:<i> EX ttl FIELDS 1 auth_token <v>       item = key
//   hash1-plain      HSET <p>user:<i> auth_token <v>                         item = key
//   hash1-expire     HSET <p>user:<i> auth_token <v>; EXPIRE <p>user:<i> ttl item = key
//   bighash-plain    HSET <p>tokens user:<i> <v>         (one hash, N fields) item = field
//   bighash-ttl      HSETEX <p>tokens EX ttl FIELDS 1 user:<i> <v>           item = field
//   hashF-plain      HSET <p>obj:<j> f0 <v> ... f<F-1> <v>  (N/F hashes)      item = field
//   hashF-ttl        HSETEX <p>obj:<j> EX ttl FIELDS F f0 <v> ...            item = field
//   ints50           HSET <p>obj:<j> 0 <int> ... 49 <int>  (N/50 hashes, values 0..999: the
//                    2010 "1.25 billion values" layout of Redis 2.0 days)    item = value
// where F is 10 and 50 (hash10-plain, hash10-ttl, hash50-plain, hash50-ttl).
// Values <v> are value_size bytes of lower-case hex with at least one letter (so never stored
// as integers), distinct per item (like sha1 tokens). TTLs are EX ttl_s by default; the suite,
// the gate and the report use absolute paced expiries (LayoutParams::expire_at_ms) instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/resp/reply.hpp>

namespace expirykit::memory {

/// The knobs every built-in layout takes.
struct LayoutParams {
  /// Number of items measured (keys, fields or values, see Layout::unit). Hash layouts of F
  /// fields build n / F hashes (n is rounded down to a multiple of F).
  std::size_t n = 20000;
  /// Bytes of each value (hex text); ints50 ignores it (its values are small integers).
  std::size_t value_size = 40;
  /// Relative TTL in seconds of whatever gets a TTL (EX ttl_s). Keep it far above the
  /// measurement time so nothing expires while it is measured.
  long long ttl_s = 900;
  /// When non-zero: TTLs are absolute (PXAT / PEXPIREAT) instead of EX ttl_s: the command that
  /// writes item i (for a hash of F fields: the hash's first item, j * F) gets the expiry
  /// expire_at_ms + i * expire_step_ms, in Unix milliseconds. With step 0 every item shares
  /// one expiry; with step 1 expiries spread as if items arrived at 1000 per second. Either way
  /// the expiry times no longer depend on how fast the load ran, which removes the run-to-run
  /// variation of the servers' time-bucketed expiry indexes (Valkey's vset groups expiries in
  /// aligned windows of 16..8192 ms and turns a window it cannot split into a hashtable;
  /// Redis's ebuckets are similar). Use aligned_expiry_ms() for a base that is also aligned.
  long long expire_at_ms = 0;
  long long expire_step_ms = 0;
  /// Short text for tables: "EX 900" or "PXAT base+1ms/item".
  std::string ttl_mode() const {
    if (expire_at_ms <= 0) return "EX " + std::to_string(ttl_s);
    return "PXAT base+" + std::to_string(expire_step_ms) + "ms/item";
  }
};

/// One layout to measure. `command(prefix, step)` for step in [0, steps) builds it;
/// `key(prefix, i)` for i in [0, key_count) names its keys (for OBJECT ENCODING / MEMORY USAGE).
struct Layout {
  std::string name{};       ///< stable id used in baselines, e.g. "hash1-hsetex"
  std::string description{};  ///< one line, with the command shape
  std::string unit{};       ///< what one item is: "key", "field" or "value"
  std::size_t items = 0;    ///< the divisor of the used_memory delta
  std::size_t steps = 0;    ///< number of commands that build the layout
  std::function<resp::Argv(std::string_view prefix, std::size_t step)> command{};
  std::size_t key_count = 0;
  std::function<std::string(std::string_view prefix, std::size_t i)> key{};
  bool needs_hsetex = false;  ///< uses HSETEX (Valkey 9.0+, Redis 8.0+)
  /// True if the layout's hashes carry field TTLs (the encoding guard looks at these).
  bool field_ttl = false;
  /// Fields per hash for hash layouts (1 for one-field hashes, N for the big hash), else 0.
  std::size_t fields_per_hash = 0;
  LayoutParams params{};
};

namespace detail {
/// value_size bytes of hex, a pure function of (i, salt): distinct per item, same every run.
inline std::string hex_value(std::size_t i, std::size_t size, std::uint64_t salt = 0) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(size);
  std::uint64_t x = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL + salt + 0x2545F4914F6CDD1DULL;
  while (out.size() < size) {
    // splitmix64 step
    x += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    for (int k = 0; k < 16 && out.size() < size; ++k, z >>= 4) out += digits[z & 15];
  }
  // An all-digit value would be stored as an integer (int encoding, or a listpack integer)
  // and measure something else; keep at least one letter.
  if (!out.empty() && out.find_first_not_of("0123456789") == std::string::npos) out[0] = 'f';
  return out;
}
inline std::string str(std::string_view p, std::string_view a, std::size_t i, std::string_view b = {}) {
  std::string s(p);
  s += a;
  s += std::to_string(i);
  s += b;
  return s;
}
/// {"EX", ttl} or {"PXAT", expire_at_ms + first_item * expire_step_ms} as the params ask.
inline std::pair<std::string, std::string> ttl_args(const LayoutParams& p, std::size_t first_item) {
  if (p.expire_at_ms > 0)
    return {"PXAT", std::to_string(p.expire_at_ms + static_cast<long long>(first_item) * p.expire_step_ms)};
  return {"EX", std::to_string(p.ttl_s)};
}
inline std::string ttl_text(const LayoutParams& p) {
  if (p.expire_at_ms > 0) return "PXAT <base+" + std::to_string(p.expire_step_ms) + "*i ms>";
  return "EX " + std::to_string(p.ttl_s);
}
}  // namespace detail

/// SET <p>user:<i>:auth_token <v> EX ttl: the classic string-per-item pattern (item = key).
inline Layout string_ex(LayoutParams p = {}) {
  Layout l{.name = "string-ex",
           .description = "SET user:<i>:auth_token <v> " + detail::ttl_text(p),
           .unit = "key", .items = p.n, .steps = p.n, .command = {}, .key_count = p.n, .key = {},
           .needs_hsetex = false, .field_ttl = false, .fields_per_hash = 0, .params = p};
  l.command = [p](std::string_view pre, std::size_t i) -> resp::Argv {
    auto [t, v] = detail::ttl_args(p, i);
    return {"SET", detail::str(pre, "user:", i, ":auth_token"), detail::hex_value(i, p.value_size), t, v};
  };
  l.key = [](std::string_view pre, std::size_t i) { return detail::str(pre, "user:", i, ":auth_token"); };
  return l;
}

/// HSETEX <p>user:<i> EX ttl FIELDS 1 auth_token <v>: one small hash per item whose one field
/// has a TTL (the documented per-user token pattern; item = key).
inline Layout hash1_hsetex(LayoutParams p = {}) {
  Layout l{.name = "hash1-hsetex",
           .description = "HSETEX user:<i> " + detail::ttl_text(p) + " FIELDS 1 auth_token <v>",
           .unit = "key", .items = p.n, .steps = p.n, .command = {}, .key_count = p.n, .key = {},
           .needs_hsetex = true, .field_ttl = true, .fields_per_hash = 1, .params = p};
  l.command = [p](std::string_view pre, std::size_t i) -> resp::Argv {
    auto [t, v] = detail::ttl_args(p, i);
    return {"HSETEX", detail::str(pre, "user:", i), t, v, "FIELDS", "1", "auth_token",
            detail::hex_value(i, p.value_size)};
  };
  l.key = [](std::string_view pre, std::size_t i) { return detail::str(pre, "user:", i); };
  return l;
}

/// HSET <p>user:<i> auth_token <v>: one small hash per item, no TTL (item = key).
inline Layout hash1_plain(LayoutParams p = {}) {
  Layout l{.name = "hash1-plain", .description = "HSET user:<i> auth_token <v>",
           .unit = "key", .items = p.n, .steps = p.n, .command = {}, .key_count = p.n, .key = {},
           .needs_hsetex = false, .field_ttl = false, .fields_per_hash = 1, .params = p};
  l.command = [p](std::string_view pre, std::size_t i) -> resp::Argv {
    return {"HSET", detail::str(pre, "user:", i), "auth_token", detail::hex_value(i, p.value_size)};
  };
  l.key = [](std::string_view pre, std::size_t i) { return detail::str(pre, "user:", i); };
  return l;
}

/// HSET <p>user:<i> auth_token <v> then EXPIRE (or EXPIREAT) on the key: a key-level TTL on a
/// one-field hash (item = key).
inline Layout hash1_expire(LayoutParams p = {}) {
  Layout l{.name = "hash1-expire",
           .description = "HSET user:<i> auth_token <v>; " +
                          (p.expire_at_ms > 0 ? "PEXPIREAT user:<i> <base+" + std::to_string(p.expire_step_ms) + "*i ms>"
                                              : "EXPIRE user:<i> " + std::to_string(p.ttl_s)),
           .unit = "key", .items = p.n, .steps = 2 * p.n, .command = {}, .key_count = p.n, .key = {},
           .needs_hsetex = false, .field_ttl = false, .fields_per_hash = 1, .params = p};
  l.command = [p](std::string_view pre, std::size_t step) -> resp::Argv {
    std::size_t i = step / 2;
    if (step % 2 == 0) return {"HSET", detail::str(pre, "user:", i), "auth_token", detail::hex_value(i, p.value_size)};
    if (p.expire_at_ms > 0)
      return {"PEXPIREAT", detail::str(pre, "user:", i),
              std::to_string(p.expire_at_ms + static_cast<long long>(i) * p.expire_step_ms)};
    return {"EXPIRE", detail::str(pre, "user:", i), std::to_string(p.ttl_s)};
  };
  l.key = [](std::string_view pre, std::size_t i) { return detail::str(pre, "user:", i); };
  return l;
}

/// One shared hash <p>tokens of N fields user:<i> (item = field), with a TTL on every field
/// (HSETEX, one field per command) or without (HSET).
inline Layout bighash(bool ttl, LayoutParams p = {}) {
  Layout l{.name = ttl ? "bighash-ttl" : "bighash-plain",
           .description = ttl ? "HSETEX tokens " + detail::ttl_text(p) + " FIELDS 1 user:<i> <v> (one hash of N fields)"
                              : "HSET tokens user:<i> <v> (one hash of N fields)",
           .unit = "field", .items = p.n, .steps = p.n, .command = {}, .key_count = 1, .key = {},
           .needs_hsetex = ttl, .field_ttl = ttl, .fields_per_hash = p.n, .params = p};
  l.command = [p, ttl](std::string_view pre, std::size_t i) -> resp::Argv {
    std::string key = std::string(pre) + "tokens";
    if (!ttl) return {"HSET", key, detail::str("", "user:", i), detail::hex_value(i, p.value_size)};
    auto [t, v] = detail::ttl_args(p, i);
    return {"HSETEX", key, t, v, "FIELDS", "1", detail::str("", "user:", i), detail::hex_value(i, p.value_size)};
  };
  l.key = [](std::string_view pre, std::size_t) { return std::string(pre) + "tokens"; };
  return l;
}

/// N/F hashes <p>obj:<j> of F fields f0..f<F-1> (item = field), built with one HSET (or one
/// HSETEX ... FIELDS F, every field with the TTL) per hash.
inline Layout small_hashes(std::size_t fields, bool ttl, LayoutParams p = {}) {
  if (fields == 0) throw std::invalid_argument("memory::small_hashes: fields must be > 0");
  const std::size_t hashes = p.n / fields;
  Layout l{.name = "hash" + std::to_string(fields) + (ttl ? "-ttl" : "-plain"),
           .description = (ttl ? "HSETEX obj:<j> " + detail::ttl_text(p) + " FIELDS " + std::to_string(fields) + " f0 <v> ..."
                               : "HSET obj:<j> f0 <v> ... f" + std::to_string(fields - 1) + " <v>") +
                          " (" + std::to_string(hashes) + " hashes of " + std::to_string(fields) + " fields)",
           .unit = "field", .items = hashes * fields, .steps = hashes, .command = {}, .key_count = hashes,
           .key = {}, .needs_hsetex = ttl, .field_ttl = ttl, .fields_per_hash = fields, .params = p};
  l.command = [p, fields, ttl](std::string_view pre, std::size_t j) -> resp::Argv {
    resp::Argv a;
    a.reserve(6 + 2 * fields);
    a.push_back(ttl ? "HSETEX" : "HSET");
    a.push_back(detail::str(pre, "obj:", j));
    if (ttl) {
      auto [t, v] = detail::ttl_args(p, j * fields);
      a.insert(a.end(), {t, v, "FIELDS", std::to_string(fields)});
    }
    for (std::size_t k = 0; k < fields; ++k) {
      a.push_back(detail::str("", "f", k));
      a.push_back(detail::hex_value(j * fields + k, p.value_size));
    }
    return a;
  };
  l.key = [](std::string_view pre, std::size_t j) { return detail::str(pre, "obj:", j); };
  return l;
}

/// The 2010 "1.25 billion values" layout: N/50 hashes <p>obj:<j> with fields "0".."49" holding
/// small integers 0..999 (item = value). No TTL; value_size is ignored.
inline Layout ints50(LayoutParams p = {}) {
  const std::size_t hashes = p.n / 50;
  Layout l{.name = "ints50",
           .description = "HSET obj:<j> 0 <int> ... 49 <int> (" + std::to_string(hashes) + " hashes of 50 small integers)",
           .unit = "value", .items = hashes * 50, .steps = hashes, .command = {}, .key_count = hashes, .key = {},
           .needs_hsetex = false, .field_ttl = false, .fields_per_hash = 50, .params = p};
  l.command = [](std::string_view pre, std::size_t j) -> resp::Argv {
    resp::Argv a{"HSET", detail::str(pre, "obj:", j)};
    for (std::size_t k = 0; k < 50; ++k) {
      a.push_back(std::to_string(k));
      a.push_back(std::to_string((j * 50 + k) * 7919 % 1000));
    }
    return a;
  };
  l.key = [](std::string_view pre, std::size_t j) { return detail::str(pre, "obj:", j); };
  return l;
}

/// An absolute expiry base for LayoutParams::expire_at_ms: now + ttl_s, rounded up to a
/// multiple of 65536 ms (a multiple of every vset/ebuckets window), in Unix milliseconds.
inline long long aligned_expiry_ms(long long ttl_s = 900) {
  using namespace std::chrono;
  long long t = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() + ttl_s * 1000;
  return (t / 65536 + 1) * 65536;
}

/// Every built-in layout with the same params, in report order.
inline std::vector<Layout> all(const LayoutParams& p = {}) {
  return {string_ex(p),          hash1_hsetex(p),        hash1_plain(p),         hash1_expire(p),
          bighash(false, p),     bighash(true, p),       small_hashes(10, false, p), small_hashes(10, true, p),
          small_hashes(50, false, p), small_hashes(50, true, p), ints50(p)};
}

/// The built-in layout called `name`. Throws std::invalid_argument listing the known names.
inline Layout by_name(std::string_view name, const LayoutParams& p = {}) {
  std::string known;
  for (auto& l : all(p)) {
    if (l.name == name) return l;
    known += (known.empty() ? "" : ", ") + l.name;
  }
  throw std::invalid_argument("memory: no layout named '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace expirykit::memory
