// expirykit/state/coverage_cells.hpp: state::Cells, the cell counts of a run: each command (or
// each command of a batch) classified against the model's Keyspace before it runs, and counted
// in the three tables of state/coverage.hpp (rows and columns: coverage_rows.hpp).
//
//   state::Cells cells;                                   // every state::Twin keeps one: cells()
//   cells.record(ks, dialect, argv, nullptr, false, now_ms);   // before the model applies argv
//
// The classification rules (what counts as well formed, the state of a field or a key, the class
// of a time argument against model::Dialect::max_field_expire_ms) are those of the file comment
// of state/coverage.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/state/coverage_rows.hpp>

namespace expirykit::state {

using resp::Argv;

/// The cell counts of a run (three CellTables, see state/coverage.hpp). Copyable; counts only.
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

  /// The time class of `arg` for a form (see state/coverage.hpp); mirrors model/cmd/expiry_args.hpp
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
    // valkey-fields-keyword-scan-includes-key, known_issues/table.hpp): not counted as well formed.
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

}  // namespace expirykit::state
