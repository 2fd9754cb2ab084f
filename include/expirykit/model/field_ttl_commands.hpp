// expirykit/model/field_ttl_commands.hpp: the hash field TTL commands.
//
// HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (NX|XX|GT|LT), HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME,
// HPERSIST, HSETEX, HGETEX, HGETDEL. Each takes a Context (state, dialect, argv, now in Unix ms),
// mutates the Keyspace and returns the expected Reply. Times given in seconds are converted to
// absolute ms; relative ones are added to Context::now.
//
// Argument checking follows the dialect's Grammar: the order of checks and the texts were taken
// from redis-hfe.md §4 [V] and valkey-hfe.md §2 [L], and completed against live servers (Valkey
// 9.1.2, Redis 8.0.6) where the references are silent.
//
// Effects (model/effects.hpp): the events of valkey-hfe.md §3-§8, §12 and redis-hfe.md §7; a
// deadline <= now deletes the field and counts it in expired_fields; a future deadline converts
// a listpack hash (Dialect::ttl_encoding).
#pragma once

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/context.hpp>
#include <expirykit/model/expiry_args.hpp>
#include <expirykit/model/keyword_args.hpp>

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

namespace detail {
/// Events, counters and encoding after HEXPIRE* (valkey-hfe.md §5 "Events and propagation",
/// redis-hfe.md §7): a deleted field (code 2) gives one Dialect::past_ttl_event and
/// expired_fields + n; otherwise a set deadline (code 1) gives one `hexpire`; -2/0 only: none.
inline void hexpire_effects(Context& c, const std::string& key, const std::vector<long long>& codes, bool reached) {
  long long set = 0, deleted = 0;
  for (long long x : codes) {
    set += x == 1;
    deleted += x == 2;
  }
  if (deleted) {
    c.ks.counters().expired_fields += deleted;
    notify(c, c.d.past_ttl_event.c_str(), key);
  } else if (set) {
    notify(c, "hexpire", key);
  }
  if (set || deleted || (reached && c.d.ttl_attempt_converts))
    after_hash_write(c, key, set > 0 || c.d.ttl_attempt_converts);
}
}  // namespace detail

/// HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT key time [NX|XX|GT|LT] FIELDS n field...
/// -> array, one code per field in request order (valkey-hfe.md §5 [L], redis-hfe.md §3 [V]):
///   -2 no such field/key (Valkey: also a logically expired field), 0 condition failed,
///    1 deadline set, 2 deadline <= now and the field was deleted (conditions are checked first).
/// GT/LT treat "no TTL" as infinite. A missing key is not created; an emptied hash is deleted.
/// A logically expired field answers -2 and is left as it is, on both servers, as HTTL and
/// HPERSIST answer for it (Redis 8.0.6 instead sees it with its past deadline and revives it:
/// known issue redis-hexpire-revives-expired-field, Defects::hexpire_sees_expired). Redis accepts
/// one condition; Valkey several (XX GT) and repeats (NX NX).
inline Reply hexpire_generic(Context& c, Unit unit, bool absolute, bool canonical = false) {
  const Argv& a = c.argv;
  if (a.size() < 6) return c.arity();
  bool nx = false, xx = false, gt = false, lt = false;
  std::size_t fields_at = 0;
  int64_t when = 0;
  Reply err;
  bool wrong = false;
  Hash* h = lookup_hash(c, a[1], wrong);
  if (c.d.grammar == Grammar::redis) {
    if (wrong) return c.wrongtype();
    if (c.d.keyword_order_free && !canonical) {  // Redis 8.6 (model/keyword_args.hpp)
      auto p = keyword::hexpire(c, unit, absolute);
      if (p.error) return *p.error;
      Context cc{c.ks, c.d, p.canonical, c.now};
      return hexpire_generic(cc, unit, absolute, true);
    }
    auto t = detail::deadline(c, a[2], unit, absolute, err);
    if (!t) return err;
    when = *t;
    fields_at = 3;
    if (iequals(a[3], "NX")) nx = true;
    else if (iequals(a[3], "XX")) xx = true;
    else if (iequals(a[3], "GT")) gt = true;
    else if (iequals(a[3], "LT")) lt = true;
    if (nx || xx || gt || lt) fields_at = 4;
    if (!iequals(a[fields_at], "FIELDS")) return Reply::error(c.d.err.fields_missing);
    long long n = 0;
    if (!parse_ll(a[fields_at + 1], n) || n < 1) return Reply::error(c.d.err.hexpire_numfields_range);
    if (static_cast<std::size_t>(n) != a.size() - fields_at - 2)
      return Reply::error(c.d.err.numfields_mismatch);
  } else {
    fields_at = detail::find_fields(a, 3);
    if (fields_at + 1 >= a.size()) return Reply::error(c.d.err.numfields);
    for (std::size_t i = 3; i < fields_at; ++i) {
      if (iequals(a[i], "NX")) nx = true;
      else if (iequals(a[i], "XX")) xx = true;
      else if (iequals(a[i], "GT")) gt = true;
      else if (iequals(a[i], "LT")) lt = true;
      else return c.error(c.d.err.unsupported_option, a[i]);
    }
    if (nx && (xx || gt || lt)) return Reply::error(c.d.err.nx_incompatible);
    if (gt && lt) return Reply::error(c.d.err.gt_lt_incompatible);
    long long n = 0;
    if (!parse_ll(a[fields_at + 1], n)) return Reply::error(c.d.err.not_integer);
    if (n < 1 || static_cast<std::size_t>(n) != a.size() - fields_at - 2)
      return Reply::error(c.d.err.numfields);
    auto t = detail::deadline(c, a[2], unit, absolute, err);
    if (!t) return err;
    when = *t;
    if (wrong) return c.wrongtype();
  }
  std::vector<long long> codes;
  const std::size_t before = h ? h->fields.size() : 0;
  for (const auto& name : detail::field_list(a, fields_at)) {
    if (!h) {
      codes.push_back(-2);
      continue;
    }
    auto it = h->fields.find(name);
    if (it == h->fields.end() || (it->second.expired(c.now) && !c.d.defects.hexpire_sees_expired)) {
      codes.push_back(-2);
      continue;
    }
    const std::optional<int64_t> prev = it->second.expire_ms;
    if ((nx && prev) || (xx && !prev) || (gt && (!prev || when <= *prev)) || (lt && prev && when >= *prev)) {
      codes.push_back(0);
      continue;
    }
    if (when <= c.now) {
      h->fields.erase(it);
      codes.push_back(2);
      continue;
    }
    it->second.expire_ms = when;
    codes.push_back(1);
  }
  detail::hexpire_effects(c, a[1], codes, h != nullptr);
  drop_if_emptied(c, a[1], h, before);
  return Reply::ints(codes);
}

inline Reply hexpire(Context& c) { return hexpire_generic(c, Unit::seconds, false); }
inline Reply hpexpire(Context& c) { return hexpire_generic(c, Unit::milliseconds, false); }
inline Reply hexpireat(Context& c) { return hexpire_generic(c, Unit::seconds, true); }
inline Reply hpexpireat(Context& c) { return hexpire_generic(c, Unit::milliseconds, true); }

/// What HTTL-family commands report.
enum class TtlQuery { ttl_s, ttl_ms, time_s, time_ms };

/// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS n field... -> array, per field:
/// -2 no field/key or logically expired (never deleted, both servers), -1 no TTL, else the
/// remaining time (clamped at 0) or the absolute deadline. Second variants round with
/// dialect.sec_rounding (Valkey nearest, Redis ceiling: redis-hfe.md §3 [V], valkey-hfe.md §6).
/// Errors: Valkey gives "syntax error" for any numfields problem (valkey-hfe.md §6 [L]).
inline Reply httl_generic(Context& c, TtlQuery q) {
  if (c.argv.size() < 5) return c.arity();
  Hash* h = nullptr;
  Reply e = detail::fields_prologue(c, c.d.err.httl_numfields, h);
  if (e.is_error()) return e;
  std::vector<long long> out;
  for (const auto& name : detail::field_list(c.argv, 2)) {
    const Field* f = h ? h->live(name, c.now) : nullptr;
    if (!f) {
      out.push_back(-2);
    } else if (!f->expire_ms) {
      out.push_back(-1);
    } else {
      const int64_t t = *f->expire_ms;
      const int64_t left = t > c.now ? t - c.now : 0;
      switch (q) {
        case TtlQuery::ttl_s: out.push_back(c.d.to_seconds(left)); break;
        case TtlQuery::ttl_ms: out.push_back(left); break;
        case TtlQuery::time_s: out.push_back(c.d.to_seconds(t)); break;
        case TtlQuery::time_ms: out.push_back(t); break;
      }
    }
  }
  return Reply::ints(out);
}

inline Reply httl(Context& c) { return httl_generic(c, TtlQuery::ttl_s); }
inline Reply hpttl(Context& c) { return httl_generic(c, TtlQuery::ttl_ms); }
inline Reply hexpiretime(Context& c) { return httl_generic(c, TtlQuery::time_s); }
inline Reply hpexpiretime(Context& c) { return httl_generic(c, TtlQuery::time_ms); }

/// HPERSIST key FIELDS n field... -> array, per field: 1 TTL removed, -1 no TTL, -2 no field/key
/// or logically expired (valkey-hfe.md §7 [L], redis-hfe.md §3 [V]). Duplicates: `1 -1`.
inline Reply hpersist(Context& c) {
  if (c.argv.size() < 5) return c.arity();
  Hash* h = nullptr;
  Reply e = detail::fields_prologue(c, c.d.err.numfields_range, h);
  if (e.is_error()) return e;
  std::vector<long long> out;
  for (const auto& name : detail::field_list(c.argv, 2)) {
    Field* f = h ? h->live(name, c.now) : nullptr;
    if (!f) out.push_back(-2);
    else if (!f->expire_ms) out.push_back(-1);
    else {
      f->expire_ms.reset();
      out.push_back(1);
    }
  }
  if (std::count(out.begin(), out.end(), 1)) {
    notify(c, "hpersist", c.argv[1]);
    after_hash_write(c, c.argv[1], false);
  }
  return Reply::ints(out);
}

/// HGETDEL key FIELDS n field... -> array of values (nil for missing, for a repeat, and for a
/// logically expired field); live fields are deleted, the key with its last field. Redis also
/// deletes expired fields it touches; Valkey leaves them (valkey-hfe.md §8 [L]).
inline Reply hgetdel(Context& c) {
  if (!c.d.has_hgetdel) throw Unmodelled("HGETDEL does not exist in " + c.d.name);
  if (c.argv.size() < 5) return c.arity();
  Hash* h = nullptr;
  Reply e = detail::fields_prologue(c, c.d.err.numfields_range, h);
  if (e.is_error()) return e;
  std::vector<Reply> out;
  const std::size_t before = h ? h->fields.size() : 0;
  bool deleted = false;
  for (const auto& name : detail::field_list(c.argv, 2)) {
    if (h) lazy_expire_field(c, c.argv[1], name, /*keep_key=*/true);  // `del` after `hdel`
    Field* f = h ? h->live(name, c.now) : nullptr;
    if (!f) {
      out.push_back(Reply::nil());
      continue;
    }
    out.push_back(Reply::string(f->value));
    h->fields.erase(name);
    deleted = true;
  }
  if (deleted) {
    notify(c, "hdel", c.argv[1]);
    after_hash_write(c, c.argv[1], false);
  }
  drop_if_emptied(c, c.argv[1], h, before);
  return Reply::array(std::move(out));
}


/// HGETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] FIELDS n field... -> array of values / nils
/// (missing key: all nils, nothing created). Per field in order: the live value is returned,
/// then a future deadline is set (overwriting, no GT/LT), a deadline <= now deletes the field,
/// PERSIST removes the TTL (valkey-hfe.md §4 [L][T], redis-hfe.md §3 [V]). Duplicates are
/// answered one by one (`EX 0` twice: value, nil). Redis first deletes expired fields it touches.
/// Check order: Redis WRONGTYPE, option and time, arity, FIELDS position, numfields; Valkey
/// option syntax (first FIELDS token is the keyword), numfields, WRONGTYPE, time (live).
inline Reply hgetex(Context& c, bool canonical) {
  if (!c.d.has_hgetex) throw Unmodelled("HGETEX does not exist in " + c.d.name);
  const Argv& a = c.argv;
  if (a.size() < 5) return c.arity();
  bool wrong = false;
  Hash* h = lookup_hash(c, a[1], wrong);
  detail::ExpiryOpt opt;
  std::size_t fields_at = 2;
  std::optional<int64_t> when;
  Reply err;
  if (c.d.grammar == Grammar::redis) {
    if (wrong) return c.wrongtype();
    if (c.d.keyword_order_free && !canonical) {  // Redis 8.6 (model/keyword_args.hpp)
      auto p = keyword::setex_getex(c, false);
      if (p.error) return *p.error;
      Context cc{c.ks, c.d, p.canonical, c.now};
      return hgetex(cc, true);
    }
    opt.kind = detail::expiry_kind(a[2]);
    if (opt.timed()) {
      auto t = detail::deadline(c, a[3], opt.unit(), opt.absolute(), err);
      if (!t) return err;
      when = t;
      fields_at = 4;
    } else if (opt.kind == detail::ExpiryOpt::persist) {
      fields_at = 3;
    } else {
      opt.kind = detail::ExpiryOpt::none;
    }
    if (fields_at + 1 >= a.size()) return c.arity();
    if (!iequals(a[fields_at], "FIELDS")) return Reply::error(c.d.err.fields_missing);
    long long n = 0;
    if (!parse_ll(a[fields_at + 1], n) || n < 1) return Reply::error(c.d.err.numfields_range);
    if (static_cast<std::size_t>(n) != a.size() - fields_at - 2)
      return Reply::error(c.d.err.numfields_mismatch);
  } else {
    fields_at = detail::find_fields(a, detail::fields_scan_from(c));
    if (fields_at + 1 >= a.size()) return Reply::error(c.d.err.numfields);
    for (std::size_t i = 2; i < fields_at; ++i) {
      auto k = detail::expiry_kind(a[i]);
      if (k == detail::ExpiryOpt::none || k == detail::ExpiryOpt::keepttl) return Reply::error(c.d.err.syntax);
      if (opt.kind != detail::ExpiryOpt::none && opt.kind != k) return Reply::error(c.d.err.syntax);
      opt.kind = k;
      if (k != detail::ExpiryOpt::persist) {
        if (i + 1 >= fields_at) return Reply::error(c.d.err.syntax);
        opt.value = a[++i];
      }
    }
    long long n = 0;
    if (!parse_ll(a[fields_at + 1], n)) return Reply::error(c.d.err.not_integer);
    if (n < 1 || static_cast<std::size_t>(n) != a.size() - fields_at - 2)
      return Reply::error(c.d.err.numfields);
    if (wrong) return c.wrongtype();
    if (opt.timed()) {
      when = detail::deadline(c, opt.value, opt.unit(), opt.absolute(), err);
      if (!when) return err;
    }
  }
  std::vector<Reply> out;
  const std::size_t before = h ? h->fields.size() : 0;
  long long deleted = 0, set = 0, persisted = 0;
  for (const auto& name : detail::field_list(a, fields_at)) {
    if (h) lazy_expire_field(c, a[1], name, /*keep_key=*/true);  // `del` after the option's event
    Field* f = h ? h->live(name, c.now) : nullptr;
    if (!f) {
      out.push_back(Reply::nil());
      continue;
    }
    out.push_back(Reply::string(f->value));
    if (when && *when <= c.now) {
      h->fields.erase(name);
      ++deleted;
    } else if (when) {
      f->expire_ms = when;
      ++set;
    } else if (opt.kind == detail::ExpiryOpt::persist && f->expire_ms) {
      f->expire_ms.reset();
      ++persisted;
    }
  }
  // One event per call, only if a field changed (valkey-hfe.md §4 "Events", redis-hfe.md §7).
  if (deleted) {
    c.ks.counters().expired_fields += deleted;
    notify(c, c.d.past_ttl_event.c_str(), a[1]);
  } else if (set) {
    notify(c, "hexpire", a[1]);
  } else if (persisted) {
    notify(c, "hpersist", a[1]);
  }
  const bool reached = h && opt.kind != detail::ExpiryOpt::none && c.d.ttl_attempt_converts;
  if (deleted || set || persisted || reached) after_hash_write(c, a[1], set > 0 || reached);
  drop_if_emptied(c, a[1], h, before);
  return Reply::array(std::move(out));
}
inline Reply hgetex(Context& c) { return hgetex(c, false); }

