// gen/once.hpp: a draw's value is computed once, and once() changes neither the values drawn nor
// the shrinks a failing case walks through.
#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <cstdint>
#include <memory>
#include <optional>
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
  // The premise, RapidCheck's own behaviour: every value() runs the callable again (rc::gen::exec).
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
  // A shrink of a once() draw is computed once too: when the shrinks are walked to it. (Walking
  // to it runs the callable: RapidCheck rebuilds the recipe from the value, and the shrink itself
  // is drawn.)
  auto shrinks = kept.shrinks();
  const auto first = shrinks.next();
  REQUIRE(first);
  *runs = 0;
  const int v = first->value();
  CHECK(first->value() == v);
  CHECK(v < a);  // inRange shrinks towards 0
  CHECK(*runs == 0);
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

namespace {
struct Quiet : rc::detail::TestListener {
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

/// A property over one draw of `g` (an int that must stay below 60) checked from seed 3, quietly.
rc::detail::TestResult check_below_60(const rc::Gen<int>& g) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.seed = 3;
  params.maxSuccess = 100;
  rc::detail::TestMetadata meta;
  meta.id = meta.description = "below 60";
  Quiet quiet;
  return rc::detail::checkTestable([&g] { RC_ASSERT(*g < 60); }, meta, params, quiet);
}
}  // namespace

TEST_CASE("once(): a shrink whose value throws is discarded as RapidCheck discards it", "[gen]") {
  // Draws under 50 fail to generate: shrinking meets them (towards 0) and must skip them, with
  // once() as without it, and reach the same counterexample.
  auto body = [] {
    const int a = *rc::gen::resize(100, rc::gen::inRange(0, 100));  // the whole range at every size
    if (a < 50) throw rc::GenerationFailure("under 50");
    return a;
  };
  const auto plain = check_below_60(rc::gen::exec(body));
  std::optional<rc::detail::TestResult> kept_or_none;
  REQUIRE_NOTHROW(kept_or_none = check_below_60(expirykit::gen::exec_once(body)));
  const rc::detail::TestResult& kept = *kept_or_none;
  REQUIRE(plain.is<rc::detail::FailureResult>());
  REQUIRE(kept.is<rc::detail::FailureResult>());
  const auto& p = plain.get<rc::detail::FailureResult>();
  const auto& k = kept.get<rc::detail::FailureResult>();
  CHECK(k.counterExample == p.counterExample);
  CHECK(k.numSuccess == p.numSuccess);
}
