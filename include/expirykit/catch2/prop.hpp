// expirykit/catch2/prop.hpp: run a RapidCheck property inside a Catch2 v3 test.
//
// Debian 12's rapidcheck/catch.h includes <catch2/catch.hpp>, which Catch2 v3 does not have;
// this replaces it. A failing property fails the Catch2 test with RapidCheck's report (the
// counterexample, shrunk, and the RC_PARAMS="reproduce=..." line to re-run it).
//
//   TEST_CASE("reverse twice") {
//     expirykit::catch2::prop("is the identity", [](const std::vector<int>& v) {
//       auto r = v; std::reverse(r.begin(), r.end()); std::reverse(r.begin(), r.end());
//       RC_ASSERT(r == v);
//     });
//   }
#pragma once

#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <sstream>
#include <string>

namespace expirykit::catch2 {

template <typename Testable>
void prop(const std::string& description, Testable&& testable) {
  SECTION(description) {
    // The id makes RC_PARAMS="reproduce=..." (printed by RapidCheck at exit after a failure)
    // replay this property's failing case.
    rc::detail::TestMetadata metadata;
    metadata.id = description;
    metadata.description = description;
    const auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata);
    if (result.template is<rc::detail::SuccessResult>()) {
      const auto& success = result.template get<rc::detail::SuccessResult>();
      if (!success.distribution.empty()) {
        std::ostringstream os;
        rc::detail::printResultMessage(result, os);
        UNSCOPED_INFO(os.str());
      }
      SUCCEED(description);
    } else {
      std::ostringstream os;
      rc::detail::printResultMessage(result, os);
      FAIL(os.str());
    }
  }
}

}  // namespace expirykit::catch2
