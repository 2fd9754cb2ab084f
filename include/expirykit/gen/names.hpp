// expirykit/gen/names.hpp: RapidCheck generators for key names, field names and values.
//
// Weighted so that a few names dominate: commands in one sequence collide on the same keys and
// fields most of the time (that is where TTL interactions happen), while rarer adversarial names
// still appear: empty, binary with NUL and 0xFF (not UTF-8), long (200-300 bytes), and tokens of
// the command grammar itself ("FIELDS", "NX", "EX", "KEEPTTL", numbers) that a parser could take
// for keywords.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/gen/full.hpp>

namespace expirykit::gen {

/// Tokens of the HFE grammar, used as names to confuse parsers.
inline const std::vector<std::string>& grammar_tokens() {
  static const std::vector<std::string> t = {"FIELDS", "fields", "NX", "XX", "GT", "LT", "FNX", "FXX", "EX",
                                             "PX", "EXAT", "PXAT", "KEEPTTL", "PERSIST", "1", "0", "-1"};
  return t;
}

/// An adversarial name: empty, binary, long, or a grammar token.
inline rc::Gen<std::string> adversarial_name() {
  // Each generator here is built once and shared (a Gen is an immutable, counted handle): the
  // command generators draw names many times per command.
  static const rc::Gen<std::string> g = full(rc::gen::weightedOneOf<std::string>({
      {2, rc::gen::just(std::string())},
      {3, rc::gen::just(std::string("\x00\xff\xfe", 3))},
      {2, rc::gen::just(std::string("caf\xe9 \xc3\x28"))},  // Latin-1 and an invalid UTF-8 pair
      {2, rc::gen::map(rc::gen::inRange(200, 301), [](int n) { return std::string(static_cast<std::size_t>(n), 'k'); })},
      {6, rc::gen::elementOf(grammar_tokens())},
  }));
  return g;
}

/// Key names: three hash-ish names take ~80%, one key meant for strings, adversarial the rest.
inline rc::Gen<std::string> key_name() {
  static const rc::Gen<std::string> g = full(rc::gen::weightedOneOf<std::string>({
      {45, rc::gen::just(std::string("h1"))},
      {25, rc::gen::just(std::string("h2"))},
      {10, rc::gen::just(std::string("h3"))},
      {14, rc::gen::just(std::string("s1"))},  // a string once SET: the wrongtype cells
      {4, adversarial_name()},
  }));
  return g;
}

/// Field names: a, b, c, d dominate; adversarial ones occasionally.
inline rc::Gen<std::string> field_name() {
  static const rc::Gen<std::string> g = full(rc::gen::weightedOneOf<std::string>({
      {35, rc::gen::just(std::string("a"))},
      {25, rc::gen::just(std::string("b"))},
      {15, rc::gen::just(std::string("c"))},
      {10, rc::gen::just(std::string("d"))},
      {5, adversarial_name()},
  }));
  return g;
}

/// Values: small integers (so HINCRBY works), floats, text, empty, binary.
inline rc::Gen<std::string> value() {
  static const rc::Gen<std::string> g = full(rc::gen::weightedOneOf<std::string>({
      {30, rc::gen::map(rc::gen::inRange(-50, 1000), [](int v) { return std::to_string(v); })},
      {10, rc::gen::elementOf(std::vector<std::string>{"1.5", "-0.25", "10.50", "3e2"})},
      {20, rc::gen::elementOf(std::vector<std::string>{"v", "value", "hello world"})},
      {5, rc::gen::just(std::string())},
      {5, rc::gen::just(std::string("\x00\x01\xff", 3))},
      {3, rc::gen::just(std::string("9223372036854775807"))},
  }));
  return g;
}

/// 1..max field names (duplicates possible, as a real client might send).
inline rc::Gen<std::vector<std::string>> field_list(int max = 4) {
  using Fields = std::vector<std::string>;
  // The lists of 0..8 names and field_list(1..8), each built once.
  static const std::vector<rc::Gen<Fields>> sized = [] {
    std::vector<rc::Gen<Fields>> v;
    for (std::size_t n = 0; n <= 8; ++n) v.push_back(rc::gen::container<Fields>(n, field_name()));
    return v;
  }();
  const auto make = [](int m) {
    return full(rc::gen::mapcat(rc::gen::inRange(1, m + 1), [](int n) {
      return n <= 8 ? sized[static_cast<std::size_t>(n)] : rc::gen::container<Fields>(static_cast<std::size_t>(n), field_name());
    }));
  };
  static const std::vector<rc::Gen<Fields>> lists = [&] {
    std::vector<rc::Gen<Fields>> v;
    for (int m = 1; m <= 8; ++m) v.push_back(make(m));
    return v;
  }();
  return max >= 1 && max <= 8 ? lists[static_cast<std::size_t>(max - 1)] : make(max);
}

}  // namespace expirykit::gen
