// expirykit/model/propagation.hpp: what a command sends to replicas and the AOF, per dialect.
//
//   model::Keyspace before = ks;                                  // the model before the command
//   Reply r = model::apply(ks, d, argv, now);                     // (or a Twin step)
//   auto want = model::propagated(d, argv, r, before, ks, now);   // nullopt: not modelled here
//   // e.g. HEXPIRE h 100 FIELDS 2 a z (a set, z missing):
//   //   Valkey {{"HPEXPIREAT", "h", "<deadline of a>", "FIELDS", "2", "a", "z"}}
//   //   Redis  {{"HPEXPIREAT", "h", "<deadline of a>", "FIELDS", "1", "a"}}
//
// The forms are the dialect's Propagation rules (model/dialect.hpp; redis-hfe.md §11, checked
// live on Valkey 9.1.2, Redis 8.0.6 and 8.6.3 through the AOF increment). Modelled: HEXPIRE,
// HPEXPIRE, HEXPIREAT, HPEXPIREAT, HPERSIST, HSETEX, HGETEX, HGETDEL, HINCRBY, HINCRBYFLOAT, HSET, HMSET, HSETNX and HDEL on
// hashes whose named fields are live (a logically expired field that Redis deletes lazily adds an
// HDEL that propagated() leaves out: lazy_deletions() gives it for a command, written() both
// together, expiry_propagated() what active expiry writes). Every absolute deadline written is the one the model holds
// for the field (from `after`, or from `before` where the command keeps it: HINCRBY on Valkey), so
// the AOF and the replicas must write what the primary keeps, to the millisecond. Which case a
// server gives the words it copies from the command is not specified here (Valkey copies
// `hsetex ... fields` as typed and writes `PXAT` itself): compare words case-insensitively.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/cmd/expiry_args.hpp>
#include <expirykit/model/cmd/fields_args.hpp>
#include <expirykit/model/context.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

namespace detail::propagation {

using resp::Argv;

/// The live field `f` of the hash `key` in `ks` at `now` (Keyspace::peek, Hash::live), or nullptr.
inline const Field* live_field(const Keyspace& ks, const std::string& key, const std::string& f, int64_t now) {
  const Entry* e = ks.peek(key, now);
  return e && e->is_hash() ? e->hash().live(f, now) : nullptr;
}

/// Whether the hash at `key` in `ks` stores a field with a deadline (live or logically expired):
/// Hash::has_volatile.
inline bool stores_deadline(const Keyspace& ks, const std::string& key) {
  const Entry* e = ks.raw(key);
  return e && e->is_hash() && e->hash().has_volatile();
}

/// Whether `ks` stores field `f` of `key`, live or logically expired (not yet reclaimed).
inline bool stored_field(const Keyspace& ks, const std::string& key, const std::string& f) {
  const Entry* e = ks.raw(key);
  return e && e->is_hash() && e->hash().fields.count(f) > 0;
}

/// The deadline `ks` holds for field `f` of `key` as text, or nullopt (no such field, or none).
inline std::optional<std::string> deadline_of(const Keyspace& ks, const std::string& key, const std::string& f) {
  const Entry* e = ks.raw(key);
  if (!e || !e->is_hash()) return std::nullopt;
  auto it = e->hash().fields.find(f);
  if (it == e->hash().fields.end() || !it->second.expire_ms) return std::nullopt;
  return std::to_string(*it->second.expire_ms);
}

/// The FIELDS block of an accepted command: where its keyword stands (the first FIELDS at or after
/// `from`, as the servers read it: cmd::detail::find_fields) and its field names (each `stride`
/// arguments: 1 names, 2 name value). nullopt when argv holds no whole block.
struct Block {
  std::size_t at = 0;
  std::size_t stride = 1;
  std::vector<std::string> fields;
  std::size_t end() const { return at + 2 + fields.size() * stride; }  ///< the index after the block
};
inline std::optional<Block> block(const Argv& a, std::size_t from, std::size_t stride) {
  Block b{cmd::detail::find_fields(a, from), stride, {}};
  long long n = 0;
  if (b.at + 1 >= a.size() || !parse_ll(a[b.at + 1], n) || n < 1) return std::nullopt;
  if (b.at + 2 + static_cast<std::size_t>(n) * stride > a.size()) return std::nullopt;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) b.fields.push_back(a[b.at + 2 + i * stride]);
  return b;
}

