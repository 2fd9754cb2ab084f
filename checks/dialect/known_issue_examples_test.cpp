// The known-issue examples of suites/semantics (known_issue_examples.hpp) against the live server,
// checking the kit rather than the server: where a row covers this server, the example shows the
// defect, the twin excuses and names it step by step, and the verdict is KNOWN ISSUE; where it
// does not, the same example runs under an identity the row covers (and the row's dialect) on this
// server, which lacks the defect, i.e. a fixed release: every step passes, the twin reports the
// row as fixed (Step::fixed_issue), and the verdict is FIXED. Under the server's real identity,
// which the row does not cover, there is nothing to report. Run it once per server
// (EXPIRYKIT_SERVER=valkey-9.1 / redis-8.0): each row is KNOWN ISSUE on one and FIXED on the other.
#include <catch2/catch_test_macros.hpp>

#include <set>
#include <string>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/known_issues/table.hpp>

#include "../../suites/semantics/known_issue_examples.hpp"

using namespace expirykit;
using catch2::TwinFixture;

namespace {
void require_clean(const examples::Observation& o) {
  for (const auto* s : o.failed()) {
    INFO(s->describe());
    CHECK(s->ok);
  }
  std::string diffs;
  for (const auto& d : o.state_diffs) diffs += d + "\n";
  INFO(diffs);
  CHECK(o.state_diffs.empty());
}
}  // namespace

TEST_CASE_METHOD(TwinFixture, "Known issue examples: KNOWN ISSUE where a row covers the server, FIXED where it lacks the defect",
                 "[dialect][known-issue]") {
  require_field_ttl();
  const server::Identity real = identity();
  for (const auto& ex : examples::known_issue_examples()) {
    DYNAMIC_SECTION(ex.id) {
      const known_issues::KnownIssue* row = known_issues::find(ex.id);
      REQUIRE(row);
      if (row->covers(real)) {
        twin().flushall();
        const auto o = ex.run(twin());
        require_clean(o);
        INFO(o.observed);
        CHECK(o.defect);  // live 9.1.2 / 8.0.6: the servers in the table's ranges show them
        CHECK(o.known_issues == std::set<std::string>{ex.id});
        CHECK(o.fixed_issues.empty());
        CHECK(known_issues::judge(*row, real, o.defect, o.observed).verdict == known_issues::IssueVerdict::known_issue);
      } else if (row->flavor != real.flavor && !ex.portable) {
        SUCCEED(ex.id << ": the example's replies differ between server lines; it runs on " << to_string(row->flavor));
      } else {
        // A fixed release: this server (without the defect) under an identity the row covers.
        server::Identity as_if = real;
        as_if.flavor = row->flavor;
        as_if.version = row->from;
        auto d = model::Dialect::for_server(to_string(as_if.flavor), as_if.version.major, as_if.version.minor);
        REQUIRE(d);
        state::Twin::Options opt;
        opt.server = as_if;
        opt.check_encoding = row->flavor == real.flavor;  // the other line's encodings are its own
        state::Twin t(client(), *d, opt);
        t.flushall();
        const auto o = ex.run(t);
        require_clean(o);
        INFO(o.observed);
        CHECK_FALSE(o.defect);
        CHECK(o.known_issues.empty());
        CHECK(o.fixed_issues == std::set<std::string>{ex.id});
        const auto j = known_issues::judge(*row, as_if, o.defect, o.observed);
        CHECK(j.verdict == known_issues::IssueVerdict::fixed);
        CHECK(j.message.rfind("FIXED ", 0) == 0);
        CHECK(known_issues::judge(*row, real, o.defect, o.observed).verdict == known_issues::IssueVerdict::none);
      }
    }
  }
}
