// expirykit/memory/baseline.hpp: committed bytes-per-item figures per server line, and the
// verdict of a new Measurement against them.
//
// One JSON file per server line (Identity::line(), e.g. ci/baselines/memory/valkey-9.1.json):
//   {
//     "line": "valkey-9.1", "server": "valkey 9.1.2", "recorded": "2026-11-29T21:30:00Z",
//     "tolerance": {"pct": 3.0, "bytes": 1.0},
//     "layouts": {
//       "hash1-hsetex": {"bytes_per_item": 301.4, "spread": 0.1, "repetitions": 3, "unit": "key",
//                        "n": 20000, "value_size": 40, "ttl": "PXAT base+1ms/item",
//                        "encodings": {"hashtable": 64}, "memory_usage": 264.0,
//                        "tolerance": {"pct": 3.0, "bytes": 1.0},   // optional, per layout
//                        "note": "why the tolerance differs"},      // optional
//       ...
//     }
//   }
// Figures are bytes per item (used_memory delta / items, see probe.hpp); "spread" is max - min
// over the repetitions, in bytes.
//
// Verdict: a layout REGRESSED when its median exceeds the baseline by more than the allowed
// growth, max(pct% of the baseline, bytes); it IMPROVED when it is lower by more than that
// (a pass that asks for a baseline update); otherwise it PASSED. Other layout parameters (n,
// value size, TTL mode) than the baseline's make it INCOMPARABLE, which is not ok() (bytes per
// item depend on them); other encodings are named in the verdict but do not decide it: a user
// whose own layout grew (e.g. longer values) must see the gate fail.
//
// Update mode: with EXPIRYKIT_UPDATE_BASELINES=1, update_file() rewrites the layout's entry
// (keeping a hand-set per-layout tolerance and note) instead of comparing; the folder is locked
// (flock) while the file is read and written, so parallel test processes do not lose entries.
#pragma once

#include <sys/file.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <expirykit/memory/probe.hpp>

namespace expirykit::memory {

/// A baseline file cannot be read, parsed or written. The message names the file.
class BaselineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Allowed growth over a baseline: max(pct% of the baseline figure, bytes), in bytes/item.
struct Tolerance {
  double pct = 3.0;
  double bytes = 1.0;
  double allowed(double baseline) const { return std::max(std::fabs(baseline) * pct / 100.0, bytes); }
  /// "3% or 1 B, whichever is larger"
  std::string text() const { return fmt1(pct) + "% or " + fmt1(bytes) + " B, whichever is larger"; }
};

/// The committed figure of one layout.
struct Entry {
  double bytes_per_item = 0;
  double spread = 0;  ///< bytes, max - min of the recorded repetitions
  int repetitions = 0;
  std::string unit;
  std::size_t n = 0;
  std::size_t value_size = 0;
  std::string ttl;  ///< LayoutParams::ttl_mode()
  std::map<std::string, std::size_t> encodings;
  double memory_usage = 0;            ///< bytes per key (MEMORY USAGE median)
  std::optional<Tolerance> tolerance;  ///< overrides the file's default for this layout
  std::string note;                    ///< why (e.g. why the tolerance differs)

  /// "hashtable", "hashtable+listpack", "none"
  std::string encoding() const {
    std::string out;
    for (const auto& [e, n] : encodings) out += (out.empty() ? "" : "+") + e;
    return out.empty() ? "none" : out;
  }
  /// The Entry that records `m`.
  static Entry from(const Measurement& m) {
    Entry e;
    e.bytes_per_item = std::round(m.stats.median * 100) / 100;
    e.spread = std::round(m.stats.spread() * 100) / 100;
    e.repetitions = static_cast<int>(m.stats.count);
    e.unit = m.unit;
    e.n = m.params.n;
    e.value_size = m.params.value_size;
    e.ttl = m.params.ttl_mode();
    e.encodings = m.encodings;
    e.memory_usage = m.memory_usage;
    return e;
  }
};

/// All committed figures of one server line.
struct Baseline {
  std::string line;      ///< "valkey-9.1"
  std::string server;    ///< "valkey 9.1.2": the server the figures were recorded on
  std::string recorded;  ///< UTC time of the last update, ISO 8601
  Tolerance tolerance;   ///< default for every layout
  std::map<std::string, Entry> layouts;

