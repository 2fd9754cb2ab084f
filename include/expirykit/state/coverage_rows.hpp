// expirykit/state/coverage_rows.hpp: the rows and columns of the three coverage tables
// (state/coverage.hpp, which describes them), as data: the field states, the command forms, the
// timed forms and time classes, the numfields families and values, and which HFE command a row
// needs the dialect to have (model::Dialect::has_*).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <expirykit/model/dialect.hpp>

namespace expirykit::state {

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

}  // namespace expirykit::state