/// `a` with its FIELDS block `b` replaced by the names `fields`, the rest where it stood.
inline Argv with_fields(const Argv& a, const Block& b, const std::vector<std::string>& fields) {
  Argv out(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(b.at) + 1);
  out.push_back(std::to_string(fields.size()));
  out.insert(out.end(), fields.begin(), fields.end());
  out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(b.end()), a.end());
  return out;
}

using Out = std::optional<std::vector<Argv>>;

/// The deletion of `fields` of `key` as the dialect writes it (Propagation::hdel_per_field);
/// nothing for no fields.
inline std::vector<Argv> deletion(const Dialect& d, const std::string& key, const std::vector<std::string>& fields) {
  if (fields.empty()) return {};
  if (!d.propagation.hdel_per_field) {
    Argv one{"HDEL", key};
    one.insert(one.end(), fields.begin(), fields.end());
    return {one};
  }
  std::vector<Argv> out;
  if (fields.size() > 1) out.push_back({"MULTI"});
  for (const auto& f : fields) out.push_back({"HDEL", key, f});
  if (fields.size() > 1) out.push_back({"EXEC"});
  return out;
}

/// Each name once, in the order of first appearance.
inline std::vector<std::string> distinct(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& n : names)
    if (seen.insert(n).second) out.push_back(n);
  return out;
}

/// An HSETEX / HGETEX expiry option (cmd::detail::expiry_kind): EX, PX, EXAT, PXAT, KEEPTTL, PERSIST.
inline cmd::detail::ExpiryOpt option(const std::string& s) { return {cmd::detail::expiry_kind(s), {}}; }

/// HEXPIRE / HPEXPIRE / HEXPIREAT / HPEXPIREAT: the reply's codes say per named field what
/// happened (1 set, 2 deleted by a past deadline, 0 condition failed, -2 missing).
inline Out hexpire(const Dialect& d, const Argv& a, const resp::Reply& r, const Keyspace& after) {
  const auto b = block(a, 3, 1);
  if (!b || !r.is_array() || r.size() != b->fields.size()) return std::nullopt;
  std::vector<std::string> set, deleted;
  for (std::size_t i = 0; i < b->fields.size(); ++i) {
    if (!r[i].is_integer()) return std::nullopt;
    if (r[i].as_integer() == 1) set.push_back(b->fields[i]);
    if (r[i].as_integer() == 2) deleted.push_back(b->fields[i]);
  }
  if (!deleted.empty()) return deletion(d, a[1], deleted);
  if (set.empty()) return std::vector<Argv>{};
  const auto when = deadline_of(after, a[1], set.front());
  if (!when) return std::nullopt;
  // In place: the command's name and time change, its condition stays where it was given.
  Argv out = d.propagation.expire_names_set_fields_only ? with_fields(a, *b, set) : a;
  out[0] = "HPEXPIREAT";
  out[2] = *when;
  return std::vector<Argv>{out};
}

/// HPERSIST: as given when it removed at least one deadline (code 1), on both servers.
inline Out hpersist(const Argv& a, const resp::Reply& r) {
  if (!r.is_array()) return std::nullopt;
  for (const auto& code : r.elements())
    if (code.is_integer() && code.as_integer() == 1) return std::vector<Argv>{a};
  return std::vector<Argv>{};
}

