// expirykit/state/coverage.hpp: which command x field-state cells a run exercised, with counts,
// against a table of the cells the property's generators claim to reach.
//
//   state::Cells cells;                                   // every state::Twin keeps one: cells()
//   cells.record(ks, dialect, argv, nullptr, false, now_ms);   // before the model applies argv
//   std::cout << state::format_cells(cells, dialect);     // the tables, then what was missed
//   for (const auto& c : state::unreached(cells, dialect)) ...  // reachable cells counted 0 times
//
// Three tables (rows x columns, a count per cell):
//   * "command x field state": command family and flag form x the state of each field it names,
//     read from the model's Keyspace at the command's time, before the command runs: no key
//     (missing or past its key TTL), no field, persistent field, volatile field (deadline in the
//     future), expired (logically expired, still stored: not yet reclaimed by active expiry nor
//     deleted lazily), wrongtype (the key holds a string). A command adds 1 to each distinct
//     state it met (HMGET of a live and a missing field: persistent + 1, no field + 1). Commands
//     that name no field (HLEN, HGETALL, HSCAN, the key commands) are counted by the state of
//     their key: persistent = a hash without volatile fields, volatile = with volatile fields,
//     none expired, expired = with at least one logically expired field. A command is counted
//     here only when it is well formed in both grammars (model::Grammar): numfields matches,
//     each option once, times accepted, no HSETEX key-level NX/XX (a different question);
//     malformed ones reply an error before any field is looked at.
//   * "numfields": the FIELDS count as written (0, 1, INT_MAX, INT_MAX+1, 2^63-1) per command
//     family, well formed or not.
//   * "time argument": each timed form x the class of its time against the dialect's limits
//     (model::Dialect::max_field_expire_ms, checked as model/field_ttl_commands.hpp does):
//     not an integer, negative, zero, past (absolute and <= now), future, largest accepted
//     (absolute: exactly the largest, the second unit's floor of it; relative: within 2^42 ms,
//     about 139 years, of the largest, see gen/ttl.hpp), over (one beyond: rejected as too
//     large, including an integer too long for int64).
//
// A batch (EXEC of a transaction, the sequence script) counts each of its commands against the
// state the previous ones leave, applied to a copy of the model at the batch's time.
//
// Reachability is data (cell_reason()): every cell is reachable by the generators of the main
// property (gen::property_sequence, state::check_sequences) unless a rule gives a reason.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iomanip>
#include <map>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>

namespace expirykit::state {

using resp::Argv;

/// The columns of the "command x field state" table, in order.
enum class FieldState : int { missing_key, missing_field, persistent, volatile_future, expired, wrong_type };

/// A row of the "command x field state" table.
struct StateRow {
  const char* name;
  bool names_fields;     ///< false: classified by the key's state (no "no field" column)
  const char* needs;  ///< the HFE command the dialect must have (model::Dialect::has_*), or nullptr
};

/// One table: rows x columns with a count per cell.
struct CellTable {
  std::string title;
  std::vector<std::string> rows, cols;
  std::vector<long> counts;  ///< row-major, rows.size() x cols.size()

  long& at(std::size_t r, std::size_t c) { return counts[r * cols.size() + c]; }
  long at(std::size_t r, std::size_t c) const { return counts[r * cols.size() + c]; }
  std::size_t row(std::string_view name) const {
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i] == name) return i;
    return rows.size();
  }
};

