// expirykit/observe/counters.hpp: the INFO counters a model can predict, read from a server and
// compared with the model.
//
//   auto base = observe::Counters::read(client, dialect);   // INFO stats + INFO keyspace
//   ... commands ...
//   auto now = observe::Counters::read(client, dialect);
//   auto diffs = observe::compare(now - base, model_delta); // "expired_fields: server +2, model +3"
//
// Which INFO names (Dialect, redis-hfe.md §9): the fields-expired counter is `expired_fields` on
// Valkey and `expired_subkeys` on Redis; the volatile-hash count of the keyspace line is
// `keys_with_volatile_items` on Valkey and `subexpiry` on Redis. `expired_keys` counts keys whose
// key TTL passed (a hash emptied by field expiry is not counted: valkey-hfe.md §11).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::observe {

/// INFO counters that the model predicts. Stats are cumulative since the server started (or
/// CONFIG RESETSTAT): compare differences. Keyspace values are absolute for one db.
struct Counters {
  int64_t expired_fields = 0;  ///< stats: expired_fields / expired_subkeys
  int64_t expired_keys = 0;    ///< stats: expired_keys
  int64_t keys = 0;            ///< keyspace dbN: keys
  int64_t expires = 0;         ///< keyspace dbN: expires (keys with a key TTL)
  int64_t volatile_keys = 0;   ///< keyspace dbN: keys_with_volatile_items / subexpiry
  /// Model only: the most volatile_keys may be where the server's index is lazy (Redis
  /// subexpiry, model/context.hpp after_hash_write); equal to volatile_keys elsewhere.
  int64_t volatile_keys_max = 0;

  /// INFO stats and INFO keyspace of `c`, with `d`'s names. Throws std::runtime_error if the
  /// server refuses INFO or lacks the dialect's stats field.
  static Counters read(resp::Client& c, const model::Dialect& d, int db = 0) {
    // Both sections in one round trip (the checker reads them around every sequence).
    const auto r = c.pipeline(requests());
    return parse(r[0], r[1], d, db, c.address());
  }
  /// The commands read() sends (INFO stats, INFO keyspace), for a caller that pipelines them
  /// with its own; parse() reads their replies. The INFO keyspace is the one at
  /// `keyspace_request` (a caller that also needs which databases hold keys reads it there).
  static std::vector<resp::Argv> requests() { return {{"INFO", "stats"}, {"INFO", "keyspace"}}; }
  static constexpr std::size_t keyspace_request = 1;
  /// The counters in the replies to requests() from the server at `address` (for messages).
  /// Throws std::runtime_error like read().
  static Counters parse(const resp::Reply& stats_reply, const resp::Reply& keyspace_reply, const model::Dialect& d,
                        int db, const std::string& address) {
    for (const auto* x : {&stats_reply, &keyspace_reply})
      if (!x->is_string()) throw std::runtime_error(address + ": INFO failed: " + x->to_string());
    using server::Info;
    const std::string_view stats = stats_reply.str(), ks = keyspace_reply.str();
    if (!Info::find(stats, d.info_expired_fields_stat))
      throw std::runtime_error("INFO stats has no " + d.info_expired_fields_stat + " (dialect " + d.name + ")");
    Counters out;
    out.expired_fields = Info::find_int(stats, d.info_expired_fields_stat);
    out.expired_keys = Info::find_int(stats, "expired_keys");
    out.keys = Info::find_keyspace(ks, "keys", db);
    out.expires = Info::find_keyspace(ks, "expires", db);
    out.volatile_keys = Info::find_keyspace(ks, d.info_keyspace_volatile, db);
    out.volatile_keys_max = out.volatile_keys;
    return out;
  }

  /// The model's view: `stat_base` holds the stats at the point the model's counters started
  /// from (the model only counts what it applied); keyspace values come from the model's state.
  static Counters of_model(const model::Keyspace& ks, const Counters& stat_base) {
    Counters out;
    out.expired_fields = stat_base.expired_fields + ks.counters().expired_fields;
    out.expired_keys = stat_base.expired_keys + ks.counters().expired_keys;
    out.keys = static_cast<int64_t>(ks.size());
    out.expires = static_cast<int64_t>(ks.keys_with_ttl());
    out.volatile_keys = static_cast<int64_t>(ks.volatile_indexed());
    out.volatile_keys_max = static_cast<int64_t>(ks.volatile_indexed_at_most());
    return out;
  }
};

/// One line per counter that differs: "expired_fields: server 12, model 11".
inline std::vector<std::string> compare(const Counters& server, const Counters& model, const model::Dialect& d) {
  std::vector<std::string> out;
  auto one = [&](const std::string& name, int64_t s, int64_t m) {
    if (s != m) out.push_back(name + ": server " + std::to_string(s) + ", model " + std::to_string(m));
  };
  one("INFO stats " + d.info_expired_fields_stat, server.expired_fields, model.expired_fields);
  one("INFO stats expired_keys", server.expired_keys, model.expired_keys);
  one("INFO keyspace keys", server.keys, model.keys);
  one("INFO keyspace expires", server.expires, model.expires);
  if (server.volatile_keys < model.volatile_keys || server.volatile_keys > model.volatile_keys_max)
    out.push_back("INFO keyspace " + d.info_keyspace_volatile + ": server " + std::to_string(server.volatile_keys) +
                  ", model " +
                  (model.volatile_keys == model.volatile_keys_max
                       ? std::to_string(model.volatile_keys)
                       : std::to_string(model.volatile_keys) + ".." + std::to_string(model.volatile_keys_max)));
  return out;
}

}  // namespace expirykit::observe
