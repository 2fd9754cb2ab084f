// expirykit/model/cmd/field_ttl_commands.hpp: the hash field TTL commands.
//
// HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT (NX|XX|GT|LT), HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME,
// HPERSIST, HGETDEL here; HSETEX and HGETEX in setex_getex_commands.hpp, which this header
// includes; the FIELDS block they share in fields_args.hpp. Each takes a Context (state, dialect,
// argv, now in Unix ms), mutates the Keyspace and returns the expected Reply. Times given in
// seconds are converted to absolute ms; relative ones are added to Context::now.
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
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/context.hpp>
#include <expirykit/model/cmd/expiry_args.hpp>
#include <expirykit/model/cmd/fields_args.hpp>
#include <expirykit/model/cmd/keyword_args.hpp>
#include <expirykit/model/cmd/setex_getex_commands.hpp>

namespace expirykit::model::cmd {

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
    if (c.d.keyword_order_free && !canonical) {  // Redis 8.6 (model/cmd/keyword_args.hpp)
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
  const bool had_ttl = h && h->has_volatile();
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
  if (h && h->fields.size() < before) after_field_delete(*h, had_ttl);  // deleted, or expired lazily
  drop_if_emptied(c, c.argv[1], h, before);
  return Reply::array(std::move(out));
}

}  // namespace expirykit::model::cmd
