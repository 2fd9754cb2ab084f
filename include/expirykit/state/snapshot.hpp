// expirykit/state/snapshot.hpp: every key of one copy of the data (a server, or the model), and
// the differences between two copies, key by key and field by field.
//
//   auto p = state::Snapshot::take(primary_client, "primary");
//   auto r = state::Snapshot::take(replica_client, "replica");
//   for (auto& line : state::diff(p, r)) FAIL_CHECK(line);
//   // "replica: field f of h has no TTL, primary: 1764547200123"
//
// What a snapshot holds, per key: the type (TYPE), the key's absolute expiry (PEXPIRETIME, Unix
// ms, or none); for a string its value; for a hash every field a read shows (HGETALL) with its
// value and absolute expiry (HPEXPIRETIME, Unix ms, or none), and the number of fields the hash
// stores (HLEN). HLEN minus the visible fields is the number of LOGICALLY EXPIRED but unreclaimed
// fields: both Valkey 9.1 and Redis 8.0 hide such fields from every read, on a primary and on a
// replica, and count them in HLEN until something reclaims them (on a replica: only the HDEL
// the primary sends). A server cannot name them; the model can, and names them in messages.
// Other types (list, set, ...) are recorded by type and key TTL only.
//
// Taking a snapshot is read-only: SCAN, TYPE, PEXPIRETIME, GET, HGETALL, HLEN, HPEXPIRETIME.
// None of these deletes an expired field (not even on Redis, whose lazy deletion is triggered
// by HGET/HMGET/HEXISTS/... but not by these reads). A key whose own TTL has passed is dropped
// by the server on sight; snapshots are meant for data whose key TTLs are not due.
// Replies are read pipelined, a few round trips per 500 keys. On a server without hash field
// TTLs (no HPEXPIRETIME) every field is recorded without a TTL.
// Throws resp::ConnectionError when the server is unreachable, std::runtime_error when a read
// returns an error reply (the message names the command and the reply).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>

namespace expirykit::state {

namespace detail {
/// "1764547200123" / "no TTL"; with `labelled`: "TTL 1764547200123" / "no TTL".
inline std::string ttl_text(const std::optional<int64_t>& t, bool labelled = false) {
  return t ? (labelled ? "TTL " : "") + std::to_string(*t) : "no TTL";
}
inline std::string quoted(const std::string& v) { return resp::quoted(v); }
/// A key or field name as is when it is plain (non-empty, printable, no space, quote or
/// backslash), else quoted and escaped (resp::cli_quote), so every message stays on one line.
inline std::string name(const std::string& n) { return resp::cli_quote(n); }
inline bool near(const std::optional<int64_t>& a, const std::optional<int64_t>& b, int64_t tol) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return (*a > *b ? *a - *b : *b - *a) <= tol;
}
}  // namespace detail

/// One visible hash field: value and absolute expiry (Unix ms; nullopt: no TTL).
struct FieldSnapshot {
  std::string value;
  std::optional<int64_t> expire_ms;
  friend bool operator==(const FieldSnapshot&, const FieldSnapshot&) = default;
};

/// One key as one copy of the data shows it.
struct KeySnapshot {
  std::string type;                         ///< TYPE: "hash", "string", "list", ...
  std::optional<int64_t> expire_ms;         ///< the key's own absolute expiry (Unix ms)
  std::string value;                        ///< strings only
  std::map<std::string, FieldSnapshot> fields;  ///< hashes: the fields a read shows
  long long stored = 0;                     ///< hashes: HLEN (logically expired fields included)
  std::vector<std::string> hidden_names;    ///< names of the logically expired fields, when known (model)

  /// Logically expired fields still stored (hashes), as counted by HLEN.
  long long hidden() const { return type == "hash" ? stored - static_cast<long long>(fields.size()) : 0; }
};

struct Snapshot {
  std::string source;  ///< what it was taken from: "primary", "replica", "model", ...
  int64_t at_ms = 0;   ///< server time (Unix ms) when it was taken
  std::map<std::string, KeySnapshot> keys;

