// expirykit/model/tracking.hpp: which invalidation messages CLIENT TRACKING (default mode: no
// BCAST, OPTIN, OPTOUT or NOLOOP) sends to one tracked connection, predicted from the keyspace
// notifications the model emits (model/effects.hpp).
//
//   model::TrackingModel tm;
//   ks.take_events();
//   Reply r = model::apply(ks, d, {"HGET", "h", "a"}, now);            // on the tracked connection
//   tm.on_command(d, {"HGET", "h", "a"}, r, ks.take_events());          // {} ; "h" now tracked
//   r = model::apply(ks, d, {"HSET", "h", "a", "2"}, now);               // any connection
//   tm.on_command(d, {"HSET", "h", "a", "2"}, r, ks.take_events(), {.by_tracked = false});  // {"h"}
//   ks.reclaim(now, d.hexpired_class);  tm.on_background(ks.take_events());  // active expiry
//
// The rules (redis.io/docs/latest/develop/reference/client-side-caching, "default mode"; every
// rule below also checked live on Valkey 9.1.2 and Redis 8.0.6 by checks/state/tracking_live_test.cpp):
//   * A read-only command of the tracked connection remembers the keys it names (also missing
//     keys, also when the reply is an error such as WRONGTYPE; not when the command was refused
//     before running, i.e. an arity error). Registration happens after the command ran, so the
//     command's own invalidations come first. HGETEX, HGETDEL, HSETEX are writes: they never
//     register a key, HGETEX without an option neither (as GETEX on a string). The specification
//     here: redis/redis#13839 asked for HGETEX to register; it is closed and the behaviour is
//     unchanged in Redis 8.0.6 and 8.6.3 and Valkey 9.1.2 (live 2026-12-05, RESP3 push: HGETEX
//     with and without PERSIST, and GETEX, leave the key untracked on all three; HGET tracks it).
//   * A key is invalidated when the server signals it modified (signalModifiedKey): by any
//     client, the tracked one included (no NOLOOP), by lazy expiry of a key (and, on Redis, of a
//     field) and by active expiry. One message per key, after which the key is no longer
//     tracked until read again: a second write sends nothing.
//   * A command signals exactly the keys the model gives at least one keyspace event, in the
//     order of their first event, with one exception: Valkey's HSETEX with a deadline already
//     past that deletes no stored field (a brand-new field on an existing hash, or a missing
//     key) emits its events (hset, hexpire, hexpired, del) but does not signal the key (live
//     9.1.2; Redis 8.0.6 signals it). Facts::key_changed tells the model which case it is.
//   * FLUSHALL / FLUSHDB send one message with a null key list to every tracking client, also
//     when it tracks nothing, and forget every tracked key (live 9.1.2 / 8.0.6).
//   * Keys are names, whatever the database (Event::db is ignored): a write to h in db 1
//     invalidates a read of h in db 0; MOVE h 1 sends one message for h; COPY h d DB 1 one for
//     d; SWAPDB sends nothing and the model emits no event for it (live 9.1.2 / 8.0.6).
// Not covered: BCAST / OPTIN / OPTOUT / NOLOOP modes. Inside MULTI/EXEC and the kit's sequence
// script, state::Twin applies these rules command by command (registration as each runs).
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/model/effects.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

/// One invalidation message: the key, or std::nullopt for "everything" (FLUSHALL / FLUSHDB).
using Invalidation = std::optional<std::string>;
using Invalidations = std::vector<Invalidation>;

/// "[h, n, <flush>]" for messages.
inline std::string to_string(const Invalidations& inv) {
  std::string out = "[";
  for (std::size_t i = 0; i < inv.size(); ++i) {
    out += i ? ", " : "";
    out += inv[i] ? Event{"", *inv[i], '?'}.to_string().substr(1) : std::string("<flush>");
  }
  return out + "]";
}

/// What the caller knows about a command beyond its argv, reply and events.
struct TrackingFacts {
  /// Sent on the tracked connection (its reads register keys); false for another client.
  bool by_tracked = true;
  /// The stored entry of argv[1] differs after the command (compare model::Entry before and
  /// after, logically expired fields included; "missing" before and after is unchanged).
  /// Only consulted for Valkey's HSETEX with a past deadline (see the file comment).
  bool key_changed = true;
};

/// The tracking state of one connection and the invalidations it is sent (see the file comment).
struct TrackingModel {
  /// Keys the tracked connection has read and that were not invalidated since.
  std::set<std::string> tracked;

  using Facts = TrackingFacts;

  /// Upper-cased name (ASCII).
  static std::string upper_name(std::string_view s) {
    std::string u(s);
    for (auto& ch : u) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
    return u;
  }

