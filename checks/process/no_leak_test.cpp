// No server process outlives the process that started it, however that process ends.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <string>

#include <signal.h>
#include <sys/wait.h>

#include <boost/process.hpp>

#include <expirykit/process/temp_dir.hpp>
#include <expirykit/resp/client.hpp>

#include "proc_util.hpp"

namespace bp = boost::process;

namespace {
struct Started {
  pid_t server = -1;
  int port = 0;
};
Started read_probe_line(bp::ipstream& out) {
  Started s;
  std::string line;
  REQUIRE(std::getline(out, line));
  REQUIRE(std::sscanf(line.c_str(), "%d %d", &s.server, &s.port) == 2);
  return s;
}
bool port_answers(int port) {
  try {
    expirykit::resp::Client c("127.0.0.1", port, {std::chrono::milliseconds(500), std::chrono::milliseconds(500)});
    return c("PING").is_status();
  } catch (const expirykit::resp::ConnectionError&) {
    return false;
  }
}
}  // namespace

TEST_CASE("The server dies with its parent: SIGKILL, SIGTERM, SIGINT, uncaught exception, exit, return",
          "[process][leak]") {
  const std::string mode = GENERATE(as<std::string>{}, "SIGKILL", "SIGTERM", "SIGINT", "throw", "exit", "return");
  INFO("parent ends by: " << mode);
  bp::ipstream out;
  const bool by_signal = mode.rfind("SIG", 0) == 0;
  bp::child probe(EXPIRYKIT_ORPHAN_PROBE, by_signal ? "hang" : mode, bp::std_out > out, bp::std_err > bp::null);
  const pid_t probe_pid = probe.id();
  auto s = read_probe_line(out);
  if (by_signal) {  // the other modes end on their own, possibly before we could look
    REQUIRE(ekcheck::alive(s.server));
    REQUIRE(port_answers(s.port));
  }
  if (by_signal) ::kill(probe_pid, mode == "SIGKILL" ? SIGKILL : mode == "SIGTERM" ? SIGTERM : SIGINT);
  probe.wait();
  CHECK(ekcheck::eventually([&] { return !ekcheck::alive(s.server); }));
  CHECK(ekcheck::servers_of(probe_pid).empty());
  CHECK_FALSE(port_answers(s.port));
  // Directories of a parent that could not clean up are swept by the next one created.
  expirykit::process::TempDir::sweep_stale("/tmp");
  CHECK(ekcheck::dirs_of(probe_pid).empty());
}

TEST_CASE("A ReplicaSet's primary and replicas all die with a SIGKILLed parent", "[process][leak][replica]") {
  bp::ipstream out;
  bp::child probe(EXPIRYKIT_ORPHAN_PROBE, "replicaset", bp::std_out > out, bp::std_err > bp::null);
  const pid_t probe_pid = probe.id();
  std::vector<Started> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(read_probe_line(out));  // primary, replica 0, replica 1
  REQUIRE(ekcheck::servers_of(probe_pid).size() == 3);
  for (const auto& n : nodes) {
    REQUIRE(ekcheck::alive(n.server));
    REQUIRE(port_answers(n.port));
  }
  ::kill(probe_pid, SIGKILL);
  probe.wait();
  for (const auto& n : nodes) {
    INFO("server pid " << n.server << " port " << n.port);
    CHECK(ekcheck::eventually([&] { return !ekcheck::alive(n.server); }));
    CHECK_FALSE(port_answers(n.port));
  }
  CHECK(ekcheck::servers_of(probe_pid).empty());
  expirykit::process::TempDir::sweep_stale("/tmp");
  CHECK(ekcheck::dirs_of(probe_pid).empty());
}

TEST_CASE("SIGKILL of a test binary in the middle of a suite leaves no server behind", "[process][leak]") {
  // suite_semantics' on-schedule expiry case keeps its server busy for about 2 s.
  if (std::string(EXPIRYKIT_SUITE_SEMANTICS).empty()) SKIP("built without suites (EXPIRYKIT_BUILD_SUITES=OFF)");
  bp::child suite(EXPIRYKIT_SUITE_SEMANTICS, "On-schedule expiry*", bp::std_out > bp::null, bp::std_err > bp::null);
  const pid_t pid = suite.id();
  REQUIRE(ekcheck::eventually([&] { return !ekcheck::servers_of(pid).empty(); }, std::chrono::seconds(10)));
  const auto servers = ekcheck::servers_of(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGKILL);
  suite.wait();
  for (pid_t p : servers) CHECK(ekcheck::eventually([&] { return !ekcheck::alive(p); }));
  CHECK(ekcheck::servers_of(pid).empty());
}
