// expirykit/model/cmd/db_commands.hpp: commands on keys and databases around volatile hashes:
// UNLINK, DBSIZE, OBJECT ENCODING, MOVE, SWAPDB, FLUSHALL, FLUSHDB.
//
// Field deadlines are absolute and travel with the hash (valkey-hfe.md §11 [L][T], redis-hfe.md
// §5 [V]); the volatile-field index follows the key into its database (live 9.1.2 / 8.0.6).
// Events (live 9.1.2 / 8.0.6): UNLINK `del`; MOVE `move_from` on the source db and `move_to`
// on the target db; SWAPDB none.
#pragma once

#include <limits>
#include <string>

#include <expirykit/model/context.hpp>
#include <expirykit/model/cmd/key_commands.hpp>

namespace expirykit::model::cmd {

/// UNLINK key [key ...] -> keys removed; as DEL, events included (the memory is freed in the
/// background).
inline Reply unlink(Context& c) { return del(c); }

/// DBSIZE -> keys in the current db, including keys whose key TTL passed but that nothing
/// looked up yet (DBSIZE does not expire keys: live 9.1.2 / 8.0.6) and hashes whose fields are
/// all logically expired (valkey-hfe.md §10).
inline Reply dbsize(Context& c) {
  if (c.argv.size() != 1) return c.arity();
  return Reply::integer(static_cast<long long>(c.ks.size()));
}

/// OBJECT ENCODING key -> the encoding (effects.hpp for hashes; strings: "int" for an integer
/// of at most 20 characters, "embstr" up to 44 bytes; longer strings differ between servers and
/// are Unmodelled), nil for a missing key. Other OBJECT subcommands are Unmodelled.
inline Reply object(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 2) return c.arity();
  if (!iequals(a[1], "ENCODING")) throw Unmodelled("OBJECT " + a[1]);
  if (a.size() != 3) throw Unmodelled("OBJECT ENCODING with other arguments");
  const Entry* e = c.ks.find(a[2], c.now);
  if (!e) return Reply::nil();
  if (e->is_hash()) return Reply::string(to_string(e->hash().encoding));
  long long v = 0;
  if (e->string().size() <= 20 && parse_ll(e->string(), v)) return Reply::string("int");
  if (e->string().size() <= 44) return Reply::string("embstr");
  throw Unmodelled("OBJECT ENCODING of a string longer than 44 bytes");
}

namespace detail {
/// A database index argument: 0..15 (the servers' default `databases 16`), or an error Reply.
inline std::optional<int> db_index(Context& c, const std::string& arg, Reply& err) {
  long long n = 0;
  if (!parse_ll(arg, n)) {
    err = Reply::error(c.d.err.not_integer);
    return std::nullopt;
  }
  if (n < 0 || n > 15) throw Unmodelled("database index outside 0..15");
  return static_cast<int>(n);
}
}  // namespace detail

/// MOVE key db -> 1 moved, 0 when the key is missing or exists in the target db; "ERR source
/// and destination objects are the same" for db 0 (the current one).
inline Reply move(Context& c) {
  const Argv& a = c.argv;
  if (a.size() != 3) return c.arity();
  Reply err;
  auto db = detail::db_index(c, a[2], err);
  if (!db) return err;
  if (*db == 0) return Reply::error(c.d.err.same_object);
  Entry* e = c.ks.find(a[1], c.now);
  if (!e) return Reply::integer(0);
  auto& target = c.ks.other_db(*db);
  auto it = target.find(a[1]);
  if (it != target.end()) {
    if (!(it->second.expire_ms && deadline_passed(*it->second.expire_ms, c.now))) return Reply::integer(0);
    c.ks.notify("expired", a[1], 'x', *db);  // the target's stale key expires first
    ++c.ks.counters().expired_keys;
    target.erase(it);
  }
  target[a[1]] = std::move(*e);
  c.ks.erase(a[1]);
  notify(c, "move_from", a[1], 'g');
  c.ks.notify("move_to", a[1], 'g', *db);
  return Reply::integer(1);
}

/// SWAPDB a b -> OK; the two databases change contents (deadlines and all). No events.
inline Reply swapdb(Context& c) {
  const Argv& a = c.argv;
  if (a.size() != 3) return c.arity();
  long long x = 0, y = 0;
  if (!parse_ll(a[1], x)) return Reply::error("ERR invalid first DB index");
  if (!parse_ll(a[2], y)) return Reply::error("ERR invalid second DB index");
  if (x < 0 || x > 15 || y < 0 || y > 15) throw Unmodelled("SWAPDB outside 0..15");
  c.ks.swap_db(static_cast<int>(x), static_cast<int>(y));
  return Reply::ok();
}

namespace detail {
inline bool flush_args_ok(const Argv& a) {
  return a.size() == 1 || (a.size() == 2 && (iequals(a[1], "SYNC") || iequals(a[1], "ASYNC")));
}
}  // namespace detail

/// FLUSHALL [SYNC|ASYNC] -> OK; every database emptied, counters kept, no keyspace events.
inline Reply flushall(Context& c) {
  if (!detail::flush_args_ok(c.argv)) return Reply::error(c.d.err.syntax);
  c.ks.clear();
  return Reply::ok();
}

/// FLUSHDB [SYNC|ASYNC] -> OK; the current database (db 0) emptied.
inline Reply flushdb(Context& c) {
  if (!detail::flush_args_ok(c.argv)) return Reply::error(c.d.err.syntax);
  for (const auto& k : c.ks.key_names()) c.ks.erase(k);
  return Reply::ok();
}

}  // namespace expirykit::model::cmd
