// triage::CrashReport on crash reports as Valkey 9.1.2 writes them (the lines below are the
// lines of two live reports, cut short: HRANDFIELD on an empty hash, known issue
// valkey-empty-hash-hrandfield-crash, and a BGSAVE child's assertion, valkey-empty-hash-fork-crash).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/triage/crash_report.hpp>

using expirykit::triage::CrashReport;

TEST_CASE("CrashReport: signal, command, the crashing thread's stack; the reduced second report ignored", "[triage]") {
  const std::vector<std::string> log = {
      "19072:M 01 Dec 2026 23:50:24.100 * Ready to accept connections tcp",
      "",
      "",
      "=== VALKEY BUG REPORT START: Cut & paste starting from here ===",
      "19072:M 01 Dec 2026 23:50:24.435 # valkey 9.1.2 crashed by signal: 11, si_code: 1",
      "19072:M 01 Dec 2026 23:50:24.435 # Accessing address: (nil)",
      "19072:M 01 Dec 2026 23:50:24.435 # Crashed running the instruction at: 0x561c43d8a764",
      "",
      "------ STACK TRACE ------",
      "EIP:",
      "/srv/bin/valkey-server 127.0.0.1:27041(entryGetExpiry+0x4) [0x561c43d8a764]",
      "",
      "19078 bio_tls_reload",
      "/srv/lib/libc.so.6(pthread_cond_wait+0x128) [0x7fd44b89e328]",
      "/srv/bin/valkey-server 127.0.0.1:27041(bioProcessBackgroundJobs+0x10e) [0x561c43d40dfe]",
      "",
      "19072 valkey-server *",
      "/srv/bin/valkey-server 127.0.0.1:27041(entryGetExpiry+0x4) [0x561c43d8a764]",
      "/srv/bin/valkey-server 127.0.0.1:27041(+0x1bfc3a) [0x561c43e5ec3a]",
      "/srv/bin/valkey-server 127.0.0.1:27041(hrandfieldCommand+0xf2) [0x561c43e654b2]",
      "/srv/bin/valkey-server 127.0.0.1:27041(call+0x1a3) [0x561c43e46b53]",
      "",
      "6/6 expected stacktraces.",
      "",
      "------ STACK TRACE DONE ------",
      "",
      "------ CURRENT CLIENT INFO ------",
      "id=3 addr=127.0.0.1:41814 laddr=127.0.0.1:27041 fd=9 name=*redacted* cmd=hrandfield",
      "argc: 2",
      "argv[0]: \"HRANDFIELD\"",
      "argv[1]: 2 bytes",
      "",
      "------ EXECUTING CLIENT INFO ------",
      "argv[0]: \"HRANDFIELD\"",
      "argv[1]: 2 bytes",
      ".O.O.19072:signal-handler (1796169024) Crashed running signal handler. Providing reduced version of recursive crash report.",
      "19072:M 01 Dec 2026 23:50:24.491 # valkey 9.1.2 crashed by signal: 6, si_code: 0",
  };
  const auto r = CrashReport::parse(log);
  REQUIRE(r.found);
  CHECK(r.signal == 11);
  CHECK(r.kind() == "SIGSEGV (signal 11)");
  CHECK(r.assertion.empty());
  CHECK(r.argv == std::vector<std::string>{"HRANDFIELD", "2 bytes"});
  CHECK(r.command() == "HRANDFIELD");
  CHECK(r.stack == std::vector<std::string>{"entryGetExpiry", "hrandfieldCommand", "call"});
  CHECK(r.headline() == "SIGSEGV (signal 11) in HRANDFIELD 2 bytes (entryGetExpiry)");
  CHECK_FALSE(r.fork_child);
}

TEST_CASE("CrashReport: an assertion in a fork child; no report at all", "[triage]") {
  const std::vector<std::string> log = {
      "20584:M 01 Dec 2026 23:54:25.760 * Background saving started by pid 20594",
      "20594:C 01 Dec 2026 23:54:25.768 # === ASSERTION FAILED ===",
      "20594:C 01 Dec 2026 23:54:25.768 # ==> object.c:751 'hashtableSize(ht) != 0' is not true",
      "",
      "------ STACK TRACE ------",
      "",
      "20594 valkey-server *",
      "valkey-rdb-bgsave 127.0.0.1:27043(dismissHashObject+0x178) [0x55793b679328]",
      "valkey-rdb-bgsave 127.0.0.1:27043(rdbSaveDb+0x4ee) [0x55793b68db1e]",
      "valkey-rdb-bgsave 127.0.0.1:27043(+0x16b3cb) [0x55793b68e3cb]",
      "valkey-rdb-bgsave 127.0.0.1:27043(bgsaveCommand+0x313) [0x55793b690ab3]",
      "",
      "1/1 expected stacktraces.",
      "",
      "------ STACK TRACE DONE ------",
  };
  const auto r = CrashReport::parse(log);
  REQUIRE(r.found);
  CHECK(r.signal == 0);
  CHECK(r.assertion == "object.c:751 'hashtableSize(ht) != 0' is not true");
  CHECK(r.kind() == "assertion object.c:751 'hashtableSize(ht) != 0' is not true");
  CHECK(r.fork_child);
  CHECK(r.argv.empty());
  CHECK(r.stack == std::vector<std::string>{"dismissHashObject", "rdbSaveDb", "bgsaveCommand"});
  CHECK_FALSE(CrashReport::parse({"1:M 01 Dec 2026 * Ready to accept connections tcp"}).found);
  CHECK_FALSE(CrashReport::read("/nonexistent/expirykit.log").found);
  // Same crash: same signal or assertion and the same command name.
  auto other = CrashReport::parse({"1:M # valkey 9.1.2 crashed by signal: 11, si_code: 1"});
  CHECK_FALSE(r.same_crash(other));
  CHECK(other.same_crash(other));
}
