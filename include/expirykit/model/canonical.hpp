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

/// Whether the server draws its reply to `argv` at random (HRANDFIELD, HSCAN): the model's
/// reply then holds the candidates an allowed reply is drawn from (allowed_random_reply).
inline bool draws_reply(const Argv& argv) {
  if (argv.empty()) return false;
  const std::string u = upper(argv[0]);
  return u == "HRANDFIELD" || u == "HSCAN";
}

/// HRANDFIELD / HSCAN: is `actual` a reply the rules allow, given the model's candidates
/// (random_read_commands.hpp)? Errors must be equal.
inline bool allowed_random_reply(const Argv& argv, const Reply& expected, const Reply& actual) {
  if (expected.is_error() || actual.is_error()) return expected == actual;
  const std::string u = upper(argv[0]);
  std::vector<std::pair<std::string, std::string>> cand;  // live (field, value)
  const Reply* pairs = &expected;
  if (u == "HSCAN") {
    if (!expected.is_array() || expected.size() != 2) return false;
    pairs = &expected[1];
  }
  bool novalues = false;
  for (std::size_t i = 3; u == "HSCAN" && i < argv.size(); ++i) novalues = novalues || upper(argv[i]) == "NOVALUES";
  if (pairs->is_array()) {
    const std::size_t step = novalues ? 1 : 2;
    for (std::size_t i = 0; i + step - 1 < pairs->size(); i += step)
      cand.emplace_back((*pairs)[i].str(), novalues ? std::string() : (*pairs)[i + 1].str());
  }
  auto is_cand = [&](const std::string& f, const std::string* v) {
    for (const auto& [cf, cv] : cand)
      if (cf == f) return !v || *v == cv;
    return false;
  };
  if (u == "HSCAN") {
    if (!actual.is_array() || actual.size() != 2 || !actual[0].is_string() || !actual[1].is_array()) return false;
    const Reply& got = actual[1];
    const std::size_t step = novalues ? 1 : 2;
    if (got.size() % step) return false;
    std::vector<std::string> seen;
    for (std::size_t i = 0; i < got.size(); i += step) {
      const std::string f = got[i].str();
      const std::string v = novalues ? std::string() : got[i + 1].str();
      if (!is_cand(f, novalues ? nullptr : &v)) return false;
      seen.push_back(f);
    }
    std::sort(seen.begin(), seen.end());
    if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return false;
    return actual[0].str() != "0" || seen.size() == cand.size();
  }
  // HRANDFIELD
  if (argv.size() < 3) {
    if (cand.empty()) return actual.is_nil();
    return actual.is_string() && is_cand(actual.str(), nullptr);
  }
  if (!actual.is_array()) return false;
  const long long n = std::stoll(argv[2]);
  const bool withvalues = argv.size() > 3;
  const std::size_t step = withvalues ? 2 : 1;
  if (actual.size() % step) return false;
  const std::size_t count = actual.size() / step;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < actual.size(); i += step) {
    const std::string f = actual[i].str();
    const std::string v = withvalues ? actual[i + 1].str() : std::string();
    if (!is_cand(f, withvalues ? &v : nullptr)) return false;
    seen.push_back(f);
  }
  if (cand.empty()) return count == 0;
  if (n < 0) return count == static_cast<std::size_t>(-n);
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return false;
  return count == std::min(static_cast<std::size_t>(n), cand.size());
}

/// Equality of two replies to `argv`, order-insensitive where the server's order is undefined,
/// and "one of the allowed replies" for HRANDFIELD and HSCAN.
inline bool same_reply(const Argv& argv, const Reply& expected, const Reply& actual) {
  if (draws_reply(argv)) return allowed_random_reply(argv, expected, actual);
  if (!argv.empty() && upper(argv[0]) == "DUMP" && expected.is_string()) return actual.is_string();  // a payload (dump_commands.hpp)
  return canonical(argv, expected) == canonical(argv, actual);
}

}  // namespace expirykit::model
