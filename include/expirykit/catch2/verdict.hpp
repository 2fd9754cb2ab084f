// expirykit/catch2/verdict.hpp: a Catch2 v3 listener that records one verdict per test case
// (PASS, FAIL with the first failed assertion, or the verdict of its skip with the skip's
// message) for the conformance table.
//
// Register it in exactly one source file of a test binary:
//   #include <expirykit/catch2/verdict.hpp>
//   EXPIRYKIT_REGISTER_VERDICT_LISTENER()
// If EXPIRYKIT_VERDICT_FILE is set (config().verdict_file, config.hpp), each verdict is appended
// to it as one tab-separated line:
//   <binary>\t<test case>\t<verdict>\t<detail>\t<server identity>
// <verdict> is one of PASS, FAIL, KNOWN ISSUE, KNOWN GAP, FIXED, NOT SUPPORTED, SKIPPED
// (catch2::Verdict, catch2/verdict_kind.hpp): FAIL when an assertion failed, else the verdict
// catch2::skip() recorded for the test case's first skip (KNOWN ISSUE, NOT SUPPORTED, ...;
// SKIPPED for a plain SKIP), else PASS. It is written as told, never read from the message.
// The detail is whole (never cut), with backslash, tab, CR and newline written as \\ \t \r \n and
// any other byte below 0x20 (and 0x7f) as \xHH (bytes from 0x80 as they are):
// a PASS's WARN messages (empty without; e.g. the memory gate's "CHANGED since <line>" when a new
// server line is gated by an older line's baseline), a skip's message, or a FAIL's first failed assertion (expression and expansion, or the message; a
// property's message starts with the differing command, both replies, the seed and its replay
// line), which ends with "replay: <command line>" re-running this test case against the same
// server unless the message already carries one. ci/conformance collects these lines across test
// binaries, prints the table (the verdict, the first line of each detail) and writes every detail
// whole to a file. When the configuration itself is bad (an EXPIRYKIT_* value that does not
// parse), the tests fail with that error and the lines are still written (partial_config(),
// config.hpp), without a replay line.
#pragma once

#include <catch2/catch_test_case_info.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <expirykit/server/dialect_choice.hpp>

namespace expirykit::catch2 {

class VerdictListener : public Catch::EventListenerBase {
 public:
  using Catch::EventListenerBase::EventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo&) override {
    detail_.clear();
    warnings_.clear();
    skipped_ = false;
    skip_verdict_ = Verdict::skipped;
    detail::pending_skip_verdict().reset();
    detail::noted_verdict().reset();
  }
  void assertionEnded(const Catch::AssertionStats& stats) override {
    const auto& r = stats.assertionResult;
    if (r.getResultType() == Catch::ResultWas::Warning) {  // WARN(...): a passing test's detail
      warnings_ += (warnings_.empty() ? "" : "\n") + std::string(r.getMessage());
      return;
    }
    if (r.getResultType() == Catch::ResultWas::ExplicitSkip) {
      // The verdict catch2::skip() recorded just before this SKIP; none: a plain SKIP.
      auto& pending = detail::pending_skip_verdict();
      if (!skipped_) skip_verdict_ = pending.value_or(Verdict::skipped);
      pending.reset();
      skipped_ = true;
      if (detail_.empty()) detail_ = std::string(r.getMessage());
    } else if (!r.isOk() && detail_.empty()) {
      const std::string msg(r.getMessage());
      detail_ = r.hasExpression() ? r.getExpressionInMacro() + " with " + r.getExpandedExpression() : msg;
      if (r.hasMessage() && r.hasExpression()) detail_ += " (" + msg + ")";
      // INFO/CAPTURE in scope (e.g. INFO(step.describe()) before CHECK(step.ok)): a bare
      // true/false expansion says nothing, so the messages lead; otherwise they follow.
      // Catch2 v3 lists FAIL's own message among the info messages too: left out here, so a
      // FAIL(report) is written once (checks/catch2/integration_test.cpp).
      std::string info;
      for (const auto& m : stats.infoMessages)
        if (!(m.message == msg && !r.hasExpression())) info += (info.empty() ? "" : "\n") + m.message;
      if (!info.empty()) {
        const std::string x = r.hasExpression() ? r.getExpandedExpression() : "";
        detail_ = (x == "false" || x == "true") ? info + "\n" + detail_ : detail_ + "\n" + info;
      }
    }
  }
  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const auto& file = partial_config().verdict_file;  // also while another variable is bad
    if (!file) return;
    const auto& t = stats.totals;
    const auto& noted = detail::noted_verdict();  // catch2::note(): the test went on after it
    const Verdict verdict = t.assertions.failed > 0                      ? Verdict::fail
                            : (skipped_ || t.testCases.skipped > 0) ? skip_verdict_
                            : noted                                 ? noted->kind
                                                                    : Verdict::pass;
    std::string server = "?";
    std::string stand_in;  // the dialect standing in for a release without its own
    if (auto& target = detail::shared_target_slot(); target) {
      try {
        const auto& id = target->identity();
        server = id.to_string();
        if (const auto d = server::dialect_for(id); d && server::is_stand_in(*d, id)) stand_in = d->name;
      } catch (...) {
      }
    } else if (!detail::last_server_identity().empty()) {
      server = detail::last_server_identity();
    }
    std::string detail = verdict == Verdict::pass                                   ? warnings_
                         : noted && verdict == noted->kind && !skipped_ && !t.assertions.failed ? noted->message
                                                                                        : detail_;
    // Under a stand-in dialect a failure is a change since that release (or a defect).
    if (t.assertions.failed > 0 && !stand_in.empty())
      detail = "changed since " + stand_in + " (" + server + " checked against the " + stand_in + " dialect): " + detail;
    if (t.assertions.failed > 0 && detail.find("replay: ") == std::string::npos) {
      try {
        detail += "\nreplay: " + replay_line(stats.testInfo->name);
      } catch (const std::invalid_argument&) {  // a bad EXPIRYKIT_* value: the detail names it
      }
    }
    std::string line = binary_name() + "\t" + escape(stats.testInfo->name) + "\t" + std::string(to_string(verdict)) +
                       "\t" + escape(detail) + "\t" + server + "\n";
    if (FILE* f = std::fopen(file->string().c_str(), "a")) {
      std::fwrite(line.data(), 1, line.size(), f);
      std::fclose(f);
    }
  }

 private:
  static std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '\t': out += "\\t"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        default:
          // Other control bytes as \xHH: a NUL in a detail (a binary value in a failure
          // message) would otherwise end the line early and glue the next verdict to it.
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[static_cast<unsigned char>(c) >> 4];
            out += hex[c & 15];
          } else {
            out += c;
          }
      }
    }
    return out;
  }
  /// The shell command that re-runs test case `name` of this binary against the same server.
  /// Throws std::invalid_argument as config() does.
  static std::string replay_line(const std::string& name) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return env::server_assignments() + (ec ? std::string("<test binary>") : env::shell_quote(exe.string())) + " " +
           env::shell_quote(test_spec(name));
  }
  static std::string binary_name() {
    // /proc/self/exe, not /proc/self/comm: the kernel cuts comm to 15 characters.
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("?") : exe.filename().string();
  }
  std::string detail_;
  std::string warnings_;  // the WARN messages of the test case
  bool skipped_ = false;
  Verdict skip_verdict_ = Verdict::skipped;  // of the first skip
};

}  // namespace expirykit::catch2

#define EXPIRYKIT_REGISTER_VERDICT_LISTENER() CATCH_REGISTER_LISTENER(::expirykit::catch2::VerdictListener)
