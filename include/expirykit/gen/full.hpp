// expirykit/gen/full.hpp: full(), the size-independence wrapper of every public generator.
#pragma once

#include <utility>

#include <rapidcheck.h>

namespace expirykit::gen {

/// RapidCheck's gen::inRange scales its range with the size parameter (size 0: always the
/// minimum). Every public generator here is wrapped in full() so its distribution does not
/// depend on the size a caller (e.g. a container) passes down.
template <class T>
rc::Gen<T> full(rc::Gen<T> g) {
  return rc::gen::resize(100, std::move(g));
}

}  // namespace expirykit::gen
