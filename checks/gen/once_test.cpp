// gen/once.hpp: a draw's value is computed once, and once() changes neither the values drawn nor
// the shrinks a failing case walks through.
#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <vector>

#include <expirykit/gen/once.hpp>

namespace {
/// The values of `s`, of its first `n` shrinks and of the first `n` shrinks of each of those.
template <class T>
std::vector<T> walk(const rc::Shrinkable<T>& s, int n) {
  std::vector<T> out{s.value()};
  auto shrinks = s.shrinks();
  for (int i = 0; i < n; ++i) {
    auto x = shrinks.next();
    if (!x) break;
    out.push_back(x->value());
    auto deeper = x->shrinks();
    for (int j = 0; j < n; ++j) {
      auto y = deeper.next();
      if (!y) break;
      out.push_back(y->value());
    }
  }
  return out;
}
}  // namespace

TEST_CASE("once(): an exec generator's callable runs once per draw, however often the value is read", "[gen]") {
  auto runs = std::make_shared<int>(0);
  auto counted = [runs] {
    ++*runs;
    return *rc::gen::inRange(0, 1000);
  };
  // Plain RapidCheck: every value() runs the callable again (rc::gen::exec).
  const auto plain = rc::gen::exec(counted)(rc::Random(7), 50);
  const int a = plain.value(), b = plain.value(), c = plain.value();
  CHECK(a == b);
  CHECK(b == c);
  CHECK(*runs == 3);
  *runs = 0;
  const auto kept = expirykit::gen::exec_once(counted)(rc::Random(7), 50);
  CHECK(kept.value() == a);  // the same draw
  CHECK(kept.value() == a);
  CHECK(kept.value() == a);
  CHECK(*runs == 1);
}

TEST_CASE("once(): the same values and the same shrinks as the generator it wraps", "[gen]") {
  // rc::gen::nonEmpty reads its value twice; a container of exec draws (as gen::sequence).
  const auto inner = rc::gen::exec([] { return std::vector<int>{*rc::gen::inRange(0, 50), *rc::gen::inRange(0, 9)}; });
  const auto plain = rc::gen::nonEmpty(rc::gen::container<std::vector<std::vector<int>>>(inner));
  const auto kept = expirykit::gen::once(
      rc::gen::nonEmpty(expirykit::gen::once(rc::gen::container<std::vector<std::vector<int>>>(expirykit::gen::once(inner)))));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    CHECK(walk(plain(rc::Random(seed), 30), 8) == walk(kept(rc::Random(seed), 30), 8));
  }
}