namespace cov {
inline const std::vector<StateRow>& state_rows() {
  static const std::vector<StateRow> r = {
      {"HEXPIRE* -", true, nullptr},   {"HEXPIRE* NX", true, nullptr},   {"HEXPIRE* XX", true, nullptr},
      {"HEXPIRE* GT", true, nullptr},  {"HEXPIRE* LT", true, nullptr},   {"HTTL*", true, nullptr},
      {"HPERSIST", true, nullptr},
      {"HSETEX - -", true, "HSETEX"},  {"HSETEX - EX", true, "HSETEX"},  {"HSETEX - PX", true, "HSETEX"},
      {"HSETEX - EXAT", true, "HSETEX"}, {"HSETEX - PXAT", true, "HSETEX"}, {"HSETEX - KEEPTTL", true, "HSETEX"},
      {"HSETEX FNX -", true, "HSETEX"}, {"HSETEX FNX EX", true, "HSETEX"}, {"HSETEX FNX PX", true, "HSETEX"},
      {"HSETEX FNX EXAT", true, "HSETEX"}, {"HSETEX FNX PXAT", true, "HSETEX"}, {"HSETEX FNX KEEPTTL", true, "HSETEX"},
      {"HSETEX FXX -", true, "HSETEX"}, {"HSETEX FXX EX", true, "HSETEX"}, {"HSETEX FXX PX", true, "HSETEX"},
      {"HSETEX FXX EXAT", true, "HSETEX"}, {"HSETEX FXX PXAT", true, "HSETEX"}, {"HSETEX FXX KEEPTTL", true, "HSETEX"},
      {"HGETEX -", true, "HGETEX"},    {"HGETEX EX", true, "HGETEX"},    {"HGETEX PX", true, "HGETEX"},
      {"HGETEX EXAT", true, "HGETEX"}, {"HGETEX PXAT", true, "HGETEX"},  {"HGETEX PERSIST", true, "HGETEX"},
      {"HGETDEL", true, "HGETDEL"},
      {"HGET", true, nullptr},         {"HMGET", true, nullptr},         {"HSET/HMSET", true, nullptr},
      {"HSETNX", true, nullptr},       {"HINCRBY", true, nullptr},       {"HINCRBYFLOAT", true, nullptr},
      {"HDEL", true, nullptr},         {"HEXISTS", true, nullptr},       {"HSTRLEN", true, nullptr},
      {"HLEN", false, nullptr},        {"HGETALL", false, nullptr},      {"HKEYS/HVALS", false, nullptr},
      {"HRANDFIELD", false, nullptr},  {"HSCAN", false, nullptr},
      {"DEL/UNLINK", false, nullptr},  {"EXISTS", false, nullptr},       {"TYPE", false, nullptr},
      {"EXPIRE*", false, nullptr},     {"PERSIST", false, nullptr},      {"TTL/PTTL", false, nullptr},
      {"SET", false, nullptr},         {"GET", false, nullptr},          {"RENAME", false, nullptr},
      {"COPY", false, nullptr},        {"COPY DB", false, nullptr},      {"MOVE", false, nullptr},
      {"DUMP", false, nullptr},        {"RESTORE", false, nullptr},      {"OBJECT ENCODING", false, nullptr},
  };
  return r;
}
/// The timed forms (time table rows): name, unit in ms, absolute, command.
struct TimeForm {
  const char* name;
  int64_t unit_ms;
  bool absolute;
  const char* needs;
};
inline const std::vector<TimeForm>& time_forms() {
  static const std::vector<TimeForm> f = {
      {"HEXPIRE", 1000, false, nullptr},        {"HPEXPIRE", 1, false, nullptr},
      {"HEXPIREAT", 1000, true, nullptr},       {"HPEXPIREAT", 1, true, nullptr},
      {"HSETEX EX", 1000, false, "HSETEX"},     {"HSETEX PX", 1, false, "HSETEX"},
      {"HSETEX EXAT", 1000, true, "HSETEX"},    {"HSETEX PXAT", 1, true, "HSETEX"},
      {"HGETEX EX", 1000, false, "HGETEX"},     {"HGETEX PX", 1, false, "HGETEX"},
      {"HGETEX EXAT", 1000, true, "HGETEX"},    {"HGETEX PXAT", 1, true, "HGETEX"},
  };
  return f;
}
inline const std::vector<std::string>& time_classes() {
  static const std::vector<std::string> c = {"not int", "negative", "zero", "past", "future", "largest", "over"};
  return c;
}
enum TimeClass { t_not_int, t_negative, t_zero, t_past, t_future, t_largest, t_over };
/// Relative times count as "largest" within this many ms of the largest accepted deadline: the
/// generator cannot know "now" to the millisecond (gen/ttl.hpp).
inline constexpr int64_t relative_largest_slack_ms = int64_t{1} << 42;

inline const std::vector<std::pair<std::string, const char*>>& numfields_families() {
  static const std::vector<std::pair<std::string, const char*>> f = {
      {"HEXPIRE*", nullptr}, {"HTTL*", nullptr},      {"HPERSIST", nullptr},
      {"HSETEX", "HSETEX"},  {"HGETEX", "HGETEX"},    {"HGETDEL", "HGETDEL"}};
  return f;
}
inline const std::vector<std::string>& numfields_values() {
  static const std::vector<std::string> v = {"0", "1", "2147483647", "2147483648", "9223372036854775807"};
  return v;
}

inline bool has(const model::Dialect& d, const char* cmd) {
  if (!cmd) return true;
  const std::string c = cmd;
  return c == "HSETEX" ? d.has_hsetex : c == "HGETEX" ? d.has_hgetex : c == "HGETDEL" ? d.has_hgetdel : true;
}
}  // namespace cov

