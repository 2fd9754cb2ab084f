// expirykit/server/info.hpp: the INFO reply, parsed into sections of key/value pairs.
//
// INFO text is "# Section\r\nkey:value\r\n..."; section names are kept as the server prints
// them ("Server", "Stats", "Keyspace"). Keyspace lines ("db0:keys=1,expires=0,...") can be
// split further with keyspace_fields().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <expirykit/resp/client.hpp>

namespace expirykit::server {

class Info {
 public:
  using Section = std::map<std::string, std::string, std::less<>>;

  /// Parses INFO text (any section subset). Lines without ':' outside a section are ignored.
  static Info parse(std::string_view text) {
    Info info;
    std::string current = "";
    while (!text.empty()) {
      auto nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      if (line[0] == '#') {
        line.remove_prefix(1);
        while (!line.empty() && line[0] == ' ') line.remove_prefix(1);
        current = std::string(line);
        info.sections_[current];
        continue;
      }
      auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      info.sections_[current][std::string(line.substr(0, colon))] = std::string(line.substr(colon + 1));
    }
    return info;
  }
  /// Sends INFO [section] (default: "everything"? no: "all") on `c` and parses it.
  /// Throws std::runtime_error if the server answers with an error.
  static Info fetch(resp::Client& c, std::string_view section = "all") {
    auto r = c("INFO", section);
    if (!r.is_string()) throw std::runtime_error(c.address() + ": INFO failed: " + r.to_string());
    return parse(r.str());
  }

  /// The value of the first line "<key>:<value>" of INFO text `text`, or nullopt, without
  /// parsing the rest: for a caller that reads a few fields of every reply (observe::Counters,
  /// twice per sequence of the main property, where parse() cost 4 % of the checker's CPU).
  /// The same as parse(text).get(key) where keys are unique (INFO stats, INFO keyspace); of a
  /// key twice, parse() keeps the last line and get() looks through sections in name order.
  static std::optional<std::string_view> find(std::string_view text, std::string_view key) {
    while (!text.empty()) {
      const auto nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.size() > key.size() && line[key.size()] == ':' && line.substr(0, key.size()) == key)
        return line.substr(key.size() + 1);
    }
    return std::nullopt;
  }
  /// find() as an integer; `fallback` if absent. Throws std::runtime_error if present but not
  /// an integer.
  static long long find_int(std::string_view text, std::string_view key, long long fallback = 0) {
    const auto v = find(text, key);
    return v ? to_int(key, std::string(*v)) : fallback;
  }
  /// A field of db<N>'s line in INFO keyspace text `text` (as keyspace()); 0 when absent.
  static long long find_keyspace(std::string_view text, std::string_view field, int db = 0) {
    const auto v = find(text, "db" + std::to_string(db));
    if (!v) return 0;
    const auto f = keyspace_fields(*v);
    const auto it = f.find(field);
    return it == f.end() ? 0 : it->second;
  }

  /// The value of `key` in any section (first match), or nullopt.
  std::optional<std::string> get(std::string_view key) const {
    for (const auto& [_, s] : sections_)
      if (auto it = s.find(key); it != s.end()) return it->second;
    return std::nullopt;
  }
  /// The integer value of `key` in any section; `fallback` if absent.
  /// Throws std::runtime_error if present but not an integer.
  long long get_int(std::string_view key, long long fallback = 0) const {
    auto v = get(key);
    return v ? to_int(key, *v) : fallback;
  }
  bool has(std::string_view key) const { return get(key).has_value(); }
  const Section* section(std::string_view name) const {
    auto it = sections_.find(std::string(name));
    return it == sections_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Section>& sections() const { return sections_; }

  /// Splits a keyspace value "keys=3,expires=1,avg_ttl=0,keys_with_volatile_items=1" into
  /// integers by name. Non-integer values are skipped.
  static std::map<std::string, long long, std::less<>> keyspace_fields(std::string_view v) {
    std::map<std::string, long long, std::less<>> out;
    while (!v.empty()) {
      auto comma = v.find(',');
      std::string_view kv = v.substr(0, comma);
      v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
      auto eq = kv.find('=');
      if (eq == std::string_view::npos) continue;
      try {
        out[std::string(kv.substr(0, eq))] = std::stoll(std::string(kv.substr(eq + 1)));
      } catch (const std::exception&) {
      }
    }
    return out;
  }
  /// A field of db<N>'s keyspace line (e.g. "keys", "keys_with_volatile_items", "subexpiry");
  /// 0 when the db or the field is absent (an empty db has no keyspace line).
  long long keyspace(std::string_view field, int db = 0) const {
    auto v = get("db" + std::to_string(db));
    if (!v) return 0;
    auto f = keyspace_fields(*v);
    auto it = f.find(field);
    return it == f.end() ? 0 : it->second;
  }

 private:
  static long long to_int(std::string_view key, const std::string& v) {
    try {
      std::size_t pos = 0;
      long long n = std::stoll(v, &pos);
      if (pos == v.size()) return n;
    } catch (const std::exception&) {
    }
    throw std::runtime_error("INFO field " + std::string(key) + " is not an integer: " + v);
  }

  std::map<std::string, Section> sections_;
};

}  // namespace expirykit::server
