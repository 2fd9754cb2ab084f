// expirykit/catch2/verdict.hpp: a Catch2 v3 listener that records one verdict per test case
// (PASS, FAIL with the first failed assertion, SKIP with its reason) for the conformance table.
//
// Register it in exactly one source file of a test binary:
//   #include <expirykit/catch2/verdict.hpp>
//   EXPIRYKIT_REGISTER_VERDICT_LISTENER()
// If EXPIRYKIT_VERDICT_FILE is set, each verdict is appended to it as one tab-separated line:
//   <binary>\t<test case>\t<PASS|FAIL|SKIP>\t<detail>\t<server identity>
// (ci/conformance collects these lines across test binaries and prints the table.)
#pragma once

#include <catch2/catch_test_case_info.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <expirykit/catch2/fixture.hpp>

namespace expirykit::catch2 {

class VerdictListener : public Catch::EventListenerBase {
 public:
  using Catch::EventListenerBase::EventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo&) override {
    detail_.clear();
    skipped_ = false;
  }
  void assertionEnded(const Catch::AssertionStats& stats) override {
    const auto& r = stats.assertionResult;
    if (r.getResultType() == Catch::ResultWas::ExplicitSkip) {
      skipped_ = true;
      if (detail_.empty()) detail_ = std::string(r.getMessage());
    } else if (!r.isOk() && detail_.empty()) {
      const std::string msg(r.getMessage());
      detail_ = r.hasExpression() ? r.getExpressionInMacro() + " with " + r.getExpandedExpression() : msg;
      if (r.hasMessage() && r.hasExpression()) detail_ += " (" + msg + ")";
    }
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const char* file = std::getenv("EXPIRYKIT_VERDICT_FILE");
    if (!file || !*file) return;
    const auto& t = stats.totals;
    const char* verdict = t.assertions.failed > 0 ? "FAIL" : (skipped_ || t.testCases.skipped > 0) ? "SKIP" : "PASS";
    std::string server = "?";
    if (auto& target = detail::shared_target_slot(); target) {
      try {
        server = target->identity().to_string();
      } catch (...) {
      }
    } else if (!detail::last_server_identity().empty()) {
      server = detail::last_server_identity();
    }
    std::string line = binary_name() + "\t" + clean(stats.testInfo->name) + "\t" + verdict + "\t" + clean(detail_) +
                       "\t" + server + "\n";
    if (FILE* f = std::fopen(file, "a")) {
      std::fputs(line.c_str(), f);
      std::fclose(f);
    }
  }

 private:
  static std::string clean(std::string s) {
    for (char& c : s)
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    if (s.size() > 300) s = s.substr(0, 297) + "...";
    return s;
  }
  static std::string binary_name() {
    // /proc/self/exe, not /proc/self/comm: the kernel cuts comm to 15 characters.
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("?") : exe.filename().string();
  }
  std::string detail_;
  bool skipped_ = false;
};

}  // namespace expirykit::catch2

#define EXPIRYKIT_REGISTER_VERDICT_LISTENER() CATCH_REGISTER_LISTENER(::expirykit::catch2::VerdictListener)