/// The cell counts of a run (three CellTables, see the file comment). Copyable; counts only.
class Cells {
 public:
  enum Table : std::size_t { states = 0, numfields = 1, times = 2 };

  Cells() {
    CellTable s{"command x field state", {}, {"no key", "no field", "persistent", "volatile", "expired", "wrongtype"}, {}};
    for (const auto& r : cov::state_rows()) s.rows.push_back(r.name);
    CellTable n{"numfields as written", {}, {"0", "1", "INT_MAX", "INT_MAX+1", "2^63-1"}, {}};
    for (const auto& f : cov::numfields_families()) n.rows.push_back(f.first);
    CellTable t{"time argument vs the dialect's limits", {}, cov::time_classes(), {}};
    for (const auto& f : cov::time_forms()) t.rows.push_back(f.name);
    tables_ = {s, n, t};
    for (auto& tb : tables_) tb.counts.assign(tb.rows.size() * tb.cols.size(), 0);
  }

  const std::vector<CellTable>& tables() const { return tables_; }
  /// The count of one cell by names; -1 for an unknown cell.
  long count(Table t, std::string_view row, std::string_view col) const {
    const CellTable& tb = tables_[t];
    const std::size_t r = tb.row(row);
    for (std::size_t c = 0; r < tb.rows.size() && c < tb.cols.size(); ++c)
      if (tb.cols[c] == col) return tb.at(r, c);
    return -1;
  }
  /// Adds `n` to one cell by names (tests, merging); throws std::out_of_range for an unknown cell.
  void add(Table t, std::string_view row, std::string_view col, long n = 1) {
    CellTable& tb = tables_[t];
    const std::size_t r = tb.row(row);
    for (std::size_t c = 0; r < tb.rows.size() && c < tb.cols.size(); ++c)
      if (tb.cols[c] == col) {
        tb.at(r, c) += n;
        return;
      }
    throw std::out_of_range("no coverage cell " + std::string(row) + " x " + std::string(col));
  }
  /// Total of all cells of all tables.
  long total() const {
    long n = 0;
    for (const auto& tb : tables_)
      for (long v : tb.counts) n += v;
    return n;
  }
  /// The counts added since `earlier` (a copy taken before): this minus earlier, cell by cell.
  Cells since(const Cells& earlier) const {
    Cells out = *this;
    for (std::size_t t = 0; t < tables_.size(); ++t)
      for (std::size_t i = 0; i < out.tables_[t].counts.size(); ++i) out.tables_[t].counts[i] -= earlier.tables_[t].counts[i];
    return out;
  }
  /// Adds every count of `other` (e.g. the cells of several twins).
  void merge(const Cells& other) {
    for (std::size_t t = 0; t < tables_.size(); ++t)
      for (std::size_t i = 0; i < tables_[t].counts.size(); ++i) tables_[t].counts[i] += other.tables_[t].counts[i];
  }

  /// Counts `argv` (or, when `batch` is given, each command of the batch in turn) against the
  /// model state `ks` at `now_ms` (Unix ms), before the model applies it. `in_script`: the
  /// batch is the sequence script (model::apply_batch). Never throws for a command it does not
  /// know (it counts nothing for it); throws std::bad_alloc only.
  void record(const model::Keyspace& ks, const model::Dialect& d, const Argv& argv, const std::vector<Argv>* batch,
              bool in_script, int64_t now_ms) {
    if (!batch) {
      classify(ks, d, argv, now_ms);
      return;
    }
    model::Keyspace copy = ks;
    for (const auto& c : *batch) {
      classify(copy, d, c, now_ms);
      try {
        model::apply_batch(copy, d, {c}, now_ms, in_script);
      } catch (const std::exception&) {
        return;  // outside the model: the state after it is unknown
      }
    }
  }

 private:
  using KS = model::Keyspace;
  static bool eq(const std::string& a, const char* b) { return model::iequals(a, b); }

