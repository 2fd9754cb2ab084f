// Checks of memory/guard.hpp: compact, known issue (valkey-ttl-hash-not-compact, Valkey #2618, a
// row of known_issues/table.hpp), fixed, not compact. No server.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/memory/guard.hpp>

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using Status = memory::Guard::Status;

namespace {
server::Identity id(server::Flavor f, int a, int b, int c) {
  server::Identity i;
  i.flavor = f;
  i.version = {a, b, c};
  return i;
}
const auto valkey912 = id(server::Flavor::valkey, 9, 1, 2);
const auto redis806 = id(server::Flavor::redis, 8, 0, 6);
}  // namespace

TEST_CASE("encoding guard: its issues are rows of the one table of known server issues", "[memory][guard]") {
  for (const auto& c : memory::compactness_issues()) {
    CAPTURE(c.id);
    CHECK(known_issues::find(c.id) != nullptr);
  }
  CHECK(memory::compactness_issue_for(valkey912, true) == known_issues::find("valkey-ttl-hash-not-compact"));
  CHECK(memory::compactness_issue_for(valkey912, false) == nullptr);  // field TTLs only
  CHECK(memory::compactness_issue_for(redis806, true) == nullptr);
  CHECK(memory::compactness_issue_for(id(server::Flavor::valkey, 8, 1, 1), true) == nullptr);
}

TEST_CASE("encoding guard: Valkey 9.1.2 hashtable with a field TTL is a KNOWN ISSUE", "[memory][guard]") {
  auto g = memory::judge_compact(valkey912, "hash1-hsetex", {{"hashtable", 64}}, true);
  CHECK(g.status == Status::known_issue);
  CHECK(g.ok());
  CHECK(g.issue == "valkey-ttl-hash-not-compact");
  // The same verdict word and shape as every known issue (known_issues::judge()).
  CHECK_THAT(g.message, StartsWith("KNOWN ISSUE valkey-io/valkey#2618 [valkey-ttl-hash-not-compact in known_issues/table.hpp]") &&
                            ContainsSubstring("hashtable x64") &&
                            ContainsSubstring("https://github.com/valkey-io/valkey/issues/2618") &&
                            ContainsSubstring("replay:\nHSET h a 1"));
}

TEST_CASE("encoding guard: a release in the issue's range that keeps them compact is FIXED: record it, rewrite the baseline",
          "[memory][guard]") {
  for (auto v : {valkey912, id(server::Flavor::valkey, 9, 2, 0), id(server::Flavor::valkey, 10, 0, 0)}) {
    auto g = memory::judge_compact(v, "hash1-hsetex", {{"listpack", 64}}, true);
    CHECK(g.status == Status::fixed);
    CHECK(g.ok());
    CHECK_THAT(g.message, StartsWith("FIXED valkey-io/valkey#2618 [valkey-ttl-hash-not-compact] on " + v.to_string()) &&
                              ContainsSubstring("set `until`") &&
                              ContainsSubstring("EXPIRYKIT_UPDATE_BASELINES=1 ci/memory-gate " + v.line()));
  }
}

TEST_CASE("encoding guard: Redis 8.0 listpackex is compact, a hashtable is a failure", "[memory][guard]") {
  auto ok = memory::judge_compact(redis806, "hash1-hsetex", {{"listpackex", 64}}, true);
  CHECK(ok.status == Status::compact);
  CHECK_THAT(ok.message, !ContainsSubstring("FIXED"));
  auto bad = memory::judge_compact(redis806, "hash1-hsetex", {{"hashtable", 60}, {"listpackex", 4}}, true);
  CHECK(bad.status == Status::not_compact);
  CHECK_FALSE(bad.ok());
  CHECK_THAT(bad.message, ContainsSubstring("NOT compact") && ContainsSubstring("hashtable x60, listpackex x4") &&
                              ContainsSubstring("known_issues/table.hpp"));
}

TEST_CASE("encoding guard: the Valkey issue covers field TTLs only", "[memory][guard]") {
  auto g = memory::judge_compact(valkey912, "hash1-plain", {{"hashtable", 64}}, false);
  CHECK(g.status == Status::not_compact);
  CHECK(memory::judge_compact(valkey912, "hash1-plain", {{"listpack", 64}}, false).status == Status::compact);
  CHECK(memory::judge_compact(valkey912, "x", {}, true).status == Status::no_sample);
}
