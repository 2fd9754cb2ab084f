// expirykit/model/cmd/keyword_args.hpp: Redis 8.6's keyword-order argument parser for HEXPIRE,
// HPEXPIRE, HEXPIREAT, HPEXPIREAT, HSETEX and HGETEX (Dialect::keyword_order_free).
//
// Redis 8.6 lets the options of these commands stand before or after the FIELDS block
// (`HEXPIRE k 10 FIELDS 1 f NX`, `HSETEX k FIELDS 1 f v EX 60 FNX`; redis/redis#14416 "flexible
// argument positions", in the 8.6 release notes) and answers its own error texts (with #14883,
// 8.6.2: FIELDS given twice or not at all). The parse below is the behaviour checked live on
// 8.6.3 (the table in docs/semantics/redis-8.6.md), in its order:
//   HEXPIRE*: key type, the time (argv[2]), then each token from argv[3]: FIELDS (given twice:
//     "FIELDS keyword specified multiple times"; among the last two arguments: "FIELDS requires at
//     least numfields and one field argument"; numfields not in [1, INT_MAX]: the numFields text;
//     more names announced than given: bare "wrong number of arguments"; the names are skipped),
//     NX/XX/GT/LT (repeats allowed), anything else "unknown argument: <arg>"; then no FIELDS:
//     "missing FIELDS argument"; two different conditions: "Multiple condition flags specified".
//   HSETEX (parse, then key type) and HGETEX (key type, then parse), tokens from argv[2]: FIELDS
//     as above with "invalid number of fields" for the count (and the command's arity error when
//     FIELDS is the last argument); EX/PX/EXAT/PXAT after another expiry option (or KEEPTTL,
//     PERSIST): "Only one of EX, PX, EXAT, PXAT or KEEPTTL|PERSIST arguments can be specified",
//     as the last argument: "missing expire time", the time parsed at once; PERSIST after a timed
//     option or PERSIST, KEEPTTL after a timed option or KEEPTTL: the same "Only one of" text;
//     FNX/FXX after either: "Only one of FXX or FNX arguments can be specified"; anything else
//     "unknown argument: <arg>"; then no FIELDS: "missing FIELDS argument"; then PERSIST on
//     HSETEX or KEEPTTL/FNX/FXX on HGETEX: bare "unknown argument".
// What passes is rewritten in the order the Redis grammar of field_ttl_commands.hpp and
// setex_getex_commands.hpp reads (options first, FIELDS and its arguments last, a repeated
// condition once), so the semantics stay in one place.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/context.hpp>
#include <expirykit/model/cmd/expiry_args.hpp>

