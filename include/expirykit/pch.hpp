// expirykit/pch.hpp: the heavy third-party headers the kit includes, for a precompiled header.
//
// Not included by any other header of the kit. CMake's expirykit_precompile_headers(<target>)
// (cmake/expirykitBuild.cmake, installed with the package) precompiles it for a target; the kit's
// own targets share one (CMakeLists.txt, EXPIRYKIT_PCH). It holds only headers from outside the
// kit, so editing the kit never rebuilds it. Each one is included only where it exists
// (__has_include), so a project without Catch2 v3 or RapidCheck can use it too.
// Measured (bench/build_cost.sh, bench/RESULTS.md "Compile cost"): Boost.Process alone is about
// 220,000 preprocessed lines.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#if __has_include(<boost/process.hpp>)
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#endif
#if __has_include(<nlohmann/json.hpp>)
#include <nlohmann/json.hpp>
#endif
#if __has_include(<hiredis/hiredis.h>)
#include <hiredis/hiredis.h>
#endif
#if __has_include(<rapidcheck.h>)
#include <rapidcheck.h>
#endif
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <catch2/matchers/catch_matchers_templated.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
#endif