/// HSETEX: reply 1 when it set (0: an FNX/FXX condition failed, nothing is written).
inline Out hsetex(const Dialect& d, const Argv& a, const resp::Reply& r, const Keyspace& before,
                  const Keyspace& after, int64_t now) {
  if (!r.is_integer()) return std::nullopt;
  if (r.as_integer() != 1) return std::vector<Argv>{};
  const auto b = block(a, 2, 2);
  if (!b) return std::nullopt;
  std::optional<std::size_t> time_at;
  bool keepttl = false, condition = false;
  for (std::size_t i = 2; i < a.size(); ++i) {
    if (i >= b->at && i < b->end()) continue;  // inside the FIELDS block
    if (option(a[i]).timed() && i + 1 < a.size()) time_at = i;
    if (option(a[i]).kind == cmd::detail::ExpiryOpt::keepttl) keepttl = true;
    if (iequals(a[i], "FNX") || iequals(a[i], "FXX") || iequals(a[i], "NX") || iequals(a[i], "XX")) condition = true;
  }
  const std::string& first = b->fields.front();
  if (time_at && !live_field(after, a[1], first, now)) {
    // A past time: the fields were set and deleted at once. Redis deletes every field named,
    // duplicates and new ones included; Valkey each field that existed, once (live 2026-12-05),
    // a logically expired one too (live 2026-12-06).
    if (d.propagation.hsetex_past_deletes_named) return deletion(d, a[1], b->fields);
    std::vector<std::string> gone;
    for (const auto& f : distinct(b->fields))
      if (stored_field(before, a[1], f)) gone.push_back(f);
    return deletion(d, a[1], gone);
  }
  std::optional<std::string> when;
  if (time_at && !(when = deadline_of(after, a[1], first))) return std::nullopt;
  if (d.propagation.hsetex_in_place) {
    Argv out = a;
    if (time_at) {
      out[*time_at] = "PXAT";
      out[*time_at + 1] = *when;
    }
    return std::vector<Argv>{out};
  }
  // Valkey: as given when there is nothing to rewrite (no condition, no time or PXAT already),
  // else its own form (live 9.1.2: `hsetex h keepttl fields 1 a 9` is written as typed).
  Argv out = a;
  if (condition || (time_at && !iequals(a[*time_at], "PXAT"))) {
    out = {a[0], a[1]};
    if (time_at) out.insert(out.end(), {"PXAT", *when});
    else if (keepttl) out.push_back("KEEPTTL");
    out.insert(out.end(), a.begin() + static_cast<std::ptrdiff_t>(b->at), a.begin() + static_cast<std::ptrdiff_t>(b->end()));
  }
  if (keepttl && d.propagation.keepttl_deletes_expired_first) {  // Dialect::Propagation
    Argv hdel{"HDEL", a[1]};
    for (const auto& f : distinct(b->fields))
      if (stored_field(before, a[1], f) && !live_field(before, a[1], f, now)) hdel.push_back(f);
    if (hdel.size() > 2) return std::vector<Argv>{{"MULTI"}, hdel, out, {"EXEC"}};
  }
  return std::vector<Argv>{out};
}

/// HGETEX: nothing without an option; a time sets the live fields' deadlines (or deletes them when
/// past); PERSIST removes deadlines.
inline Out hgetex(const Dialect& d, const Argv& a, const resp::Reply& r, const Keyspace& before,
                  const Keyspace& after, int64_t now) {
  const auto b = block(a, 2, 1);
  if (!b || !r.is_array()) return std::nullopt;
  std::optional<std::size_t> time_at;
  bool persist = false;
  for (std::size_t i = 2; i < a.size(); ++i) {
    if (i >= b->at && i < b->end()) continue;
    if (option(a[i]).timed()) time_at = i;
    if (option(a[i]).kind == cmd::detail::ExpiryOpt::persist) persist = true;
  }
  std::vector<std::string> live, persisted;
  for (const auto& f : b->fields) {
    const Field* was = live_field(before, a[1], f, now);
    if (!was) continue;
    live.push_back(f);
    if (was->expire_ms) persisted.push_back(f);
  }
  const auto& name_time = d.propagation.hgetex_names_as_given ? b->fields : live;
  const auto name_persist = d.propagation.hgetex_names_as_given ? b->fields : distinct(persisted);
  if (time_at) {
    if (live.empty()) return std::vector<Argv>{};
    const auto when = deadline_of(after, a[1], live.front());
    if (!when) return deletion(d, a[1], distinct(live));  // a past time deleted them
    Argv out{"HPEXPIREAT", a[1], *when, "FIELDS", std::to_string(name_time.size())};
    out.insert(out.end(), name_time.begin(), name_time.end());
    return std::vector<Argv>{out};
  }
  if (persist && !persisted.empty()) {
    Argv out{"HPERSIST", a[1], "FIELDS", std::to_string(name_persist.size())};
    out.insert(out.end(), name_persist.begin(), name_persist.end());
    return std::vector<Argv>{out};
  }
  return std::vector<Argv>{};
}

