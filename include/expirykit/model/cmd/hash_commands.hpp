// expirykit/model/cmd/hash_commands.hpp: the classic hash commands, with field TTLs in mind.
//
// HSET, HMSET, HSETNX, HGET, HMGET, HDEL, HLEN, HEXISTS, HGETALL, HKEYS, HVALS, HSTRLEN,
// HINCRBY, HINCRBYFLOAT. Each function takes a Context (model state, dialect, argv, now in Unix
// ms), mutates the Keyspace like the server would, and returns the expected Reply.
//
// TTL effects (redis-hfe.md §5 [V], valkey-hfe.md §9 [L]): HSET/HMSET and an HSETNX that writes
// clear the TTL of each field written; HINCRBY/HINCRBYFLOAT keep it. Over a logically expired
// field every write starts afresh (value from 0 for HINCRBY*, no TTL); only HSET's count differs
// (dialect.hset_expired_counts_new).
//
// Effects (model/effects.hpp; valkey-hfe.md §9, §12, redis-hfe.md §7): writes emit their own
// event (hset, hdel, hincrby, hincrbyfloat), `del` when a hash loses its last field, and on
// Valkey an `hexpired` first for each logically expired field they overwrite.
//
// UNORDERED replies: HGETALL, HKEYS and HVALS return the server's hashtable order. The model
// returns byte order; compare with canonical.hpp's `same_unordered()`.
#pragma once

#include <string>
#include <vector>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

namespace detail {
/// HSET/HMSET body. Returns the number of fields that count as new.
inline long long hset_pairs(Context& c, Hash& h) {
  long long added = 0;
  for (std::size_t i = 2; i + 1 < c.argv.size(); i += 2) {
    auto it = h.fields.find(c.argv[i]);
    if (it == h.fields.end()) {
      ++added;
      h.fields.emplace(c.argv[i], Field{c.argv[i + 1], std::nullopt});
    } else {
      if (overwrite_expired(c, c.argv[1], h, c.argv[i]) && c.d.hset_expired_counts_new) ++added;
      it->second = Field{c.argv[i + 1], std::nullopt};
    }
  }
  notify(c, "hset", c.argv[1]);
  after_hash_write(c, c.argv[1], false);
  return added;
}

/// Looks up a hash for a write; returns nullptr and sets `reply` to WRONGTYPE on a string.
inline Hash* hash_for_write(Context& c, Reply& reply) {
  Entry* e = c.ks.find(c.argv[1], c.now);
  if (e && !e->is_hash()) {
    reply = c.wrongtype();
    return nullptr;
  }
  return &c.ks.hash_or_create(c.argv[1], c.now);
}

/// A read on one field with Redis lazy expiry applied first.
inline Reply read_prologue(Context& c, Hash*& h) {
  bool wrong = false;
  h = lookup_hash(c, c.argv[1], wrong);
  if (wrong) return c.wrongtype();
  if (h && lazy_expire_field(c, c.argv[1], c.argv[2])) h = nullptr;
  return Reply::nil();
}
}  // namespace detail

/// HSET key field value [field value ...] -> integer: fields that count as new.
/// Arity -4 and an even number of field/value arguments, else the arity error.
inline Reply hset(Context& c) {
  if (c.argv.size() < 4 || c.argv.size() % 2 != 0) return c.arity();
  Reply r;
  Hash* h = detail::hash_for_write(c, r);
  if (!h) return r;
  return Reply::integer(detail::hset_pairs(c, *h));
}

/// HMSET key field value [field value ...] -> OK. Same effects as HSET.
inline Reply hmset(Context& c) {
  if (c.argv.size() < 4 || c.argv.size() % 2 != 0) return c.arity();
  Reply r;
  Hash* h = detail::hash_for_write(c, r);
  if (!h) return r;
  detail::hset_pairs(c, *h);
  return Reply::ok();
}

/// HSETNX key field value -> 1 if written (field missing or logically expired: it becomes
/// persistent, valkey-hfe.md §9 [L], live 8.0.6), 0 if a live field exists (no-op, TTL kept).
inline Reply hsetnx(Context& c) {
  if (c.argv.size() != 4) return c.arity();
  Entry* e = c.ks.find(c.argv[1], c.now);
  if (e && !e->is_hash()) return c.wrongtype();
  if (e && e->hash().live(c.argv[2], c.now)) return Reply::integer(0);
  lazy_expire_field(c, c.argv[1], c.argv[2]);  // Redis: `hexpired` first (live 8.0.6)
  Hash& h = c.ks.hash_or_create(c.argv[1], c.now);
  overwrite_expired(c, c.argv[1], h, c.argv[2]);
  h.fields[c.argv[2]] = Field{c.argv[3], std::nullopt};
  notify(c, "hset", c.argv[1]);
  after_hash_write(c, c.argv[1], false);
  return Reply::integer(1);
}

