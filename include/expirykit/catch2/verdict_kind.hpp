// expirykit/catch2/verdict_kind.hpp: the verdicts of the conformance table, and a SKIP that says
// which one it is, so the verdict listener (catch2/verdict.hpp) writes the verdict it was told
// instead of reading it back from the message.
//
//   if (!identity().caps.field_ttl())
//     expirykit::catch2::skip(expirykit::catch2::Verdict::not_supported,
//                             "not supported by " + identity().to_string() + ": hash field TTLs");
//
// skip() records the verdict for the running test case, then SKIPs with the message (which Catch2
// prints, as for any SKIP); note() records it and lets the test go on (a WARN now, the verdict at
// the end unless an assertion fails). The listener takes the verdict of a test case's first skip; a plain
// SKIP, with no verdict recorded, is SKIPPED. PASS and FAIL are never recorded: the listener
// derives them from the assertions (a failed assertion is FAIL even after a skip).
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include <expirykit/config.hpp>

namespace expirykit::catch2 {

/// One check's verdict, as the conformance table and the release matrix print it (to_string()).
enum class Verdict {
  pass,           ///< PASS: every assertion held
  fail,           ///< FAIL: an assertion failed
  known_issue,    ///< KNOWN ISSUE: a known server defect, seen on a release it covers (not a failure)
  known_gap,      ///< KNOWN GAP: a known limitation the check cannot judge yet (not a failure)
  fixed,          ///< FIXED: a known issue's defect not seen on a release it covers (record the fix)
  not_supported,  ///< NOT SUPPORTED: the server lacks what the check needs ("not supported by ...")
  skipped,        ///< SKIPPED: skipped for another reason (an external server, no replicas, ...)
};

/// The verdict's word in the verdict file and the tables: PASS, FAIL, KNOWN ISSUE, KNOWN GAP,
/// FIXED, NOT SUPPORTED, SKIPPED.
constexpr std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass: return "PASS";
    case Verdict::fail: return "FAIL";
    case Verdict::known_issue: return "KNOWN ISSUE";
    case Verdict::known_gap: return "KNOWN GAP";
    case Verdict::fixed: return "FIXED";
    case Verdict::not_supported: return "NOT SUPPORTED";
    case Verdict::skipped: return "SKIPPED";
  }
  return "SKIPPED";
}

namespace detail {
/// The verdict skip() recorded for the skip now being reported; the listener takes it (and
/// clears it) when it sees the skip.
inline std::optional<Verdict>& pending_skip_verdict() {
  static std::optional<Verdict> v;
  return v;
}
/// A verdict note() recorded for the running test case (its first note), with its message; the
/// listener takes it at the test case's end when no assertion failed and nothing skipped.
struct NotedVerdict {
  Verdict kind;
  std::string message;
};
inline std::optional<NotedVerdict>& noted_verdict() {
  static std::optional<NotedVerdict> v;
  return v;
}
/// A failed assertion with `message` at `where` that lets the test go on (FAIL_CHECK there).
inline void fail_check(const std::string& message, std::source_location where) {
  const Catch::SourceLineInfo at(where.file_name(), static_cast<std::size_t>(where.line()));
  Catch::AssertionHandler handler(Catch::StringRef("FAIL_CHECK"), at, Catch::StringRef(),
                                  Catch::ResultDisposition::ContinueOnFailure);
  handler.handleMessage(Catch::ResultWas::ExplicitFailure, std::string(message));
  handler.complete();
}
}  // namespace detail

/// Records `kind` (known_issue, known_gap or fixed) as the running test case's verdict and lets
/// the test go on: its later assertions still run and still count. Catch2 prints `message` as a
/// WARN at `where` (the caller's line). The test case's verdict is then FAIL if an assertion
/// fails, a skip's verdict if it skips, else the weightiest note's `kind` (FIXED over KNOWN ISSUE
/// over KNOWN GAP; the first such note's message), never PASS. pass, fail, not_supported or
/// skipped is a misuse: a failed assertion saying so (which, like any failed check, throws under
/// Catch2's --abort: do not call note() from a destructor).
inline void note(Verdict kind, const std::string& message, std::source_location where = std::source_location::current()) {
  if (kind != Verdict::known_issue && kind != Verdict::known_gap && kind != Verdict::fixed) {
    detail::fail_check("catch2::note() with the verdict " + std::string(to_string(kind)) +
                           ", which is not a noted verdict: " + message,
                       where);
    return;
  }
  // The weightiest note is the verdict: FIXED (the table needs an update) over KNOWN ISSUE over
  // KNOWN GAP; the first of that kind keeps its message.
  auto rank = [](Verdict v) { return v == Verdict::fixed ? 3 : v == Verdict::known_issue ? 2 : 1; };
  if (auto& n = detail::noted_verdict(); !n || rank(kind) > rank(n->kind)) n = detail::NotedVerdict{kind, message};
  const Catch::SourceLineInfo at(where.file_name(), static_cast<std::size_t>(where.line()));
  Catch::AssertionHandler handler(Catch::StringRef("WARN"), at, Catch::StringRef(), Catch::ResultDisposition::ContinueOnFailure);
  handler.handleMessage(Catch::ResultWas::Warning, std::string(to_string(kind)) + ": " + message);
  handler.complete();
}

/// SKIPs the running test case with `message`, recording `kind` as its verdict. `kind` is one of
/// known_issue, known_gap, fixed, not_supported, skipped; pass or fail is not a skip and FAILs
/// the test instead, saying so. With EXPIRYKIT_FAIL_NOT_SUPPORTED=1 (config.hpp) a
/// not_supported skip FAILs the test too: "NOT SUPPORTED, a failure under
/// EXPIRYKIT_FAIL_NOT_SUPPORTED=1: <message>". Catch2 reports the skip (or that failure) at
/// `where`: the line that called skip(), as SKIP(message) written there would be.
inline void skip(Verdict kind, const std::string& message,
                 std::source_location where = std::source_location::current()) {
  const Catch::SourceLineInfo at(where.file_name(), static_cast<std::size_t>(where.line()));
  const bool misuse = kind == Verdict::pass || kind == Verdict::fail;
  if (!misuse && kind == Verdict::not_supported && config().fail_not_supported) {
    Catch::AssertionHandler handler(Catch::StringRef("FAIL"), at, Catch::StringRef(), Catch::ResultDisposition::Normal);
    handler.handleMessage(Catch::ResultWas::ExplicitFailure,
                          "NOT SUPPORTED, a failure under EXPIRYKIT_FAIL_NOT_SUPPORTED=1: " + message);
    handler.complete();
    return;
  }
  if (!misuse) detail::pending_skip_verdict() = kind;
  // What SKIP(...) / FAIL(...) expand to (catch2/catch_message.hpp), with the caller's line.
  Catch::AssertionHandler handler(Catch::StringRef(misuse ? "FAIL" : "SKIP"), at, Catch::StringRef(),
                                  Catch::ResultDisposition::Normal);
  if (misuse)
    handler.handleMessage(Catch::ResultWas::ExplicitFailure, "catch2::skip() with the verdict " +
                                                                 std::string(to_string(kind)) +
                                                                 ", which is not a skip: " + message);
  else
    handler.handleMessage(Catch::ResultWas::ExplicitSkip, std::string(message));
  handler.complete();
}

}  // namespace expirykit::catch2
