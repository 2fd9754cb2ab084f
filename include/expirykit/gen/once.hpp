// expirykit/gen/once.hpp: once(), a generator whose values are computed once per draw.
//
//   rc::Gen<Argv> g = gen::once(rc::gen::exec([] { ... }));   // same values, same shrinks
//
// RapidCheck computes a Shrinkable's value on every value() call, not once: an rc::gen::exec
// shrinkable runs its callable again each time (gen/detail/ExecRaw.hpp: shrinkableWithRecipe
// makes the value with shrinkable::shrink([=] { return execWithRecipe(callable, recipe); }, ...)),
// and rc::gen::nonEmpty asks for the value once for its predicate and again for its caller
// (gen/Predicate.hpp). Nested, that is every command of a sequence drawn several times over
// (bench/RESULTS.md 9.5 measured it). once() computes the value when the draw is made (a shrink:
// when the shrinks are walked to it) and hands out copies; its shrinks are those of the wrapped
// generator, each wrapped the same way, made only when something shrinks. So a draw gives the
// same value, and a failing case shrinks through the same candidates in the same order, as
// without it. Getting the shrinks of an exec draw still runs its callable once more (RapidCheck
// rebuilds the recipe from the value), as without once().
#pragma once

#include <memory>
#include <string>
#include <utility>

#include <rapidcheck.h>

namespace expirykit::gen {

namespace detail {
/// `s` with its value computed now, once, and its shrinks (made on demand) wrapped the same way.
/// A value that throws (rc::GenerationFailure, say) leaves `s` as it is: it throws at value(),
/// where RapidCheck expects it (a discarded shrink, or a failed draw).
template <class T>
rc::Shrinkable<T> once_shrinkable(rc::Shrinkable<T> s) {
  std::shared_ptr<const T> value;
  try {
    value = std::make_shared<const T>(s.value());
  } catch (...) {
    return s;
  }
  return rc::shrinkable::lambda([value] { return *value; },
                                [s = std::move(s)] {
                                  return rc::seq::map(s.shrinks(),
                                                      [](rc::Shrinkable<T>&& x) { return once_shrinkable(std::move(x)); });
                                });
}
}  // namespace detail

/// `g`, each drawn value computed once (see the file comment); its name kept. Throws what `g`
/// throws, where `g` throws it.
template <class T>
rc::Gen<T> once(rc::Gen<T> g) {
  std::string name = g.name();
  return rc::Gen<T>([g = std::move(g)](const rc::Random& random, int size) { return detail::once_shrinkable(g(random, size)); })
      .as(std::move(name));
}

/// once(rc::gen::exec(f)): RapidCheck's exec (the same draws and shrinks), each value computed once.
template <class F>
auto exec_once(F&& f) {
  return once(rc::gen::exec(std::forward<F>(f)));
}

}  // namespace expirykit::gen