  void bump(Table t, std::size_t r, std::size_t c) { ++tables_[t].at(r, c); }
  void bump_state(std::string_view row, unsigned mask) {
    const std::size_t r = tables_[states].row(row);
    if (r == tables_[states].rows.size()) return;
    for (std::size_t c = 0; c < 6; ++c)
      if (mask & (1u << c)) bump(states, r, c);
  }
  static unsigned bit(FieldState s) { return 1u << static_cast<int>(s); }

  /// The state of `key` for a command that names no field.
  static FieldState key_state(const model::Entry* e, int64_t now) {
    if (!e) return FieldState::missing_key;
    if (e->is_string()) return FieldState::wrong_type;
    const auto& h = e->hash();
    if (h.expired_count(now) > 0) return FieldState::expired;
    return h.has_volatile() ? FieldState::volatile_future : FieldState::persistent;
  }
  /// The distinct states of `fields` of `key` (bit mask).
  static unsigned field_states(const KS& ks, const std::string& key, const std::vector<std::string>& fields, int64_t now) {
    const model::Entry* e = ks.peek(key, now);
    if (!e) return bit(FieldState::missing_key);
    if (e->is_string()) return bit(FieldState::wrong_type);
    unsigned m = 0;
    for (const auto& f : fields) {
      auto it = e->hash().fields.find(f);
      if (it == e->hash().fields.end()) m |= bit(FieldState::missing_field);
      else if (it->second.expired(now)) m |= bit(FieldState::expired);
      else if (it->second.expire_ms) m |= bit(FieldState::volatile_future);
      else m |= bit(FieldState::persistent);
    }
    return m;
  }

  /// The time class of `arg` for a form (see the file comment); mirrors model/field_ttl_commands.hpp
  /// detail::deadline().
  static int time_class(const std::string& arg, const cov::TimeForm& f, const model::Dialect& d, int64_t now) {
    long long t = 0;
    if (!model::parse_ll(arg, t)) {
      const bool digits = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
      return digits && arg[0] != '0' ? cov::t_over : cov::t_not_int;  // a positive integer beyond int64
    }
    if (t < 0) return cov::t_negative;
    if (t == 0) return cov::t_zero;
    const int64_t max = d.max_field_expire_ms;
    if (f.unit_ms == 1000 && t > max / 1000) return cov::t_over;
    const int64_t ms = t * f.unit_ms, base = f.absolute ? 0 : now;
    if (ms > max - base) return cov::t_over;
    const int64_t deadline = ms + base;
    if (deadline <= now) return cov::t_past;
    const int64_t slack = f.absolute ? f.unit_ms - 1 : cov::relative_largest_slack_ms;
    return max - deadline <= slack ? cov::t_largest : cov::t_future;
  }
  /// True when `arg` is a time the dialect accepts for form `f` (the command goes on to the fields).
  static bool time_ok(const std::string& arg, const cov::TimeForm& f, const model::Dialect& d, int64_t now) {
    const int c = time_class(arg, f, d, now);
    return c != cov::t_not_int && c != cov::t_negative && c != cov::t_over;
  }
  static const cov::TimeForm& form(const std::string& name) {
    for (const auto& f : cov::time_forms())
      if (name == f.name) return f;
    return cov::time_forms().front();
  }

  /// `FIELDS n f1 .. fn` (with a value after each name when `pairs`) from a[at] to the end,
  /// n >= 1: the names, or nothing when malformed.
  static std::optional<std::vector<std::string>> fields_tail(const Argv& a, std::size_t at, bool pairs) {
    if (at + 2 >= a.size() || !eq(a[at], "FIELDS")) return std::nullopt;
    long long n = 0;
    const std::size_t rest = a.size() - at - 2;
    if (!model::parse_ll(a[at + 1], n) || n < 1 || static_cast<unsigned long long>(n) * (pairs ? 2 : 1) != rest)
      return std::nullopt;
    std::vector<std::string> out;
    for (std::size_t i = at + 2; i < a.size(); i += pairs ? 2 : 1) out.push_back(a[i]);
    return out;
  }

  void count_numfields(const std::string& family, const Argv& a, std::size_t from) {
    for (std::size_t i = from; i + 1 < a.size(); ++i)
      if (eq(a[i], "FIELDS")) {
        const auto& v = cov::numfields_values();
        const auto it = std::find(v.begin(), v.end(), a[i + 1]);
        if (it != v.end()) bump(numfields, tables_[numfields].row(family), static_cast<std::size_t>(it - v.begin()));
        return;
      }
  }
  void count_time(const std::string& form_name, const std::string& arg, const model::Dialect& d, int64_t now) {
    const std::size_t r = tables_[times].row(form_name);
    if (r < tables_[times].rows.size()) bump(times, r, static_cast<std::size_t>(time_class(arg, form(form_name), d, now)));
  }