  /// Reads every key of db 0 from a server. See the file comment for what is read.
  static Snapshot take(resp::Client& c, std::string source) {
    Snapshot s;
    s.source = std::move(source);
    s.at_ms = server::now_ms(c);
    std::set<std::string> names;
    std::string cursor = "0";
    do {
      resp::Reply r = c("SCAN", cursor, "COUNT", 1000);
      check(r, "SCAN " + cursor);
      cursor = r[0].str();
      for (const auto& k : r[1].elements()) names.insert(k.str());
    } while (cursor != "0");
    const std::vector<std::string> all(names.begin(), names.end());
    for (std::size_t from = 0; from < all.size(); from += 500) {
      const std::vector<std::string> chunk(all.begin() + static_cast<std::ptrdiff_t>(from),
                                           all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), from + 500)));
      read_chunk(c, chunk, s);
    }
    return s;
  }

  /// The model's view at `now_ms`: what a server holding the model's data would show.
  static Snapshot of_model(const model::Keyspace& ks, int64_t now_ms, std::string source = "model") {
    Snapshot s;
    s.source = std::move(source);
    s.at_ms = now_ms;
    for (const auto& [name, e] : ks.entries()) {
      if (!ks.peek(name, now_ms)) continue;  // key TTL passed: gone for every reader
      KeySnapshot k;
      k.type = e.type_name();
      k.expire_ms = e.expire_ms;
      if (e.is_string()) {
        k.value = e.string();
      } else {
        for (const auto& [f, fld] : e.hash().fields) {
          if (fld.expired(now_ms)) k.hidden_names.push_back(f);
          else k.fields[f] = FieldSnapshot{fld.value, fld.expire_ms};
        }
        k.stored = static_cast<long long>(e.hash().fields.size());
      }
      s.keys[name] = std::move(k);
    }
    return s;
  }

  /// One key on one line, e.g. `h: hash {a="1" (expires 1764547200123), b="2"} + 1 logically
  /// expired (c)` or `h: missing`.
  std::string describe(const std::string& key) const {
    auto it = keys.find(key);
    if (it == keys.end()) return detail::name(key) + ": missing";
    const KeySnapshot& k = it->second;
    std::ostringstream os;
    os << detail::name(key) << ": " << k.type;
    if (k.type == "string") os << " " << detail::quoted(k.value);
    if (k.type == "hash") {
      os << " {";
      bool first = true;
      for (const auto& [f, v] : k.fields) {
        os << (first ? "" : ", ") << detail::name(f) << "=" << detail::quoted(v.value);
        if (v.expire_ms) os << " (expires " << *v.expire_ms << ")";
        first = false;
      }
      os << "}";
      if (k.hidden() > 0) {
        os << " + " << k.hidden() << " logically expired";
        if (!k.hidden_names.empty()) {
          os << " (";
          for (std::size_t i = 0; i < k.hidden_names.size(); ++i) os << (i ? ", " : "") << detail::name(k.hidden_names[i]);
          os << ")";
        }
      }
    }
    if (k.expire_ms) os << ", key expires " << *k.expire_ms;
    return os.str();
  }

 private:
  static void check(const resp::Reply& r, const std::string& what) {
    if (r.is_error()) throw std::runtime_error("snapshot: " + what + " replied " + r.to_string());
  }

  static void read_chunk(resp::Client& c, const std::vector<std::string>& keys, Snapshot& s) {
    std::vector<resp::Argv> cmds;
    for (const auto& k : keys) {
      cmds.push_back({"TYPE", k});
      cmds.push_back({"PEXPIRETIME", k});
    }
    auto meta = c.pipeline(cmds);
    cmds.clear();
    std::vector<std::string> present;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const resp::Reply& type = meta[2 * i];
      check(type, "TYPE " + keys[i]);
      if (type.str() == "none") continue;  // gone between SCAN and TYPE (expired or deleted)
      KeySnapshot k;
      k.type = type.str();
      const resp::Reply& pexp = meta[2 * i + 1];
      check(pexp, "PEXPIRETIME " + keys[i]);
      if (pexp.as_integer() >= 0) k.expire_ms = pexp.as_integer();
      s.keys[keys[i]] = std::move(k);
      present.push_back(keys[i]);
      if (s.keys[keys[i]].type == "string") cmds.push_back({"GET", keys[i]});
      if (s.keys[keys[i]].type == "hash") {
        cmds.push_back({"HGETALL", keys[i]});
        cmds.push_back({"HLEN", keys[i]});
      }
    }
    auto data = c.pipeline(cmds);
    std::size_t at = 0;
    cmds.clear();
    std::vector<std::string> with_fields;
    for (const auto& name : present) {
      KeySnapshot& k = s.keys[name];
      if (k.type == "string") {
        check(data[at], "GET " + name);
        k.value = data[at++].str();
      } else if (k.type == "hash") {
        const resp::Reply& all = data[at++];
        const resp::Reply& len = data[at++];
        check(all, "HGETALL " + name);
        check(len, "HLEN " + name);
        for (std::size_t i = 0; i + 1 < all.size(); i += 2) k.fields[all[i].str()] = FieldSnapshot{all[i + 1].str(), {}};
        k.stored = len.as_integer();
        if (!k.fields.empty()) {
          resp::Argv a{"HPEXPIRETIME", name, "FIELDS", std::to_string(k.fields.size())};
          for (const auto& [f, v] : k.fields) a.push_back(f);
          cmds.push_back(std::move(a));
          with_fields.push_back(name);
        }
      }
    }
    auto times = c.pipeline(cmds);
    for (std::size_t i = 0; i < with_fields.size(); ++i) {
      KeySnapshot& k = s.keys[with_fields[i]];
      // A server without hash field TTLs (Valkey 8.0, Redis 7.0): every field is persistent.
      if (times[i].is_error() && times[i].str().find("unknown command") != std::string::npos) continue;
      check(times[i], resp::cli_line(cmds[i]));
      std::size_t j = 0;
      for (auto it = k.fields.begin(); it != k.fields.end();) {
        const long long t = times[i][j++].as_integer();
        if (t >= 0) it->second.expire_ms = t;
        // -2: the field expired between HGETALL and HPEXPIRETIME: it is hidden now.
        it = t == -2 ? k.fields.erase(it) : std::next(it);
      }
    }
  }
};

