// expirykit/model/keyspace.hpp: the state of the executable reference model.
//
// A Keyspace maps key names (binary-safe) to Entries. An Entry is a plain string or a hash, and
// may carry a key-level TTL (absolute Unix ms). A hash maps field names to Fields; a Field may
// carry an absolute expiry in Unix ms (int64).
//
// Time: every "now" is absolute Unix milliseconds, taken from the server's TIME by the caller.
//
// Two kinds of "gone" (valkey-hfe.md §1, §10; redis-hfe.md §6):
//   * a field whose expiry has passed is LOGICALLY EXPIRED: reads hide it, but it stays in the
//     Keyspace until something reclaims it. On Valkey nothing but active expiry (reclaim()) or an
//     overwrite does; HLEN, EXISTS, TYPE still count it. On Redis, commands that touch it delete it
//     lazily (see dialect.hpp `lazy_delete_on_read`).
//   * a key whose key-level TTL has passed is gone for every command on both servers (key-level
//     lazy expiry exists on both), so Keyspace::find() drops it on sight.
//
// Boundary: a deadline T has passed at `now` when T < now (Redis `hashTypeIsExpired` and
// `keyIsExpired` use a strict comparison). A command that SETS a deadline T <= now deletes instead
// (valkey-hfe.md §1 [S], redis-hfe.md §3 [V]). The T == now read case is not verified live;
// generators keep deadlines away from "now" so it never decides a reply.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <expirykit/model/effects.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

/// True when an absolute deadline (Unix ms) has passed at `now_ms` (strictly earlier).
inline bool deadline_passed(int64_t deadline_ms, int64_t now_ms) { return deadline_ms < now_ms; }

/// One hash field: its value and optional absolute expiry (Unix ms).
struct Field {
  std::string value;
  std::optional<int64_t> expire_ms;  ///< absent: persistent field (HTTL -1)

  /// Logically expired: has a deadline and it has passed (hidden from reads, maybe not reclaimed).
  bool expired(int64_t now_ms) const { return expire_ms && deadline_passed(*expire_ms, now_ms); }
  friend bool operator==(const Field&, const Field&) = default;
};

/// A hash. Fields are kept in byte order (std::map) so the model's own iteration is
/// deterministic; servers return hashtable order (see canonical.hpp for comparing).
struct Hash {
  std::map<std::string, Field> fields;
  /// OBJECT ENCODING as the model predicts it (effects.hpp). Not part of equality: two hashes
  /// with the same fields are the same data.
  Encoding encoding = Encoding::listpack;
  /// The hash may still be registered in the server's index of hashes with volatile fields
  /// although it has none left (INFO keyspace subexpiry counts such hashes on Redis, whose
  /// index is lazy: context.hpp `after_hash_write`). Not part of equality.
  bool maybe_indexed = false;
  /// The earliest field deadline, expired fields included; nullopt without volatile fields.
  std::optional<int64_t> min_deadline() const {
    std::optional<int64_t> m;
    for (const auto& [k, f] : fields)
      if (f.expire_ms && (!m || *f.expire_ms < *m)) m = f.expire_ms;
    return m;
  }

  /// The field if present and not logically expired at now_ms, else nullptr.
  const Field* live(const std::string& name, int64_t now_ms) const {
    auto it = fields.find(name);
    if (it == fields.end() || it->second.expired(now_ms)) return nullptr;
    return &it->second;
  }
  Field* live(const std::string& name, int64_t now_ms) {
    auto it = fields.find(name);
    if (it == fields.end() || it->second.expired(now_ms)) return nullptr;
    return &it->second;
  }
  /// Fields present, expired or not (what HLEN counts on both servers, valkey-hfe.md §10).
  std::size_t stored_count() const { return fields.size(); }
  /// Fields present and not logically expired.
  std::size_t live_count(int64_t now_ms) const {
    std::size_t n = 0;
    for (const auto& [k, f] : fields) n += !f.expired(now_ms);
    return n;
  }
  /// Fields logically expired at now_ms but still stored.
  std::size_t expired_count(int64_t now_ms) const { return fields.size() - live_count(now_ms); }
  bool has_volatile() const {
    for (const auto& [k, f] : fields)
      if (f.expire_ms) return true;
    return false;
  }
  friend bool operator==(const Hash& a, const Hash& b) { return a.fields == b.fields; }
};

/// One key: a string or a hash, plus an optional key-level TTL (absolute Unix ms).
struct Entry {
  std::variant<std::string, Hash> value;
  std::optional<int64_t> expire_ms;