/// HGETDEL: written when it deleted a field (a non-nil value in the reply).
inline Out hgetdel(const Dialect& d, const Argv& a, const resp::Reply& r) {
  const auto b = block(a, 2, 1);
  if (!b || !r.is_array()) return std::nullopt;
  bool deleted = false;
  for (const auto& e : r.elements()) deleted = deleted || !e.is_nil();
  if (!deleted) return std::vector<Argv>{};
  if (!d.propagation.hgetdel_as_hdel) return std::vector<Argv>{a};
  Argv out{"HDEL", a[1]};
  out.insert(out.end(), b->fields.begin(), b->fields.end());
  return std::vector<Argv>{out};
}

/// HINCRBY / HINCRBYFLOAT key field increment: the new value is the reply.
/// Redis 7.4 (no HSETEX) wrote HINCRBYFLOAT as a plain HSET: not modelled (nullopt).
inline Out hincr(const Dialect& d, const Argv& a, const resp::Reply& r, const Keyspace& before, int64_t now,
                 bool is_float) {
  if (a.size() != 4 || !(is_float ? r.is_string() : r.is_integer())) return std::nullopt;
  const std::string value = is_float ? r.str() : std::to_string(r.as_integer());
  const Field* was = live_field(before, a[1], a[2], now);
  if (d.propagation.hincr_keepttl) {
    if (!is_float) return std::vector<Argv>{a};
    if (!d.has_hsetex) return std::nullopt;
    return std::vector<Argv>{{"HSETEX", a[1], "KEEPTTL", "FIELDS", "1", a[2], value}};
  }
  if (was && was->expire_ms)
    return std::vector<Argv>{{"HSETEX", a[1], "PXAT", std::to_string(*was->expire_ms), "FIELDS", "1", a[2], value}};
  if (is_float) return std::vector<Argv>{{"HSET", a[1], a[2], value}};
  if (d.propagation.volatile_hash_writes_as_hset && stores_deadline(before, a[1]))
    return std::vector<Argv>{{"HSET", a[1], a[2], value}};
  return std::vector<Argv>{a};
}

/// HSET, HMSET, HDEL as given when they changed something (HSET and HMSET always do; HDEL when
/// its reply is not 0); HSETNX that set: as given, or `HSET key f v` in a hash that stores a
/// field with a deadline (Dialect::Propagation::volatile_hash_writes_as_hset). Live AOF
/// 2026-12-06 (Valkey 9.1.2, Redis 8.0.6, 8.6.3).
inline Out plain_write(const Dialect& d, const Argv& a, const resp::Reply& r, const Keyspace& before) {
  if (iequals(a[0], "HMSET")) return r == resp::Reply::ok() ? Out{std::vector<Argv>{a}} : std::nullopt;
  if (!r.is_integer()) return std::nullopt;  // e.g. QUEUED inside MULTI
  if (iequals(a[0], "HDEL")) return r.as_integer() > 0 ? Out{std::vector<Argv>{a}} : Out{std::vector<Argv>{}};
  if (iequals(a[0], "HSETNX")) {
    if (a.size() != 4) return std::nullopt;
    if (r.as_integer() == 0) return std::vector<Argv>{};
    if (d.propagation.volatile_hash_writes_as_hset && stores_deadline(before, a[1]))
      return std::vector<Argv>{{"HSET", a[1], a[2], a[3]}};
    return std::vector<Argv>{a};
  }
  return std::vector<Argv>{a};  // HSET
}

}  // namespace detail::propagation

