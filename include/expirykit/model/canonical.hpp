// expirykit/model/canonical.hpp: comparing replies whose order the server does not define.
//
// HGETALL, HKEYS and HVALS return hashtable order on both servers, which depends on the
// encoding, the insertion history and rehashing: it is not predictable. The model returns
// fields in byte order. canonical() sorts such replies (HGETALL by field, keeping each field
// next to its value), so `canonical(argv, expected) == canonical(argv, actual)` compares them
// as sets. All other modelled replies are ordered (per-field arrays follow request order).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/model/apply.hpp>

namespace expirykit::model {

/// True for commands whose array reply is in unspecified (hashtable) order.
inline bool is_unordered(const Argv& argv) {
  if (argv.empty()) return false;
  const std::string u = upper(argv[0]);
  return u == "HGETALL" || u == "HKEYS" || u == "HVALS";
}

/// Order-free form of a reply to `argv`: unchanged unless is_unordered(argv) and the reply is an
/// array; then HKEYS/HVALS elements are sorted, and HGETALL (field, value) pairs are sorted by
/// field then value. An HGETALL array of odd length is returned unchanged.
inline Reply canonical(const Argv& argv, const Reply& r) {
  if (!is_unordered(argv) || !r.is_array()) return r;
  const auto& el = r.elements();
  auto key = [](const Reply& x) { return x.is_string() ? x.str() : x.to_string(); };
  if (upper(argv[0]) == "HGETALL") {
    if (el.size() % 2 != 0) return r;
    std::vector<std::pair<Reply, Reply>> pairs;
    for (std::size_t i = 0; i < el.size(); i += 2) pairs.emplace_back(el[i], el[i + 1]);
    std::sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) {
      return std::make_pair(key(x.first), key(x.second)) < std::make_pair(key(y.first), key(y.second));
    });
    std::vector<Reply> out;
    for (auto& [f, v] : pairs) {
      out.push_back(f);
      out.push_back(v);
    }
    return Reply::array(std::move(out));
  }
  std::vector<Reply> out = el;
  std::sort(out.begin(), out.end(), [&](const Reply& x, const Reply& y) { return key(x) < key(y); });
  return Reply::array(std::move(out));
}

/// Equality of two replies to `argv`, order-insensitive where the server's order is undefined.
inline bool same_reply(const Argv& argv, const Reply& expected, const Reply& actual) {
  return canonical(argv, expected) == canonical(argv, actual);
}

}  // namespace expirykit::model
