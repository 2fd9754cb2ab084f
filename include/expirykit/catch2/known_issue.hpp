// expirykit/catch2/known_issue.hpp: report a known server issue (known_issues/table.hpp) from
// a Catch2 v3 test, so a suite stays green on an affected release and says so when one is fixed.
//
//   const bool defect = replica_hlen != primary_hlen;        // what the check observed
//   expirykit::catch2::known_issue(identity(), "valkey-expired-fields-propagated", defect, details);
//   // continues only when the server behaved as specified and no known issue applies
//
// Verdicts (known_issues::judge(); the SKIPs carry their verdict, catch2/verdict_kind.hpp, for the
// verdict listener and ci/conformance):
//   defect seen, server in the issue's range   -> KNOWN ISSUE: SKIP "KNOWN ISSUE <report> [<id> ...]: ..."
//                                                 (not a failure; the replay script and `details` follow)
//   no defect, server in the issue's range     -> FIXED: SKIP "FIXED <report> [<id>] on <server>: ..."
//                                                 (record the fix: set `until` in known_issues/table.hpp)
//   defect seen, server outside the range      -> FAIL with the details and the replay script
//   no defect, server outside the range        -> returns; the test goes on
// note_known_issue() gives the same verdicts without ending the test: KNOWN ISSUE and FIXED
// become the test case's verdict at its end (unless an assertion fails), a FAIL is a failed check.
// FAILs when `id` is not in the table: a typo must not hide a failure.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <set>
#include <source_location>
#include <string>
#include <utility>

#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::catch2 {

/// Turns a judgement into the Catch2 outcome above (SKIP as KNOWN ISSUE or FIXED, FAIL, or nothing).
inline void report(const known_issues::IssueJudgement& j) {
  switch (j.verdict) {
    case known_issues::IssueVerdict::known_issue: skip(Verdict::known_issue, j.message); break;
    case known_issues::IssueVerdict::fixed: skip(Verdict::fixed, j.message); break;
    case known_issues::IssueVerdict::failed: FAIL(j.message); break;
    case known_issues::IssueVerdict::none: break;
  }
}

/// The verdict for one row of the table (or a row a test builds itself).
inline void known_issue(const server::Identity& server, const known_issues::KnownIssue& row, bool defect_observed,
                        const std::string& observed) {
  report(known_issues::judge(row, server, defect_observed, observed));
}

/// The verdict for the row `id` of known_issues/table.hpp; FAILs when there is no such row.
inline void known_issue(const server::Identity& server, const std::string& id, bool defect_observed,
                        const std::string& observed) {
  const known_issues::KnownIssue* k = known_issues::find(id);
  if (!k) FAIL("no known issue '" << id << "' in known_issues/table.hpp");
  known_issue(server, *k, defect_observed, observed);
}

/// As known_issue(), but the test goes on after a known issue or a fix: KNOWN ISSUE and FIXED
/// are noted (catch2::note(): a WARN now, the test case's verdict at its end unless an assertion
/// fails), a defect on a release outside the issue's range is a failed assertion (FAIL_CHECK),
/// not the end of the test; an `id` missing from the table too. Returns true when a known issue
/// excused `defect_observed` (leave out the CHECK of the specified behaviour then), else false.
inline bool note_known_issue(const server::Identity& server, const std::string& id, bool defect_observed,
                             const std::string& observed, std::source_location where = std::source_location::current()) {
  const known_issues::KnownIssue* k = known_issues::find(id);
  if (!k) {
    detail::fail_check("no known issue '" + id + "' in known_issues/table.hpp", where);
    return false;
  }
  const auto j = known_issues::judge(*k, server, defect_observed, observed);
  switch (j.verdict) {
    case known_issues::IssueVerdict::known_issue: note(Verdict::known_issue, j.message, where); return true;
    case known_issues::IssueVerdict::fixed: note(Verdict::fixed, j.message, where); return false;
    case known_issues::IssueVerdict::failed: detail::fail_check(j.message, where); return false;
    case known_issues::IssueVerdict::none: return false;
  }
  return false;
}

/// note()s the known issue `id` as `kind` (known_issue or fixed) at `where`, once per id in
/// `noted` (the test's): "<report> [<id> in known_issues/table.hpp] <context>: <what the row
/// says>", or for FIXED "...: the server behaved as specified on a release the row covers
/// (record the fix)". What the fixtures use to name an issue they excused (TwinFixture and
/// ReplicaFixture).
inline void note_issue(Verdict kind, const std::string& id, const std::string& context, std::set<std::string>& noted,
                       const std::source_location& where) {
  if (id.empty() || !noted.insert(id).second) return;
  const auto* k = known_issues::find(id);
  note(kind,
       (k ? k->report + " " : std::string()) + "[" + id + " in known_issues/table.hpp] " + context +
           (kind == Verdict::fixed ? ": the server behaved as specified on a release the row covers (record the fix)"
                                   : ": " + (k ? k->what : std::string())),
       where);
}

/// What a fixture's step() does with a step (state::Step) a known server issue excused
/// (Step::known_issue) or that showed a covered issue fixed (Step::fixed_issue): note_issue()
/// KNOWN ISSUE or FIXED, so the test case ends as that verdict, never as a silent PASS.
inline void note_step_issues(const state::Step& s, std::set<std::string>& noted, const std::source_location& where) {
  const std::string at = "at `" + resp::cli_line(s.argv) + "`";
  note_issue(Verdict::known_issue, s.known_issue, at, noted, where);
  note_issue(Verdict::fixed, s.fixed_issue, at, noted, where);
}

}  // namespace expirykit::catch2
