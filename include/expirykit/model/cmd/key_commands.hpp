// expirykit/model/cmd/key_commands.hpp: key-level commands beside the hash field TTLs.
//
// DEL, EXISTS, TYPE, SET, GET, EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, PERSIST, TTL, PTTL, RENAME,
// COPY. Key TTLs are absolute Unix ms and independent of field TTLs (redis-hfe.md §5 [V],
// valkey-hfe.md §11 [L]). A hash whose fields are all logically expired but not reclaimed still
// exists for EXISTS, TYPE, DEL (valkey-hfe.md §10 [L]; Redis until a read deletes them lazily).
// Options outside the model (SET IFEQ, ...) throw Unmodelled.
// Events (model/effects.hpp): del, set ($), expire, persist, rename_from, rename_to, copy_to
// (class g unless noted), as the servers' generic commands emit them.
#pragma once

#include <optional>
#include <string>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

/// DEL key [key ...] -> number of keys removed (a repeated key counts once).
inline Reply del(Context& c) {
  if (c.argv.size() < 2) return c.arity();
  long long n = 0;
  for (std::size_t i = 1; i < c.argv.size(); ++i)
    if (c.ks.find(c.argv[i], c.now) && c.ks.erase(c.argv[i])) {
      ++n;
      notify(c, "del", c.argv[i], 'g');
    }
  return Reply::integer(n);
}

/// EXISTS key [key ...] -> number of arguments naming an existing key (repeats count again).
inline Reply exists(Context& c) {
  if (c.argv.size() < 2) return c.arity();
  long long n = 0;
  for (std::size_t i = 1; i < c.argv.size(); ++i) n += c.ks.find(c.argv[i], c.now) != nullptr;
  return Reply::integer(n);
}

/// TYPE key -> status "none", "string" or "hash".
inline Reply type(Context& c) {
  if (c.argv.size() != 2) return c.arity();
  const Entry* e = c.ks.find(c.argv[1], c.now);
  return Reply::status(e ? e->type_name() : "none");
}

/// GET key -> value, nil, or WRONGTYPE on a hash.
inline Reply get(Context& c) {
  if (c.argv.size() != 2) return c.arity();
  const Entry* e = c.ks.find(c.argv[1], c.now);
  if (!e) return Reply::nil();
  if (!e->is_string()) return c.wrongtype();
  return Reply::string(e->string());
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] -> OK, nil when NX/XX blocks,
/// or with GET the old value (WRONGTYPE if the old value is a hash). SET over a hash replaces it
/// (field TTLs gone). Expire times must be > 0 ("invalid expire time in 'set' command"). A
/// repeated option or any other option throws Unmodelled.
inline Reply set(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 3) return c.arity();
  bool nx = false, xx = false, get = false, keepttl = false;
  int timed = 0;  // 1 EX, 2 PX, 3 EXAT, 4 PXAT
  std::string tval;
  for (std::size_t i = 3; i < a.size(); ++i) {
    const std::string& t = a[i];
    int k = iequals(t, "EX") ? 1 : iequals(t, "PX") ? 2 : iequals(t, "EXAT") ? 3 : iequals(t, "PXAT") ? 4 : 0;
    if (iequals(t, "NX")) {
      if (nx) throw Unmodelled("SET with a repeated option");
      if (xx) return Reply::error(c.d.err.syntax);
      nx = true;
    } else if (iequals(t, "XX")) {
      if (xx) throw Unmodelled("SET with a repeated option");
      if (nx) return Reply::error(c.d.err.syntax);
      xx = true;
    } else if (iequals(t, "GET")) {
      if (get) throw Unmodelled("SET with a repeated option");
      get = true;
    } else if (iequals(t, "KEEPTTL")) {
      if (keepttl) throw Unmodelled("SET with a repeated option");
      if (timed) return Reply::error(c.d.err.syntax);
      keepttl = true;
    } else if (k) {
      if (timed == k) throw Unmodelled("SET with a repeated option");
      if (timed || keepttl || i + 1 >= a.size()) return Reply::error(c.d.err.syntax);
      timed = k;
      tval = a[++i];
    } else {
      throw Unmodelled("SET option " + t);
    }
  }
  std::optional<int64_t> when;
  if (timed) {
    long long v = 0;
    if (!parse_ll(tval, v)) return Reply::error(c.d.err.not_integer);
    const bool secs = timed == 1 || timed == 3;
    const int64_t max = std::numeric_limits<int64_t>::max();
    if (v <= 0 || (secs && v > max / 1000)) return c.error(c.d.err.expire_time);
    if (secs) v *= 1000;
    const int64_t base = (timed == 1 || timed == 2) ? c.now : 0;
    if (v > max - base) return c.error(c.d.err.expire_time);
    when = v + base;
  }
  Entry* e = c.ks.find(a[1], c.now);
  Reply old = Reply::nil();
  if (get && e) {
    if (!e->is_string()) return c.wrongtype();
    old = Reply::string(e->string());
  }
  if ((nx && e) || (xx && !e)) return get ? old : Reply::nil();
  std::optional<int64_t> ttl = when;
  if (keepttl && e) ttl = e->expire_ms;
  c.ks.put(a[1], Entry{a[2], ttl});
  notify(c, "set", a[1], '$');
  if (when) notify(c, "expire", a[1], 'g');
  if (ttl && *ttl <= c.now) c.ks.erase(a[1]);  // events of a past EXAT/PXAT: not verified
  return get ? old : Reply::ok();
}

/// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT key time [NX|XX|GT|LT] -> 1 set (or key deleted because
/// the deadline is <= now; negative times allowed), 0 key missing or condition failed. Options
/// are parsed first ("Unsupported option", NX/GT/LT incompatibility), then the time ("invalid
/// expire time in '<cmd>' command" on overflow). GT/LT treat "no TTL" as infinite.
inline Reply expire_generic(Context& c, bool seconds, bool absolute) {
  const Argv& a = c.argv;
  if (a.size() < 3) return c.arity();
  bool nx = false, xx = false, gt = false, lt = false;
  for (std::size_t i = 3; i < a.size(); ++i) {
    if (iequals(a[i], "NX")) nx = true;
    else if (iequals(a[i], "XX")) xx = true;
    else if (iequals(a[i], "GT")) gt = true;
    else if (iequals(a[i], "LT")) lt = true;
    else return c.error(c.d.err.unsupported_option, a[i]);
  }
  if (nx && (xx || gt || lt)) return Reply::error(c.d.err.nx_incompatible);
  if (gt && lt) return Reply::error(c.d.err.gt_lt_incompatible);
  long long when = 0;
  if (!parse_ll(a[2], when)) return Reply::error(c.d.err.not_integer);
  const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
  if (seconds) {
    if (when > max / 1000 || when < min / 1000) return c.error(c.d.err.expire_time);
    when *= 1000;
  }
  const int64_t base = absolute ? 0 : c.now;
  if (when > max - base) return c.error(c.d.err.expire_time);
  when += base;
  Entry* e = c.ks.find(a[1], c.now);
  if (!e) return Reply::integer(0);
  const auto prev = e->expire_ms;
  if ((nx && prev) || (xx && !prev) || (gt && (!prev || when <= *prev)) || (lt && prev && when >= *prev))
    return Reply::integer(0);
  if (when <= c.now) {
    // Valkey 9.1.2: `expired` (class x) and expired_keys + 1; Redis 8.0.6: `del` (live).
    c.ks.erase(a[1]);
    if (c.d.key_past_expire_event == "expired") {
      notify(c, "expired", a[1], 'x');
      ++c.ks.counters().expired_keys;
    } else {
      notify(c, "del", a[1], 'g');
    }
    return Reply::integer(1);
  }
  e->expire_ms = when;
  notify(c, "expire", a[1], 'g');
  return Reply::integer(1);
}

inline Reply expire(Context& c) { return expire_generic(c, true, false); }
inline Reply pexpire(Context& c) { return expire_generic(c, false, false); }
inline Reply expireat(Context& c) { return expire_generic(c, true, true); }
inline Reply pexpireat(Context& c) { return expire_generic(c, false, true); }

/// PERSIST key -> 1 if a key TTL was removed, else 0. Field TTLs are untouched
/// (valkey-hfe.md §11 [L][T]).
inline Reply persist(Context& c) {
  if (c.argv.size() != 2) return c.arity();
  Entry* e = c.ks.find(c.argv[1], c.now);
  if (!e || !e->expire_ms) return Reply::integer(0);
  e->expire_ms.reset();
  notify(c, "persist", c.argv[1], 'g');
  return Reply::integer(1);
}

