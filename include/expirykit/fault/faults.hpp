// expirykit/fault/faults.hpp: the fault catalogue: server regressions in hash field expiry,
// imitated by rewriting what goes through a fault::Proxy (proxy.hpp).
//
//   auto f = fault::find("httl-plus-1s");                     // std::nullopt for an unknown id
//   fault::Proxy p({.upstream_port = server_port, .hooks = f->hooks});
//   for (const auto& f : fault::catalogue()) std::cout << f.id << "  " << f.description << "\n";
//
// Each fault is one regression a Valkey or Redis release could plausibly ship in this area and
// touches nothing else: TIME, INFO server, CONFIG, HELLO, CLIENT, PUBLISH and connection setup
// always pass through unchanged, and so does every command a fault does not name. What is
// imitated follows the command pages (valkey.io/commands/hexpire, hsetex, hgetex, hgetdel,
// httl, hpersist; the same pages on redis.io), valkey.io/topics/notifications,
// redis.io/docs/latest/develop/reference/client-side-caching, and the dialect facts of
// include/expirykit/model/dialect.hpp (event and INFO names per server).
//
// Limits of the imitation (a proxy sees the wire, not the server's memory):
//   * commands inside a script (EVAL, FCALL) are not affected, only commands sent as such
//     (also inside MULTI/EXEC);
//   * a reply fault changes the reply, not the state (httl-plus-1s leaves the deadline alone);
//   * time decisions use this machine's clock, the server's when it runs on the same host.
//
// catalogue() makes fresh hook factories on each call, so state a fault keeps (a counter's
// first value, the keys whose invalidation to drop) starts empty for each proxy built from it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/fault/detail/builders.hpp>

