// expirykit/fault/detail/commands.hpp: reading the field-TTL commands, INFO text and keyspace
// notifications the way the fault catalogue (faults.hpp) needs to rewrite them.
//
// Grammar (valkey.io/commands/hexpire, hsetex, hgetex, hgetdel, httl; redis.io/docs/latest/
// commands/ the same): HEXPIRE|HPEXPIRE|HEXPIREAT|HPEXPIREAT key time [NX|XX|GT|LT]... FIELDS
// numfields field...; HTTL|HPTTL|HEXPIRETIME|HPEXPIRETIME|HPERSIST|HGETDEL key FIELDS numfields
// field...; HSETEX key [FNX|FXX] [NX|XX] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL] FIELDS numfields
// field value...; HGETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST] FIELDS numfields field....
// A parser returns std::nullopt for anything malformed (numfields that does not match, an
// unknown option, a time that is not an integer): a fault leaves such a request alone, so the
// server's own error reaches the client.
//
// Notifications (valkey.io/topics/notifications): ["pmessage", pattern, "__keyspace@<db>__:<key>",
// event] and ["pmessage", pattern, "__keyevent@<db>__:<event>", key] (or "message" without the
// pattern when subscribed to the channel itself).
#pragma once

#include <charconv>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <expirykit/fault/detail/wire.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::fault::detail::cmd {

using resp::Argv;
using resp::Reply;

inline bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (s == n) return true;
  return false;
}

/// The whole string as a decimal integer, or std::nullopt.
inline std::optional<long long> integer(std::string_view s) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

inline bool expire_family(std::string_view u) { return one_of(u, {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"}); }
inline bool ttl_family(std::string_view u) { return one_of(u, {"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"}); }
/// Every command of the field-TTL feature.
inline bool field_ttl_command(std::string_view u) {
  return expire_family(u) || ttl_family(u) || one_of(u, {"HPERSIST", "HSETEX", "HGETEX", "HGETDEL"});
}

/// A field-TTL command taken apart: the option tokens between the key and FIELDS (index in
/// argv, upper-cased name; an option with a value has it at index + 1) and the fields.
struct Parsed {
  std::string name;                                    ///< upper case
  std::vector<std::pair<std::size_t, std::string>> options;
  std::size_t fields_at = 0;                           ///< index of FIELDS
  std::vector<std::string> fields;                     ///< field names (HSETEX: without values)
  /// The option named `o` (upper case): its index, or 0 if absent.
  std::size_t option(std::string_view o) const {
    for (const auto& [i, n] : options)
      if (n == o) return i;
    return 0;
  }
};

namespace detail {
/// FIELDS numfields then `per` arguments per field to the end; fills p.fields.
inline bool read_fields(const Argv& a, std::size_t at, std::size_t per, Parsed& p) {
  if (at + 1 >= a.size() || upper(a[at]) != "FIELDS") return false;
  const auto n = integer(a[at + 1]);
  if (!n || *n <= 0 || static_cast<std::size_t>(*n) * per != a.size() - at - 2) return false;
  p.fields_at = at;
  for (std::size_t i = at + 2; i < a.size(); i += per) p.fields.push_back(a[i]);
  return true;
}
}  // namespace detail

/// Parses any field-TTL command (see the grammar above); std::nullopt if malformed or another
/// command. HEXPIRE*: options are the condition flags, the time is argv[2].
inline std::optional<Parsed> parse(const Argv& a) {
  if (a.size() < 2) return std::nullopt;
  Parsed p;
  p.name = upper(a[0]);
  std::size_t i = 2;
  if (expire_family(p.name)) {
    if (a.size() < 3 || !integer(a[2])) return std::nullopt;
    for (i = 3; i < a.size() && one_of(upper(a[i]), {"NX", "XX", "GT", "LT"}); ++i) p.options.emplace_back(i, upper(a[i]));
    return detail::read_fields(a, i, 1, p) ? std::optional<Parsed>(p) : std::nullopt;
  }
  if (ttl_family(p.name) || one_of(p.name, {"HPERSIST", "HGETDEL"}))
    return detail::read_fields(a, 2, 1, p) ? std::optional<Parsed>(p) : std::nullopt;
  if (p.name != "HSETEX" && p.name != "HGETEX") return std::nullopt;
  const bool set = p.name == "HSETEX";
  while (i < a.size()) {
    const std::string o = upper(a[i]);
    if (o == "FIELDS") break;
    if (one_of(o, {"EX", "PX", "EXAT", "PXAT"})) {
      if (i + 1 >= a.size() || !integer(a[i + 1])) return std::nullopt;
      p.options.emplace_back(i, o);
      i += 2;
    } else if ((set && one_of(o, {"FNX", "FXX", "NX", "XX", "KEEPTTL"})) || (!set && o == "PERSIST")) {
      p.options.emplace_back(i, o);
      ++i;
    } else {
      return std::nullopt;
    }
  }
  return detail::read_fields(a, i, set ? 2 : 1, p) ? std::optional<Parsed>(p) : std::nullopt;
}

/// `a` with the arguments at the given indexes removed.
inline Argv without(const Argv& a, const std::vector<std::size_t>& drop) {
  Argv out;
  for (std::size_t i = 0; i < a.size(); ++i) {
    bool keep = true;
    for (auto d : drop) keep = keep && d != i;
    if (keep) out.push_back(a[i]);
  }
  return out;
}

/// An array of integers with `f` applied to each (f returns the new value); std::nullopt when
/// `r` is another shape or nothing changed.
template <class F>
std::optional<Reply> map_ints(const Reply& r, F f) {
  if (!r.is_array()) return std::nullopt;
  std::vector<Reply> out;
  bool changed = false;
  for (const auto& e : r.elements()) {
    if (!e.is_integer()) return std::nullopt;
    const long long v = f(e.as_integer());
    changed = changed || v != e.as_integer();
    out.push_back(Reply::integer(v));
  }
  if (!changed) return std::nullopt;
  return Reply::array(std::move(out));
}

/// `text` with each line (its line end included) passed through `f`, which edits it in place.
template <class F>
std::string map_lines(const std::string& text, F f) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    std::string line = text.substr(pos, end - pos);
    pos = end;
    f(line);
    out += line;
  }
  return out;
}

/// INFO's text with the value of `name:<integer>` lines passed through `f` (called with the
/// value; returns the new one). Lines end with CRLF.
template <class F>
std::string map_info_field(const std::string& text, std::string_view name, F f) {
  return map_lines(text, [&](std::string& line) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 && line[name.size()] == ':') {
      std::size_t v_end = line.find_first_of("\r\n", name.size() + 1);
      if (v_end == std::string::npos) v_end = line.size();
      if (auto v = integer(std::string_view(line).substr(name.size() + 1, v_end - name.size() - 1)))
        line = std::string(name) + ":" + std::to_string(f(*v)) + line.substr(v_end);
    }
  });
}