/// TTL / PTTL key -> -2 missing, -1 no key TTL, else remaining time; TTL rounds to the nearest
/// second on both servers (redis-hfe.md §3 [V]).
inline Reply ttl_generic(Context& c, bool ms) {
  if (c.argv.size() != 2) return c.arity();
  const Entry* e = c.ks.find(c.argv[1], c.now);
  if (!e) return Reply::integer(-2);
  if (!e->expire_ms) return Reply::integer(-1);
  int64_t left = *e->expire_ms - c.now;
  if (left < 0) left = 0;
  return Reply::integer(ms ? left : (left + 500) / 1000);
}
inline Reply ttl(Context& c) { return ttl_generic(c, false); }
inline Reply pttl(Context& c) { return ttl_generic(c, true); }

/// RENAME src dst -> OK, or "ERR no such key". The value moves with its key TTL and every field
/// with its absolute deadline, logically expired fields included (live 9.1.2 / 8.0.6).
inline Reply rename(Context& c) {
  if (c.argv.size() != 3) return c.arity();
  Entry* e = c.ks.find(c.argv[1], c.now);
  if (!e) return Reply::error(c.d.err.no_such_key);
  if (c.argv[1] == c.argv[2]) return Reply::ok();
  Entry moved = std::move(*e);
  c.ks.erase(c.argv[1]);
  c.ks.find(c.argv[2], c.now);  // a destination past its key TTL expires first
  c.ks.put(c.argv[2], std::move(moved));
  notify(c, "rename_from", c.argv[1], 'g');
  notify(c, "rename_to", c.argv[2], 'g');
  return Reply::ok();
}

/// COPY src dst [REPLACE] -> 1 copied, 0 when src is missing or dst exists without REPLACE;
/// "ERR source and destination objects are the same" when src == dst. The key TTL and the field
/// deadlines are copied, logically expired fields included (Redis 8.0.6; as RENAME, DUMP/RESTORE
/// and a replica executing the COPY do; Valkey 9.1.2 leaves them out, making an empty hash of an
/// all-expired one: known issue valkey-copy-skips-expired-fields,
/// Defects::copy_skips_expired_fields). `DB n` copies into database n (0..15; `copy_to` is
/// notified there). Other options give "syntax error".
inline Reply copy(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 3) return c.arity();
  bool replace = false;
  long long db = 0;
  for (std::size_t i = 3; i < a.size(); ++i) {
    if (iequals(a[i], "REPLACE")) {
      replace = true;
    } else if (iequals(a[i], "DB") && i + 1 < a.size()) {
      if (!parse_ll(a[++i], db)) return Reply::error(c.d.err.not_integer);
      if (db < 0 || db > 15) throw Unmodelled("COPY ... DB outside 0..15");
    } else {
      return Reply::error(c.d.err.syntax);
    }
  }
  if (a[1] == a[2] && db == 0) return Reply::error(c.d.err.same_object);
  const Entry* src = c.ks.find(a[1], c.now);
  if (!src) return Reply::integer(0);
  Entry dup = *src;
  if (dup.is_hash() && c.d.defects.copy_skips_expired_fields) {
    auto& fs = dup.hash().fields;
    for (auto it = fs.begin(); it != fs.end();) it = it->second.expired(c.now) ? fs.erase(it) : std::next(it);
  }
  if (db != 0) {
    auto& target = c.ks.other_db(static_cast<int>(db));
    auto it = target.find(a[2]);
    const bool live = it != target.end() && !(it->second.expire_ms && deadline_passed(*it->second.expire_ms, c.now));
    if (live && !replace) return Reply::integer(0);
    target[a[2]] = std::move(dup);
    c.ks.notify("copy_to", a[2], 'g', static_cast<int>(db));
    return Reply::integer(1);
  }
  if (c.ks.find(a[2], c.now) && !replace) return Reply::integer(0);
  c.ks.put(a[2], std::move(dup));
  after_hash_write(c, a[2], false);  // Valkey: the copy's index entry is exact
  notify(c, "copy_to", a[2], 'g');
  return Reply::integer(1);
}

}  // namespace expirykit::model::cmd