/// The commands `argv` sends to replicas and the AOF under dialect `d`, given the model's `reply`,
/// its keyspace `before` and `after` the command and the time `now` (Unix ms) it ran at: empty
/// when nothing is written (an error reply, a failed condition, nothing changed), several for a
/// MULTI block (Redis's HDELs). nullopt for a command this header does not model (see the top),
/// and when `reply` is not a success reply of `argv` (another shape, e.g. QUEUED) or `after` lacks
/// the deadline the command set. Words the server writes itself are upper case; what it copies
/// keeps the client's text (compare case-insensitively). Throws nothing.
inline std::optional<std::vector<resp::Argv>> propagated(const Dialect& d, const resp::Argv& argv,
                                                         const resp::Reply& reply, const Keyspace& before,
                                                         const Keyspace& after, int64_t now) {
  namespace p = detail::propagation;
  if (argv.empty()) return std::nullopt;
  const std::string& n = argv[0];
  const bool expire =
      iequals(n, "HEXPIRE") || iequals(n, "HPEXPIRE") || iequals(n, "HEXPIREAT") || iequals(n, "HPEXPIREAT");
  const bool known = expire || iequals(n, "HPERSIST") || iequals(n, "HSETEX") || iequals(n, "HGETEX") ||
                     iequals(n, "HGETDEL") || iequals(n, "HINCRBY") || iequals(n, "HINCRBYFLOAT");
  const bool plain = iequals(n, "HSET") || iequals(n, "HMSET") || iequals(n, "HSETNX") || iequals(n, "HDEL");
  if (!known && !plain) return std::nullopt;
  if (reply.is_error()) return std::vector<resp::Argv>{};
  if (argv.size() < 3) return std::nullopt;
  if (expire) return p::hexpire(d, argv, reply, after);
  if (iequals(n, "HPERSIST")) return p::hpersist(argv, reply);
  if (iequals(n, "HSETEX")) return p::hsetex(d, argv, reply, before, after, now);
  if (iequals(n, "HGETEX")) return p::hgetex(d, argv, reply, before, after, now);
  if (iequals(n, "HGETDEL")) return p::hgetdel(d, argv, reply);
  if (plain) return p::plain_write(d, argv, reply, before);
  return p::hincr(d, argv, reply, before, now, iequals(n, "HINCRBYFLOAT"));
}

namespace detail::propagation {
/// The fields `a` looks up by name, in order, where a lookup of a logically expired field deletes
/// it (Dialect::lazy_delete_on_read): HGET, HEXISTS, HSTRLEN, HSETNX, HINCRBY, HINCRBYFLOAT (the
/// field), HMGET (each), HGETEX and HGETDEL (the FIELDS block, with or without an option), HSETEX
/// with FNX or FXX (the FIELDS block, before the condition is judged). Empty for the writes that
/// look up nothing first: HSET, HMSET, HDEL, HPERSIST, HEXPIRE*, HSETEX without a condition (a past
/// time deletes the fields itself), and reads that skip expired fields (HLEN, HGETALL, HKEYS,
/// HVALS, HSCAN). nullopt for any other command (HRANDFIELD samples at random).
inline std::optional<std::vector<std::string>> looked_up(const Argv& a) {
  const std::string& n = a[0];
  for (const char* x : {"HGET", "HEXISTS", "HSTRLEN", "HSETNX", "HINCRBY", "HINCRBYFLOAT"})
    if (iequals(n, x)) return a.size() >= 3 ? std::vector<std::string>{a[2]} : std::vector<std::string>{};
  if (iequals(n, "HMGET")) return std::vector<std::string>(a.begin() + 2, a.end());
  if (iequals(n, "HGETEX") || iequals(n, "HGETDEL")) {
    const auto b = block(a, 2, 1);
    return b ? b->fields : std::vector<std::string>{};
  }
  if (iequals(n, "HSETEX")) {  // the condition before or after the FIELDS block (Redis 8.6 takes both)
    const auto b = block(a, 2, 2);
    if (!b) return std::vector<std::string>{};
    for (std::size_t i = 2; i < a.size(); ++i)
      if ((i < b->at || i >= b->end()) && (iequals(a[i], "FNX") || iequals(a[i], "FXX"))) return b->fields;
    return std::vector<std::string>{};
  }
  for (const char* x : {"HSET", "HMSET", "HDEL", "HPERSIST", "HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT", "HLEN",
                        "HGETALL", "HKEYS", "HVALS", "HSCAN"})
    if (iequals(n, x)) return std::vector<std::string>{};
  return std::nullopt;
}
}  // namespace detail::propagation