  /// The keys a read-only command remembers for its connection, in argument order; empty for
  /// any other command. Read-only commands checked live (both servers): HGET HMGET HGETALL HKEYS
  /// HVALS HLEN HEXISTS HSTRLEN HTTL HPTTL HEXPIRETIME HPEXPIRETIME HRANDFIELD HSCAN TYPE EXISTS
  /// (every key) OBJECT <sub> key, MEMORY USAGE key, TTL PTTL GET DUMP. Listed without a live
  /// check (read-only in both servers' command tables): EXPIRETIME PEXPIRETIME STRLEN MGET.
  static std::vector<std::string> read_keys(const resp::Argv& argv) {
    if (argv.empty()) return {};
    static const std::set<std::string> first_key = {
        "HGET", "HMGET", "HGETALL", "HKEYS", "HVALS", "HLEN", "HEXISTS", "HSTRLEN", "HTTL", "HPTTL",
        "HEXPIRETIME", "HPEXPIRETIME", "HRANDFIELD", "HSCAN", "TYPE", "TTL", "PTTL", "EXPIRETIME",
        "PEXPIRETIME", "GET", "DUMP", "STRLEN"};
    const std::string u = upper_name(argv[0]);
    if (first_key.count(u)) return argv.size() > 1 ? std::vector<std::string>{argv[1]} : std::vector<std::string>{};
    if (u == "EXISTS" || u == "MGET") return std::vector<std::string>(argv.begin() + 1, argv.end());
    if ((u == "OBJECT" || u == "MEMORY") && argv.size() > 2) return {argv[2]};
    return {};
  }

  /// True for FLUSHALL / FLUSHDB (any options).
  static bool is_flush(const resp::Argv& argv) {
    if (argv.empty()) return false;
    const std::string u = upper_name(argv[0]);
    return u == "FLUSHALL" || u == "FLUSHDB";
  }

  /// One command, after model::apply: returns the invalidations the tracked connection is sent
  /// while it runs, in order, then registers the keys it reads (Facts::by_tracked). `reply` is
  /// the model's reply (an arity error means the server refused the command before running it:
  /// nothing is registered); `events` are the command's keyspace events (Keyspace::take_events()
  /// right after apply). FLUSHALL / FLUSHDB (not modelled by apply) give {nullopt} and empty
  /// `tracked`.
  Invalidations on_command(const Dialect& d, const resp::Argv& argv, const resp::Reply& reply,
                           const std::vector<Event>& events, Facts facts = {}) {
    Invalidations out;
    if (is_flush(argv)) {
      tracked.clear();
      out.push_back(std::nullopt);
      return out;
    }
    std::vector<Event> signalled;
    if (!suppresses_signal(d, argv, events, facts)) signalled = events;
    out = invalidate(signalled);
    const bool refused = !argv.empty() && reply.is_error() && reply.str() == d.arity_error(argv[0]);
    if (facts.by_tracked && !refused)
      for (const auto& k : read_keys(argv)) tracked.insert(k);
    return out;
  }

  /// Events that happened outside any command (Keyspace::reclaim: active expiry of fields and
  /// keys): the invalidations they send, in event order. The server's order between keys is its
  /// own: compare as multisets.
  Invalidations on_background(const std::vector<Event>& events) { return invalidate(events); }

  /// The keys of `events` that are tracked, once each in order of first event; they stop being
  /// tracked.
  Invalidations invalidate(const std::vector<Event>& events) {
    Invalidations out;
    for (const auto& e : events) {
      auto it = tracked.find(e.key);
      if (it == tracked.end()) continue;
      tracked.erase(it);
      out.push_back(e.key);
    }
    return out;
  }

  /// Valkey's HSETEX with a past deadline that removed no stored field does not signal the key
  /// (live 9.1.2: `HSETEX h PX 0 FIELDS 1 z 2` with z new on an existing h, or with h missing,
  /// sends nothing and h stays tracked; with z stored it invalidates); Redis 8.0.6 signals it
  /// in every case. Keyed on Dialect::flavor: the Dialect member this stands for would be
  /// `bool hsetex_past_noop_signals` (true on Redis, false on Valkey).
  /// The past-deadline path is the one that emits `hexpired` and leaves the entry unchanged (a
  /// write over a logically expired field also emits `hexpired` first, but rewrites the field).
  static bool suppresses_signal(const Dialect& d, const resp::Argv& argv, const std::vector<Event>& events,
                                const Facts& facts) {
    if (d.flavor != "valkey" || facts.key_changed || argv.empty() || upper_name(argv[0]) != "HSETEX") return false;
    for (const auto& e : events)
      if (e.name == "hexpired") return true;
    return false;
  }
};

}  // namespace expirykit::model
