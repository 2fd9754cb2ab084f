// expirykit/model/effects.hpp: what a command does besides its reply, as the model predicts it:
// keyspace notifications, INFO counters, and the object encoding of a hash.
//
//   model::Keyspace ks;  model::apply(ks, d, {"HPEXPIRE", "h", "0", "FIELDS", "1", "a"}, now);
//   for (const model::Event& e : ks.take_events()) ...   // {"hexpired", "h", 'h'}, {"del", "h", 'g'}
//   ks.counters().expired_fields                        // INFO expired_fields / expired_subkeys
//
// Events. A server publishes each event on two channels, `__keyspace@<db>__:<key>` (message: the
// event name) and `__keyevent@<db>__:<event>` (message: the key), when its class is enabled in
// notify-keyspace-events (K and E select the channels). The class letters are the servers' own
// (valkey.io/topics/notifications, redis.io/docs/latest/develop/use/keyspace-notifications):
//   g generic (del, expire, persist, rename_from, rename_to, copy_to, move_from, move_to,
//   restore), $ string (set),
//   h hash (hset, hdel, hincrby, hincrbyfloat, hexpire, hpersist, hexpired from a command),
//   x expired (expired; hexpired from active expiry on Valkey: Dialect::hexpired_class).
// Notifications carry only the key, never the field (redis-hfe.md §7).
//
// Encodings. OBJECT ENCODING of a hash: listpack while small (at most hash-max-listpack-entries
// fields, every field name and value at most hash-max-listpack-value bytes), then hashtable,
// one way. A field TTL makes a listpack hash "hashtable" on Valkey and "listpackex" on Redis
// (Dialect::ttl_encoding; valkey-hfe.md §13, redis-hfe.md §8). Nothing converts back while the
// server runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

/// One keyspace notification: event name, key, class letter (see the file comment).
struct Event {
  std::string name;
  std::string key;
  char cls = 'g';
  int db = 0;  ///< the database whose channels carry it (MOVE/COPY ... DB notify the target db)
  friend bool operator==(const Event&, const Event&) = default;
  /// "hexpired@h" (the key quoted when not plain), for messages.
  std::string to_string() const {
    const std::string k = resp::cli_quote(key);
    return name + "@" + k + (db ? " (db " + std::to_string(db) + ")" : "");
  }
};

/// Events as one line: "[hset@h, hexpire@h]".
inline std::string to_string(const std::vector<Event>& es) {
  std::string out = "[";
  for (std::size_t i = 0; i < es.size(); ++i) out += (i ? ", " : "") + es[i].to_string();
  return out + "]";
}

/// The class of a pseudo-event the model records for a key a command modifies without any
/// keyspace notification (a server defect it replays: Defects::hmget_deletes_hash_silently).
/// No flags deliver it; client tracking still invalidates the key (model/tracking.hpp).
inline constexpr char signal_only_class = '\0';

/// True if `cls` is delivered under a notify-keyspace-events flag string (the server's rules:
/// 'A' is every class but 'n' and 'm'; at least one of K/E must be present to deliver anything).
/// Never for signal_only_class.
inline bool class_enabled(std::string_view flags, char cls) {
  if (cls == signal_only_class) return false;
  bool k = false, e = false, has = false;
  for (char f : flags) {
    if (f == 'K') k = true;
    else if (f == 'E') e = true;
    else if (f == 'A') has = has || (cls != 'n' && cls != 'm');
    else if (f == cls) has = true;
  }
  return (k || e) && has;
}

/// INFO counters the model accumulates (the rest of what INFO shows is derived from the state).
struct Counters {
  /// Fields deleted because they expired or were given a past deadline: INFO `expired_fields`
  /// (Valkey) / `expired_subkeys` (Redis), Dialect::info_expired_fields_stat.
  int64_t expired_fields = 0;
  /// Keys deleted because their key TTL passed: INFO `expired_keys`.
  int64_t expired_keys = 0;
  friend bool operator==(const Counters&, const Counters&) = default;
};

/// OBJECT ENCODING of a hash.
enum class Encoding { listpack, listpackex, hashtable };
inline const char* to_string(Encoding e) {
  switch (e) {
    case Encoding::listpack: return "listpack";
    case Encoding::listpackex: return "listpackex";
    case Encoding::hashtable: return "hashtable";
  }
  return "?";
}

/// The server's listpack limits (CONFIG GET hash-max-listpack-entries / -value). Defaults are
/// the compiled defaults of both servers (512 / 64, redis-hfe.md §8).
struct ListpackLimits {
  std::size_t entries = 512;
  std::size_t value = 64;  ///< bytes, for field names and values alike
};

}  // namespace expirykit::model
