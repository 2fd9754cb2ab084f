// checks/model/session.hpp: a tiny driver for model-only tests: a Keyspace, a Dialect and a
// clock, with commands written as space-separated strings.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include <expirykit/model/model.hpp>

namespace ekcheck {

using expirykit::model::Dialect;
using expirykit::model::Keyspace;
using expirykit::resp::Argv;
using expirykit::resp::Reply;

/// 2027-01-15T08:00:00Z in Unix ms: a round "now" far from any boundary.
inline constexpr int64_t T0 = 1'800'000'000'000;

struct Session {
  Dialect d;
  Keyspace ks;
  int64_t now = T0;

  explicit Session(Dialect dialect) : d(std::move(dialect)) {}

  static Argv words(const std::string& line) {
    Argv a;
    std::istringstream in(line);
    for (std::string w; in >> w;) a.push_back(w);
    return a;
  }
  /// Applies one command at the current time.
  Reply run(const std::string& line) { return expirykit::model::apply(ks, d, words(line), now); }
  Reply run(const Argv& argv) { return expirykit::model::apply(ks, d, argv, now); }
  void advance(int64_t ms) { now += ms; }
};

inline Reply I(long long v) { return Reply::integer(v); }
inline Reply S(const std::string& s) { return Reply::string(s); }
inline Reply E(const std::string& s) { return Reply::error(s); }
inline Reply nil() { return Reply::nil(); }
inline Reply arr(std::vector<Reply> v) { return Reply::array(std::move(v)); }

}  // namespace ekcheck