/// HGET key field -> value, or nil for a missing or logically expired field.
inline Reply hget(Context& c) {
  if (c.argv.size() != 3) return c.arity();
  Hash* h = nullptr;
  Reply r = detail::read_prologue(c, h);
  if (r.is_error()) return r;
  const Field* f = h ? h->live(c.argv[2], c.now) : nullptr;
  return f ? Reply::string(f->value) : Reply::nil();
}

/// HMGET key field [field ...] -> array of values / nils (missing key: all nils). Redis deletes
/// the logically expired fields it names (one `hexpired`, `del` with the last field), as HGET
/// does; Redis 8.0.6 deletes the key silently when the first expired field it meets is the last
/// stored one (known issue redis-hmget-deletes-hash-silently, Defects::hmget_deletes_hash_silently;
/// redis/redis src/t_hash.c hmgetCommand counts GETF_EXPIRED_HASH apart from GETF_EXPIRED).
inline Reply hmget(Context& c) {
  if (c.argv.size() < 3) return c.arity();
  bool wrong = false;
  Hash* h = lookup_hash(c, c.argv[1], wrong);
  if (wrong) return c.wrongtype();
  std::vector<Reply> out;
  bool expired_one = false;  // a field of this call expired lazily and the hash stayed
  for (std::size_t i = 2; i < c.argv.size(); ++i) {
    if (h && c.d.lazy_delete_on_read && c.d.defects.hmget_deletes_hash_silently && !expired_one) {
      auto it = h->fields.find(c.argv[i]);
      if (it != h->fields.end() && it->second.expired(c.now) && h->fields.size() == 1) {
        ++c.ks.counters().expired_fields;  // live 8.0.6: expired_subkeys + 1, no event
        c.ks.erase(c.argv[1]);
        notify(c, "(signal)", c.argv[1], signal_only_class);  // tracking invalidates it (live 8.0.6)
        h = nullptr;
      }
    }
    const std::size_t stored = h ? h->fields.size() : 0;
    if (h && lazy_expire_field(c, c.argv[1], c.argv[i])) h = nullptr;
    if (h && h->fields.size() < stored) expired_one = true;
    const Field* f = h ? h->live(c.argv[i], c.now) : nullptr;
    out.push_back(f ? Reply::string(f->value) : Reply::nil());
  }
  // An empty hash (only known issue valkey-copy-skips-expired-fields makes one) is deleted by
  // HMGET, without a notification or an invalidation (valkey-io/valkey src/t_hash.c hmgetCommand:
  // dbDelete when hashTypeLength is 0; live 9.1.2).
  if (h && h->fields.empty()) c.ks.erase(c.argv[1]);
  return Reply::array(std::move(out));
}

/// HDEL key field [field ...] -> number of fields removed (a repeated field counts once).
/// On a logically expired field: dialect.hdel_expired_reply (Redis removes it and counts 1;
/// Valkey counts 0 and keeps it: redis-hfe.md §6, valkey-hfe.md §9 [L]). An emptied hash goes.
inline Reply hdel(Context& c) {
  if (c.argv.size() < 3) return c.arity();
  bool wrong = false;
  Hash* h = lookup_hash(c, c.argv[1], wrong);
  if (wrong) return c.wrongtype();
  if (!h) return Reply::integer(0);
  long long n = 0;
  const std::size_t before = h->fields.size();
  const bool had_ttl = h->has_volatile();
  for (std::size_t i = 2; i < c.argv.size(); ++i) {
    auto it = h->fields.find(c.argv[i]);
    if (it == h->fields.end()) continue;
    if (it->second.expired(c.now)) {
      if (c.d.hdel_expired_reply == 0) continue;
      n += c.d.hdel_expired_reply;
    } else {
      ++n;
    }
    h->fields.erase(it);
  }
  if (h->fields.size() < before) {
    notify(c, "hdel", c.argv[1]);
    after_hash_write(c, c.argv[1], false);
    after_field_delete(*h, had_ttl);
  }
  drop_if_emptied(c, c.argv[1], h, before);
  return Reply::integer(n);
}

/// HLEN key -> stored fields, logically expired ones INCLUDED on both servers
/// (valkey-hfe.md §10 [L], redis-hfe.md §6 [V]).
inline Reply hlen(Context& c) {
  if (c.argv.size() != 2) return c.arity();
  bool wrong = false;
  Hash* h = lookup_hash(c, c.argv[1], wrong);
  if (wrong) return c.wrongtype();
  return Reply::integer(h ? static_cast<long long>(h->stored_count()) : 0);
}

/// HEXISTS key field -> 1 for a live field, else 0 (Redis deletes an expired one lazily).
inline Reply hexists(Context& c) {
  if (c.argv.size() != 3) return c.arity();
  Hash* h = nullptr;
  Reply r = detail::read_prologue(c, h);
  if (r.is_error()) return r;
  return Reply::integer(h && h->live(c.argv[2], c.now) ? 1 : 0);
}

/// HSTRLEN key field -> byte length of a live field's value, else 0.
inline Reply hstrlen(Context& c) {
  if (c.argv.size() != 3) return c.arity();
  Hash* h = nullptr;
  Reply r = detail::read_prologue(c, h);
  if (r.is_error()) return r;
  const Field* f = h ? h->live(c.argv[2], c.now) : nullptr;
  return Reply::integer(f ? static_cast<long long>(f->value.size()) : 0);
}

