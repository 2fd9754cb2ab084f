// known_issues/table.hpp: KnownIssue::covers() on hand-built rows, every row of the real table
// well-formed (a row with a typo'd id or no replay would hide or garble a failure), the one
// verdict (judge()) every check reports, and which rows state::Twin recognises per step.
#include <catch2/catch_test_macros.hpp>

#include <catch2/matchers/catch_matchers_string.hpp>

#include <set>

#include <expirykit/model/apply.hpp>
#include <expirykit/known_issues/table.hpp>

using namespace expirykit::server;
namespace known_issues = expirykit::known_issues;
using namespace expirykit::known_issues;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

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
  for (const auto& k : expirykit::known_issues::table()) {
    INFO("row '" << k.id << "'");
    CHECK(!k.id.empty());
    CHECK(ids.insert(k.id).second);  // unique
    CHECK(known_issues::find(k.id) == &k);
    CHECK(!k.report.empty());
    CHECK(!k.what.empty());
    CHECK(!k.replay.empty());
    if (k.until) CHECK(k.from < *k.until);
    CHECK(k.covers(Identity{k.flavor, k.from, {}}));
    // An upstream report links to its page; the id names the flavor it belongs to.
    CHECK((k.report == "unreported") == k.url().empty());
    CHECK_THAT(k.id, StartsWith(std::string(to_string(k.flavor)) + "-"));
    // A row the twin can recognise names the commands whose steps show it, and upper-case.
    if (k.reproduce.any() || k.matches) CHECK(k.recognisable());
    for (const auto& c : k.commands) CHECK(c == expirykit::model::upper(c));
  }
  CHECK(known_issues::find("no-such-issue-id") == nullptr);
  CHECK(known_issues::find("valkey-ttl-hash-not-compact")->url() == "https://github.com/valkey-io/valkey/issues/2618");
}

TEST_CASE("judge(): KNOWN ISSUE in range with the defect, FIXED in range without, a failure outside with it",
          "[server][known-issues]") {
  const KnownIssue& k = *known_issues::find("valkey-copy-skips-expired-fields");
  const Identity affected = id(Flavor::valkey, 9, 1, 2), other = id(Flavor::redis, 8, 0, 6);
  auto seen = judge(k, affected, true, "HLEN h2 1");
  CHECK(seen.verdict == IssueVerdict::known_issue);
  CHECK_THAT(seen.message, StartsWith("KNOWN ISSUE unreported [valkey-copy-skips-expired-fields in known_issues/table.hpp]") &&
                               ContainsSubstring("replay:\nDEBUG SET-ACTIVE-EXPIRE 0") &&
                               ContainsSubstring("observed: HLEN h2 1") && ContainsSubstring("(valkey 9.1.2)"));
  auto fixed = judge(k, affected, false, "HLEN h2 2", "also this");
  CHECK(fixed.verdict == IssueVerdict::fixed);
  CHECK_THAT(fixed.message, StartsWith("FIXED unreported [valkey-copy-skips-expired-fields] on valkey 9.1.2") &&
                                ContainsSubstring("record the fix (set `until`") && ContainsSubstring("; also this"));
  auto outside = judge(k, other, true, "HLEN h2 1");
  CHECK(outside.verdict == IssueVerdict::failed);
  CHECK_THAT(outside.message, ContainsSubstring("outside its recorded range") && ContainsSubstring("replay:"));
  auto nothing = judge(k, other, false, "HLEN h2 2");
  CHECK(nothing.verdict == IssueVerdict::none);
  CHECK(nothing.message.empty());
  // A reported issue links to its page.
  CHECK_THAT(judge(*known_issues::find("valkey-expired-fields-propagated"), affected, true, "x").message,
             ContainsSubstring("(https://github.com/valkey-io/valkey/issues/4732)"));
}

TEST_CASE("The rows state::Twin recognises per step, by server and command", "[server][known-issues]") {
  auto ids = [](const Identity& s) {
    std::set<std::string> out;
    for (const auto* k : recognisable_issues(s)) out.insert(k->id);
    return out;
  };
  CHECK(ids(id(Flavor::valkey, 9, 1, 2)) ==
        std::set<std::string>{"valkey-copy-skips-expired-fields", "valkey-fields-keyword-scan-includes-key",
                              "valkey-hrandfield-short", "valkey-hsetex-flag-named-key"});
  CHECK(ids(id(Flavor::valkey, 9, 0, 3)) ==
        std::set<std::string>{"valkey-fields-token-unchecked"});  // the 9.1.2 rows start at 9.1.2
  CHECK(ids(id(Flavor::redis, 8, 0, 6)) ==
        std::set<std::string>{"redis-hexpire-revives-expired-field", "redis-hmget-deletes-hash-silently",
                              "redis-hsetex-keepttl-expired-deadline"});
  CHECK(ids(id(Flavor::redis, 7, 0, 15)).empty());
  const KnownIssue& k = *known_issues::find("redis-hexpire-revives-expired-field");
  CHECK(k.concerns({"hpexpireat", "h", "1", "FIELDS", "1", "a"}));
  CHECK_FALSE(k.concerns({"HPERSIST", "h", "FIELDS", "1", "a"}));
  CHECK(k.concerns({"EXEC"}, {{"HSET", "h", "a", "1"}, {"HEXPIRE", "h", "1", "FIELDS", "1", "a"}}));
  // The events matcher of valkey-hsetex-flag-named-key: the replies agree, the events differ.
  const KnownIssue& f = *known_issues::find("valkey-hsetex-flag-named-key");
  Divergence d{{"HSETEX", "fnx", "EX", "100", "FIELDS", "1", "a", "1"}, {}, expirykit::resp::Reply::integer(1),
               expirykit::resp::Reply::integer(1), "event 1: server hset@EX, model hset@fnx", ""};
  CHECK(f.matches(d));
  d.argv[1] = "h";
  CHECK_FALSE(f.matches(d));
  d.argv[1] = "XX";
  d.server = expirykit::resp::Reply::integer(0);
  CHECK_FALSE(f.matches(d));  // a reply divergence is not this issue
  // Its invalidation goes to the same wrong key (live 9.1.2): a tracking difference is the issue too.
  d.server = expirykit::resp::Reply::integer(1);
  d.events_diff.clear();
  d.tracking_diff = "invalidation 1: server PXAT, model XX";
  CHECK(f.matches(d));
  d.tracking_diff.clear();
  CHECK_FALSE(f.matches(d));  // nothing differs
}

