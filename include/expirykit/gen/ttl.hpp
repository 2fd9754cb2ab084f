// expirykit/gen/ttl.hpp: RapidCheck generators for time arguments, by class.
//
// Classes (TtlClass): far future (deterministic: never expires during a run and its HTTL can be
// compared within a tolerance), past or zero (deletes at once), the dialect's largest accepted
// value and one past it, and invalid (negative, not an integer). Absolute "past" and "far" are
// fixed ranges (past: before 2001; far: 2033 and later, below Redis's 2^46-1 ms ceiling), so a
// generated command means the same whenever it runs and a printed script replays as is.
// Near-future times exist only for timing properties (near_future_ms, not in any default mix).
#pragma once

#include <cstdint>
#include <string>

#include <rapidcheck.h>

#include <expirykit/gen/full.hpp>
#include <expirykit/model/dialect.hpp>

namespace expirykit::gen {

enum class TtlClass { far, past, zero, largest, over_largest, invalid };

/// How a command takes its time: unit and relative/absolute.
struct TimeArg {
  bool seconds = true;
  bool absolute = false;
};

/// A class, weighted for a mostly-valid mix.
inline rc::Gen<TtlClass> ttl_class() {
  return rc::gen::weightedElement<TtlClass>({{55, TtlClass::far},
                                             {14, TtlClass::past},
                                             {10, TtlClass::zero},
                                             {3, TtlClass::largest},
                                             {3, TtlClass::over_largest},
                                             {5, TtlClass::invalid}});
}

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
      return rc::gen::just(str(t.seconds ? 1'000'000'000 : 1'000'000'000'000));  // 31 years ahead: accepted
    case TtlClass::over_largest:
      if (t.absolute) return rc::gen::just(t.seconds ? str(max / 1000 + 1) : (max == INT64_MAX ? std::string("9223372036854775808") : str(max + 1)));
      return rc::gen::just(str(t.seconds ? max / 1000 : max));  // + now overflows the ceiling
    case TtlClass::invalid:
      return rc::gen::elementOf(std::vector<std::string>{"-1", "-100", "1.5", "abc", "", "+5", "-9223372036854775808"});
  }
  return rc::gen::just(std::string("0"));
}

/// A time argument of a mixed class.
inline rc::Gen<std::string> time_arg(TimeArg t, const model::Dialect& d) {
  return full(rc::gen::mapcat(ttl_class(), [t, d](TtlClass c) { return time_arg(c, t, d); }));
}

/// Near future for timing properties: `lo`..`hi` ms from now (relative ms argument).
inline rc::Gen<std::string> near_future_ms(int64_t lo = 50, int64_t hi = 400) {
  return full(rc::gen::map(rc::gen::inRange<int64_t>(lo, hi + 1), [](int64_t v) { return std::to_string(v); }));
}

}  // namespace expirykit::gen
