// expirykit/fault/detail/builders.hpp: the pieces the fault catalogue (faults.hpp) is made of: hook
// factories that rewrite replies, requests or pushes of the field-TTL commands.
//
// State: a HookFactory is called once per proxied connection. State that a fault shares
// between connections (a counter's first value, the keys whose invalidation to drop) is made
// when the factory is made and lives as long as copies of it, behind a mutex (hooks of different
// connections run on different threads); per-connection state is made inside the factory call.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <expirykit/fault/detail/commands.hpp>
#include <expirykit/fault/session.hpp>

namespace expirykit::fault {

namespace detail {

using cmd::Parsed;
using resp::Argv;
using resp::Reply;
using ReplyFn = std::function<std::optional<Reply>(const Argv&, const Reply&)>;
using RequestFn = std::function<std::optional<Rewrite>(const Argv&)>;
using PushFn = std::function<std::optional<std::vector<Reply>>(const Reply&)>;

inline HookFactory replies(ReplyFn f) {
  return [f] { return Hooks{{}, f, {}}; };
}
inline HookFactory requests(RequestFn f) {
  return [f] { return Hooks{f, {}, {}}; };
}
inline std::optional<Rewrite> send(Argv a) { return Rewrite{{std::move(a)}, std::nullopt, {}}; }
inline long long now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Integer-array replies of the commands `pick` accepts, each value through `f`.
template <class Pick, class F>
ReplyFn map_codes(Pick pick, F f) {
  return [pick, f](const Argv& a, const Reply& r) -> std::optional<Reply> {
    if (!pick(upper(a[0]))) return std::nullopt;
    return cmd::map_ints(r, f);
  };
}

/// Errors of the field-TTL commands that `match` accepts, replaced by `to`.
template <class Match>
ReplyFn error_of_field_ttl(Match match, Reply to) {
  return [match, to](const Argv& a, const Reply& r) -> std::optional<Reply> {
    if (!cmd::field_ttl_command(upper(a[0])) || !r.is_error() || !match(r.str())) return std::nullopt;
    return to;
  };
}

/// The time argument of command `name` (HEXPIRE* argv[2], or the value of HSETEX/HGETEX option
/// `unit`) moved by `delta` and clamped at 0 (a negative time is an error, 0 is "already
/// past"); a time that was negative or would overflow is left alone.
inline RequestFn shift_time(std::string name, std::string unit, long long delta) {
  return [=](const Argv& a) -> std::optional<Rewrite> {
    auto p = cmd::parse(a);
    if (!p || p->name != name) return std::nullopt;
    const std::size_t at = unit.empty() ? 2 : p->option(unit) + 1;
    if (at == 1) return std::nullopt;  // no such option
    const long long t = *cmd::integer(a[at]);
    if (t < 0 || t > LLONG_MAX - 1000000) return std::nullopt;
    Argv out = a;
    out[at] = std::to_string(std::max(0LL, t + delta));
    return send(std::move(out));
  };
}
/// Several request rewrites; the first that applies wins.
inline RequestFn first_of(std::vector<RequestFn> fs) {
  return [fs](const Argv& a) -> std::optional<Rewrite> {
    for (const auto& f : fs)
      if (auto r = f(a)) return r;
    return std::nullopt;
  };
}

/// Drops the option tokens `names` of command `name` (forwarded as if they were not given).
inline RequestFn strip_options(std::string name, std::vector<std::string> names) {
  return [=](const Argv& a) -> std::optional<Rewrite> {
    auto p = cmd::parse(a);
    if (!p || p->name != name) return std::nullopt;
    std::vector<std::size_t> drop;
    for (const auto& [i, o] : p->options)
      if (std::find(names.begin(), names.end(), o) != names.end()) drop.push_back(i);
    if (drop.empty()) return std::nullopt;
    return send(cmd::without(a, drop));
  };
}

/// `name` KEY [options] FIELDS n f... sent as HMGET KEY f... (a read that changes nothing),
/// when `when` accepts the parsed command.
template <class When>
RequestFn as_hmget(std::string name, When when) {
  return [=](const Argv& a) -> std::optional<Rewrite> {
    auto p = cmd::parse(a);
    if (!p || p->name != name || !when(*p)) return std::nullopt;
    Argv out{"HMGET", a[1]};
    out.insert(out.end(), p->fields.begin(), p->fields.end());
    return send(std::move(out));
  };
}

/// HEXPIRE* with a deadline already past (relative 0, absolute <= now on this machine's clock,
/// the server's when it runs on the same host), sent as HPTTL over the same fields (nothing
/// changes); each field's reply is what the server would answer after checking the condition:
/// -2 missing, 0 condition not met, 2 "deleted".
inline RequestFn past_deadline_noop() {
  return [](const Argv& a) -> std::optional<Rewrite> {
    auto p = cmd::parse(a);
    if (!p || !cmd::expire_family(p->name) || p->options.size() > 1) return std::nullopt;
    const long long t = *cmd::integer(a[2]);
    const long long now = now_ms();
    const bool past = t >= 0 && ((p->name == "HEXPIRE" || p->name == "HPEXPIRE")   ? t == 0
                                 : p->name == "HEXPIREAT" ? t <= now / 1000
                                                          : t <= now);
    if (!past) return std::nullopt;
    const std::string cond = p->options.empty() ? "" : p->options[0].second;
    Argv q{"HPTTL", a[1], "FIELDS", std::to_string(p->fields.size())};
    q.insert(q.end(), p->fields.begin(), p->fields.end());
    Rewrite rw{{q}, std::nullopt, [cond](const std::vector<Reply>& r) -> Reply {
                 if (!r[0].is_array()) return r[0];  // an error: WRONGTYPE reads the same
                 std::vector<Reply> out;
                 for (const auto& e : r[0].elements()) {
                   if (!e.is_integer()) return r[0];
                   const long long ttl = e.as_integer();
                   const bool has_ttl = ttl >= 0;  // -1: no TTL, -2: no such field
                   const bool met = cond.empty() || (cond == "NX" && !has_ttl) || (cond == "XX" && has_ttl) ||
                                    cond == "LT";  // GT: a past time is never greater; LT: always less
                   out.push_back(Reply::integer(ttl == -2 ? -2 : met ? 2 : 0));
                 }
                 return Reply::array(std::move(out));
               }};
    return rw;
  };
}

/// Pushes whose notification `pick` selects are dropped.
template <class Pick>
HookFactory drop_events(Pick pick) {
  return [pick] {
    Hooks h;
    h.push = [pick](const Reply& m) -> std::optional<std::vector<Reply>> {
      auto n = cmd::notification(m);
      if (n && pick(*n)) return std::vector<Reply>{};
      return std::nullopt;
    };
    return h;
  };
}

/// The "del" that follows an "hexpired" of the same key (the last field expired, the hash goes)
/// is not sent; per subscriber connection and channel family.
inline HookFactory drop_del_after_hexpired() {
  return [] {
    auto last = std::make_shared<std::map<std::string, std::string>>();
    Hooks h;
    h.push = [last](const Reply& m) -> std::optional<std::vector<Reply>> {
      auto n = cmd::notification(m);
      if (!n) return std::nullopt;
      const std::string k = (n->keyspace ? "s" : "e") + n->db + ":" + n->key;
      const bool drop = n->event == "del" && (*last)[k] == "hexpired";
      if (n->event == "del") last->erase(k);
      else (*last)[k] = n->event;
      if (drop) return std::vector<Reply>{};
      return std::nullopt;
    };
    return h;
  };
}

/// INFO replies with the integer field `stat` (INFO stats) held at the first value seen.
inline HookFactory stuck_stat(std::vector<std::string> stats) {
  struct Shared {
    std::mutex mu;
    std::map<std::string, long long> first;
  };
  auto s = std::make_shared<Shared>();
  return [s, stats] {
    return Hooks{{},
                 [s, stats](const Argv& a, const Reply& r) -> std::optional<Reply> {
                   if (upper(a[0]) != "INFO" || !r.is_string()) return std::nullopt;
                   std::lock_guard<std::mutex> lock(s->mu);
                   std::string text = r.str();
                   for (const auto& st : stats)
                     text = cmd::map_info_field(text, st, [&](long long v) { return s->first.emplace(st, v).first->second; });
                   return Reply::string(std::move(text));
                 },
                 {}};
  };
}

/// INFO keyspace's volatile-hash count (`keys`: keys_with_volatile_items / subexpiry) never
/// going down: its high-water mark per db since the last FLUSHALL / FLUSHDB, or since the db
/// was last absent from INFO keyspace (empty).
inline HookFactory volatile_high_water(std::vector<std::string> keys) {
  struct Shared {
    std::mutex mu;
    std::map<int, long long> high;
  };
  auto s = std::make_shared<Shared>();
  return [s, keys] {
    Hooks h;
    h.request = [s](const Argv& a) -> std::optional<Rewrite> {
      const std::string n = upper(a[0]);
      if (n == "FLUSHALL" || n == "FLUSHDB") {
        std::lock_guard<std::mutex> lock(s->mu);
        s->high.clear();
      }
      return std::nullopt;
    };
    h.reply = [s, keys](const Argv& a, const Reply& r) -> std::optional<Reply> {
      if (upper(a[0]) != "INFO" || !r.is_string() || r.str().find("# Keyspace") == std::string::npos)
        return std::nullopt;
      std::lock_guard<std::mutex> lock(s->mu);
      std::map<int, long long> seen;
      std::string text = r.str();
      for (const auto& k : keys)
        text = cmd::map_keyspace_field(text, k, [&](int db, long long v) {
          long long& hi = s->high[db];
          hi = std::max(hi, v);
          seen[db] = hi;
          return hi;
        });
      for (auto it = s->high.begin(); it != s->high.end();) it = seen.count(it->first) ? std::next(it) : s->high.erase(it);
      return Reply::string(std::move(text));
    };
    return h;
  };
}

/// CLIENT TRACKING invalidations of a key are not sent for HEXPIRE* and HPERSIST (TTL-only
/// changes). The proxy sees the command on one connection and the invalidation on the
/// redirect connection: a command that changed a field marks its key (from when it is
/// forwarded until 200 ms after its reply), and an invalidation of a marked key is dropped.
inline HookFactory ttl_changes_not_invalidated() {
  struct Shared {
    std::mutex mu;
    struct Mark {
      int in_flight = 0;
      std::chrono::steady_clock::time_point until{};
    };
    std::map<std::string, Mark> marks;
  };
  auto s = std::make_shared<Shared>();
  auto ttl_only = [](const Argv& a) {
    const std::string n = upper(a[0]);
    return (cmd::expire_family(n) || n == "HPERSIST") && a.size() > 1;
  };
  return [s, ttl_only] {
    Hooks h;
    h.request = [s, ttl_only](const Argv& a) -> std::optional<Rewrite> {
      if (!ttl_only(a)) return std::nullopt;
      std::lock_guard<std::mutex> lock(s->mu);
      ++s->marks[a[1]].in_flight;
      return std::nullopt;
    };
    h.reply = [s, ttl_only](const Argv& a, const Reply& r) -> std::optional<Reply> {
      if (!ttl_only(a)) return std::nullopt;
      bool changed = false;
      if (r.is_array())
        for (const auto& e : r.elements()) changed = changed || (e.is_integer() && (e.as_integer() == 1 || e.as_integer() == 2));
      std::lock_guard<std::mutex> lock(s->mu);
      auto it = s->marks.find(a[1]);
      if (it == s->marks.end()) return std::nullopt;
      --it->second.in_flight;
      if (changed) it->second.until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
      else if (it->second.in_flight <= 0 && it->second.until < std::chrono::steady_clock::now()) s->marks.erase(it);
      return std::nullopt;
    };
    h.push = [s](const Reply& m) -> std::optional<std::vector<Reply>> {
      if (!m.is_array() || m.size() != 3 || !m[1].is_string() || m[1].str() != "__redis__:invalidate" || !m[2].is_array())
        return std::nullopt;
      std::lock_guard<std::mutex> lock(s->mu);
      const auto now = std::chrono::steady_clock::now();
      std::vector<Reply> keep;
      for (const auto& k : m[2].elements()) {
        auto it = k.is_string() ? s->marks.find(k.str()) : s->marks.end();
        if (it != s->marks.end() && (it->second.in_flight > 0 || it->second.until >= now)) {
          s->marks.erase(it);
          continue;
        }
        keep.push_back(k);
      }
      if (keep.size() == m[2].size()) return std::nullopt;
      if (keep.empty()) return std::vector<Reply>{};
      return std::vector<Reply>{Reply::array({m[0], m[1], Reply::array(std::move(keep))})};
    };
    return h;
  };
}

/// OBJECT ENCODING of a hash answers `a` for `b` and `b` for `a` (other types unchanged): sent as
/// TYPE key, OBJECT ENCODING key.
inline HookFactory swapped_hash_encodings(std::string x, std::string y) {
  return requests([x, y](const Argv& a) -> std::optional<Rewrite> {
    if (a.size() != 3 || upper(a[0]) != "OBJECT" || upper(a[1]) != "ENCODING") return std::nullopt;
    return Rewrite{{{"TYPE", a[2]}, a}, std::nullopt, [x, y](const std::vector<Reply>& r) -> Reply {
                     if (!(r[0] == Reply::status("hash")) || !r[1].is_string()) return r[1];
                     if (r[1].str() == x) return Reply::string(y);
                     if (r[1].str() == y) return Reply::string(x);
                     return r[1];
                   }};
  });
}

}  // namespace detail

}  // namespace expirykit::fault