namespace expirykit::model::cmd::keyword {

/// The error the 8.6 parser answers, or the command in canonical order.
struct Parsed {
  std::optional<Reply> error;
  Argv canonical;
};

namespace detail {
inline bool in_int_range(const std::string& s, long long& n) { return parse_ll(s, n) && n >= 1 && n <= 2147483647LL; }

/// The FIELDS block at argv[i]: sets `first`/`count` and returns the index of its last argument,
/// or the error. `per_field`: 1 (names) or 2 (name value pairs); `range_err`: the numfields text.
inline std::optional<Reply> fields_block(Context& c, std::size_t& i, std::size_t& first, long long& count, int per_field,
                                         const std::string& range_err, const std::string& too_close_err) {
  const Argv& a = c.argv;
  if (first != 0) return Reply::error(c.d.err.fields_twice);
  if (too_close_err.empty() ? i + 1 >= a.size() : i + 2 >= a.size())
    return too_close_err.empty() ? c.arity() : Reply::error(too_close_err);
  if (!in_int_range(a[i + 1], count)) return Reply::error(range_err);
  first = i + 2;
  if (static_cast<unsigned long long>(count) * static_cast<unsigned long long>(per_field) > a.size() - first)
    return Reply::error(c.d.err.wrong_args_bare);
  i = first + static_cast<std::size_t>(count) * static_cast<std::size_t>(per_field) - 1;
  return std::nullopt;
}
}  // namespace detail

/// HEXPIRE key time <FIELDS n f... | NX|XX|GT|LT>... (after the key type check, which the
/// caller does first). `unit`/`absolute`: the command's time argument.
inline Parsed hexpire(Context& c, Unit unit, bool absolute) {
  const Argv& a = c.argv;
  Parsed p;
  Reply err;
  if (!cmd::detail::deadline(c, a[2], unit, absolute, err)) {
    p.error = err;
    return p;
  }
  std::size_t first = 0;
  long long count = 0;
  std::string cond;
  int conds = 0;
  for (std::size_t i = 3; i < a.size(); ++i) {
    if (iequals(a[i], "FIELDS")) {
      if (auto e = detail::fields_block(c, i, first, count, 1, c.d.err.hexpire_numfields_range, c.d.err.fields_too_close)) {
        p.error = e;
        return p;
      }
      continue;
    }
    bool is_cond = false;
    for (const char* x : {"NX", "XX", "GT", "LT"})
      if (iequals(a[i], x)) {
        is_cond = true;
        if (cond != x) ++conds;
        cond = x;
      }
    if (!is_cond) {
      p.error = c.error(c.d.err.unknown_argument, a[i]);
      return p;
    }
  }
  if (!first) {
    p.error = Reply::error(c.d.err.fields_missing_86);
    return p;
  }
  if (conds > 1) {
    p.error = Reply::error(c.d.err.multiple_conditions);
    return p;
  }
  p.canonical = {a[0], a[1], a[2]};
  if (!cond.empty()) p.canonical.push_back(cond);
  p.canonical.insert(p.canonical.end(), {"FIELDS", a[first - 1]});
  p.canonical.insert(p.canonical.end(), a.begin() + static_cast<std::ptrdiff_t>(first),
                     a.begin() + static_cast<std::ptrdiff_t>(first + static_cast<std::size_t>(count)));
  return p;
}

/// HSETEX (`setex`) or HGETEX: see the file comment.
inline Parsed setex_getex(Context& c, bool setex) {
  const Argv& a = c.argv;
  Parsed p;
  std::size_t first = 0;
  long long count = 0;
  std::string expiry, expiry_value, cond;  // "EX" + its time, "KEEPTTL", "PERSIST"; "FNX"/"FXX"
  bool timed = false, keepttl = false, persist = false;
  const std::string& one_expiry = setex ? c.d.err.hsetex_one_expiry : c.d.err.hgetex_one_expiry;
  auto fail = [&](Reply r) {
    p.error = std::move(r);
    return p;
  };
  for (std::size_t i = 2; i < a.size(); ++i) {
    const std::string& t = a[i];
    if (iequals(t, "FIELDS")) {
      if (auto e = detail::fields_block(c, i, first, count, setex ? 2 : 1, c.d.err.hsetex_numfields_invalid, ""))
        return fail(*e);
      continue;
    }
    const auto k = cmd::detail::expiry_kind(t);
    if (k != cmd::detail::ExpiryOpt::none && k != cmd::detail::ExpiryOpt::keepttl && k != cmd::detail::ExpiryOpt::persist) {
      if (timed || keepttl || persist) return fail(Reply::error(one_expiry));
      if (i + 1 >= a.size()) return fail(Reply::error(c.d.err.missing_expire_time));
      cmd::detail::ExpiryOpt o;
      o.kind = k;
      Reply err;
      if (!cmd::detail::deadline(c, a[i + 1], o.unit(), o.absolute(), err)) return fail(err);
      timed = true;
      expiry = t;
      expiry_value = a[++i];
    } else if (k == cmd::detail::ExpiryOpt::persist) {
      if (timed || persist) return fail(Reply::error(one_expiry));
      persist = true;
    } else if (k == cmd::detail::ExpiryOpt::keepttl) {
      if (timed || keepttl) return fail(Reply::error(one_expiry));
      keepttl = true;
    } else if (iequals(t, "FNX") || iequals(t, "FXX")) {
      if (!cond.empty()) return fail(Reply::error(c.d.err.hsetex_fnx_fxx));
      cond = t;
    } else {
      return fail(c.error(c.d.err.unknown_argument, t));
    }
  }
  if (!first) return fail(Reply::error(c.d.err.fields_missing_86));
  if ((setex && persist) || (!setex && (keepttl || !cond.empty()))) return fail(Reply::error(c.d.err.unknown_argument_bare));
  p.canonical = {a[0], a[1]};
  if (!cond.empty()) p.canonical.push_back(cond);
  if (timed) p.canonical.insert(p.canonical.end(), {expiry, expiry_value});
  if (keepttl) p.canonical.push_back("KEEPTTL");
  if (persist) p.canonical.push_back("PERSIST");
  p.canonical.insert(p.canonical.end(), {"FIELDS", a[first - 1]});
  const std::size_t n = static_cast<std::size_t>(count) * (setex ? 2 : 1);
  p.canonical.insert(p.canonical.end(), a.begin() + static_cast<std::ptrdiff_t>(first),
                     a.begin() + static_cast<std::ptrdiff_t>(first + n));
  return p;
}

}  // namespace expirykit::model::cmd::keyword