namespace detail {
/// HGETALL / HKEYS / HVALS: live fields only, nothing deleted on either server
/// (redis-hfe.md §6 [V], valkey-hfe.md §10 [L]). UNORDERED on the server.
inline Reply hscan_all(Context& c, bool keys, bool values) {
  if (c.argv.size() != 2) return c.arity();
  bool wrong = false;
  Hash* h = lookup_hash(c, c.argv[1], wrong);
  if (wrong) return c.wrongtype();
  std::vector<Reply> out;
  if (h)
    for (const auto& [name, f] : h->fields) {
      if (f.expired(c.now)) continue;
      if (keys) out.push_back(Reply::string(name));
      if (values) out.push_back(Reply::string(f.value));
    }
  return Reply::array(std::move(out));
}
}  // namespace detail

/// HGETALL key -> flat array field, value, ... (UNORDERED: compare with same_unordered()).
inline Reply hgetall(Context& c) { return detail::hscan_all(c, true, true); }
/// HKEYS key -> live field names (UNORDERED).
inline Reply hkeys(Context& c) { return detail::hscan_all(c, true, false); }
/// HVALS key -> live values (UNORDERED).
inline Reply hvals(Context& c) { return detail::hscan_all(c, false, true); }

/// HINCRBY key field increment -> the new integer. The increment is parsed before the key type
/// is checked. Keeps a live field's TTL; a missing or logically expired field starts from 0 and
/// is persistent (redis-hfe.md §5 [V], valkey-hfe.md §9 [L]).
/// Errors: "value is not an integer" (increment), "hash value is not an integer",
/// "increment or decrement would overflow".
inline Reply hincrby(Context& c) {
  if (c.argv.size() != 4) return c.arity();
  long long incr = 0;
  if (!parse_ll(c.argv[3], incr)) return Reply::error(c.d.err.not_integer);
  Reply r;
  Hash* h = detail::hash_for_write(c, r);
  if (!h) return r;
  if (lazy_expire_field(c, c.argv[1], c.argv[2])) h = &c.ks.hash_or_create(c.argv[1], c.now);
  long long cur = 0;
  Field* f = h->live(c.argv[2], c.now);
  if (f && !parse_ll(f->value, cur)) return Reply::error(c.d.err.hash_not_integer);
  if ((incr < 0 && cur < 0 && incr < std::numeric_limits<long long>::min() - cur) ||
      (incr > 0 && cur > 0 && incr > std::numeric_limits<long long>::max() - cur)) {
    c.ks.drop_if_empty(c.argv[1]);
    return Reply::error(c.d.err.incr_overflow);
  }
  const long long v = cur + incr;
  if (f) {
    f->value = std::to_string(v);
  } else {
    overwrite_expired(c, c.argv[1], *h, c.argv[2]);
    h->fields[c.argv[2]] = Field{std::to_string(v), std::nullopt};
  }
  notify(c, "hincrby", c.argv[1]);
  after_hash_write(c, c.argv[1], false);
  return Reply::integer(v);
}

/// HINCRBYFLOAT key field increment -> the new value as a bulk string, formatted like the
/// servers' long double "human" format (17 digits, trailing zeros dropped; live 9.1.2 and
/// 8.0.6 agree). TTL rules as HINCRBY. Errors: "value is not a valid float", "value is NaN or
/// Infinity" (increment), "hash value is not a float", "increment would produce NaN or Infinity".
inline Reply hincrbyfloat(Context& c) {
  if (c.argv.size() != 4) return c.arity();
  long double incr = 0;
  if (parse_ld(c.argv[3], incr) != FloatParse::ok) return Reply::error(c.d.err.not_float);
  if (std::isinf(incr)) return Reply::error(c.d.err.nan_or_inf);
  Reply r;
  Hash* h = detail::hash_for_write(c, r);
  if (!h) return r;
  if (lazy_expire_field(c, c.argv[1], c.argv[2])) h = &c.ks.hash_or_create(c.argv[1], c.now);
  long double cur = 0;
  Field* f = h->live(c.argv[2], c.now);
  if (f && parse_ld(f->value, cur) != FloatParse::ok) return Reply::error(c.d.err.hash_not_float);
  const long double v = cur + incr;
  if (std::isnan(v) || std::isinf(v)) {
    c.ks.drop_if_empty(c.argv[1]);
    return Reply::error(c.d.err.float_nan_inf);
  }
  std::string s = format_ld(v);
  if (f) {
    f->value = s;
  } else {
    overwrite_expired(c, c.argv[1], *h, c.argv[2]);
    h->fields[c.argv[2]] = Field{s, std::nullopt};
  }
  notify(c, "hincrbyfloat", c.argv[1]);
  after_hash_write(c, c.argv[1], false);
  return Reply::string(s);
}

}  // namespace expirykit::model::cmd
