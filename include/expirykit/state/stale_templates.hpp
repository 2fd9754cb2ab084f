// expirykit/state/stale_templates.hpp: hashes of logically expired fields with no wait.
//
// `RESTORE key ttl @stale:<f1>,<f2>,... [options]` (stale_ref) names the DUMP payload of a hash
// whose fields f1, f2, ... (value "stale" each) all have deadlines in the past: RESTOREd with
// active expiry off, the key holds logically expired, unreclaimed fields at once. Live on Valkey
// 9.1.2, Redis 8.0.6 and Redis 8.6.3: RESTORE keeps fields whose deadline passed after the DUMP
// (HLEN counts them, HPEXPIRETIME answers -2, HGETALL hides them; active expiry, when on,
// reclaims them), the model's rule in model/cmd/dump_commands.hpp. The main property's stale
// set-ups use it (gen::setup_prefix) instead of a short TTL and a DEBUG SLEEP, which took about
// half of the checker's wall time (bench/RESULTS.md).
//
// A payload is made once per server address and field list, on the twin's read-back connection,
// in database 9 (outside the databases the generators touch, 0 and 1, and outside what the event
// observer subscribes to, database 0): HSET, HPEXPIRE of a few ms, DUMP, HPEXPIRETIME, DEL, in
// one round trip; HPEXPIRETIME after the DUMP proves the fields were still there when it was
// taken, and the deadlines it answers are the model's. Then the server clock is waited past the
// latest deadline (a few ms, once per new payload).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/apply.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>