/// HSETEX key [NX|XX] [FNX|FXX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] FIELDS n field value...
/// -> 1 when applied (also when a deadline <= now deleted every listed field instead of setting
/// it), 0 when NX/XX (Valkey only: dialect.hsetex_key_nx_xx) or FNX/FXX blocked the whole call
/// (valkey-hfe.md §3 [L], redis-hfe.md §3 [V]). Logically expired fields count as missing for
/// FNX/FXX. No option clears the TTL of each field written; KEEPTTL keeps a live field's TTL
/// and writes a logically expired field as a new one without TTL (Valkey 9.1.2; Redis 8.0.6
/// keeps the past deadline: known issue redis-hsetex-keepttl-expired-deadline,
/// Defects::hsetex_keepttl_keeps_expired_deadline); a timed option overwrites it. Duplicate
/// fields: the last value wins. An emptied / never-created hash does not exist afterwards.
/// Check order: Redis parses and validates times first, then WRONGTYPE; Valkey checks option
/// syntax, numfields, WRONGTYPE, NX/XX, the time, then FNX/FXX. Redis's FIELDS: at one of the
/// last three arguments the arity error, numfields outside [1, dialect.hsetex_numfields_max] (not
/// a number included) "invalid number of fields", a count that does not match the arity error
/// (redis/redis src/t_hash.c hsetexParseArgs; live 8.0.6).
inline Reply hsetex(Context& c, bool canonical) {
  if (!c.d.has_hsetex) throw Unmodelled("HSETEX does not exist in " + c.d.name);
  const Argv& a = c.argv;
  if (a.size() < 6) return c.arity();
  if (c.d.grammar == Grammar::redis && c.d.keyword_order_free && !canonical) {  // Redis 8.6, then the key type
    auto p = keyword::setex_getex(c, true);
    if (p.error) return *p.error;
    Context cc{c.ks, c.d, p.canonical, c.now};
    return hsetex(cc, true);
  }
  bool key_nx = false, key_xx = false, fnx = false, fxx = false;
  detail::ExpiryOpt opt;
  std::optional<int64_t> when;
  std::size_t fields_at = a.size();
  Reply err;
  if (c.d.grammar == Grammar::redis) {
    for (std::size_t i = 2; i < a.size(); ++i) {
      const std::string& tok = a[i];
      if (iequals(tok, "FNX") || iequals(tok, "FXX")) {
        if (fnx || fxx) return Reply::error(c.d.err.hsetex_fnx_fxx);
        (iequals(tok, "FNX") ? fnx : fxx) = true;
        continue;
      }
      if (iequals(tok, "FIELDS")) {
        if (i + 3 >= a.size()) return c.arity();
        long long n = 0;
        if (!parse_ll(a[i + 1], n) || n < 1 || n > c.d.hsetex_numfields_max)
          return Reply::error(c.d.err.hsetex_numfields_invalid);
        if (static_cast<unsigned long long>(n) > (a.size() - i - 2) / 2 ||
            static_cast<std::size_t>(n) * 2 != a.size() - i - 2)
          return c.arity();
        fields_at = i;
        break;
      }
      auto k = detail::expiry_kind(tok);
      if (k == detail::ExpiryOpt::none || k == detail::ExpiryOpt::persist)
        return c.error(c.d.err.unknown_argument, tok);
      if (opt.kind != detail::ExpiryOpt::none) return Reply::error(c.d.err.hsetex_one_expiry);
      opt.kind = k;
      if (k == detail::ExpiryOpt::keepttl) continue;
      if (i + 1 >= a.size()) return Reply::error(c.d.err.not_integer);
      when = detail::deadline(c, a[++i], opt.unit(), opt.absolute(), err);
      if (!when) return err;
    }
    if (fields_at == a.size()) return c.arity();
    bool wrong = false;
    lookup_hash(c, a[1], wrong);
    if (wrong) return c.wrongtype();
  } else {
    fields_at = detail::find_fields(a, detail::fields_scan_from(c));
    if (fields_at + 1 >= a.size()) return Reply::error(c.d.err.numfields);
    for (std::size_t i = 2; i < fields_at; ++i) {
      const std::string& tok = a[i];
      if (c.d.hsetex_key_nx_xx && (iequals(tok, "NX") || iequals(tok, "XX"))) {
        bool is_nx = iequals(tok, "NX");
        if ((is_nx && key_xx) || (!is_nx && key_nx)) return Reply::error(c.d.err.syntax);
        (is_nx ? key_nx : key_xx) = true;
        continue;
      }
      if (iequals(tok, "FNX") || iequals(tok, "FXX")) {
        bool is_fnx = iequals(tok, "FNX");
        if ((is_fnx && fxx) || (!is_fnx && fnx)) return Reply::error(c.d.err.syntax);
        (is_fnx ? fnx : fxx) = true;
        continue;
      }
      auto k = detail::expiry_kind(tok);
      if (k == detail::ExpiryOpt::none || k == detail::ExpiryOpt::persist) return Reply::error(c.d.err.syntax);
      if (opt.kind != detail::ExpiryOpt::none && opt.kind != k) return Reply::error(c.d.err.syntax);
      opt.kind = k;
      if (k == detail::ExpiryOpt::keepttl) continue;
      if (i + 1 >= fields_at) return Reply::error(c.d.err.syntax);
      opt.value = a[++i];
    }
    long long n = 0;
    if (!parse_ll(a[fields_at + 1], n)) return Reply::error(c.d.err.not_integer);
    if (n < 1 || static_cast<unsigned long long>(n) > (a.size() - fields_at - 2) / 2 ||
        static_cast<std::size_t>(n) * 2 != a.size() - fields_at - 2)
      return Reply::error(c.d.err.numfields);
    bool wrong = false;
    Hash* h0 = lookup_hash(c, a[1], wrong);
    if (wrong) return c.wrongtype();
    const bool exists = h0 != nullptr;
    if ((key_nx && exists) || (key_xx && !exists)) return Reply::integer(0);
    if (opt.timed()) {
      when = detail::deadline(c, opt.value, opt.unit(), opt.absolute(), err);
      if (!when) return err;
    }
  }
  // FNX / FXX, all-or-nothing; Redis deletes expired listed fields on the way, in argument
  // order, and stops at the first field that fails the condition: the expired fields after it
  // stay (live 8.0.6, found by the durability property: `HSETEX h KEEPTTL FXX FIELDS 2 missing
  // v expired v` replies 0 and leaves the expired field stored).
  // The key stays while the fields are looked at, even when emptied: a blocked call deletes it
  // after the `hexpired`, a passing one writes into it (`hexpired`, `hset`, no `del`).
  if (fnx || fxx) {
    bool wrong = false;
    Hash* h = lookup_hash(c, a[1], wrong);
    const std::size_t before = h ? h->fields.size() : 0;
    for (std::size_t i = fields_at + 2; i < a.size(); i += 2) {
      if (h) lazy_expire_field(c, a[1], a[i], /*keep_key=*/true);
      const bool live = h && h->live(a[i], c.now);
      if ((fnx && live) || (fxx && !live)) {
        drop_if_emptied(c, a[1], h, before);
        return Reply::integer(0);
      }
    }
  }
  const bool past = when && *when <= c.now;
  bool wrong = false;
  Hash* h = lookup_hash(c, a[1], wrong);
  if (past) {
    // Valkey: hset, hexpire, hexpired; Redis: hset, hdel; then del when the key is (or stays)
    // empty, even for a key that did not exist; expired_fields + one per LISTED field, new ones
    // included (valkey-hfe.md §3 "Notifications", "quirk"; live 9.1.2 and 8.0.6 alike). The
    // encoding: Valkey keeps a listpack, Redis makes it listpackex (redis-hfe.md §8).
    const std::size_t listed = (a.size() - fields_at - 2) / 2;
    c.ks.counters().expired_fields += static_cast<int64_t>(listed);
    notify(c, "hset", a[1]);
    if (c.d.past_ttl_event == "hexpired") notify(c, "hexpire", a[1]);
    notify(c, c.d.past_ttl_event.c_str(), a[1]);
    if (h) {
      // Redis checks argument lengths against hash-max-listpack-value before it looks at the
      // time (live 8.0.6: a 200-byte field name given PX 0 makes a hashtable); Valkey does not.
      bool long_arg = false;
      for (std::size_t i = fields_at + 2; i < a.size(); ++i) long_arg = long_arg || a[i].size() > c.ks.limits().value;
      for (std::size_t i = fields_at + 2; i < a.size(); i += 2) {
        auto it = h->fields.find(a[i]);
        if (it == h->fields.end()) continue;
        h->fields.erase(it);
      }
      if (long_arg && c.d.ttl_attempt_converts) h->encoding = Encoding::hashtable;
      after_hash_write(c, a[1], c.d.ttl_attempt_converts);
      c.ks.drop_if_empty(a[1]);
    } else {
      notify(c, "del", a[1], 'g');
    }
    return Reply::integer(1);
  }
  Hash& hh = h ? *h : c.ks.hash_or_create(a[1], c.now);
  // Each expired field once, however often it is listed (live 9.1.2: `HSETEX h EX 1000 FIELDS
  // 2 b 1 b 2` over an expired b adds 1 to expired_fields).
  std::set<std::string> listed;
  for (std::size_t i = fields_at + 2; i < a.size(); i += 2)
    if (listed.insert(a[i]).second) overwrite_expired(c, a[1], hh, a[i]);
  for (std::size_t i = fields_at + 2; i < a.size(); i += 2) {
    auto it = hh.fields.find(a[i]);
    std::optional<int64_t> ttl;
    if (when) {
      ttl = when;
    } else if (opt.kind == detail::ExpiryOpt::keepttl && it != hh.fields.end()) {
      if (!it->second.expired(c.now) || c.d.defects.hsetex_keepttl_keeps_expired_deadline) ttl = it->second.expire_ms;
    }
    hh.fields[a[i]] = Field{a[i + 1], ttl};
  }
  notify(c, "hset", a[1]);
  if (when) notify(c, "hexpire", a[1]);
  after_hash_write(c, a[1], when.has_value());
  return Reply::integer(1);
}
inline Reply hsetex(Context& c) { return hsetex(c, false); }

}  // namespace expirykit::model::cmd