  void classify(const KS& ks, const model::Dialect& d, const Argv& a, int64_t now) {
    if (a.size() < 2 || !model::is_modelled(a[0], d)) return;
    const std::string u = model::upper(a[0]);
    const std::string& key = a[1];
    // Valkey 9.1.2's HSETEX and HGETEX take a key named FIELDS for the keyword (known issue
    // valkey-fields-keyword-scan-includes-key, server/known_issues.hpp): not counted as well formed.
    const bool key_is_keyword = d.grammar == model::Grammar::valkey && eq(key, "FIELDS") && (u == "HSETEX" || u == "HGETEX");
    auto fields_cmd = [&](const std::string& row, std::size_t at, bool pairs) {
      if (key_is_keyword) return;
      if (auto f = fields_tail(a, at, pairs)) bump_state(row, field_states(ks, key, *f, now));
    };
    auto key_cmd = [&](const std::string& row, const std::string& k) { bump_state(row, bit(key_state(ks.peek(k, now), now))); };

    if (u == "HEXPIRE" || u == "HPEXPIRE" || u == "HEXPIREAT" || u == "HPEXPIREAT") {
      count_numfields("HEXPIRE*", a, 3);
      if (a.size() < 3) return;
      count_time(u, a[2], d, now);
      if (!time_ok(a[2], form(u), d, now)) return;
      std::string flag = "-";
      std::size_t at = 3;
      for (const char* c : {"NX", "XX", "GT", "LT"})
        if (a.size() > 3 && eq(a[3], c)) flag = c, at = 4;
      fields_cmd("HEXPIRE* " + flag, at, false);
    } else if (u == "HTTL" || u == "HPTTL" || u == "HEXPIRETIME" || u == "HPEXPIRETIME" || u == "HPERSIST" || u == "HGETDEL") {
      const std::string row = u == "HPERSIST" || u == "HGETDEL" ? u : "HTTL*";
      count_numfields(row, a, 2);
      fields_cmd(row, 2, false);
    } else if (u == "HSETEX") {
      count_numfields("HSETEX", a, 2);
      std::string fcond = "-", exp = "-";
      std::size_t i = 2;
      bool ok = true;
      for (; i < a.size() && !eq(a[i], "FIELDS"); ++i) {
        const std::string t = model::upper(a[i]);
        if (t == "FNX" || t == "FXX") {
          ok = ok && fcond == "-";
          fcond = t;
        } else if (t == "EX" || t == "PX" || t == "EXAT" || t == "PXAT" || t == "KEEPTTL") {
          ok = ok && exp == "-";
          exp = t;
          if (t == "KEEPTTL") continue;
          if (i + 1 >= a.size()) return;
          count_time("HSETEX " + t, a[i + 1], d, now);
          ok = ok && time_ok(a[++i], form("HSETEX " + t), d, now);
        } else {
          ok = false;  // key-level NX/XX, or an unknown token
        }
      }
      if (ok) fields_cmd("HSETEX " + fcond + " " + exp, i, true);
    } else if (u == "HGETEX") {
      count_numfields("HGETEX", a, 2);
      std::string opt = "-";
      std::size_t at = 2;
      if (a.size() > 2 && !eq(a[2], "FIELDS")) {
        opt = model::upper(a[2]);
        if (opt == "PERSIST") {
          at = 3;
        } else if ((opt == "EX" || opt == "PX" || opt == "EXAT" || opt == "PXAT") && a.size() > 3) {
          count_time("HGETEX " + opt, a[3], d, now);
          if (!time_ok(a[3], form("HGETEX " + opt), d, now)) return;
          at = 4;
        } else {
          return;
        }
      }
      fields_cmd("HGETEX " + opt, at, false);
    } else if (u == "HGET" || u == "HEXISTS" || u == "HSTRLEN") {
      if (a.size() == 3) bump_state(u, field_states(ks, key, {a[2]}, now));
    } else if (u == "HMGET" || u == "HDEL") {
      if (a.size() >= 3) bump_state(u, field_states(ks, key, {a.begin() + 2, a.end()}, now));
    } else if (u == "HSET" || u == "HMSET") {
      if (a.size() < 4 || a.size() % 2) return;
      std::vector<std::string> f;
      for (std::size_t i = 2; i < a.size(); i += 2) f.push_back(a[i]);
      bump_state("HSET/HMSET", field_states(ks, key, f, now));
    } else if (u == "HSETNX" || u == "HINCRBY" || u == "HINCRBYFLOAT") {
      if (a.size() != 4) return;
      long long n = 0;
      long double x = 0;
      if (u == "HINCRBY" && !model::parse_ll(a[3], n)) return;
      if (u == "HINCRBYFLOAT" && model::parse_ld(a[3], x) != model::FloatParse::ok) return;
      bump_state(u, field_states(ks, key, {a[2]}, now));
    } else if (u == "HLEN" || u == "HGETALL" || u == "HKEYS" || u == "HVALS" || u == "TYPE" || u == "PERSIST" ||
               u == "TTL" || u == "PTTL" || u == "GET" || u == "DUMP") {
      if (a.size() != 2) return;
      const std::string row = u == "HKEYS" || u == "HVALS" ? "HKEYS/HVALS" : u == "TTL" || u == "PTTL" ? "TTL/PTTL" : u;
      key_cmd(row, key);
    } else if (u == "HRANDFIELD") {
      long long n = 0;
      if (a.size() > 4 || (a.size() >= 3 && !model::parse_ll(a[2], n)) || (a.size() == 4 && !eq(a[3], "WITHVALUES"))) return;
      key_cmd(u, key);
    } else if (u == "HSCAN") {
      if (a.size() < 3 || a[2] != "0") return;
      for (std::size_t i = 3; i < a.size(); ++i) {
        long long n = 0;
        if (eq(a[i], "NOVALUES")) continue;
        if (eq(a[i], "COUNT") && i + 1 < a.size() && model::parse_ll(a[i + 1], n) && n >= 1) {
          ++i;
          continue;
        }
        return;
      }
      key_cmd(u, key);
    } else if (u == "DEL" || u == "UNLINK" || u == "EXISTS") {
      key_cmd(u == "EXISTS" ? "EXISTS" : "DEL/UNLINK", key);
    } else if (u == "EXPIRE" || u == "PEXPIRE" || u == "EXPIREAT" || u == "PEXPIREAT") {
      long long t = 0;
      if ((a.size() == 3 || a.size() == 4) && model::parse_ll(a[2], t)) key_cmd("EXPIRE*", key);
    } else if (u == "SET") {
      if (a.size() >= 3) key_cmd(u, key);
    } else if (u == "RENAME" || u == "MOVE") {
      if (a.size() == 3) key_cmd(u, key);
    } else if (u == "COPY") {
      if (a.size() < 3) return;
      const bool db = a.size() >= 5 && eq(a[3], "DB");
      key_cmd(db ? "COPY DB" : "COPY", key);
    } else if (u == "RESTORE") {
      if (a.size() >= 4) bump_state(u, bit(key_state(ks.dumped(a[3]), now)));  // what the payload holds
    } else if (u == "OBJECT") {
      if (a.size() == 3 && eq(a[1], "ENCODING")) key_cmd("OBJECT ENCODING", a[2]);
    }
  }

