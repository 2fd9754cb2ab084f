// expirykit/catch2/matchers.hpp: Catch2 v3 matchers for resp::Reply, composable with && || !.
//
//   CHECK_THAT(c("HEXPIRE", "s", 10, "FIELDS", 1, "a"), IsErrorStartingWith("WRONGTYPE"));
//   CHECK_THAT(c("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(1, 10'000));
#pragma once

#include <catch2/matchers/catch_matchers_templated.hpp>

#include <string>
#include <utility>

#include <expirykit/resp/reply.hpp>

namespace expirykit::catch2 {

/// Equal to `expected` (type and content).
struct ReplyEquals : Catch::Matchers::MatcherGenericBase {
  explicit ReplyEquals(resp::Reply e) : expected(std::move(e)) {}
  bool match(const resp::Reply& r) const { return r == expected; }
  std::string describe() const override { return "equals " + expected.to_string(); }
  resp::Reply expected;
};
inline ReplyEquals IsReply(resp::Reply e) { return ReplyEquals(std::move(e)); }

/// An error reply whose text starts with `prefix` (e.g. "WRONGTYPE", "ERR invalid expire time").
struct ErrorStartingWith : Catch::Matchers::MatcherGenericBase {
  explicit ErrorStartingWith(std::string p) : prefix(std::move(p)) {}
  bool match(const resp::Reply& r) const { return r.is_error_starting(prefix); }
  std::string describe() const override { return "is an error starting with \"" + prefix + "\""; }
  std::string prefix;
};
inline ErrorStartingWith IsErrorStartingWith(std::string p) { return ErrorStartingWith(std::move(p)); }

/// Any error reply.
struct AnyError : Catch::Matchers::MatcherGenericBase {
  bool match(const resp::Reply& r) const { return r.is_error(); }
  std::string describe() const override { return "is an error reply"; }
};
inline AnyError IsError() { return {}; }

/// A non-empty array whose elements are all integers in [lo, hi].
struct IntegersIn : Catch::Matchers::MatcherGenericBase {
  IntegersIn(long long l, long long h) : lo(l), hi(h) {}
  bool match(const resp::Reply& r) const {
    if (!r.is_array() || r.elements().empty()) return false;
    for (const auto& e : r.elements())
      if (!e.is_integer() || e.as_integer() < lo || e.as_integer() > hi) return false;
    return true;
  }
  std::string describe() const override {
    return "is an array of integers each in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  long long lo, hi;
};
inline IntegersIn EachIntegerIn(long long lo, long long hi) { return {lo, hi}; }

}  // namespace expirykit::catch2