  const Entry* find(const std::string& layout) const {
    auto it = layouts.find(layout);
    return it == layouts.end() ? nullptr : &it->second;
  }
  Tolerance tolerance_for(const std::string& layout) const {
    const Entry* e = find(layout);
    return e && e->tolerance ? *e->tolerance : tolerance;
  }
  /// Records `m` as the figure of its layout (keeping that entry's tolerance and note) and
  /// stamps server and time. Throws BaselineError if m is for another server line.
  void record(const Measurement& m) {
    if (!line.empty() && !m.line.empty() && m.line != line)
      throw BaselineError("cannot record a " + m.line + " measurement into the " + line + " baseline");
    if (line.empty()) line = m.line;
    Entry e = Entry::from(m);
    if (auto it = layouts.find(m.layout); it != layouts.end()) {
      e.tolerance = it->second.tolerance;
      e.note = it->second.note;
    }
    layouts[m.layout] = std::move(e);
    server = m.server;
    recorded = now_iso();
  }

  nlohmann::ordered_json to_json() const {
    nlohmann::ordered_json j;
    j["line"] = line;
    j["server"] = server;
    j["recorded"] = recorded;
    j["tolerance"] = {{"pct", tolerance.pct}, {"bytes", tolerance.bytes}};
    auto& ls = j["layouts"] = nlohmann::ordered_json::object();
    for (const auto& [name, e] : layouts) {
      nlohmann::ordered_json x;
      x["bytes_per_item"] = e.bytes_per_item;
      x["spread"] = e.spread;
      x["repetitions"] = e.repetitions;
      x["unit"] = e.unit;
      x["n"] = e.n;
      x["value_size"] = e.value_size;
      x["ttl"] = e.ttl;
      x["encodings"] = e.encodings;
      x["memory_usage"] = e.memory_usage;
      if (e.tolerance) x["tolerance"] = {{"pct", e.tolerance->pct}, {"bytes", e.tolerance->bytes}};
      if (!e.note.empty()) x["note"] = e.note;
      ls[name] = std::move(x);
    }
    return j;
  }
  /// Throws BaselineError (naming `origin`) on a missing or mistyped field.
  static Baseline from_json(const nlohmann::json& j, const std::string& origin = "baseline") {
    try {
      Baseline b;
      b.line = j.at("line").get<std::string>();
      b.server = j.value("server", "");
      b.recorded = j.value("recorded", "");
      if (j.contains("tolerance")) b.tolerance = tolerance_from(j.at("tolerance"));
      for (const auto& [name, x] : j.at("layouts").items()) {
        Entry e;
        e.bytes_per_item = x.at("bytes_per_item").get<double>();
        e.spread = x.value("spread", 0.0);
        e.repetitions = x.value("repetitions", 0);
        e.unit = x.value("unit", "item");
        e.n = x.value("n", std::size_t{0});
        e.value_size = x.value("value_size", std::size_t{0});
        e.ttl = x.value("ttl", "");
        if (x.contains("encodings")) e.encodings = x.at("encodings").get<std::map<std::string, std::size_t>>();
        e.memory_usage = x.value("memory_usage", 0.0);
        if (x.contains("tolerance")) e.tolerance = tolerance_from(x.at("tolerance"));
        e.note = x.value("note", "");
        b.layouts[name] = std::move(e);
      }
      return b;
    } catch (const nlohmann::json::exception& ex) {
      throw BaselineError(origin + ": not a valid memory baseline: " + ex.what());
    }
  }

  /// Reads `path`. Throws BaselineError if it is missing, unreadable or invalid.
  static Baseline load(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw BaselineError(path.string() + ": cannot open the memory baseline");
    try {
      return from_json(nlohmann::json::parse(in), path.string());
    } catch (const nlohmann::json::parse_error& ex) {
      throw BaselineError(path.string() + ": not valid JSON: " + ex.what());
    }
  }
  /// load(path), or nullopt if the file does not exist.
  static std::optional<Baseline> try_load(const std::filesystem::path& path) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    return load(path);
  }
  /// Writes the file (pretty, 2-space indent, trailing newline) via a temp file + rename,
  /// creating the folder. Throws BaselineError if it cannot.
  void save(const std::filesystem::path& path) const {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    auto tmp = path;
    tmp += ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      if (!out) throw BaselineError(path.string() + ": cannot write the memory baseline (" + tmp.string() + ")");
      out << to_json().dump(2) << "\n";
      if (!out) throw BaselineError(path.string() + ": write failed");
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw BaselineError(path.string() + ": cannot replace: " + ec.message());
  }

