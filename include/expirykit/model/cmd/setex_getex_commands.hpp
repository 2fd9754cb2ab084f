// expirykit/model/cmd/setex_getex_commands.hpp: HSETEX and HGETEX, the hash field TTL commands that
// write or read values and set (or remove) the fields' TTLs in the same call.
//
// Each takes a Context (state, dialect, argv, now in Unix ms), mutates the Keyspace and returns
// the expected Reply; `canonical` says the arguments are already in the Redis 8.0 order (a
// rewrite by keyword_args.hpp). Times given in seconds are converted to absolute ms; relative
// ones are added to Context::now (expiry_args.hpp).
//
// Argument checking follows the dialect's Grammar: the order of checks and the texts were taken
// from redis-hfe.md §4 [V] and valkey-hfe.md §2 [L], and completed against live servers (Valkey
// 9.1.2, Redis 8.0.6) where the references are silent.
//
// Effects (model/effects.hpp): the events of valkey-hfe.md §3, §4 and redis-hfe.md §7; a
// deadline <= now deletes the field and counts it in expired_fields; a future deadline converts
// a listpack hash (Dialect::ttl_encoding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/context.hpp>
#include <expirykit/model/cmd/expiry_args.hpp>
#include <expirykit/model/cmd/fields_args.hpp>
#include <expirykit/model/cmd/keyword_args.hpp>

namespace expirykit::model::cmd {

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
    if (c.d.keyword_order_free && !canonical) {  // Redis 8.6 (model/cmd/keyword_args.hpp)
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
