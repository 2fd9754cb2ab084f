// expirykit/env.hpp: the kit's environment variables, parsed strictly. A value that does not
// parse is an error naming the variable, never a silent default.
//
//   double scale = env::positive_number("EXPIRYKIT_PROP_SCALE").value_or(1.0);
//   bool keep = env::flag("EXPIRYKIT_KEEP_DIRS");
//
// Every EXPIRYKIT_* variable the kit, its scripts and its CMake files read is listed, with its
// value, default and reader, in docs/reference/env.md (checks/ci keeps that list complete).
#pragma once

#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace expirykit::env {

/// The variable's value; nullopt when unset or empty.
inline std::optional<std::string> get(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

namespace detail {
inline double parse_number(const char* name, const std::string& v, bool allow_zero) {
  std::size_t used = 0;
  double x = 0;
  try {
    if (!v.empty() && v.front() != ' ' && v.front() != '\t' && v.front() != '+') x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !std::isfinite(x) || x < 0 || (!allow_zero && x == 0))
    throw std::invalid_argument(std::string(name) + "='" + v + "' is not a " + (allow_zero ? "non-negative" : "positive") +
                                " number (e.g. " + (allow_zero ? "0, 30, 1800" : "0.5, 1, 5") + "); unset it for the default");
  return x;
}
}  // namespace detail

/// The variable as a number > 0 (decimal, e.g. 0.5); nullopt when unset or empty.
/// Throws std::invalid_argument naming the variable and its value when it is anything else.
inline std::optional<double> positive_number(const char* name) {
  auto v = get(name);
  if (!v) return std::nullopt;
  return detail::parse_number(name, *v, false);
}

/// The variable as a number >= 0; nullopt when unset or empty. Throws std::invalid_argument
/// naming the variable and its value when it is anything else.
inline std::optional<double> nonnegative_number(const char* name) {
  auto v = get(name);
  if (!v) return std::nullopt;
  return detail::parse_number(name, *v, true);
}

/// "1": true; "0", unset or empty: false. Throws std::invalid_argument for any other value.
inline bool flag(const char* name) {
  auto v = get(name);
  if (!v || *v == "0") return false;
  if (*v == "1") return true;
  throw std::invalid_argument(std::string(name) + "='" + *v + "' must be 1 or 0 (or unset)");
}

/// `s` as one shell word: single-quoted, with ' written as '\''.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The variables that pick the server under test (EXPIRYKIT_SERVER, EXPIRYKIT_SERVER_ADDR,
/// EXPIRYKIT_SERVERS_DIR, EXPIRYKIT_CLUSTER_SHAPE, EXPIRYKIT_CLUSTER_SEED) as they are set now, as shell assignments each followed by a space
/// ("" when none is set): the start of a replay command line.
inline std::string server_assignments() {
  std::string out;
  for (const char* v : {"EXPIRYKIT_SERVER", "EXPIRYKIT_SERVER_ADDR", "EXPIRYKIT_SERVERS_DIR", "EXPIRYKIT_CLUSTER_SHAPE",
                        "EXPIRYKIT_CLUSTER_SEED"})
    if (auto x = get(v)) out += std::string(v) + "=" + shell_quote(*x) + " ";
  return out;
}

}  // namespace expirykit::env