/// The lazy deletions `argv` writes before its own form (propagated()) under a dialect that
/// deletes a logically expired field when a command looks it up (Dialect::lazy_delete_on_read:
/// Redis): `HDEL key f` for each field it looks up (detail::propagation::looked_up) that `before`
/// stores and that is logically expired at `now`, each once, in the order named. Empty on other
/// dialects and when nothing looked up is expired; nullopt for a command looked_up() does not
/// know and when the key's own TTL has passed (Redis deletes the key then: not modelled). Live Redis 8.0.6 and 8.6.3 (2026-12-06, MONITOR on a replica): HMGET h a c b with a and c
/// expired writes MULTI, HDEL h a, HDEL h c, EXEC; HGET, HEXISTS, HSTRLEN, HGETEX without an
/// option and a failing HSETEX FXX write the HDEL alone.
inline std::optional<std::vector<resp::Argv>> lazy_deletions(const Dialect& d, const resp::Argv& argv,
                                                             const Keyspace& before, int64_t now) {
  namespace p = detail::propagation;
  if (!d.lazy_delete_on_read || argv.size() < 2) return std::vector<resp::Argv>{};
  const auto names = p::looked_up(argv);
  if (!names) return std::nullopt;
  // A key whose own TTL has passed goes as a key (DEL / UNLINK): not modelled here.
  if (!names->empty() && before.raw(argv[1]) && !before.peek(argv[1], now)) return std::nullopt;
  std::vector<resp::Argv> out;
  for (const auto& f : p::distinct(*names))
    if (p::stored_field(before, argv[1], f) && !p::live_field(before, argv[1], f, now)) out.push_back({"HDEL", argv[1], f});
  return out;
}

/// Everything `argv` writes to replicas and the AOF: lazy_deletions() then propagated(), in one
/// MULTI ... EXEC block when that makes more than one command (propagated()'s own MULTI/EXEC
/// folded into it). A read that deletes nothing writes nothing. Live Redis 8.0.6 and 8.6.3
/// (2026-12-06): HINCRBY h a 5 over an expired a writes MULTI, HDEL h a, HINCRBY h a 5, EXEC;
/// HGETEX h PX 100000 FIELDS 3 a b c (a, c expired) MULTI, HDEL h a, HDEL h c, HPEXPIREAT h <ms>
/// FIELDS 3 a b c, EXEC; HGETDEL h FIELDS 2 a b (a expired) MULTI, HDEL h a, HDEL h a b, EXEC.
/// nullopt where either part is not modelled, for a reply QUEUED (inside MULTI), for an error reply
/// after a lazy deletion, and where the key's own TTL has passed (the key goes as a key). COPY and
/// RENAME too: as given when they did something, else nothing.
inline std::optional<std::vector<resp::Argv>> written(const Dialect& d, const resp::Argv& argv, const resp::Reply& reply,
                                                      const Keyspace& before, const Keyspace& after, int64_t now) {
  if (!argv.empty() && (iequals(argv[0], "COPY") || iequals(argv[0], "RENAME"))) {
    // Key commands look up no field: written as given when they did something (COPY 1, RENAME
    // OK), nothing when not (0, an error). A key of theirs whose own TTL has
    // passed goes as a key (DEL / UNLINK): not modelled. Live through the replica's keyspace
    // notifications (suites/durability/replica.cpp: COPY and RENAME scenarios), 2026-12-06.
    if (argv.size() < 3 || reply == resp::Reply::status("QUEUED")) return std::nullopt;
    for (std::size_t i = 1; i <= 2; ++i)
      if (before.raw(argv[i]) && !before.peek(argv[i], now)) return std::nullopt;
    if (reply.is_error()) return std::vector<resp::Argv>{};
    const bool did = iequals(argv[0], "RENAME") ? reply == resp::Reply::ok() : reply == resp::Reply::integer(1);
    if (did) return std::vector<resp::Argv>{argv};
    if (reply.is_integer()) return std::vector<resp::Argv>{};
    return std::nullopt;
  }
  const auto lazy = lazy_deletions(d, argv, before, now);
  if (!lazy || argv.empty()) return std::nullopt;
  if (reply == resp::Reply::status("QUEUED")) return std::nullopt;  // inside MULTI: written at EXEC
  const bool read = iequals(argv[0], "HGET") || iequals(argv[0], "HMGET") || iequals(argv[0], "HEXISTS") ||
                    iequals(argv[0], "HSTRLEN") || iequals(argv[0], "HLEN") || iequals(argv[0], "HGETALL") ||
                    iequals(argv[0], "HKEYS") || iequals(argv[0], "HVALS") || iequals(argv[0], "HSCAN");
  auto own = read ? std::optional<std::vector<resp::Argv>>(std::vector<resp::Argv>{})
                  : propagated(d, argv, reply, before, after, now);
  if (!own) return std::nullopt;
  if (lazy->empty()) return own;
  if (reply.is_error()) return std::nullopt;
  std::vector<resp::Argv> out = *lazy;
  for (const auto& c : *own)
    if (!iequals(c[0], "MULTI") && !iequals(c[0], "EXEC")) out.push_back(c);
  if (out.size() > 1) {
    out.insert(out.begin(), resp::Argv{"MULTI"});
    out.push_back({"EXEC"});
  }
  return out;
}

