// server/known_issues.hpp: KnownIssue::covers() on hand-built rows, and every row of the real
// table well-formed (a row with a typo'd id or no replay would hide or garble a failure).
#include <catch2/catch_test_macros.hpp>

#include <set>

#include <expirykit/server/known_issues.hpp>

using namespace expirykit::server;

namespace {
Identity id(Flavor f, int major, int minor, int patch) {
  Identity i;
  i.flavor = f;
  i.version = Version{major, minor, patch};
  return i;
}
}  // namespace

TEST_CASE("KnownIssue::covers: the flavor, from the first affected version, up to but excluding `until`", "[server][known-issues]") {
  KnownIssue open;
  open.id = "test-open";
  open.flavor = Flavor::valkey;
  open.from = Version{9, 0, 0};
  CHECK(open.covers(id(Flavor::valkey, 9, 0, 0)));
  CHECK(open.covers(id(Flavor::valkey, 9, 1, 2)));
  CHECK(open.covers(id(Flavor::valkey, 12, 0, 0)));  // no fixed release known: every later one
  CHECK_FALSE(open.covers(id(Flavor::valkey, 8, 1, 9)));
  CHECK_FALSE(open.covers(id(Flavor::redis, 9, 1, 2)));  // same numbers, other server

  KnownIssue fixed = open;
  fixed.until = Version{9, 1, 3};
  CHECK(fixed.covers(id(Flavor::valkey, 9, 1, 2)));
  CHECK_FALSE(fixed.covers(id(Flavor::valkey, 9, 1, 3)));
  CHECK_FALSE(fixed.covers(id(Flavor::valkey, 9, 2, 0)));
}

TEST_CASE("Every row of the known issue table is complete and findable by its id", "[server][known-issues]") {
  std::set<std::string> ids;
  for (const auto& k : known_issues()) {
    INFO("row '" << k.id << "'");
    CHECK(!k.id.empty());
    CHECK(ids.insert(k.id).second);  // unique
    CHECK(find_known_issue(k.id) == &k);
    CHECK(!k.report.empty());
    CHECK(!k.what.empty());
    CHECK(!k.replay.empty());
    if (k.until) CHECK(k.from < *k.until);
    CHECK(k.covers(Identity{k.flavor, k.from, {}}));
  }
  CHECK(find_known_issue("no-such-issue-id") == nullptr);
}
