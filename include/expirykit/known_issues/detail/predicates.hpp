// expirykit/known_issues/detail/predicates.hpp (internal to known_issues/table.hpp): the
// predicates rows of the known-issues table are made of: which commands would crash a covered server
// (KnownIssue::crashes) and which divergences are a row's (KnownIssue::matches).
//
// Each is the behaviour checked live on the release its row names (Redis 8.6.3 for the two crash
// predicates, Valkey 9.1.2 for the flag-named HSETEX key and the short HRANDFIELD reply); the
// arguments are read as the servers read them (whole decimal integers, case-insensitive tokens).
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include <expirykit/known_issues/known_issue.hpp>
#include <expirykit/model/canonical.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::known_issues {

namespace detail {
/// A whole decimal integer (sign allowed), as the servers parse one.
inline bool whole_number(const std::string& s, long long& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size() && s.find_first_of(" \t") == std::string::npos;
}
inline bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'a' && a[i] <= 'z') ? char(a[i] - 'a' + 'A') : a[i];
    const char y = (b[i] >= 'a' && b[i] <= 'z') ? char(b[i] - 'a' + 'A') : b[i];
    if (x != y) return false;
  }
  return true;
}
/// HSETEX with a time option (EX, PX, EXAT, PXAT; not a past PXAT/EXAT; before or after the
/// FIELDS block) that names one field twice, on a hash or a new key: the
/// redis-hsetex-duplicate-field-hashtable-crash row (live 8.6.3), held back wider than the row's
/// reproduced conditions (a hashtable that never had a field TTL), see the end of the function.
inline bool hsetex_timed_names_a_field_twice(const model::Keyspace& ks, const resp::Argv& a, int64_t now) {
  if (a.size() < 6 || !iequal(a[0], "HSETEX")) return false;
  // Options stand before or after the FIELDS block on 8.6 (live: both forms crash).
  std::size_t fields_at = 0, fields_end = 0;
  bool timed = false, past = false;
  for (std::size_t i = 2; i < a.size(); ++i) {
    if (iequal(a[i], "FIELDS") && !fields_at && i + 1 < a.size()) {
      long long n = 0;
      if (!whole_number(a[i + 1], n) || n < 1 || static_cast<unsigned long long>(n) > (a.size() - i - 2) / 2) return false;
      fields_at = i;
      fields_end = i + 2 + 2 * static_cast<std::size_t>(n);
      i = fields_end - 1;
      continue;
    }
    const bool abs = iequal(a[i], "EXAT") || iequal(a[i], "PXAT");
    if ((iequal(a[i], "EX") || iequal(a[i], "PX") || abs) && i + 1 < a.size()) {
      timed = true;
      long long t = 0;
      if (abs && whole_number(a[i + 1], t)) past = (iequal(a[i], "EXAT") ? t * 1000 : t) <= now;
    }
  }
  if (!timed || past || !fields_at) return false;
  std::set<std::string> names;
  bool dup = false;
  for (std::size_t i = fields_at + 2; i + 1 < fields_end; i += 2) {
    dup = dup || !names.insert(a[i]).second;
  }
  if (!dup) return false;
  const model::Entry* e = ks.raw(a[1]);
  if (e && !e->is_hash()) return false;  // WRONGTYPE
  // Held back wider than the reproduced conditions: a 6-node Redis 8.6.3 cluster died on such an
  // HSETEX (FXX) that this predicate let through when it asked for a hashtable that never had a
  // field TTL, and the same sequence on one fresh server survives (suites/cluster,
  // RC_PARAMS="seed=17043812125427653659"): encoding and TTL history are not all that decides it.
  return true;
}
/// HEXPIRE, HPEXPIRE, HEXPIREAT or HPEXPIREAT whose numfields is within 4 of INT_MAX: the
/// redis-hexpire-numfields-overflow-crash row (live 8.6.3: 2147483643 to 2147483647 crash,
/// 2147483642 answers the arity error).
inline bool hexpire_numfields_near_int_max(const model::Keyspace&, const resp::Argv& a, int64_t) {
  if (a.size() < 5) return false;
  if (!iequal(a[0], "HEXPIRE") && !iequal(a[0], "HPEXPIRE") && !iequal(a[0], "HEXPIREAT") && !iequal(a[0], "HPEXPIREAT"))
    return false;
  for (std::size_t i = 3; i + 1 < a.size(); ++i) {
    long long n = 0;
    if (iequal(a[i], "FIELDS") && whole_number(a[i + 1], n) && n >= 2147483643LL && n <= 2147483647LL) return true;
  }
  return false;
}
inline bool is_flag_named_hsetex(const resp::Argv& a) {
  if (a.size() < 3) return false;
  std::string c = a[0], k = a[1];
  for (auto* s : {&c, &k})
    for (auto& ch : *s) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
  return c == "HSETEX" && (k == "NX" || k == "XX" || k == "FNX" || k == "FXX");
}
/// HRANDFIELD answering fewer fields than specified (model/cmd/random_read_commands.hpp) but
/// otherwise as specified: nil without a count while the model holds live fields; with a count,
/// an array that model::allowed_random_reply() accepts for the count it actually holds (distinct
/// live fields for a positive count, live fields with repeats for a negative one, each value
/// right under WITHVALUES) and that is shorter than the specified min(count, live) / -count. The
/// valkey-hrandfield-short row (live 9.1.2). A command of a transaction or script: not this.
inline bool hrandfield_short_reply(const Divergence& d) {
  const resp::Argv& a = d.argv;
  if (!d.batch.empty() || a.size() < 2 || a.size() > 4 || !iequal(a[0], "HRANDFIELD")) return false;
  if (!d.model.is_array() || d.model.size() == 0) return false;  // the model holds no live field
  const std::size_t live = d.model.size() / 2;
  if (a.size() == 2) return d.server.is_nil();
  long long n = 0;
  if (!whole_number(a[2], n) || n == 0 || !d.server.is_array()) return false;
  const bool withvalues = a.size() == 4;
  if (withvalues && !iequal(a[3], "WITHVALUES")) return false;
  const std::size_t step = withvalues ? 2 : 1;
  if (d.server.size() % step) return false;
  const std::size_t got = d.server.size() / step;
  const std::size_t specified = n > 0 ? std::min(static_cast<std::size_t>(n), live) : static_cast<std::size_t>(-n);
  if (got >= specified) return false;
  resp::Argv as_got = a;
  as_got[2] = (n > 0 ? "" : "-") + std::to_string(got);
  return got == 0 ? d.server.size() == 0 : model::allowed_random_reply(as_got, d.model, d.server);
}
}  // namespace detail

}  // namespace expirykit::known_issues