/// INFO's text with `key=<integer>` inside each "db<N>:" keyspace line passed through
/// f(db, value).
template <class F>
std::string map_keyspace_field(const std::string& text, std::string_view key, F f) {
  return map_lines(text, [&](std::string& line) {
    const std::size_t colon = line.find(':');
    const auto db = line.rfind("db", 0) == 0 && colon != std::string::npos ? integer(line.substr(2, colon - 2)) : std::nullopt;
    if (db) {
      const std::string k = std::string(key) + "=";
      std::size_t at = line.find(k, colon);
      while (at != std::string::npos && line[at - 1] != ':' && line[at - 1] != ',') at = line.find(k, at + 1);
      if (at != std::string::npos) {
        const std::size_t v_at = at + k.size();
        const std::size_t v_end = line.find_first_of(",\r\n", v_at);
        const std::size_t stop = v_end == std::string::npos ? line.size() : v_end;
        if (auto v = integer(std::string_view(line).substr(v_at, stop - v_at)))
          line = line.substr(0, v_at) + std::to_string(f(static_cast<int>(*db), *v)) + line.substr(stop);
      }
    }
  });
}

/// One keyspace notification taken apart.
struct Notification {
  bool keyspace = false;  ///< __keyspace@ (else __keyevent@)
  std::string db;         ///< "0"
  std::string event;      ///< "hexpired"
  std::string key;
};

/// The notification in a push message, or std::nullopt for any other message.
inline std::optional<Notification> notification(const Reply& m) {
  if (!m.is_array() || m.size() < 3 || !m[0].is_string()) return std::nullopt;
  const bool pmsg = m[0].str() == "pmessage";
  if (m.size() != (pmsg ? 4u : 3u)) return std::nullopt;
  const Reply& ch = m[pmsg ? 2 : 1];
  const Reply& payload = m[pmsg ? 3 : 2];
  if (!ch.is_string() || !payload.is_string()) return std::nullopt;
  const std::string& c = ch.str();
  Notification n;
  std::size_t prefix = 0;
  if (c.rfind("__keyspace@", 0) == 0) {
    n.keyspace = true;
    prefix = 11;
  } else if (c.rfind("__keyevent@", 0) == 0) {
    prefix = 11;
  } else {
    return std::nullopt;
  }
  const std::size_t sep = c.find("__:", prefix);
  if (sep == std::string::npos) return std::nullopt;
  n.db = c.substr(prefix, sep - prefix);
  (n.keyspace ? n.key : n.event) = c.substr(sep + 3);
  (n.keyspace ? n.event : n.key) = payload.str();
  return n;
}

/// `m` (a notification push) renamed to event `name`: the keyspace message or the keyevent
/// channel changes, the pattern stays.
inline Reply renamed(const Reply& m, const Notification& n, const std::string& name) {
  std::vector<Reply> e = m.elements();
  const bool pmsg = e.size() == 4;
  if (n.keyspace) e[pmsg ? 3 : 2] = Reply::string(name);
  else e[pmsg ? 2 : 1] = Reply::string("__keyevent@" + n.db + "__:" + name);
  return Reply::array(std::move(e));
}

}  // namespace expirykit::fault::detail::cmd
