// expirykit/model/cmd/fields_args.hpp: the `FIELDS numfields field...` block of the hash field TTL
// commands, shared by the command functions (field_ttl_commands.hpp, setex_getex_commands.hpp).
//
// Where HSETEX and HGETEX look for the FIELDS keyword, the names of a well-formed block, and the
// "KEY FIELDS numfields field..." prologue of HTTL*, HPERSIST and HGETDEL with its order of
// checks per Grammar (redis-hfe.md §4 [V], valkey-hfe.md §2 [L]; live Valkey 9.1.2, Redis 8.0.6).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

namespace detail {

/// Where the Valkey grammar's HSETEX / HGETEX look for the FIELDS keyword: argv[2], after the key
/// (both servers' documented syntax; Valkey 9.1.2 scans from argv[1], so a key named "fields"
/// is taken for the keyword: known issue valkey-fields-keyword-scan-includes-key,
/// Defects::fields_keyword_scan_includes_key).
inline std::size_t fields_scan_from(const Context& c) { return c.d.defects.fields_keyword_scan_includes_key ? 1 : 2; }

/// Index of the first argument at or after `from` equal to FIELDS (any case), or argc.
inline std::size_t find_fields(const Argv& a, std::size_t from) {
  for (std::size_t i = from; i < a.size(); ++i)
    if (iequals(a[i], "FIELDS")) return i;
  return a.size();
}

/// Field names of a well-formed `FIELDS n f1 .. fn` tail that starts at argv[at].
inline std::vector<std::string> field_list(const Argv& a, std::size_t at) {
  return std::vector<std::string>(a.begin() + static_cast<std::ptrdiff_t>(at) + 2, a.end());
}

/// The "KEY FIELDS numfields field..." prologue shared by HTTL*, HPERSIST, HGETDEL.
/// Returns an error Reply or nil; on success `h` is the hash (nullptr if the key is missing).
/// Redis: WRONGTYPE, then FIELDS token, numfields range, count. Valkey: FIELDS token (syntax
/// error; valkey-io/valkey#4045: not checked before 9.1.2, Defects::fields_token_unchecked),
/// numfields (not an integer / `numfields_err`), then WRONGTYPE. Live 9.1.2 / 8.0.6.
inline Reply fields_prologue(Context& c, const std::string& numfields_err, Hash*& h) {
  const Argv& a = c.argv;
  bool wrong = false;
  h = lookup_hash(c, a[1], wrong);
  if (c.d.grammar == Grammar::redis) {
    if (wrong) return c.wrongtype();
    if (!iequals(a[2], "FIELDS")) return Reply::error(c.d.err.fields_missing);
    long long n = 0;
    if (!parse_ll(a[3], n) || n < 1) return Reply::error(numfields_err);
    if (static_cast<std::size_t>(n) != a.size() - 4) return Reply::error(c.d.err.numfields_mismatch);
    return Reply::nil();
  }
  if (!c.d.defects.fields_token_unchecked && !iequals(a[2], "FIELDS")) return Reply::error(c.d.err.syntax);
  long long n = 0;
  if (!parse_ll(a[3], n)) return Reply::error(c.d.err.not_integer);
  if (n < 1 || static_cast<std::size_t>(n) != a.size() - 4) return Reply::error(numfields_err);
  if (wrong) return c.wrongtype();
  return Reply::nil();
}

}  // namespace detail

}  // namespace expirykit::model::cmd
