// expirykit/state/replica_triggers.hpp: the commands that, on a server a known issue covers,
// leave a replica's copy of a key different from the primary's (rows of known_issues/table.hpp,
// established by suites/durability/replica.cpp). Read by the durability property
// (property/durable_sequence.hpp: those keys are left out of the replica comparison) and by the
// cluster twin (state/cluster_twin.hpp: after a failover the model re-reads them from the
// promoted replica).
//
//   for (const auto& t : state::detail::replica_triggers())
//     if (auto* k = known_issues::find(t.id); k && k->covers(id))
//       for (const auto& key : t.fires(model_before, argv, now_ms)) excused.insert(key);
#pragma once

#include <set>
#include <string>
#include <vector>

#include <expirykit/model/model.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::state {

using resp::Argv;

namespace detail {

/// A command that, on a server the known issue `id` covers, leaves the replica different from
/// the primary. `fires` sees the model as it was before the command and returns the keys whose
/// copies may differ (empty: the command does not trigger the issue).
struct ReplicaTrigger {
  const char* id;
  std::vector<std::string> (*fires)(const model::Keyspace& before, const Argv& argv, int64_t now_ms);
};

/// A trigger judges a command before it is sent, at a time no later than the server's (the last
/// TIME read, moved on by the steady clock), so a field due up to this long after `now` counts as
/// expired: excusing a key more than needed is harmless, missing one fails the property.
inline constexpr int64_t k_trigger_slack_ms = 1000;

/// Some argument after the key names a field `key` stores that is logically expired by
/// now + k_trigger_slack_ms.
inline bool names_expired_field(const model::Keyspace& ks, const Argv& a, int64_t now) {
  const model::Entry* e = a.size() > 2 ? ks.peek(a[1], now) : nullptr;
  if (!e || !e->is_hash()) return false;
  for (std::size_t i = 2; i < a.size(); ++i) {
    auto f = e->hash().fields.find(a[i]);
    if (f != e->hash().fields.end() && f->second.expired(now + k_trigger_slack_ms)) return true;
  }
  return false;
}

/// HSETEX with the option `opt` (KEEPTTL, FNX) whose fields name every stored field of a hash
/// that stores at least one and whose stored fields are all logically expired: the server
/// propagates the lazy deletion as HDEL first, which deletes the key on the replica. A field
/// due within k_trigger_slack_ms of `now` counts as expired too.
inline bool hsetex_over_all_expired(const model::Keyspace& ks, const Argv& a, int64_t now, const char* opt) {
  if (a.size() < 5 || model::upper(a[0]) != "HSETEX") return false;
  // The option may stand before or after the FIELDS block (Redis 8.6's keyword parser).
  std::size_t fields_at = 0, fields_end = 0;
  bool has_opt = false;
  for (std::size_t i = 2; i < a.size(); ++i) {
    const std::string u = model::upper(a[i]);
    if (u == "FIELDS" && !fields_at && i + 1 < a.size()) {
      long long n = 0;
      if (!model::parse_ll(a[i + 1], n) || n < 1 || static_cast<unsigned long long>(n) > (a.size() - i - 2) / 2) return false;
      fields_at = i;
      fields_end = i + 2 + 2 * static_cast<std::size_t>(n);
      i = fields_end - 1;
      continue;
    }
    has_opt = has_opt || u == opt;
  }
  if (!has_opt || !fields_at) return false;
  const model::Entry* e = ks.peek(a[1], now);
  if (!e || !e->is_hash() || e->hash().fields.empty()) return false;
  std::set<std::string> named;
  for (std::size_t i = fields_at + 2; i + 1 < fields_end; i += 2) named.insert(a[i]);
  for (const auto& [name, f] : e->hash().fields)
    if (!f.expire_ms || *f.expire_ms > now + k_trigger_slack_ms || !named.count(name)) return false;
  return true;
}

/// The triggers of the known primary/replica divergences (rows of known_issues/table.hpp,
/// established by suites/durability/replica.cpp).
inline const std::vector<ReplicaTrigger>& replica_triggers() {
  static const std::vector<ReplicaTrigger> t = {
      {"valkey-expired-fields-propagated",
       [](const model::Keyspace& ks, const Argv& a, int64_t now) {
         static const std::set<std::string> cmds = {"HPERSIST", "HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT", "HDEL", "HGETDEL"};
         const bool fires = !a.empty() && cmds.count(model::upper(a[0])) && names_expired_field(ks, a, now);
         return fires ? std::vector<std::string>{a[1]} : std::vector<std::string>{};
       }},
      {"valkey-copy-expired-fields-replica",
       [](const model::Keyspace& ks, const Argv& a, int64_t now) {
         if (a.size() < 3 || model::upper(a[0]) != "COPY") return std::vector<std::string>{};
         const model::Entry* e = ks.peek(a[1], now);
         const bool fires = e && e->is_hash() && e->hash().expired_count(now + k_trigger_slack_ms) > 0;
         return fires ? std::vector<std::string>{a[1], a[2]} : std::vector<std::string>{};
       }},
      {"valkey-hsetex-repeated-expiry",
       [](const model::Keyspace&, const Argv& a, int64_t) {
         if (a.size() < 3 || model::upper(a[0]) != "HSETEX") return std::vector<std::string>{};
         int timed = 0;
         for (std::size_t i = 2; i < a.size() && model::upper(a[i]) != "FIELDS"; ++i) {
           const std::string u = model::upper(a[i]);
           timed += u == "EX" || u == "PX" || u == "EXAT" || u == "PXAT";
         }
         return timed > 1 ? std::vector<std::string>{a[1]} : std::vector<std::string>{};
       }},
      {"valkey-hsetex-keepttl-replica-drops-key-ttl",
       [](const model::Keyspace& ks, const Argv& a, int64_t now) {
         return hsetex_over_all_expired(ks, a, now, "KEEPTTL") ? std::vector<std::string>{a[1]} : std::vector<std::string>{};
       }},
      {"redis-hsetex-fnx-replica-drops-key-ttl",
       [](const model::Keyspace& ks, const Argv& a, int64_t now) {
         return hsetex_over_all_expired(ks, a, now, "FNX") ? std::vector<std::string>{a[1]} : std::vector<std::string>{};
       }},
      {"valkey-hsetex-flag-named-key",
       // The propagated HSETEX loses its key, so the replica writes another key (the next
       // argument, e.g. KEEPTTL) or none: every argument may name a key on the replica.
       [](const model::Keyspace&, const Argv& a, int64_t) {
         static const std::set<std::string> flags = {"NX", "XX", "FNX", "FXX"};
         const bool fires = a.size() > 2 && model::upper(a[0]) == "HSETEX" && flags.count(model::upper(a[1]));
         return fires ? std::vector<std::string>(a.begin() + 1, a.end()) : std::vector<std::string>{};
       }},
  };
  return t;
}

}  // namespace detail

}  // namespace expirykit::state