  static std::string now_iso() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
  }

 private:
  static Tolerance tolerance_from(const nlohmann::json& t) {
    Tolerance x;
    x.pct = t.value("pct", x.pct);
    x.bytes = t.value("bytes", x.bytes);
    return x;
  }
};

/// The result of comparing a Measurement with a Baseline.
struct Verdict {
  /// incomparable: the baseline entry was recorded with other layout parameters (n, value_size,
  /// TTL mode): bytes per item depend on them, so there is no verdict, and it is not ok().
  enum class Status { passed, improved, regressed, no_baseline, incomparable };
  Status status = Status::no_baseline;
  double delta = 0;      ///< measured median - baseline, bytes/item
  double delta_pct = 0;  ///< delta as % of the baseline
  double allowed = 0;    ///< allowed growth, bytes/item
  std::string text;      ///< the full message (see compare())
  bool ok() const { return status != Status::regressed && status != Status::incomparable; }
};

inline const char* to_string(Verdict::Status s) {
  switch (s) {
    case Verdict::Status::passed: return "PASSED";
    case Verdict::Status::improved: return "IMPROVED";
    case Verdict::Status::regressed: return "REGRESSED";
    case Verdict::Status::no_baseline: return "NO BASELINE";
    case Verdict::Status::incomparable: return "INCOMPARABLE";
  }
  return "?";
}

/// True when EXPIRYKIT_UPDATE_BASELINES=1 (config().update_baselines): figures are recorded
/// instead of compared. Throws std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline bool update_requested() { return config().update_baselines; }

/// How to rewrite the baseline of server line `line` on purpose (for messages): run the test
/// that measured it again with EXPIRYKIT_UPDATE_BASELINES=1 and the same server settings
/// (env::server_assignments(): EXPIRYKIT_SERVER=redis-8.0 and the like, so that the rerun records
/// the same server), and for the kit's own layouts the kit's gate. Both named, since a team's
/// layouts live in its own test binary (a new-user trial ran the kit's gate, which re-records the
/// kit's baselines, not theirs). With `test_spec` (a Catch2 test spec of the test running, as
/// catch2::current_test_name() gives it) the rerun is a whole command line: the settings, this
/// binary (/proc/self/exe) and the test (a later trial had to work them out).
inline std::string update_hint(const std::string& line, const std::string& test_spec = "") {
  std::string servers;
  try {
    servers = env::server_assignments();
  } catch (const std::invalid_argument&) {  // a bad setting: the fixtures report it
  }
  std::error_code ec;
  const auto exe = test_spec.empty() ? std::filesystem::path() : std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string again =
      exe.empty() || ec ? "run this test again with " + servers + "EXPIRYKIT_UPDATE_BASELINES=1"
                        : "run this test again: " + servers + "EXPIRYKIT_UPDATE_BASELINES=1 " +
                              env::shell_quote(exe.string()) + " " + env::shell_quote(test_spec);
  return again + " (the kit's own layouts: EXPIRYKIT_UPDATE_BASELINES=1 ci/memory-gate " + line + ")";
}

/// `p` for a message: as given, and when relative also as the absolute path it stands for now
/// ("memory-baselines/valkey-9.1.json (relative to the working directory: /home/me/build/...)"):
/// a relative baseline path depends on where the test runs (ctest runs it in the build folder).
inline std::string describe_path(const std::filesystem::path& p) {
  if (p.is_absolute()) return p.string();
  std::error_code ec;
  const auto abs = std::filesystem::absolute(p, ec);
  return p.string() + (ec ? std::string() : " (relative to the working directory: " + abs.string() + ")");
}