/// What the server writes to replicas and the AOF when it reclaims fields of `key` that passed
/// their deadline: those with a deadline that `before` stores and `after` does not (active
/// expiry: Keyspace::reclaim; on Redis also a read that deletes lazily, Dialect::
/// lazy_delete_on_read, with `by_command`), under the dialect's Propagation::
/// expiry_hdel_per_field. Redis: `HDEL key f` per field, in `MULTI`/`EXEC` when one command
/// deleted several lazily (`by_command`; live 8.0.6: HGETEX, HRANDFIELD, HMGET of two expired
/// fields), alone for active expiry. Valkey: `HDEL key f1 f2 ...`, and `MULTI`, that HDEL,
/// `UNLINK key`, `EXEC` when `after` lacks the key (UNLINK under lazyfree-lazy-expire yes, the
/// default; DEL under no: docs/semantics/valkey-hfe.md). Live Valkey 9.1.2, Redis 8.0.6 and 8.6.3
/// (AOF increment, 2026-12-05). A hash with a key TTL that `after` lacks lost as fields only those
/// due before its key TTL (Keyspace::reclaim, in logical time): if that was every field, the hash
/// emptied (the forms above); else only their HDEL, and the key went by its TTL with the rest (the
/// server writes a DEL or UNLINK of the key then, not modelled here). Empty when nothing was
/// reclaimed as a field, and when `key` is no hash in `before` or another type in `after`. The
/// server names the fields in its hash's order: compare through canonical_deletions(). Valkey's
/// active expiry may split many fields over batches, one HDEL each, which canonical_deletions()
/// does not merge: keep the fields of a case on one deadline.
inline std::vector<resp::Argv> expiry_propagated(const Dialect& d, const Keyspace& before, const Keyspace& after,
                                                 const std::string& key, bool by_command = false) {
  const Entry* b = before.raw(key);
  if (!b || !b->is_hash()) return {};
  const Entry* a = after.raw(key);
  const bool gone = !a;
  if (a && !a->is_hash()) return {};
  std::vector<std::string> fields;
  for (const auto& [f, fld] : b->hash().fields)
    if (fld.expire_ms && (gone ? !b->expire_ms || *fld.expire_ms < *b->expire_ms : !a->hash().fields.count(f)))
      fields.push_back(f);
  if (fields.empty()) return {};
  // Gone by its fields (emptied), not by its key TTL with fields left.
  const bool emptied = gone && fields.size() == b->hash().fields.size();
  std::vector<resp::Argv> out;
  if (d.propagation.expiry_hdel_per_field) {
    const bool wrapped = by_command && fields.size() > 1;
    if (wrapped) out.push_back({"MULTI"});
    for (const auto& f : fields) out.push_back({"HDEL", key, f});
    if (wrapped) out.push_back({"EXEC"});
    return out;
  }
  resp::Argv hdel{"HDEL", key};
  hdel.insert(hdel.end(), fields.begin(), fields.end());
  if (!emptied) return {hdel};
  return {{"MULTI"}, hdel, {"UNLINK", key}, {"EXEC"}};
}

/// `cmds` in a form that does not depend on the order a server names reclaimed fields in: each
/// command's name in upper case, each HDEL's fields sorted, and each run of consecutive HDELs
/// sorted. Apply it to both sides of a comparison with expiry_propagated().
inline std::vector<resp::Argv> canonical_deletions(std::vector<resp::Argv> cmds) {
  for (auto& a : cmds) {
    if (a.empty()) continue;
    for (char& ch : a[0]) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (a[0] == "HDEL" && a.size() > 3) std::sort(a.begin() + 2, a.end());
  }
  for (std::size_t i = 0; i < cmds.size();) {
    std::size_t j = i;
    while (j < cmds.size() && !cmds[j].empty() && cmds[j][0] == "HDEL") ++j;
    std::sort(cmds.begin() + static_cast<std::ptrdiff_t>(i), cmds.begin() + static_cast<std::ptrdiff_t>(j));
    i = j == i ? i + 1 : j;
  }
  return cmds;
}

}  // namespace expirykit::model