TEST_CASE("valkey-hrandfield-short: a short but otherwise valid HRANDFIELD reply is the row, nothing else is",
          "[server][known-issues]") {
  using expirykit::resp::Reply;
  const KnownIssue& k = *known_issues::find("valkey-hrandfield-short");
  REQUIRE(k.matches);
  // The model's candidates: the live fields a and b (pairs of field and value).
  const Reply live = Reply::array({Reply::string("a"), Reply::string("1"), Reply::string("b"), Reply::string("2")});
  auto div = [&](expirykit::resp::Argv argv, Reply server) { return Divergence{std::move(argv), {}, live, std::move(server), "", ""}; };
  auto strs = [](std::vector<std::string> v) {
    std::vector<Reply> r;
    for (auto& x : v) r.push_back(Reply::string(x));
    return Reply::array(std::move(r));
  };
  // Short replies (live 9.1.2 on a hash of 98 expired and 2 live fields).
  CHECK(k.matches(div({"HRANDFIELD", "h", "2"}, strs({"a"}))));
  CHECK(k.matches(div({"HRANDFIELD", "h", "2"}, Reply::array({}))));
  CHECK(k.matches(div({"HRANDFIELD", "h", "5"}, strs({"b"}))));                          // min(5, 2 live) = 2
  CHECK(k.matches(div({"HRANDFIELD", "h", "-5"}, strs({"a", "a", "b"}))));               // repeats allowed
  CHECK(k.matches(div({"hrandfield", "h", "2", "withvalues"}, strs({"b", "2"}))));
  CHECK(k.matches(div({"HRANDFIELD", "h"}, Reply::nil())));
  // Not short, or not otherwise valid: another divergence, which must fail.
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "2"}, strs({"a", "b"}))));               // the specified reply
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "5"}, strs({"a", "a"}))));               // a repeat
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "2"}, strs({"x"}))));                    // not a live field
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "2", "WITHVALUES"}, strs({"b", "9"}))));  // wrong value
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "-3"}, strs({"a", "b", "a", "b"}))));    // too many
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h"}, Reply::string("x"))));
  CHECK_FALSE(k.matches(div({"HRANDFIELD", "h", "2"}, Reply::error("ERR x"))));
  Divergence none{{"HRANDFIELD", "h", "2"}, {}, Reply::array({}), Reply::array({}), "", ""};
  CHECK_FALSE(k.matches(none));  // no live field: nothing is short
  Divergence in_tx{{"EXEC"}, {{"HRANDFIELD", "h", "2"}}, live, strs({"a"}), "", ""};
  CHECK_FALSE(k.matches(in_tx));
}

TEST_CASE("replica_issues(): the rows of a server that involve replicas, which check_replica_agrees names on a failure",
          "[server][known-issues]") {
  auto ids = [](const Identity& server) {
    std::set<std::string> out;
    for (const auto* k : known_issues::replica_issues(server)) out.insert(k->id);
    return out;
  };
  const auto valkey = ids(id(Flavor::valkey, 9, 1, 2));
  CHECK(valkey.count("valkey-expired-fields-propagated") == 1);  // a new-user trial's replica check met it
  CHECK(valkey.count("valkey-hsetex-keepttl-replica-drops-key-ttl") == 1);
  CHECK(valkey.count("valkey-hrandfield-short") == 0);  // a reply, no replica in it
  CHECK(valkey.count("redis-hsetex-fnx-replica-drops-key-ttl") == 0);
  const auto redis = ids(id(Flavor::redis, 8, 0, 6));
  CHECK(redis.count("redis-hsetex-fnx-replica-drops-key-ttl") == 1);
  CHECK(redis.count("valkey-expired-fields-propagated") == 0);
  CHECK(ids(id(Flavor::valkey, 7, 2, 0)).empty());  // before any of them
}