  bool is_hash() const { return std::holds_alternative<Hash>(value); }
  bool is_string() const { return std::holds_alternative<std::string>(value); }
  Hash& hash() { return std::get<Hash>(value); }
  const Hash& hash() const { return std::get<Hash>(value); }
  std::string& string() { return std::get<std::string>(value); }
  const std::string& string() const { return std::get<std::string>(value); }
  /// "hash" / "string", as TYPE prints it.
  const char* type_name() const { return is_hash() ? "hash" : "string"; }
  friend bool operator==(const Entry&, const Entry&) = default;
};

/// The whole modelled data: the current database (db 0, where commands run) and databases
/// 1..15 (MOVE, SWAPDB, COPY ... DB).
class Keyspace {
 public:
  using Map = std::map<std::string, Entry>;

  /// The entry for `key` as commands see it at now_ms: nullptr if missing or if its key-level
  /// TTL has passed (the key is then erased with an `expired` event and expired_keys + 1:
  /// key-level lazy expiry, both servers).
  Entry* find(const std::string& key, int64_t now_ms) {
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    if (it->second.expire_ms && deadline_passed(*it->second.expire_ms, now_ms)) {
      notify("expired", key, 'x');
      ++counters_.expired_keys;
      keys_.erase(it);
      return nullptr;
    }
    return &it->second;
  }
  /// Read-only lookup with the same visibility rule, without erasing anything.
  const Entry* peek(const std::string& key, int64_t now_ms) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return nullptr;
    if (it->second.expire_ms && deadline_passed(*it->second.expire_ms, now_ms)) return nullptr;
    return &it->second;
  }
  /// Raw lookup: ignores key TTLs. For tests and state dumps.
  const Entry* raw(const std::string& key) const {
    auto it = keys_.find(key);
    return it == keys_.end() ? nullptr : &it->second;
  }
  /// Raw mutable lookup (for harnesses that align the model with what a server observably did,
  /// e.g. state::Twin adopting a deadline the server computed from its own "now").
  Entry* raw(const std::string& key) {
    auto it = keys_.find(key);
    return it == keys_.end() ? nullptr : &it->second;
  }

  /// Inserts or replaces `key`.
  Entry& put(const std::string& key, Entry e) { return keys_[key] = std::move(e); }
  /// Returns true if something was erased.
  bool erase(const std::string& key) { return keys_.erase(key) > 0; }
  /// The hash at `key`, created empty (no key TTL) when missing. Precondition: not a string.
  Hash& hash_or_create(const std::string& key, int64_t now_ms) {
    if (Entry* e = find(key, now_ms)) return e->hash();
    return put(key, Entry{Hash{}, std::nullopt}).hash();
  }
  /// Erases `key` if it holds a hash with no stored field ("an emptied hash disappears",
  /// valkey-hfe.md §3, redis-hfe.md §3), with a `del` event. Returns true if erased.
  bool drop_if_empty(const std::string& key) {
    auto it = keys_.find(key);
    if (it != keys_.end() && it->second.is_hash() && it->second.hash().fields.empty()) {
      notify("del", key, 'g');
      keys_.erase(it);
      return true;
    }
    return false;
  }

  /// Active expiry fully done at now_ms, in logical time: what happened at each deadline up to
  /// now_ms, in deadline order within a key. A field whose deadline passed before its key's TTL
  /// (or in a key without one) is removed (one `hexpired` per key, class `field_class`:
  /// Dialect::hexpired_class; expired_fields + 1 per field); a hash that lost its last field this
  /// way is erased (`del`; expired_keys unchanged, its key TTL never fired: valkey-hfe.md §11
  /// "When the last field expires", redis-hfe.md §6). Then a key past its key TTL is erased
  /// (`expired`, expired_keys + 1) with the fields it still holds, also those whose deadline was
  /// its own or later, which never expired as fields (valkey-hfe.md §11: "If the key TTL fires
  /// first, the whole hash is deleted with an expired event; expired_keys +1 and expired_fields
  /// +0"). When their active expiry resumes after both passed, Valkey 9.1.2 and Redis 8.0.6 /
  /// 8.6.3 take either the fields or the key first, whichever their cycle reaches first
  /// (known_issues/table.hpp, *-active-expiry-key-ttl-order). A hash that was already empty
  /// (Valkey's COPY of an all-expired hash, see dialect.hpp) is left alone. Every database (MOVE,
  /// SWAPDB). Returns the number of fields removed. The order of events between keys is the
  /// server's (not modelled): compare per key.
  std::size_t reclaim(int64_t now_ms, char field_class = 'x') {
    std::size_t removed = reclaim_db(keys_, 0, now_ms, field_class);
    for (auto& [n, m] : other_) removed += reclaim_db(m, n, now_ms, field_class);
    return removed;
  }

  /// What a server holds once it has loaded this keyspace from an RDB or AOF at now_ms and
  /// reclaimed what was due: keys past their key TTL, fields past their deadline, and hashes
  /// with no field left are gone (an empty hash is never a key: Redis and Valkey drop empty
  /// keys on load). Valkey 9.1.2 skips due fields while loading an RDB; Redis 8.0.6 loads them
  /// and active expiry removes them at once (both checked live); either way this is the state
  /// reached.
  Keyspace loaded(int64_t now_ms) const {
    Keyspace out = *this;
    out.reclaim(now_ms);
    for (const auto& k : key_names()) out.drop_if_empty(k);
    out.events_.clear();
    out.counters_ = Counters{};
    return out;
  }

  /// What a server holds right after loading this keyspace from an RDB at now_ms (a restart,
  /// DEBUG RELOAD), before active expiry or any command runs: keys past their key TTL are not
  /// loaded; with `skips_due_fields` (Dialect::load_skips_due_fields: Valkey) neither are fields
  /// past their deadline, nor a hash left without a field; without it (Redis) those fields are
  /// loaded as stored, logically expired, for active expiry or a lazy read to reclaim later
  /// (live 2026-12-06 with active expiry paused, DEBUG RELOAD: Valkey 9.1.2 loaded 2 of 3 keys
  /// (an all-due hash skipped), Redis 8.0.6 and 8.6.3 all 3, with HLEN counting the due fields;
  /// redis-hfe.md checklist 90, 91; valkey-hfe.md checklist 111). No events, counters zero.
  /// loaded(now_ms) is this state with active expiry done.
  Keyspace after_load(int64_t now_ms, bool skips_due_fields) const {
    Keyspace out = *this;
    auto load = [&](Map& m) {
      for (auto it = m.begin(); it != m.end();) {
        Entry& e = it->second;
        if (e.expire_ms && deadline_passed(*e.expire_ms, now_ms)) {
          it = m.erase(it);
          continue;
        }
        if (skips_due_fields && e.is_hash()) {
          auto& fs = e.hash().fields;
          const bool had = !fs.empty();
          for (auto f = fs.begin(); f != fs.end();) f = f->second.expired(now_ms) ? fs.erase(f) : std::next(f);
          if (had && fs.empty()) {
            it = m.erase(it);
            continue;
          }
        }
        ++it;
      }
    };
    load(out.keys_);
    for (auto& [n, m] : out.other_) load(m);
    out.events_.clear();
    out.counters_ = Counters{};
    return out;
  }

  /// Fields logically expired at now_ms but not reclaimed, over all keys.
  std::size_t expired_unreclaimed(int64_t now_ms) const {
    std::size_t n = 0;
    for (const auto& [k, e] : keys_)
      if (e.is_hash()) n += e.hash().expired_count(now_ms);
    return n;
  }

  /// Key names in byte order (including keys whose key TTL passed but were not looked up).
  std::vector<std::string> key_names() const {
    std::vector<std::string> out;
    for (const auto& [k, e] : keys_) out.push_back(k);
    return out;
  }
  const Map& entries() const { return keys_; }
  std::size_t size() const { return keys_.size(); }
  /// Empties every database (FLUSHALL) and forgets the DUMP payloads seen (state::Twin resolves
  /// each RESTORE's payload when it runs, so none is needed afterwards; the map is copied with
  /// the keyspace at every step); counters, limits and pending events are kept.
  void clear() {
    keys_.clear();
    other_.clear();
    dumps_.clear();
  }
  /// Same data (keys, values, deadlines, in every database); events, counters and encodings aside.
  friend bool operator==(const Keyspace& a, const Keyspace& b) {
    auto nonempty = [](const std::map<int, Map>& m) {
      std::map<int, Map> out;
      for (const auto& [n, d] : m)
        if (!d.empty()) out[n] = d;
      return out;
    };
    return a.keys_ == b.keys_ && nonempty(a.other_) == nonempty(b.other_);
  }

  // ---- other databases (MOVE, SWAPDB, COPY ... DB); commands run on db 0 ----
  /// Database `n` (> 0), created empty on first use.
  Map& other_db(int n) { return other_[n]; }
  /// Databases 1..15 that were used (possibly empty now).
  const std::map<int, Map>& other_dbs() const { return other_; }
  /// SWAPDB a b: the contents of the two databases change places (db 0 is the current one).
  void swap_db(int a, int b) {
    if (a == b) return;
    if (a == 0 || b == 0) keys_.swap(other_[a == 0 ? b : a]);
    else other_[a].swap(other_[b]);
  }

  // ---- effects (effects.hpp) ----
  /// Records a keyspace notification.
  void notify(std::string name, std::string key, char cls, int db = 0) {
    events_.push_back(Event{std::move(name), std::move(key), cls, db});
  }
  /// The events recorded since the last call, in order; clears them.
  std::vector<Event> take_events() {
    std::vector<Event> out;
    out.swap(events_);
    return out;
  }
  const std::vector<Event>& pending_events() const { return events_; }
  /// DUMP payloads the model has seen (model/cmd/dump_commands.hpp): the entry each stands for.
  void remember_dump(const std::string& payload, const Entry& e) { dumps_[payload] = e; }
  const Entry* dumped(const std::string& payload) const {
    auto it = dumps_.find(payload);
    return it == dumps_.end() ? nullptr : &it->second;
  }
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }
  ListpackLimits& limits() { return limits_; }
  const ListpackLimits& limits() const { return limits_; }
  /// Keys with a key TTL (INFO keyspace `expires`), at now_ms.
  std::size_t keys_with_ttl() const {
    std::size_t n = 0;
    for (const auto& [k, e] : keys_) n += e.expire_ms.has_value();
    return n;
  }
  /// Hashes with volatile fields: what INFO keyspace keys_with_volatile_items counts (Valkey,
  /// exact), and the least subexpiry can be (Redis).
  std::size_t volatile_indexed() const {
    std::size_t n = 0;
    for (const auto& [k, e] : keys_) n += e.is_hash() && e.hash().has_volatile();
    return n;
  }
  /// The most Redis's lazy subexpiry can be: hashes with volatile fields, and hashes that had
  /// some and may still be registered (Hash::maybe_indexed).
  std::size_t volatile_indexed_at_most() const {
    std::size_t n = 0;
    for (const auto& [k, e] : keys_) n += e.is_hash() && (e.hash().has_volatile() || e.hash().maybe_indexed);
    return n;
  }

  /// Human-readable dump of one key for failure messages, e.g.
  /// `h: hash {a="1" (expires 1700000000123, in 999 ms), b="2" (expired 5 ms ago)}`; names and
  /// values escaped as valkey-cli reads them (resp::cli_quote, resp::quoted: "\x00\x01").
  std::string describe(const std::string& key, int64_t now_ms) const {
    std::ostringstream os;
    os << resp::cli_quote(key) << ": ";
    auto it = keys_.find(key);
    if (it == keys_.end()) return os.str() + "(missing)";
    const Entry& e = it->second;
    if (e.is_string()) {
      os << "string " << resp::quoted(e.string());
    } else {
      os << "hash {";
      bool first = true;
      for (const auto& [name, f] : e.hash().fields) {
        os << (first ? "" : ", ") << resp::cli_quote(name) << "=" << resp::quoted(f.value);
        first = false;
        if (f.expire_ms) {
          os << " (expires " << *f.expire_ms;
          if (f.expired(now_ms))
            os << ", expired " << (now_ms - *f.expire_ms) << " ms ago)";
          else
            os << ", in " << (*f.expire_ms - now_ms) << " ms)";
        }
      }
      os << "}";
    }
    if (e.expire_ms) os << " key TTL at " << *e.expire_ms << " (in " << (*e.expire_ms - now_ms) << " ms)";
    return os.str();
  }

 private:
  std::size_t reclaim_db(Map& keys, int db, int64_t now_ms, char field_class) {
    std::size_t removed = 0;
    for (auto it = keys.begin(); it != keys.end();) {
      Entry& e = it->second;
      const bool key_due = e.expire_ms && deadline_passed(*e.expire_ms, now_ms);
      if (e.is_hash() && !e.hash().fields.empty()) {
        auto& fs = e.hash().fields;
        std::size_t here = 0;
        for (auto f = fs.begin(); f != fs.end();) {
          // Due, and before the key's own TTL fired (if it did).
          if (f->second.expired(now_ms) && (!key_due || *f->second.expire_ms < *e.expire_ms)) {
            f = fs.erase(f);
            ++here;
          } else {
            ++f;
          }
        }
        removed += here;
        counters_.expired_fields += static_cast<int64_t>(here);
        if (here) events_.push_back(Event{"hexpired", it->first, field_class, db});
        // Active expiry visited the hash: with no deadline left it leaves Redis's lazy index of
        // volatile hashes (Hash::maybe_indexed), so subexpiry counts it no more.
        if (here && !e.hash().has_volatile()) e.hash().maybe_indexed = false;

        if (fs.empty()) {
          events_.push_back(Event{"del", it->first, 'g', db});
          it = keys.erase(it);
          continue;
        }
      }
      if (key_due) {
        events_.push_back(Event{"expired", it->first, 'x', db});
        ++counters_.expired_keys;
        it = keys.erase(it);
        continue;
      }
      ++it;
    }
    return removed;
  }

  Map keys_;
  std::map<int, Map> other_;
  std::map<std::string, Entry> dumps_;
  std::vector<Event> events_;
  Counters counters_;
  ListpackLimits limits_;
};

}  // namespace expirykit::model
