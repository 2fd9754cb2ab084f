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
/// Starts orphan_probe in `mode` (it prints one line per server it started), checks all `n`
/// answer, SIGKILLs the probe, and checks that every server died and its dirs get swept.
void all_die_with_probe(const char* mode, std::size_t n) {
  bp::ipstream out;
  bp::child probe(EXPIRYKIT_ORPHAN_PROBE, mode, bp::std_out > out, bp::std_err > bp::null);
  const pid_t probe_pid = probe.id();
  std::vector<Started> nodes;
  for (std::size_t i = 0; i < n; ++i) nodes.push_back(read_probe_line(out));
  REQUIRE(ekcheck::servers_of(probe_pid).size() == n);
  for (const auto& node : nodes) {
    REQUIRE(ekcheck::alive(node.server));
    REQUIRE(port_answers(node.port));
  }
  ::kill(probe_pid, SIGKILL);
  probe.wait();
  for (const auto& node : nodes) {
    INFO("server pid " << node.server << " port " << node.port);
    CHECK(ekcheck::eventually([&] { return !ekcheck::alive(node.server); }));
    CHECK_FALSE(port_answers(node.port));
  }
  CHECK(ekcheck::eventually([&] { return ekcheck::servers_of(probe_pid).empty(); }));  // the reaper\'s rm -rf names the dir too
  expirykit::process::TempDir::sweep_stale("/tmp");
  CHECK(ekcheck::eventually([&] { return ekcheck::dirs_of(probe_pid).empty(); }));
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
  CHECK(ekcheck::eventually([&] { return ekcheck::servers_of(probe_pid).empty(); }));  // the reaper\'s rm -rf names the dir too
  CHECK_FALSE(port_answers(s.port));
  // Directories of a parent that could not clean up are swept by the next one created.
  expirykit::process::TempDir::sweep_stale("/tmp");
  CHECK(ekcheck::eventually([&] { return ekcheck::dirs_of(probe_pid).empty(); }));
}

TEST_CASE("A ReplicaSet's primary and replicas all die with a SIGKILLed parent", "[process][leak][replica]") {
  all_die_with_probe("replicaset", 3);  // primary, replica 0, replica 1
}

TEST_CASE("A Cluster's 6 nodes all die with a SIGKILLed parent", "[process][leak][cluster]") {
  all_die_with_probe("cluster", 6);  // 3 primaries, 3 replicas
}

TEST_CASE("SIGKILL of suite_cluster in the middle of a property leaves no node behind", "[process][leak][cluster]") {
  if (std::string(EXPIRYKIT_SUITE_CLUSTER).empty()) SKIP("built without suites (EXPIRYKIT_BUILD_SUITES=OFF)");
  bp::child suite(EXPIRYKIT_SUITE_CLUSTER, "Cluster: random sequences*", bp::std_out > bp::null, bp::std_err > bp::null);
  const pid_t pid = suite.id();
  // The shared cluster has 6 nodes; kill once all are up and the property runs.
  REQUIRE(ekcheck::eventually([&] { return ekcheck::servers_of(pid).size() == 6; }, std::chrono::seconds(60)));
  const auto servers = ekcheck::servers_of(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  ::kill(pid, SIGKILL);
  suite.wait();
  for (pid_t p : servers) CHECK(ekcheck::eventually([&] { return !ekcheck::alive(p); }));
  CHECK(ekcheck::eventually([&] { return ekcheck::servers_of(pid).empty(); }));  // the reaper\'s rm -rf names the dir too
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
  CHECK(ekcheck::eventually([&] { return ekcheck::servers_of(pid).empty(); }));  // the reaper\'s rm -rf names the dir too
}

// What the server forked dies with the test process too: the BGSAVE child, running or hung
// (stopped), and the server's directory is removed, with no later run sweeping it
// (process/detail/reaper.hpp).
TEST_CASE("A server's fork child, running or hung, dies with a SIGKILLed parent; its dir goes", "[process][leak]") {
  const std::string mode = GENERATE(as<std::string>{}, "bgsave", "bgsave-hung");
  INFO("fork child: " << mode);
  bp::ipstream out;
  bp::child probe(EXPIRYKIT_ORPHAN_PROBE, mode, bp::std_out > out, bp::std_err > bp::null);
  const pid_t probe_pid = probe.id();
  std::string line;
  REQUIRE(std::getline(out, line));
  int server = -1, port = 0, child = -1;
  REQUIRE(std::sscanf(line.c_str(), "%d %d %d", &server, &port, &child) == 3);
  REQUIRE(ekcheck::alive(child));
  const auto group = ekcheck::group_members(server);
  REQUIRE(group.size() == 2);  // the server and its BGSAVE child
  REQUIRE(ekcheck::dirs_of(probe_pid).size() == 1);
  ::kill(probe_pid, SIGKILL);
  probe.wait();
  CHECK(ekcheck::eventually([&] { return ekcheck::group_members(server).empty(); }));
  CHECK_FALSE(ekcheck::alive(child));
  CHECK_FALSE(port_answers(port));
  CHECK(ekcheck::eventually([&] { return ekcheck::dirs_of(probe_pid).empty(); }));  // no sweep_stale() here
}
