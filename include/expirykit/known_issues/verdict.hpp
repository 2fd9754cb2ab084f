// expirykit/known_issues/verdict.hpp: the one verdict word every check reports for a row of the
// known-issues table (known_issues/table.hpp), and its message.
//
//   defect seen, server in the row's range    -> KNOWN ISSUE (reported, not failed)
//   no defect,   server in the row's range    -> FIXED: record it (set `until` to that release)
//   defect seen, server outside the range     -> a failure (widen the range or fix the server)
//   no defect,   server outside the range     -> nothing to report; the check goes on
//
// catch2/known_issue.hpp reports it from a Catch2 test.
#pragma once

#include <string>

#include <expirykit/server/identity.hpp>
#include <expirykit/known_issues/known_issue.hpp>

namespace expirykit::known_issues {

/// The one verdict word every check reports for a known issue (see the file comment).
enum class IssueVerdict {
  none,         ///< server outside the range and no defect: nothing to report
  known_issue,  ///< KNOWN ISSUE: defect seen on a server in the range (reported, not failed)
  fixed,        ///< FIXED: no defect on a server in the range (record the fix)
  failed,       ///< the defect on a server outside the range (a failure)
};

struct IssueJudgement {
  IssueVerdict verdict = IssueVerdict::none;
  /// The message to print: starts with "KNOWN ISSUE " / "FIXED " (for people: the verdict
  /// travels typed, catch2/verdict_kind.hpp), or the failure text; "" for none. The id comes
  /// first (verdict tables cut long messages); the replay script follows the sentence.
  std::string message;
};

/// The verdict for row `k` on `server` given what a check observed. `observed` describes the
/// observation (printed with KNOWN ISSUE and failures); `on_fix` is appended to the FIXED
/// message (what else to redo when the fix is recorded, e.g. a memory baseline). Throws nothing.
inline IssueJudgement judge(const KnownIssue& k, const server::Identity& server, bool defect_observed,
                            const std::string& observed, const std::string& on_fix = {}) {
  IssueJudgement j;
  const bool affected = k.covers(server);
  const std::string link = k.url().empty() ? std::string() : " (" + k.url() + ")";
  if (defect_observed && affected) {
    j.verdict = IssueVerdict::known_issue;
    j.message = "KNOWN ISSUE " + k.report + " [" + k.id + " in known_issues/table.hpp]: " + k.what + " (" +
                server.to_string() + ")" + link + "\nreplay:\n" + k.replay + "\nobserved: " + observed;
  } else if (!defect_observed && affected) {
    j.verdict = IssueVerdict::fixed;
    j.message = "FIXED " + k.report + " [" + k.id + "] on " + server.to_string() + ": " + k.what +
                " no longer reproduces; record the fix (set `until` of '" + k.id + "' in known_issues/table.hpp to " +
                server.version.to_string() + " or the first release that has it)" + (on_fix.empty() ? "" : "; " + on_fix);
  } else if (defect_observed) {
    j.verdict = IssueVerdict::failed;
    j.message = "known issue " + k.report + " [" + k.id + "] (" + k.what + ") appears on " + server.to_string() +
                ", outside its recorded range; observed: " + observed + "\nreplay:\n" + k.replay;
  }
  return j;
}

}  // namespace expirykit::known_issues