namespace expirykit::fault {

struct Fault {
  std::string id;           ///< kebab-case, e.g. "hexpire-past-replies-1"
  std::string area;         ///< reply, error, ttl-reply, deadline, unit, condition, deletion, counter, event, tracking, encoding, active-expiry
  std::string description;  ///< the regression it imitates, one line
  HookFactory hooks;        ///< the hooks of one connection (Proxy::Options::hooks)
};

/// Every fault, in a stable order (by area). Fresh state on each call.
inline std::vector<Fault> catalogue() {
  using namespace detail;
  using detail::cmd::expire_family;
  auto is = [](const char* n) { return [n](const std::string& u) { return u == n; }; };
  auto expire = [](const std::string& u) { return expire_family(u); };
  auto ttl = [](const std::string& u) { return detail::cmd::ttl_family(u); };
  return {
      // ---- reply codes --------------------------------------------------------------------
      {"hexpire-past-replies-1", "reply",
       "HEXPIRE* with a deadline already past deletes the field but answers 1 (TTL set) instead of 2",
       replies(map_codes(expire, [](long long v) { return v == 2 ? 1 : v; }))},
      {"hexpire-missing-replies-0", "reply",
       "HEXPIRE* answers 0 (condition not met) instead of -2 for a field or key that does not exist",
       replies(map_codes(expire, [](long long v) { return v == -2 ? 0 : v; }))},
      {"httl-codes-swapped", "reply",
       "HTTL/HPTTL/HEXPIRETIME/HPEXPIRETIME swap -2 (no such field) and -1 (field without TTL)",
       replies(map_codes(ttl, [](long long v) { return v == -2 ? -1 : v == -1 ? -2 : v; }))},
      {"hpersist-persistent-replies-1", "reply",
       "HPERSIST answers 1 (TTL removed) instead of -1 for a field that has no TTL",
       replies(map_codes(is("HPERSIST"), [](long long v) { return v == -1 ? 1 : v; }))},
      {"hsetex-replies-field-count", "reply",
       "HSETEX answers the number of fields it set (as HSET does) instead of 1",
       replies([](const Argv& a, const Reply& r) -> std::optional<Reply> {
         auto p = detail::cmd::parse(a);
         if (!p || p->name != "HSETEX" || !(r == Reply::integer(1))) return std::nullopt;
         return Reply::integer(static_cast<long long>(p->fields.size()));
       })},
      // ---- errors ---------------------------------------------------------------------------
      {"wrongtype-replies-nil", "error",
       "the field-TTL commands answer nil instead of WRONGTYPE on a key that is not a hash",
       replies(error_of_field_ttl([](const std::string& e) { return e.rfind("WRONGTYPE", 0) == 0; }, Reply::nil()))},
      {"expire-time-error-text", "error",
       "a negative or out-of-range field TTL is refused with the generic \"value is out of range\" text "
       "instead of \"invalid expire time in '<command>' command\"",
       replies(error_of_field_ttl([](const std::string& e) { return e.rfind("ERR invalid expire time", 0) == 0; },
                                  Reply::error("ERR value is out of range, must be positive")))},
      {"numfields-error-text", "error",
       "a numfields argument that does not match the fields given is refused with \"ERR syntax error\"",
       replies(error_of_field_ttl(
           [](const std::string& e) { return detail::upper(e).find("NUMFIELDS") != std::string::npos; },
           Reply::error("ERR syntax error")))},
      // ---- TTL replies ----------------------------------------------------------------------
      {"httl-plus-1s", "ttl-reply", "HTTL answers one second more than the time left (a rounding regression)",
       replies(map_codes(is("HTTL"), [](long long v) { return v >= 0 ? v + 1 : v; }))},
      {"httl-rounds-down", "ttl-reply",
       "HTTL answers the time left rounded down to whole seconds instead of up (1.5 s left answers 1, not 2)",
       requests([](const Argv& a) -> std::optional<Rewrite> {
         if (a.empty() || detail::upper(a[0]) != "HTTL") return std::nullopt;
         Argv q = a;
         q[0] = "HPTTL";
         return Rewrite{{q}, std::nullopt, [](const std::vector<Reply>& r) -> Reply {
                          if (!r[0].is_array()) return r[0];  // an error reads the same
                          std::vector<Reply> out;
                          for (const auto& e : r[0].elements()) {
                            if (!e.is_integer()) return r[0];
                            const long long v = e.as_integer();
                            out.push_back(Reply::integer(v >= 0 ? v / 1000 : v));
                          }
                          return Reply::array(std::move(out));
                        }};
       })},
      {"hpttl-minus-1s", "ttl-reply", "HPTTL answers 1000 ms less than the time left (at least 0)",
       replies(map_codes(is("HPTTL"), [](long long v) { return v >= 0 ? std::max(0LL, v - 1000) : v; }))},
      {"hexpiretime-minus-1s", "ttl-reply", "HEXPIRETIME answers the absolute expiry one second early",
       replies(map_codes(is("HEXPIRETIME"), [](long long v) { return v > 0 ? v - 1 : v; }))},
      // ---- deadlines ------------------------------------------------------------------------
      {"hexpire-deadline-1s-late", "deadline", "HEXPIRE/HPEXPIRE set the deadline one second later than asked",
       requests(first_of({shift_time("HEXPIRE", "", 1), shift_time("HPEXPIRE", "", 1000)}))},
      {"hexpireat-deadline-1s-early", "deadline",
       "HEXPIREAT/HPEXPIREAT store an absolute expiry one second earlier than given",
       requests(first_of({shift_time("HEXPIREAT", "", -1), shift_time("HPEXPIREAT", "", -1000)}))},
      {"hsetex-deadline-1s-early", "deadline", "HSETEX EX/PX set the deadline one second earlier than asked",
       requests(first_of({shift_time("HSETEX", "EX", -1), shift_time("HSETEX", "PX", -1000)}))},
      {"hgetex-deadline-1s-late", "deadline", "HGETEX EX/PX set the deadline one second later than asked",
       requests(first_of({shift_time("HGETEX", "EX", 1), shift_time("HGETEX", "PX", 1000)}))},
      // ---- units ----------------------------------------------------------------------------
      {"hsetex-ex-as-ms", "unit", "HSETEX EX takes its time in milliseconds (EX treated as PX)",
       requests([](const Argv& a) -> std::optional<Rewrite> {
         auto p = detail::cmd::parse(a);
         if (!p || p->name != "HSETEX" || !p->option("EX")) return std::nullopt;
         Argv out = a;
         out[p->option("EX")] = "PX";
         return send(std::move(out));
       })},
      {"hexpireat-seconds-as-ms", "unit",
       "HEXPIREAT reads its Unix time as milliseconds (a deadline in 1970: the fields are deleted)",
       requests([](const Argv& a) -> std::optional<Rewrite> {
         auto p = detail::cmd::parse(a);
         if (!p || p->name != "HEXPIREAT") return std::nullopt;
         Argv out = a;
         out[0] = "HPEXPIREAT";
         return send(std::move(out));
       })},
      // ---- condition flags ------------------------------------------------------------------
      {"hexpire-nx-xx-ignored", "condition", "HEXPIRE* ignore NX and XX: the TTL is set whatever the field had",
       requests(first_of({strip_options("HEXPIRE", {"NX", "XX"}), strip_options("HPEXPIRE", {"NX", "XX"}),
                          strip_options("HEXPIREAT", {"NX", "XX"}), strip_options("HPEXPIREAT", {"NX", "XX"})}))},
      {"hexpire-gt-lt-ignored", "condition", "HEXPIRE* ignore GT and LT: the TTL is set whatever it was",
       requests(first_of({strip_options("HEXPIRE", {"GT", "LT"}), strip_options("HPEXPIRE", {"GT", "LT"}),
                          strip_options("HEXPIREAT", {"GT", "LT"}), strip_options("HPEXPIREAT", {"GT", "LT"})}))},
      {"hsetex-fnx-fxx-ignored", "condition", "HSETEX ignores FNX and FXX: the fields are set whether they exist or not",
       requests(strip_options("HSETEX", {"FNX", "FXX"}))},
      {"hsetex-keepttl-ignored", "condition", "HSETEX ignores KEEPTTL: the fields it sets lose their TTL",
       requests(strip_options("HSETEX", {"KEEPTTL"}))},
      // ---- deletion -------------------------------------------------------------------------
      {"past-deadline-keeps-field", "deletion",
       "HEXPIRE* with a deadline already past answers 2 but neither deletes the field nor changes it: it stays "
       "visible",
       requests(past_deadline_noop())},
      {"hgetdel-keeps-fields", "deletion", "HGETDEL returns the values but does not delete the fields",
       requests(as_hmget("HGETDEL", [](const detail::cmd::Parsed&) { return true; }))},
      {"hgetex-persist-ignored", "deletion", "HGETEX PERSIST returns the values but leaves the fields' TTLs in place",
       requests(as_hmget("HGETEX", [](const detail::cmd::Parsed& p) { return p.option("PERSIST") != 0; }))},
      // ---- INFO counters --------------------------------------------------------------------
      {"expired-fields-stuck", "counter",
       "INFO stats expired_fields (Valkey) / expired_subkeys (Redis) is never bumped: it keeps its first value",
       stuck_stat({"expired_fields", "expired_subkeys"})},
      {"expired-keys-stuck", "counter", "INFO stats expired_keys is never bumped: it keeps its first value",
       stuck_stat({"expired_keys"})},
      {"volatile-count-not-decremented", "counter",
       "INFO keyspace keys_with_volatile_items (Valkey) / subexpiry (Redis) is never decremented while the db has "
       "keys: a hash stays counted after its volatile fields are gone",
       volatile_high_water({"keys_with_volatile_items", "subexpiry"})},
      // ---- keyspace notifications ---------------------------------------------------------
      {"event-hexpire-missing", "event", "no hexpire notification when a field gets a TTL",
       drop_events([](const detail::cmd::Notification& n) { return n.event == "hexpire"; })},
      {"event-hexpired-missing", "event", "no hexpired notification when a field expires (actively, lazily or at once)",
       drop_events([](const detail::cmd::Notification& n) { return n.event == "hexpired"; })},
      {"event-hpersist-missing", "event", "no hpersist notification when HPERSIST or HGETEX PERSIST removes a TTL",
       drop_events([](const detail::cmd::Notification& n) { return n.event == "hpersist"; })},
      {"event-del-after-hexpired-missing", "event",
       "no del notification when the expiry of its last field deletes the hash", drop_del_after_hexpired()},
      {"event-hexpired-named-expired", "event",
       "field expiry is notified as the key-level \"expired\" instead of \"hexpired\"",
       [] {
         Hooks h;
         h.push = [](const Reply& m) -> std::optional<std::vector<Reply>> {
           auto n = detail::cmd::notification(m);
           if (!n || n->event != "hexpired") return std::nullopt;
           return std::vector<Reply>{renamed(m, *n, "expired")};
         };
         return h;
       }},
      // ---- client-side caching ----------------------------------------------------------------
      {"tracking-ttl-change-not-invalidated", "tracking",
       "HEXPIRE* and HPERSIST change a field's TTL (or delete it) without invalidating the key for tracking clients",
       ttl_changes_not_invalidated()},
      // ---- encodings ------------------------------------------------------------------------
      {"encoding-hashtable-listpackex-swapped", "encoding",
       "OBJECT ENCODING names a hashtable hash listpackex and a listpackex hash hashtable",
       swapped_hash_encodings("hashtable", "listpackex")},
      {"encoding-listpack-listpackex-swapped", "encoding",
       "OBJECT ENCODING names a listpack hash listpackex and a listpackex hash listpack",
       swapped_hash_encodings("listpack", "listpackex")},
      // ---- active expiry ----------------------------------------------------------------------
      {"active-expiry-never-runs", "active-expiry",
       "active expiry never reclaims anything: DEBUG SET-ACTIVE-EXPIRE 1 has no effect (forced to 0)",
       requests([](const Argv& a) -> std::optional<Rewrite> {
         if (a.size() != 3 || detail::upper(a[0]) != "DEBUG" || detail::upper(a[1]) != "SET-ACTIVE-EXPIRE" || a[2] != "1")
           return std::nullopt;
         return send({a[0], a[1], "0"});
       })},
  };
}

/// The fault with this id, or std::nullopt. "none" is the fault that changes nothing (a
/// pass-through proxy, the baseline).
inline std::optional<Fault> find(std::string_view id) {
  if (id == "none") return Fault{"none", "none", "no fault: everything passes through unchanged", {}};
  for (auto& f : catalogue())
    if (f.id == id) return f;
  return std::nullopt;
}

}  // namespace expirykit::fault
