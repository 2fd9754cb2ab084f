// INFO commandstats and INFO errorstats for the field TTL commands (issue 22: "unmodelled: INFO
// commandstats"): after CONFIG RESETSTAT, each command of the family, accepted and refused in
// every way the model knows (the command table's arity, numfields, options, times, WRONGTYPE),
// sent once on a plain connection; every reply must be the model's, and the counts
// calls / rejected_calls / failed_calls of each command and errorstat_<prefix> of each error must
// be what observe::CommandStats::of_model derives from them (its file comment gives the rule and
// where it comes from). Deadlines are 1000 s or more away, so no reply depends on the clock.
// Valkey's hashexpire.tcl checks one call each of the family in commandstats (valkey-hfe.md
// checklist 68); this checks every count.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/model/apply.hpp>
#include <expirykit/observe/command_stats.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/server/clock.hpp>

using namespace expirykit;
using resp::Reply;

TEST_CASE_METHOD(catch2::ServerFixture, "INFO commandstats and errorstats count each field TTL command as accepted, "
                                        "rejected or failed",
                 "[semantics][stats]") {
  require_field_ttl();
  const model::Dialect d = require_dialect();
  auto& c = client();
  REQUIRE(c("FLUSHALL", "SYNC") == Reply::ok());
  model::Keyspace ks;
  std::vector<std::string> lines = {
      "HSET h a 1 b 2", "SET s v",
      // accepted
      "HEXPIRE h 1000 FIELDS 1 a", "HPEXPIRE h 1000000 FIELDS 2 a zz", "HPERSIST h FIELDS 1 a", "HTTL h FIELDS 2 b zz",
      "HPEXPIRETIME h FIELDS 1 b", "HEXPIREAT h 4102444800 FIELDS 1 b", "HPEXPIREAT h 4102444800123 FIELDS 1 b",
      "HEXPIRETIME h FIELDS 1 b", "HPTTL h FIELDS 1 zz",
      // rejected by the command table's arity
      "HEXPIRE h", "HEXPIRE h 100 FIELDS 0", "HTTL h FIELDS", "HPERSIST h", "HGET h",
      // failed inside the command
      "HEXPIRE h 100 FIELDS 2 a", "HEXPIRE s 100 FIELDS 1 a", "HEXPIRE h abc FIELDS 1 a", "HEXPIRE h -1 FIELDS 1 a",
      "HEXPIRE h 100 NX XX FIELDS 1 a", "HTTL h FIELDS 2 a", "HTTL s FIELDS 1 a", "HPERSIST h FIELDS 3 a",
      "HGET s a"};
  if (d.has_hsetex)
    for (const char* l : {"HSETEX h EX 1000 FIELDS 1 c 3", "HSETEX h", "HSETEX h EX 100 FIELDS 2 a 2",
                          "HSETEX s EX 100 FIELDS 1 a 2", "HSETEX h EX -5 FIELDS 1 a 2"})
      lines.push_back(l);
  if (d.has_hgetex)
    for (const char* l : {"HGETEX h PERSIST FIELDS 1 c", "HGETEX h", "HGETEX h EX 100 FIELDS 2 a", "HGETEX s FIELDS 1 a"})
      lines.push_back(l);
  if (d.has_hgetdel)
    for (const char* l : {"HGETDEL h FIELDS 1 zz", "HGETDEL h", "HGETDEL h FIELDS 2 a"}) lines.push_back(l);

  REQUIRE(c("CONFIG", "RESETSTAT") == Reply::ok());
  std::vector<observe::Sent> sent;
  for (const auto& line : lines) {
    const resp::Argv argv = resp::parse_cli_line(line);
    const int64_t now = server::time_ms(c("TIME"));
    const Reply model = model::apply(ks, d, argv, now);
    const Reply server = c.call(argv);
    INFO(line << "\n  server: " << server << "\n  model:  " << model);
    CHECK(server == model);
    sent.push_back({argv, model});
  }
  const auto want = observe::CommandStats::of_model(sent);
  auto got = observe::CommandStats::read(c);
  // Only what this test sent: the TIME, CONFIG and INFO calls are not compared.
  const auto diffs = observe::compare(got, want);
  INFO("INFO commandstats / errorstats against the model after " << sent.size() << " commands:\n"
                                                                << catch2::detail::one_per_line(diffs, "  "));
  CHECK(diffs.empty());
}
