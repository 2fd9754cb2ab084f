// expirykit/memory/probe.hpp: how many bytes one item of a layout costs on a real server.
//
//   memory::Probe probe({.repetitions = 3});                // provisioned/EXPIRYKIT_SERVER binary
//   memory::Measurement m = probe.run(memory::hash1_hsetex({.n = 20000}));
//   std::cout << m.summary();   // hash1-hsetex on valkey 9.1.2: 301.4 B/key (median of 3, ...)
//
// Method, per repetition (each on a FRESH server process, see process::Server):
//   1. start a server with persistence off and apply the controls below (CONFIG SET);
//   2. warm up: build the layout once under the key prefix "warm:" on the measuring connection,
//      then FLUSHALL SYNC;
//   3. read the settled memory figures ("before");
//   4. build the layout (prefix "") in pipelined batches on that same single connection and
//      read every reply (an error reply aborts the run: ProbeError with the command);
//   5. read the settled figures again ("after");
//   6. bytes per item = (used_memory_after - used_memory_before) / items;
//   7. encoding census: OBJECT ENCODING and MEMORY USAGE <key> SAMPLES 0 over up to `sample`
//      keys spread evenly over the layout's keys.
// The result is the median over the repetitions with the spread (max - min), in bytes.
//
// Controls (what inflates or shakes a used_memory delta, and what the Probe does about it):
//  - Replication backlog: created the first time a replica connects and never freed; it then
//    fills with every write (Valkey's default is 10 MB, Redis's 1 MB) and is counted in
//    used_memory, which inflated a published run to 447 B/key. A fresh server per repetition
//    never had a replica; the Probe checks INFO repl_backlog_active:0 and
//    mem_replication_backlog:0 before and after and throws ProbeError otherwise. This is also
//    why the Probe refuses external mode (EXPIRYKIT_SERVER_ADDR, ProbeError from the
//    constructor) unless ProbeOptions::server.binary names what to spawn.
//  - Client buffers: query and reply buffers grow with a pipeline and are counted in
//    used_memory. One connection does the warm-up (same batches as the load, so its buffers
//    reach their steady size first), the load and every reading, and all replies are read
//    before a reading. INFO mem_clients_normal is kept in each Reading but NOT subtracted:
//    measured on Valkey 9.1.2 and Redis 8.0.6, its delta flips between about 5.6 KB and 22.9 KB
//    from one fresh server to the next while used_memory does not move (the shared query
//    buffer is attributed to whichever client holds it), so subtracting it added noise.
//  - Lazy free: with lazyfree-lazy-* yes (Valkey 8+'s default) FLUSHALL/DEL free in a
//    background thread, so used_memory keeps falling after the reply. The Probe sets every
//    lazyfree-lazy-* to no, flushes with FLUSHALL SYNC, and waits for lazyfree_pending_objects
//    to be 0 before a reading.
//  - Rehashing and settling: the keyspace table grows by doubling and is rehashed
//    incrementally, partly by the server cron; while it rehashes both tables are allocated.
//    Also, about 100-150 ms after a pipelined load, the client cron frees about 14.6 KB
//    (seen on both servers, on some runs only): 0.7 B/key at N=20,000 if read too early.
//    The Probe sets hz 100 (faster cron), then polls INFO memory every 20 ms until
//    mem_overhead_db_hashtable_rehashing (when the server has it) and lazyfree_pending_objects
//    are 0 and used_memory has not changed for 300 ms (ProbeOptions::stable; timeout:
//    settle_timeout, noted in the Measurement if hit). Rehashing inside one big hash is driven
//    by commands only, so it is the same on every run.
//  - Allocator: used_memory counts the bytes the server allocated (with jemalloc size-class
//    rounding), not pages, so allocator caches and fragmentation do not enter it. MEMORY
//    PURGE (when the server has it) is sent before each reading so that the RSS figures kept
//    for reference (used_memory_rss) are comparable too.
//  - Per-command bookkeeping: latency-tracking allocates a histogram the first time a command
//    runs; the Probe sets latency-tracking no, and the warm-up runs every command first anyway.
//  - Expiry: TTLs of the built-in layouts are 900 s, so nothing expires while measuring.
//    Both servers index field expiries in time buckets (Valkey's vset: aligned windows of
//    16..8192 ms, a window that cannot be split becomes a hashtable; Redis's ebuckets), so with
//    relative TTLs (EX 900) the index depends on how fast the load ran: on Valkey 9.1.2,
//    bighash-ttl measured 109.0..111.0 B/field over 3 fresh servers with EX 900, and
//    103.6..103.7 with paced absolute expiries. Set LayoutParams::expire_at_ms (with
//    aligned_expiry_ms()) and expire_step_ms for figures that do not depend on load speed;
//    the suite, the gate and the report use base + 1 ms per item.
//  - Hash seeds (not controllable, reported as spread): every server process picks a random
//    SipHash seed. Valkey 8+'s hashtable has 64-byte buckets and chains a child bucket to a
//    full one, so how many child buckets a small table needs depends on the seed. In layouts
//    whose hashes all have the same field names (hash10-ttl, hash50-ttl: hashtables on Valkey
//    9.1) every hash gets the same layout, so the figure moves in whole steps of 64 B per hash
//    (6.4 B/field for F=10, 1.28 B/field for F=50) from one fresh server to the next. Seen as
//    used_memory_dataset moving in exact 400 x 64 B steps with active expiry off; a property
//    of the server that a production restart shows too. More repetitions make the median
//    steadier; baselines for such layouts need a tolerance above one step.
// Sources: docs/semantics/redis-hfe.md §8 (method, backlog effect), servers.md (figures),
// valkey src/vset.c (bucket windows 16 ms..8192 ms), INFO field docs of both servers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/memory/layouts.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::memory {

