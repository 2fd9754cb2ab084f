// observe::CommandStats (observe/command_stats.hpp) without a server: INFO commandstats and
// errorstats text in the shape Valkey 9.1.2 prints, and the counts of_model() derives from the
// commands sent and their replies (the live check is suites/semantics/command_stats.cpp).
#include <catch2/catch_test_macros.hpp>

#include <stdexcept>
#include <vector>

#include <expirykit/observe/command_stats.hpp>

using namespace expirykit;
using resp::Reply;

TEST_CASE("CommandStats: INFO text, the model's counts and their comparison", "[server][stats]") {
  const auto got = observe::CommandStats::parse(
      "# Commandstats\r\ncmdstat_hexpire:calls=2,usec=10,usec_per_call=5.00,rejected_calls=1,failed_calls=1\r\n"
      "cmdstat_object|encoding:calls=1,usec=1,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n",
      "# Errorstats\r\nerrorstat_ERR:count=2\r\n");
  CHECK(got.commands.at("hexpire") == observe::CallCounts{2, 1, 1});
  CHECK(got.commands.count("object|encoding") == 1);
  CHECK(got.errors.at("ERR") == 2);
  const std::vector<observe::Sent> sent = {
      {{"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, Reply::ints({-2})},
      {{"hexpire", "h"}, Reply::error("ERR wrong number of arguments for 'hexpire' command")},  // the table's arity
      {{"HEXPIRE", "h", "100", "FIELDS", "2", "a"}, Reply::error("ERR numfields mismatch")}};  // inside the command
  const auto want = observe::CommandStats::of_model(sent);
  CHECK(want.commands.at("hexpire") == observe::CallCounts{2, 1, 1});
  CHECK(want.errors.at("ERR") == 2);
  CHECK(observe::compare(got, want).empty());
  auto off = want;
  off.commands["hexpire"].failed_calls = 0;
  off.errors["WRONGTYPE"] = 1;
  const auto diffs = observe::compare(got, off);
  REQUIRE(diffs.size() == 2);
  CHECK(diffs[0] == "cmdstat_hexpire: server calls=2 rejected_calls=1 failed_calls=1, model calls=2 rejected_calls=1 failed_calls=0");
  CHECK(diffs[1] == "errorstat_WRONGTYPE: server 0, model 1");
  CHECK_THROWS_AS(observe::CommandStats::of_model({{{"OBJECT", "ENCODING", "h"}, Reply::nil()}}), std::invalid_argument);
  CHECK_THROWS_AS(observe::CommandStats::of_model({{{"DEBUG", "SLEEP", "0"}, Reply::ok()}}), std::invalid_argument);
}
