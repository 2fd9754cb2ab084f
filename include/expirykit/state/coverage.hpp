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
//     (model::Dialect::max_field_expire_ms, checked as model/cmd/field_ttl_commands.hpp does):
//     not an integer, negative, zero, past (absolute and <= now), future, largest accepted
//     (absolute: exactly the largest, the second unit's floor of it; relative: within 2^42 ms,
//     about 139 years, of the largest, see gen/ttl.hpp), over (one beyond: rejected as too
//     large, including an integer too long for int64).
//
// A batch (EXEC of a transaction, the sequence script) counts each of its commands against the
// state the previous ones leave, applied to a copy of the model at the batch's time.
//
// Reachability is data (cell_reason()): every cell is reachable by the generators of the main
// property (gen::property_sequence, property::check_sequences) unless a rule gives a reason.
//
// This header holds the reachability and the text of the tables, and includes its parts: the
// tables' rows and columns (coverage_rows.hpp) and the counting (state::Cells, coverage_cells.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/state/coverage_cells.hpp>
#include <expirykit/state/coverage_rows.hpp>

namespace expirykit::state {

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