/// Compares `m` with the entry of its layout in `b` (`origin`: the file name, for the text).
/// The text names the layout, the server, the measured figure with its spread, the baseline
/// figure and where it came from, the difference and the allowed growth, the encodings seen
/// and recorded, differing parameters, and what to do (update_hint(), with `test_spec` when
/// given). Throws nothing.
inline Verdict compare(const Measurement& m, const Baseline& b, const std::string& origin,
                       const std::string& test_spec = "") {
  Verdict v;
  const Entry* e = b.find(m.layout);
  const std::string measured = "measured " + m.figure() + ", encodings " + m.encodings_text();
  if (!e) {
    v.status = Verdict::Status::no_baseline;
    v.text = std::string(to_string(v.status)) + " " + m.layout + " on " + m.server + ": " + measured + "; " + origin +
             " has no entry for this layout. Record one: " + update_hint(m.line, test_spec);
    return v;
  }
  const Tolerance tol = b.tolerance_for(m.layout);
  v.delta = m.stats.median - e->bytes_per_item;
  v.delta_pct = e->bytes_per_item == 0 ? 0 : 100.0 * v.delta / e->bytes_per_item;
  v.allowed = tol.allowed(e->bytes_per_item);
  std::string params;
  if (e->n && e->n != m.params.n) params += " n " + std::to_string(m.params.n) + " (baseline " + std::to_string(e->n) + ")";
  if (e->value_size && e->value_size != m.params.value_size)
    params += " value_size " + std::to_string(m.params.value_size) + " (baseline " + std::to_string(e->value_size) + ")";
  if (!e->ttl.empty() && e->ttl != m.params.ttl_mode()) params += " ttl " + m.params.ttl_mode() + " (baseline " + e->ttl + ")";
  v.status = !params.empty()           ? Verdict::Status::incomparable
             : v.delta > v.allowed     ? Verdict::Status::regressed
             : -v.delta > v.allowed    ? Verdict::Status::improved
                                       : Verdict::Status::passed;
  std::ostringstream t;
  t << to_string(v.status) << " " << m.layout << " on " << m.server << ": " << measured << "; baseline "
    << fmt1(e->bytes_per_item) << " B/" << e->unit << " (spread " << fmt1(e->spread) << " B, encodings "
    << e->encoding() << ", " << origin << ", recorded " << (b.recorded.empty() ? "?" : b.recorded) << " on "
    << (b.server.empty() ? "?" : b.server) << "); difference " << (v.delta >= 0 ? "+" : "") << fmt1(v.delta)
    << " B (" << (v.delta >= 0 ? "+" : "") << fmt1(v.delta_pct) << "%), allowed +/-" << fmt1(v.allowed) << " B ("
    << tol.text() << ")";
  if (!params.empty()) t << "; parameters differ:" << params;
  if (!e->encodings.empty() && e->encoding() != m.encoding())
    t << "; encodings changed from " << e->encoding() << " to " << m.encoding();
  if (!e->note.empty()) t << "; baseline note: " << e->note;
  switch (v.status) {
    case Verdict::Status::regressed:
      t << ". This layout costs more memory than the committed baseline. If that is expected (a new "
           "server release, or your layout changed on purpose), rewrite the baseline: "
        << update_hint(m.line, test_spec) << "; otherwise look at the encodings above first.";
      break;
    case Verdict::Status::improved:
      t << ". Cheaper than the baseline: update it so the gate protects the gain: " << update_hint(m.line, test_spec)
        << ".";
      break;
    case Verdict::Status::incomparable:
      t << ". Bytes per item depend on these parameters, so the figures are not compared: measure with the "
           "baseline's parameters (your own layout: the LayoutParams it was recorded with, n "
        << e->n << ", value_size " << e->value_size << (e->ttl.empty() ? "" : ", ttl " + e->ttl)
        << "; the kit's layouts: EXPIRYKIT_MEMORY_N, EXPIRYKIT_MEMORY_VALUE_SIZE, EXPIRYKIT_MEMORY_TTL unset), or "
           "record a baseline with these on purpose: "
        << update_hint(m.line, test_spec) << ".";
      break;
    default: break;
  }
  for (const auto& n : m.notes) t << " Note: " << n << ".";
  v.text = t.str();
  return v;
}