namespace expirykit::state {

/// The prefix of a stale-template reference, the payload argument of RESTORE.
inline constexpr const char* stale_ref = "@stale:";

/// The field names of `RESTORE key ttl @stale:a,b ...` (["a", "b"]), or nullopt when `a` is not
/// such a RESTORE. Throws std::invalid_argument on an empty field list.
inline std::optional<std::vector<std::string>> stale_fields(const resp::Argv& a) {
  if (a.size() < 4 || a[3].rfind(stale_ref, 0) != 0 || model::upper(a[0]) != "RESTORE") return std::nullopt;
  std::vector<std::string> out;
  const std::string list = a[3].substr(std::string(stale_ref).size());
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    if (comma == at) throw std::invalid_argument("RESTORE " + a[3] + ": an empty field name");
    out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

/// The model's entry for a stale template: a hash of `fields`, each with value "stale" and the
/// absolute deadline (Unix ms) `deadline_ms[i]`.
inline model::Entry stale_entry(const std::vector<std::string>& fields, const std::vector<int64_t>& deadline_ms) {
  model::Hash h;
  for (std::size_t i = 0; i < fields.size(); ++i) h.fields[fields[i]] = model::Field{"stale", deadline_ms.at(i)};
  return model::Entry{std::move(h), std::nullopt};
}

/// The payloads a twin made, per server address and field list.
class StaleTemplates {
 public:
  /// `a` with a `@stale:` payload reference replaced by the payload made on `side` (made now if
  /// this server has none for that field list), the model `ks` remembering the entry it stands
  /// for (model::Keyspace::remember_dump); any other command as it is. Making one sends commands
  /// on `side` (database 9, see the file comment): do it before observing INFO counters.
  /// Throws std::runtime_error when the server refuses (no HPEXPIRE: a server without field TTLs)
  /// and what resp::Client throws.
  resp::Argv resolve(resp::Client& side, model::Keyspace& ks, const resp::Argv& a) {
    const auto fields = stale_fields(a);
    if (!fields) return a;
    const Made& m = get(side, a[3], *fields);
    ks.remember_dump(m.payload, m.entry);
    resp::Argv out = a;
    out[3] = m.payload;
    return out;
  }

  /// The server time (Unix ms) the last wait for new templates reached: a time the server's
  /// clock was past when prepare() or resolve() returned; 0 before any was made.
  int64_t waited_until_ms() const { return waited_until_ms_; }

  /// Whether prepare() for the server at `address` (its side connection's) would make a
  /// template: one of `cmds` names one not made there yet.
  bool missing(const std::string& address, const std::vector<resp::Argv>& cmds) const {
    for (const auto& a : cmds)
      if (stale_fields(a) && !made_.count(address + " " + a[3])) return true;
    return false;
  }

  /// Makes, in one round trip and one wait, the templates the `@stale:` references of `cmds`
  /// name that `side`'s server has none of yet.
  void prepare(resp::Client& side, const std::vector<resp::Argv>& cmds) {
    std::map<std::string, std::vector<std::string>> missing;
    for (const auto& a : cmds)
      if (const auto f = stale_fields(a); f && !made_.count(key(side, a[3]))) missing.emplace(a[3], *f);
    if (!missing.empty()) make(side, missing);
  }

 private:
  struct Made {
    std::string payload;
    model::Entry entry;
  };

  static std::string key(const resp::Client& side, const std::string& ref) { return side.address() + " " + ref; }

  const Made& get(resp::Client& side, const std::string& ref, const std::vector<std::string>& fields) {
    auto it = made_.find(key(side, ref));
    if (it == made_.end()) {
      make(side, {{ref, fields}});
      it = made_.find(key(side, ref));
    }
    return it->second;
  }

  /// HSET, HPEXPIRE, DUMP, HPEXPIRETIME, DEL per template in database 9; a field TTL of 5 ms,
  /// then 50 and 500 when the fields were gone before HPEXPIRETIME (a stalled server).
  void make(resp::Client& side, const std::map<std::string, std::vector<std::string>>& refs) {
    static const std::string tmp = "expirykit:stale-template";
    for (const int ttl_ms : {5, 50, 500}) {
      std::vector<resp::Argv> cmds{{"SELECT", "9"}};
      for (const auto& [ref, fields] : refs) {
        resp::Argv hset{"HSET", tmp}, expire{"HPEXPIRE", tmp, std::to_string(ttl_ms), "FIELDS", std::to_string(fields.size())},
            when{"HPEXPIRETIME", tmp, "FIELDS", std::to_string(fields.size())};
        for (const auto& f : fields) {
          hset.insert(hset.end(), {f, "stale"});
          expire.push_back(f);
          when.push_back(f);
        }
        cmds.insert(cmds.end(), {{"DEL", tmp}, hset, expire, {"DUMP", tmp}, when});
      }
      cmds.insert(cmds.end(), {{"DEL", tmp}, {"SELECT", "0"}});
      const auto r = side.pipeline(cmds);
      for (const auto& x : r)
        if (x.is_error())
          throw std::runtime_error("stale template on " + side.address() + ": the server answered " + x.to_string() +
                                   " (field TTLs needed: HPEXPIRE, HPEXPIRETIME)");
      std::map<std::string, Made> out;
      int64_t latest = 0;
      bool all_there = true;
      std::size_t at = 1;
      for (const auto& [ref, fields] : refs) {
        const auto& dump = r[at + 3];
        const auto& deadlines = r[at + 4];
        at += 5;
        std::vector<int64_t> ms;
        if (dump.is_string() && deadlines.is_array())
          for (const auto& d : deadlines.elements()) ms.push_back(d.is_integer() ? d.as_integer() : -2);
        for (const int64_t d : ms) all_there = all_there && d > 0;
        if (!all_there || ms.size() != fields.size()) {
          all_there = false;
          break;
        }
        for (const int64_t d : ms) latest = std::max(latest, d);
        out[key(side, ref)] = Made{dump.str(), stale_entry(fields, ms)};
      }
      if (!all_there) continue;
      waited_until_ms_ = server::wait_until_past(side, latest, 1, std::chrono::seconds(10));
      made_.insert(out.begin(), out.end());
      return;
    }
    throw std::runtime_error("stale template on " + side.address() +
                             ": the fields were gone before HPEXPIRETIME even with a 500 ms TTL");
  }

  std::map<std::string, Made> made_;
  int64_t waited_until_ms_ = 0;
};

}  // namespace expirykit::state
