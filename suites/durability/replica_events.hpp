// What a replica notifies while it runs its primary's deletions of fields past their deadline,
// from the model, and how replica.cpp and topology.cpp compare it with what the replica sent.
//
// A replica expires nothing itself: it runs the deletions its primary writes to the stream
// (model::expiry_propagated: HDEL per field on Redis; HDEL per batch, and MULTI / HDEL / UNLINK /
// EXEC with a key's last fields, on Valkey) as commands on fields it still holds live, so it
// notifies `hdel` (and `del` with a key's last field), never `hexpired` (live Valkey 9.1.2, Redis
// 8.0.6 and 8.6.3, 2026-12-05). Compared as sets of (event, key): Valkey's active expiry may split
// a key's fields over batches, one HDEL (one `hdel`) each.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/model/apply.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/propagation.hpp>
#include <expirykit/observe/keyspace_events.hpp>

namespace replica_events {

/// (event name, key) pairs.
using Heard = std::set<std::pair<std::string, std::string>>;

/// The key events of `o`, as a set.
inline Heard of(const expirykit::observe::Observed& o) {
  Heard out;
  for (const auto& e : o.keyevent) out.insert({e.name, e.key});
  return out;
}

/// The events of `evs`, as a set.
inline Heard of(const std::vector<expirykit::model::Event>& evs) {
  Heard out;
  for (const auto& e : evs) out.insert({e.name, e.key});
  return out;
}

/// What a replica holding `before` notifies when its primary, whose model went from `before` to
/// `after` by reclaiming fields at `now_ms` (Unix ms), sends it the deletions of `keys`: each
/// key's deletions run where its reclaimed fields were still live (before the earliest of their
/// deadlines), as the replica holds them.
inline Heard from_primary_deletions(const expirykit::model::Dialect& d, const expirykit::model::Keyspace& before,
                                    const expirykit::model::Keyspace& after, int64_t now_ms,
                                    const std::vector<std::string>& keys) {
  expirykit::model::Keyspace on_replica = before;
  (void)on_replica.take_events();
  for (const auto& key : keys) {
    int64_t at = now_ms;
    if (const expirykit::model::Entry* e = before.raw(key); e && e->is_hash())
      for (const auto& [f, fld] : e->hash().fields)
        if (fld.expire_ms && *fld.expire_ms <= now_ms) at = std::min(at, *fld.expire_ms - 1);
    for (const auto& a : expirykit::model::expiry_propagated(d, before, after, key))
      if (a[0] != "MULTI" && a[0] != "EXEC") (void)expirykit::model::apply(on_replica, d, a, at);
  }
  return of(on_replica.take_events());
}

/// `now_ms`, or earlier: 1 ms before the earliest field deadline `ks` stores (db 0), so that the
/// model runs a replica's commands on fields it still holds as live, as a replica does.
inline int64_t before_any_deadline(const expirykit::model::Keyspace& ks, int64_t now_ms) {
  int64_t at = now_ms;
  for (const auto& [k, e] : ks.entries())
    if (e.is_hash())
      if (const auto first = e.hash().min_deadline()) at = std::min(at, *first - 1);
  return at;
}

/// " hdel@h del@k", or " (none)", for messages.
inline std::string shown(const Heard& v) {
  std::string out;
  for (const auto& [n, k] : v) out += " " + n + "@" + k;
  return out.empty() ? std::string(" (none)") : out;
}

}  // namespace replica_events
