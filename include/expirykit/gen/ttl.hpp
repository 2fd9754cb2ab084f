// expirykit/gen/ttl.hpp: RapidCheck generators for time arguments, by class.
//
// Classes (TtlClass): far future (deterministic: never expires during a run), past or zero
// (deletes at once), the dialect's largest accepted value and one beyond it
// (Dialect::max_field_expire_ms), negative, and not an integer. Absolute "past" and "far" are
// fixed ranges (past: before 2001; far: 2033 and later, below Redis's 2^46-1 ms ceiling), so a
// generated command means the same whenever it runs and a printed script replays as is.
// "Largest" and "one beyond" are exact for absolute times (the ceiling, the ceiling + 1). A
// relative time lands on the server's "now", which a generator cannot know: "largest" is the
// ceiling minus the Unix ms of 2100-01-01 (accepted until then, within about 76 years of the
// ceiling today), "one beyond" the ceiling minus that of 2000-01-01 (rejected: now + it exceeds
// the ceiling), both in the command's unit (state/coverage.hpp classifies them so).
// Near-future times exist only for timing properties (near_future_ms, not in any default mix).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <rapidcheck.h>

#include <expirykit/gen/full.hpp>
#include <expirykit/model/dialect.hpp>

namespace expirykit::gen {

enum class TtlClass { far, past, zero, largest, over_largest, negative, invalid };

/// How a command takes its time: unit and relative/absolute.
struct TimeArg {
  bool seconds = true;
  bool absolute = false;
};

/// A class, weighted so that every class reaches every timed form of a default property run
/// (state/coverage.hpp "time argument" table) while most times stay valid and far.
inline rc::Gen<TtlClass> ttl_class() {
  static const rc::Gen<TtlClass> g = rc::gen::weightedElement<TtlClass>({{46, TtlClass::far},
                                                                         {12, TtlClass::past},
                                                                         {10, TtlClass::zero},
                                                                         {9, TtlClass::largest},
                                                                         {9, TtlClass::over_largest},
                                                                         {7, TtlClass::negative},
                                                                         {7, TtlClass::invalid}});
  return g;
}

/// Unix ms of 2000-01-01 and 2100-01-01: the slack of the relative "one beyond" and "largest".
inline constexpr int64_t unix_ms_2000 = 946'684'800'000, unix_ms_2100 = 4'102'444'800'000;

/// The argument text for class `c` and the way `t` takes time, on dialect `d`.
inline rc::Gen<std::string> time_arg(TtlClass c, TimeArg t, const model::Dialect& d) {
  using rc::gen::inRange;
  auto str = [](int64_t v) { return std::to_string(v); };
  const int64_t max = d.max_field_expire_ms;
  switch (c) {
    case TtlClass::far:
      if (t.absolute)
        return rc::gen::map(t.seconds ? inRange<int64_t>(2'000'000'000, 70'000'000'000)
                                      : inRange<int64_t>(2'000'000'000'000, 70'000'000'000'000),
                            str);
      return rc::gen::map(t.seconds ? inRange<int64_t>(1000, 100'000'000) : inRange<int64_t>(1'000'000, 100'000'000'000), str);
    case TtlClass::past:
      if (t.absolute)
        return rc::gen::map(t.seconds ? inRange<int64_t>(1, 978'000'000) : inRange<int64_t>(1, 978'000'000'000), str);
      return rc::gen::just(std::string("0"));
    case TtlClass::zero: return rc::gen::just(std::string("0"));
    case TtlClass::largest:
      if (t.absolute) return rc::gen::just(str(t.seconds ? max / 1000 : max));
      return rc::gen::just(str(t.seconds ? max / 1000 - unix_ms_2100 / 1000 : max - unix_ms_2100));
    case TtlClass::over_largest:
      if (t.absolute) return rc::gen::just(t.seconds ? str(max / 1000 + 1) : (max == INT64_MAX ? std::string("9223372036854775808") : str(max + 1)));
      return rc::gen::elementOf(std::vector<std::string>{str(t.seconds ? max / 1000 - unix_ms_2000 / 1000 : max - unix_ms_2000),
                                                         str(t.seconds ? max / 1000 : max)});  // + now exceeds the ceiling
    case TtlClass::negative:
      return rc::gen::elementOf(std::vector<std::string>{"-1", "-100", "-9223372036854775808"});
    case TtlClass::invalid:
      return rc::gen::elementOf(std::vector<std::string>{"1.5", "abc", "", "+5"});
  }
  return rc::gen::just(std::string("0"));
}

/// A time argument of a mixed class.
inline rc::Gen<std::string> time_arg(TimeArg t, const model::Dialect& d) {
  // One generator per class, built here once rather than per draw (and no copy of the Dialect
  // in the generator: its error texts made each draw copy dozens of strings).
  using C = TtlClass;
  const auto by_class = std::make_shared<const std::array<rc::Gen<std::string>, 7>>(std::array<rc::Gen<std::string>, 7>{
      time_arg(C::far, t, d), time_arg(C::past, t, d), time_arg(C::zero, t, d), time_arg(C::largest, t, d),
      time_arg(C::over_largest, t, d), time_arg(C::negative, t, d), time_arg(C::invalid, t, d)});
  return full(rc::gen::mapcat(ttl_class(), [by_class](TtlClass c) { return (*by_class)[static_cast<std::size_t>(c)]; }));
}

/// Near future for timing properties: `lo`..`hi` ms from now (relative ms argument).
inline rc::Gen<std::string> near_future_ms(int64_t lo = 50, int64_t hi = 400) {
  return full(rc::gen::map(rc::gen::inRange<int64_t>(lo, hi + 1), [](int64_t v) { return std::to_string(v); }));
}

}  // namespace expirykit::gen