/// The server lacks a command the layout needs (e.g. HSETEX before Valkey 9.0 / Redis 8.0).
/// The message starts with "not supported by <server>: ", like the fixture's SKIPs.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A measurement could not be made cleanly: a command of the layout failed, a replication
/// backlog exists, or the server misbehaved. The message says which and what to do.
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Median and range of a set of samples (bytes per item).
struct Stats {
  double median = 0;  ///< middle value; mean of the two middle ones for an even count
  double min = 0;
  double max = 0;
  std::size_t count = 0;
  /// max - min, in the samples' unit (bytes).
  double spread() const { return max - min; }
  /// spread() as a percentage of the median (0 when the median is 0).
  double spread_pct() const { return median == 0 ? 0 : 100.0 * spread() / std::fabs(median); }
};

/// Median, min and max of `samples`. Throws std::invalid_argument when it is empty.
inline Stats summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("memory::summarize: no samples");
  std::sort(samples.begin(), samples.end());
  Stats s;
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  const std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2.0;
  return s;
}

/// "286.1": one decimal, for messages and tables.
inline std::string fmt1(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// Memory figures read at one moment (bytes, from INFO memory).
struct Reading {
  long long used_memory = 0;
  long long clients = 0;  ///< mem_clients_normal, for reference only (see "Client buffers")
  long long rss = 0;      ///< used_memory_rss, for reference only
};

/// One repetition on one fresh server.
struct Repetition {
  double bytes_per_item = 0;  ///< (after.used_memory - before.used_memory) / items
  Reading before, after;
  double load_ms = 0;    ///< wall time of the measured load
  double settle_ms = 0;  ///< time spent waiting for the "after" reading to settle
  bool settled = true;   ///< false if settle_timeout was hit
};

/// What Probe::run found for one layout on one server.
struct Measurement {
  std::string layout;       ///< Layout::name
  std::string description;  ///< Layout::description
  std::string unit;         ///< "key", "field" or "value"
  std::size_t items = 0;
  LayoutParams params;
  std::string server;  ///< "valkey 9.1.2"
  std::string line;    ///< "valkey-9.1" (the baseline file's name)
  std::vector<Repetition> reps;
  Stats stats;  ///< bytes per item over the repetitions
  /// OBJECT ENCODING -> number of sampled keys with it (census of the last repetition).
  std::map<std::string, std::size_t> encodings;
  std::size_t sampled_keys = 0;
  double memory_usage = 0;  ///< median MEMORY USAGE of the sampled keys, bytes per key
  std::vector<std::string> notes;  ///< anything that weakens the figure (not settled, ...)

  /// "hashtable x64" or "listpack x60, hashtable x4"; "none" when nothing was sampled.
  std::string encodings_text() const {
    std::string out;
    for (const auto& [e, n] : encodings) out += (out.empty() ? "" : ", ") + e + " x" + std::to_string(n);
    return out.empty() ? "none" : out;
  }
  /// The encodings seen, in name order, joined by "+" ("hashtable", "hashtable+listpack").
  std::string encoding() const {
    std::string out;
    for (const auto& [e, n] : encodings) out += (out.empty() ? "" : "+") + e;
    return out.empty() ? "none" : out;
  }
  /// "286.1 B/key (median of 3, spread 0.4 B = 0.1%)"
  std::string figure() const {
    return fmt1(stats.median) + " B/" + unit + " (median of " + std::to_string(stats.count) + ", spread " +
           fmt1(stats.spread()) + " B = " + fmt1(stats.spread_pct()) + "%)";
  }
  /// One line naming the layout, the server, the figure, the encodings and MEMORY USAGE.
  std::string summary() const {
    std::string s = layout + " on " + server + ": " + figure() + ", encodings " + encodings_text() +
                    ", MEMORY USAGE " + fmt1(memory_usage) + " B/key";
    for (const auto& n : notes) s += "; note: " + n;
    return s;
  }
};

struct ProbeOptions {
  int repetitions = 3;        ///< fresh servers, one measurement each (>= 1)
  std::size_t batch = 1000;   ///< commands per pipeline round trip
  std::size_t sample = 64;    ///< keys for OBJECT ENCODING / MEMORY USAGE (0: none)
  bool warm_up = true;        ///< build + FLUSHALL SYNC once before the "before" reading
  std::chrono::milliseconds settle_timeout{10000};
  /// How long used_memory must stay unchanged before a reading counts (see the file comment).
  std::chrono::milliseconds stable{300};
  /// How to start each server (binary, extra config); persistence is forced off.
  process::ServerOptions server{};
};

class Probe {
 public:
  /// Throws std::invalid_argument if repetitions < 1 or batch == 0; ProbeError in external mode
  /// (EXPIRYKIT_SERVER_ADDR set) unless `o.server.binary` names a binary: the Probe spawns servers
  /// of its own, so it would measure the provisioned binary, not the external server the rest of
  /// the run talks to (issue 23: a team's memory test PASSED against valkey-9.1.json while their
  /// Redis 8.0.6 was the server under test). In a fixture test call require_own_server() first.
  explicit Probe(ProbeOptions o = {}) : o_(std::move(o)) {
    if (o_.repetitions < 1) throw std::invalid_argument("memory::Probe: repetitions must be >= 1");
    if (o_.batch == 0) throw std::invalid_argument("memory::Probe: batch must be > 0");
    if (const auto addr = process::external_address(); addr && o_.server.binary.empty())
      throw ProbeError("memory::Probe spawns fresh servers of its own, so with EXPIRYKIT_SERVER_ADDR=" + *addr +
                       " it would measure the provisioned binary, not that server. In a fixture test call "
                       "require_own_server(\"memory probes start fresh servers\") first (it SKIPs in external mode), "
                       "or set ProbeOptions::server.binary to measure a binary on purpose");
  }
  const ProbeOptions& options() const { return o_; }

  /// Measures `layout` on `repetitions` fresh servers (method and controls: file comment).
  /// Throws Unsupported (server lacks a needed command), ProbeError (command error, backlog,
  /// no items), process::ServerError (cannot start a server), resp::ConnectionError.
  Measurement run(const Layout& layout) const {
    if (layout.items == 0) throw ProbeError("memory layout " + layout.name + " has no items (n too small?)");
    Measurement m;
    m.layout = layout.name;
    m.description = layout.description;
    m.unit = layout.unit;
    m.items = layout.items;
    m.params = layout.params;
    std::vector<double> per_item;
    for (int r = 0; r < o_.repetitions; ++r) {
      m.reps.push_back(repetition(layout, m, r + 1 == o_.repetitions));
      per_item.push_back(m.reps.back().bytes_per_item);
      if (!m.reps.back().settled)
        m.notes.push_back("repetition " + std::to_string(r + 1) + " did not settle within " +
                          std::to_string(o_.settle_timeout.count()) + " ms");
    }
    m.stats = summarize(per_item);
    return m;
  }

  /// Reads INFO memory once on `c`. Throws std::runtime_error if INFO fails.
  static Reading read(resp::Client& c) {
    auto info = server::Info::fetch(c, "memory");
    return {info.get_int("used_memory"), info.get_int("mem_clients_normal"), info.get_int("used_memory_rss")};
  }

  /// Waits until the server is quiet (see "Rehashing and settling"): no rehashing, no pending
  /// lazy free, and used_memory unchanged for `stable` (polled every 20 ms). Returns that
  /// Reading; `settled` is false if `timeout` passed first (the last Reading is returned).
  static Reading settle(resp::Client& c, std::chrono::milliseconds timeout, bool& settled,
                        std::chrono::milliseconds stable = std::chrono::milliseconds(300)) {
    using clock = std::chrono::steady_clock;
    c("MEMORY", "PURGE");  // an error reply (no jemalloc) is fine: RSS only
    const auto deadline = clock::now() + timeout;
    long long prev = -1;
    auto since = clock::now();
    for (;;) {
      auto info = server::Info::fetch(c, "memory");
      Reading r{info.get_int("used_memory"), info.get_int("mem_clients_normal"), info.get_int("used_memory_rss")};
      bool quiet = info.get_int("mem_overhead_db_hashtable_rehashing", 0) == 0 &&
                   info.get_int("lazyfree_pending_objects", 0) == 0;
      const auto now = clock::now();
      if (!quiet || r.used_memory != prev) {
        since = now;
        prev = quiet ? r.used_memory : -1;
      } else if (now - since >= stable) {
        settled = true;
        return r;
      }
      if (now > deadline) {
        settled = false;
        return r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  /// Throws ProbeError if the server has a replication backlog (see "Replication backlog").
  static void require_no_backlog(resp::Client& c, const std::string& when) {
    auto repl = server::Info::fetch(c, "replication");
    auto mem = server::Info::fetch(c, "memory");
    if (repl.get_int("repl_backlog_active", 0) != 0 || mem.get_int("mem_replication_backlog", 0) != 0)
      throw ProbeError(c.address() + ": a replication backlog exists " + when +
                       " (repl_backlog_active=" + repl.get("repl_backlog_active").value_or("?") +
                       ", mem_replication_backlog=" + mem.get("mem_replication_backlog").value_or("?") +
                       "); it inflates used_memory deltas. Measure on a server that never had a replica.");
  }

  /// Sends layout.command(prefix, 0..steps) in pipelined batches of `batch` and reads every
  /// reply. Throws ProbeError naming the first command answered with an error.
  static void load(resp::Client& c, const Layout& layout, std::string_view prefix, std::size_t batch) {
    std::vector<resp::Argv> cmds;
    cmds.reserve(std::min(batch, layout.steps));
    for (std::size_t i = 0; i < layout.steps;) {
      cmds.clear();
      for (; i < layout.steps && cmds.size() < batch; ++i) cmds.push_back(layout.command(prefix, i));
      auto replies = c.pipeline(cmds);
      for (std::size_t k = 0; k < replies.size(); ++k)
        if (replies[k].is_error())
          throw ProbeError(c.address() + ": layout " + layout.name + ": `" + resp::cli_line(cmds[k]) +
                           "` answered " + replies[k].to_string());
    }
  }

 private:
  Repetition repetition(const Layout& layout, Measurement& m, bool census) const {
    process::ServerOptions so = o_.server;
    so.persistence = process::Persistence::off;
    process::Server srv(std::move(so));
    auto c = srv.client({std::chrono::milliseconds(5000), std::chrono::milliseconds(120000)});
    auto id = server::Identity::probe(c);
    m.server = id.to_string();
    m.line = id.line();
    if (layout.needs_hsetex && !id.caps.hsetex)
      throw Unsupported("not supported by " + id.to_string() + ": HSETEX (needed by layout " + layout.name + ")");
    // Controls (see the file comment). CONFIG SET errors: the knob does not exist on this
    // server, which is then noted once.
    for (auto [k, v] : {std::pair{"lazyfree-lazy-user-del", "no"}, {"lazyfree-lazy-user-flush", "no"},
                        {"lazyfree-lazy-server-del", "no"}, {"lazyfree-lazy-expire", "no"},
                        {"lazyfree-lazy-eviction", "no"}, {"latency-tracking", "no"}, {"hz", "100"}}) {
      auto r = c("CONFIG", "SET", k, v);
      std::string note = std::string("CONFIG SET ") + k + " " + v + " refused: " + r.to_string();
      if (r.is_error() && std::find(m.notes.begin(), m.notes.end(), note) == m.notes.end()) m.notes.push_back(note);
    }
    require_no_backlog(c, "before the load");
    bool settled = true;
    if (o_.warm_up) {
      load(c, layout, "warm:", o_.batch);
      auto r = c("FLUSHALL", "SYNC");
      if (r.is_error()) r = c("FLUSHALL");
      if (r.is_error()) throw ProbeError(srv.address() + ": FLUSHALL failed after the warm-up: " + r.to_string());
    }
    Repetition rep;
    rep.before = settle(c, o_.settle_timeout, settled, o_.stable);
    const auto t0 = std::chrono::steady_clock::now();
    load(c, layout, "", o_.batch);
    const auto t1 = std::chrono::steady_clock::now();
    rep.load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    bool settled_after = true;
    rep.after = settle(c, o_.settle_timeout, settled_after, o_.stable);
    rep.settle_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
    rep.settled = settled && settled_after;
    rep.bytes_per_item =
        static_cast<double>(rep.after.used_memory - rep.before.used_memory) / static_cast<double>(layout.items);
    require_no_backlog(c, "after the load");
    if (census) take_census(c, layout, m);
    srv.kill();
    return rep;
  }

  void take_census(resp::Client& c, const Layout& layout, Measurement& m) const {
    m.encodings.clear();
    std::vector<double> usage;
    const std::size_t k = std::min(o_.sample, layout.key_count);
    for (std::size_t s = 0; s < k; ++s) {
      std::size_t i = k == 1 ? 0 : s * (layout.key_count - 1) / (k - 1);
      std::string key = layout.key("", i);
      auto e = c("OBJECT", "ENCODING", key);
      if (!e.is_string())
        throw ProbeError(c.address() + ": OBJECT ENCODING " + key + " answered " + e.to_string() +
                         " (the layout's key() does not name a key its commands built?)");
      ++m.encodings[e.str()];
      auto u = c("MEMORY", "USAGE", key, "SAMPLES", 0);
      if (u.is_integer()) usage.push_back(static_cast<double>(u.as_integer()));
    }
    m.sampled_keys = k;
    m.memory_usage = usage.empty() ? 0 : summarize(usage).median;
  }

  ProbeOptions o_;
};

}  // namespace expirykit::memory
