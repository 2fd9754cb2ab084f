// The field deadlines an AOF base file writes (suites/durability/restart.cpp: the rewritten base
// writes one absolute deadline per volatile field).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>

#include <expirykit/observe/aof.hpp>

namespace {

/// The field deadlines an AOF base (`text`, file `name`) writes: "key field" -> absolute ms,
/// how many it writes (a field twice counts twice) and its HDELs. Valkey writes HSETEX key PXAT
/// t FIELDS n f v ..., Redis HPEXPIREAT key t FIELDS n f ...
struct BaseDeadlines {
  std::map<std::string, int64_t> at;
  int deadlines = 0, hdels = 0;
};
BaseDeadlines base_deadlines(const std::string& text, const std::string& name) {
  BaseDeadlines out;
  for (const auto& a : expirykit::observe::parse_aof(text, name)) {
    std::string n = a[0];
    for (auto& ch : n) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    out.hdels += n == "HDEL";
    if ((n != "HSETEX" && n != "HPEXPIREAT") || a.size() < 5) continue;
    const auto fields_at = std::find(a.begin(), a.end(), "FIELDS") - a.begin();
    const auto pxat = std::find(a.begin(), a.end(), "PXAT") - a.begin();
    const std::string at = n == "HPEXPIREAT" ? a[2] : pxat + 1 < fields_at ? a[pxat + 1] : "";
    if (at.empty() || fields_at + 1 >= static_cast<std::ptrdiff_t>(a.size())) continue;
    const int count = std::stoi(a[fields_at + 1]);
    const int step = n == "HSETEX" ? 2 : 1;  // HSETEX names each field with its value
    for (int i = 0; i < count && fields_at + 2 + i * step < static_cast<std::ptrdiff_t>(a.size()); ++i) {
      out.at[a[1] + " " + a[fields_at + 2 + i * step]] = std::stoll(at);
      ++out.deadlines;
    }
  }
  return out;
}
}  // namespace
