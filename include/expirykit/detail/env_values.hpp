// expirykit/detail/env_values.hpp: internal to config.hpp. Strict parsing of one environment
// value: a value that does not parse is an std::invalid_argument naming the variable and its
// value, never a silent default. No function here reads the environment (config.hpp does, once).
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace expirykit::detail {

/// `v` as a decimal number >= 0 (`allow_zero`) or > 0, e.g. "0.5". Throws std::invalid_argument
/// "<name>='<v>' is not a positive number (e.g. 0.5, 1, 5); unset it for the default" on a leading
/// space, tab or '+', trailing text, a negative, infinite or NaN number (or 0 unless allowed).
inline double parse_number(const std::string& name, const std::string& v, bool allow_zero) {
  std::size_t used = 0;
  double x = 0;
  try {
    if (!v.empty() && v.front() != ' ' && v.front() != '\t' && v.front() != '+') x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || !std::isfinite(x) || x < 0 || (!allow_zero && x == 0))
    throw std::invalid_argument(name + "='" + v + "' is not a " + (allow_zero ? "non-negative" : "positive") +
                                " number (e.g. " + (allow_zero ? "0, 30, 1800" : "0.5, 1, 5") + "); unset it for the default");
  return x;
}

/// "1": true, "0": false. Throws std::invalid_argument "<name>='<v>' must be 1 or 0 (or unset)".
inline bool parse_flag(const std::string& name, const std::string& v) {
  if (v == "1") return true;
  if (v == "0") return false;
  throw std::invalid_argument(name + "='" + v + "' must be 1 or 0 (or unset)");
}

/// `v` as a whole number in 1..max, digits only (e.g. "20000"). Throws std::invalid_argument
/// "<name>='<v>' is not a positive integer (1 to <max>, e.g. <example>); unset it for the default".
inline std::size_t parse_count(const std::string& name, const std::string& v, std::size_t max, const char* example) {
  std::size_t x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x == 0 || x > max)
    throw std::invalid_argument(name + "='" + v + "' is not a positive integer (1 to " + std::to_string(max) + ", e.g. " +
                                example + "); unset it for the default");
  return x;
}

}  // namespace expirykit::detail