  std::vector<CellTable> tables_;
};

/// Why a cell is not reachable by the main property's generators on dialect `d`, or "" when it
/// is (the reachability data: one rule per reason).
inline std::string cell_reason(Cells::Table t, std::string_view row, std::string_view col, const model::Dialect& d) {
  auto lacks = [&](const char* cmd) { return cmd && !cov::has(d, cmd) ? std::string(cmd) + " is not in " + d.name : ""; };
  if (t == Cells::states) {
    for (const auto& r : cov::state_rows())
      if (row == r.name) {
        if (auto why = lacks(r.needs); !why.empty()) return why;
        if (!r.names_fields && col == "no field") return "names no field: classified by the key's state";
      }
  } else if (t == Cells::numfields) {
    for (const auto& [fam, cmd] : cov::numfields_families())
      if (row == fam) return lacks(cmd);
  } else {
    for (const auto& f : cov::time_forms())
      if (row == f.name) {
        if (auto why = lacks(f.needs); !why.empty()) return why;
        if (!f.absolute && col == "past") return "a relative time >= 1 lands after now (0 is the zero column)";
      }
  }
  return "";
}

/// A cell by its table, row and column names, e.g. "command x field state: HSETEX FXX KEEPTTL x expired".
struct CellName {
  Cells::Table table;
  std::string row, col;
  std::string to_string(const Cells& c) const { return c.tables()[table].title + ": " + row + " x " + col; }
};