/// How two snapshots are compared.
struct DiffOptions {
  /// Compare HLEN too (logically expired, unreclaimed fields). Off when one side may not have
  /// reclaimed yet and the other has (e.g. a server just loaded from an RDB vs the model).
  bool stored_counts = true;
  /// Allowed difference between two absolute expiries, in ms (0: exact).
  int64_t tolerance_ms = 0;
};


/// The differences between two copies, one line each, phrased from `b`'s side against `a`'s:
///   "replica: field f of h has no TTL, primary: 1764547200123"
///   "replica: field f of h is missing, primary: \"1\" (TTL 1764547200123)"
///   "replica: key h is missing, primary: hash {a=\"1\"}"
/// Empty: the copies agree.
inline std::vector<std::string> diff(const Snapshot& a, const Snapshot& b, DiffOptions opt = {}) {
  using detail::quoted;
  using detail::ttl_text;
  std::vector<std::string> out;
  std::set<std::string> names;
  for (const auto& [k, v] : a.keys) names.insert(k);
  for (const auto& [k, v] : b.keys) names.insert(k);
  const std::string B = b.source + ": ", A = ", " + a.source + ": ";
  for (const auto& key : names) {
    const std::string kn = detail::name(key);
    auto ia = a.keys.find(key), ib = b.keys.find(key);
    if (ib == b.keys.end()) {
      out.push_back(B + "key " + kn + " is missing" + A + a.describe(key));
      continue;
    }
    if (ia == a.keys.end()) {
      out.push_back(B + b.describe(key) + A + "key " + kn + " is missing");
      continue;
    }
    const KeySnapshot &ka = ia->second, &kb = ib->second;
    if (ka.type != kb.type) {
      out.push_back(B + "key " + kn + " is a " + kb.type + A + ka.type);
      continue;
    }
    if (!detail::near(ka.expire_ms, kb.expire_ms, opt.tolerance_ms))
      out.push_back(B + "key " + kn + " has " + (kb.expire_ms ? "key TTL " + ttl_text(kb.expire_ms) : "no key TTL") +
                    A + ttl_text(ka.expire_ms));
    if (ka.type == "string" && ka.value != kb.value)
      out.push_back(B + "string " + kn + " = " + quoted(kb.value) + A + quoted(ka.value));
    if (ka.type != "hash") continue;
    std::set<std::string> fields;
    for (const auto& [f, v] : ka.fields) fields.insert(f);
    for (const auto& [f, v] : kb.fields) fields.insert(f);
    for (const auto& f : fields) {
      auto fa = ka.fields.find(f), fb = kb.fields.find(f);
      const std::string what = "field " + detail::name(f) + " of " + kn;
      if (fb == kb.fields.end()) {
        out.push_back(B + what + " is missing" + A + quoted(fa->second.value) + " (" + ttl_text(fa->second.expire_ms, true) + ")");
      } else if (fa == ka.fields.end()) {
        out.push_back(B + what + " = " + quoted(fb->second.value) + " (" + ttl_text(fb->second.expire_ms, true) + ")" + A +
                      "missing");
      } else {
        if (fa->second.value != fb->second.value)
          out.push_back(B + what + " = " + quoted(fb->second.value) + A + quoted(fa->second.value));
        if (!detail::near(fa->second.expire_ms, fb->second.expire_ms, opt.tolerance_ms))
          out.push_back(B + what + (fb->second.expire_ms ? " expires at " + ttl_text(fb->second.expire_ms) : " has no TTL") + A +
                        ttl_text(fa->second.expire_ms));
      }
    }
    if (opt.stored_counts && ka.hidden() != kb.hidden())
      out.push_back(B + kn + " holds " + std::to_string(kb.hidden()) + " logically expired, unreclaimed field(s) (HLEN " +
                    std::to_string(kb.stored) + ")" + A + std::to_string(ka.hidden()) + " (HLEN " + std::to_string(ka.stored) + ")" +
                    (ka.hidden_names.empty() ? "" : ": " + a.describe(key)) +
                    (kb.hidden_names.empty() ? "" : "; " + b.source + ": " + b.describe(key)));
  }
  return out;
}

}  // namespace expirykit::state