/// Holds an exclusive flock on the folder of `path` for the scope (creating the folder), so
/// no lock file is left next to the baseline.
class FileLock {
 public:
  /// Throws BaselineError if the folder cannot be created or opened.
  explicit FileLock(const std::filesystem::path& path) {
    std::error_code ec;
    auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::filesystem::create_directories(dir, ec);
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw BaselineError(dir.string() + ": cannot open the baseline folder to lock it");
    ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

/// Update mode: records `m` into the file at `path` (created if missing) under a lock and
/// returns the new Baseline. Throws BaselineError on I/O or parse errors.
inline Baseline update_file(const std::filesystem::path& path, const Measurement& m) {
  FileLock lock(path);
  Baseline b = Baseline::try_load(path).value_or(Baseline{});
  b.record(m);
  b.save(path);
  return b;
}

/// Which baseline file a measurement of `line` is gated against: the line's own
/// (<dir>/<line>.json), else the newest older line of the same flavor with a file in the same
/// folder (a new release is compared with the release it replaces: redis-8.6 with redis-8.0),
/// else none.
struct BaselineChoice {
  std::filesystem::path path;  ///< empty: no baseline at all
  std::string line;            ///< the line the file records ("redis-8.0")
  bool own = false;            ///< the file is the measured line's own
};
inline BaselineChoice choose_baseline(const std::filesystem::path& own_path) {
  BaselineChoice c;
  std::error_code ec;
  const std::string line = own_path.stem().string();
  if (std::filesystem::exists(own_path, ec)) {
    c.path = own_path;
    c.line = line;
    c.own = true;
    return c;
  }
  const auto dash = line.rfind('-');
  int major = 0, minor = 0;
  if (dash == std::string::npos || std::sscanf(line.c_str() + dash + 1, "%d.%d", &major, &minor) != 2) return c;
  const std::string flavor = line.substr(0, dash);
  std::pair<int, int> best{-1, -1};
  const auto dir = own_path.has_parent_path() ? own_path.parent_path() : std::filesystem::path(".");
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().stem().string();
    if (e.path().extension() != ".json" || n.rfind(flavor + "-", 0) != 0) continue;
    int a = 0, b = 0;
    if (std::sscanf(n.c_str() + flavor.size() + 1, "%d.%d", &a, &b) != 2 || n != flavor + "-" + std::to_string(a) + "." + std::to_string(b))
      continue;
    if (std::make_pair(a, b) < std::make_pair(major, minor) && std::make_pair(a, b) > best) {
      best = {a, b};
      c.path = e.path();
      c.line = n;
    }
  }
  return c;
}

/// EXPIRYKIT_BASELINE_DIR (config().baseline_dir) if set, else `fallback` (e.g. the source tree's
/// ci/baselines/memory). Throws std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline std::filesystem::path baseline_dir(const std::filesystem::path& fallback = "ci/baselines/memory") {
  return config().baseline_dir.value_or(fallback);
}

/// EXPIRYKIT_BASELINE_DIR (config().baseline_dir) if set, else `dir` beside the source file that
/// calls this: a relative `dir` is taken from the folder of `where.file_name()` (CMake compiles
/// with absolute source paths), so the test finds its baselines whatever the working directory
/// (ctest runs each test in the build folder; a new-user trial recorded from the source folder
/// and ctest then found none). An absolute `dir`, or a source file name without a folder, as
/// baseline_dir() would. Throws std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline std::filesystem::path baseline_dir_beside_source(const std::filesystem::path& dir = "memory-baselines",
                                                        std::source_location where = std::source_location::current()) {
  if (dir.is_absolute()) return baseline_dir(dir);
  const std::filesystem::path folder = std::filesystem::path(where.file_name()).parent_path();
  return baseline_dir(folder.empty() ? dir : folder / dir);
}

/// The measurement as JSON (for reports): the Entry fields plus layout, server, line,
/// description and each repetition's figure.
inline nlohmann::ordered_json to_json(const Measurement& m) {
  nlohmann::ordered_json j;
  j["layout"] = m.layout;
  j["description"] = m.description;
  j["server"] = m.server;
  j["line"] = m.line;
  j["unit"] = m.unit;
  j["items"] = m.items;
  j["n"] = m.params.n;
  j["value_size"] = m.params.value_size;
  j["ttl"] = m.params.ttl_mode();
  j["bytes_per_item"] = m.stats.median;
  j["min"] = m.stats.min;
  j["max"] = m.stats.max;
  j["spread"] = m.stats.spread();
  j["spread_pct"] = m.stats.spread_pct();
  auto& reps = j["repetitions"] = nlohmann::ordered_json::array();
  for (const auto& r : m.reps) reps.push_back(r.bytes_per_item);
  j["encodings"] = m.encodings;
  j["memory_usage"] = m.memory_usage;
  j["notes"] = m.notes;
  return j;
}

}  // namespace expirykit::memory