/// The reachable cells (cell_reason() empty) that `cells` counts 0 times.
inline std::vector<CellName> unreached(const Cells& cells, const model::Dialect& d) {
  std::vector<CellName> out;
  for (std::size_t t = 0; t < cells.tables().size(); ++t) {
    const CellTable& tb = cells.tables()[t];
    for (std::size_t r = 0; r < tb.rows.size(); ++r)
      for (std::size_t c = 0; c < tb.cols.size(); ++c)
        if (tb.at(r, c) == 0 && cell_reason(static_cast<Cells::Table>(t), tb.rows[r], tb.cols[c], d).empty())
          out.push_back({static_cast<Cells::Table>(t), tb.rows[r], tb.cols[c]});
  }
  return out;
}

/// The least sequences a property run must have had for missed_cells() to hold it to reaching
/// every reachable cell. The rarest cells come up about 1.3 times per 100 sequences (the
/// model-only run of checks/gen/reach_test.cpp), so 500 sequences expect each at least 6 times;
/// the default run (suites/properties/sequences.cpp: rounds of 100 for 15 s) did 600 on 2 shared
/// cores, and check_sequences() adds up to 5 rounds to a run that missed a cell.
inline constexpr int min_sequences_for_reach = 500;

/// "" when `cells` reached every reachable cell, or when the run had fewer than `min_sequences`
/// sequences; else a message naming each reachable cell that was not reached.
inline std::string missed_cells(const Cells& cells, const model::Dialect& d, int sequences,
                                int min_sequences = min_sequences_for_reach) {
  if (sequences < min_sequences) return "";
  const auto missed = unreached(cells, d);
  if (missed.empty()) return "";
  std::ostringstream os;
  os << missed.size() << " cell(s) the generators claim to reach (state/coverage.hpp) were not reached in "
     << sequences << " sequences:\n";
  for (const auto& m : missed) os << "  " << m.to_string(cells) << "\n";
  return os.str();
}

/// The tables as text: a row per command form, a column per state or class, the count in each
/// cell; "." for a cell the generators cannot reach (the reasons are listed below the tables),
/// "0 !" for a reachable cell this run missed; then the reachable-but-unreached cells, one per line.
inline std::string format_cells(const Cells& cells, const model::Dialect& d) {
  std::ostringstream os;
  std::map<std::string, int> reasons;
  for (std::size_t t = 0; t < cells.tables().size(); ++t) {
    const CellTable& tb = cells.tables()[t];
    std::size_t w0 = 4;
    for (const auto& r : tb.rows) w0 = std::max(w0, r.size());
    std::vector<std::size_t> w;
    for (const auto& c : tb.cols) w.push_back(std::max<std::size_t>(c.size(), 5));
    os << tb.title << " (" << d.name << ")\n" << std::left << std::setw(static_cast<int>(w0)) << "";
    for (std::size_t c = 0; c < tb.cols.size(); ++c) os << " " << std::right << std::setw(static_cast<int>(w[c])) << tb.cols[c];
    os << "\n";
    for (std::size_t r = 0; r < tb.rows.size(); ++r) {
      os << std::left << std::setw(static_cast<int>(w0)) << tb.rows[r];
      for (std::size_t c = 0; c < tb.cols.size(); ++c) {
        const std::string why = cell_reason(static_cast<Cells::Table>(t), tb.rows[r], tb.cols[c], d);
        std::string cell = std::to_string(tb.at(r, c));
        if (!why.empty()) {
          ++reasons[why];
          if (tb.at(r, c) == 0) cell = ".";
        } else if (tb.at(r, c) == 0) {
          cell = "0 !";
        }
        os << " " << std::right << std::setw(static_cast<int>(w[c])) << cell;
      }
      os << "\n";
    }
    os << "\n";
  }
  for (const auto& [why, n] : reasons) os << ".  not reachable (" << n << " cells): " << why << "\n";
  const auto missed = unreached(cells, d);
  os << missed.size() << " reachable cell(s) not reached" << (missed.empty() ? "" : ":") << "\n";
  for (const auto& m : missed) os << "  " << m.to_string(cells) << "\n";
  return os.str();
}

}  // namespace expirykit::state
