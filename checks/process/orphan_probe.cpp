// Starts a server, prints "<server pid> <port>" and then ends the way argv[1] says:
//   hang   wait to be killed (SIGKILL, SIGTERM or SIGINT from the test)
//   throw  an uncaught exception (std::terminate -> abort)
//   exit   std::exit(3) with the server held in a static object
//   return return from main normally
//   replicaset  start a process::ReplicaSet (primary + 2 replicas) instead, print one line per
//               node (primary first), then wait to be killed
//   cluster     start a process::Cluster (3 primaries x 1 replica) instead, print one line per
//               node, then wait to be killed
//   bgsave      start a BGSAVE that runs for minutes (rdb-key-save-delay), print
//               "<server pid> <port> <fork child pid>", then wait to be killed
//   bgsave-hung the same, with the fork child stopped (SIGSTOP): a child that never exits
// checks/process/no_leak_test.cpp asserts that no server outlives it in any of these cases.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <expirykit/process/cluster.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>

#include "proc_util.hpp"

using ekcheck::group_members;

static std::unique_ptr<expirykit::process::Server> held;
static std::unique_ptr<expirykit::process::ReplicaSet> held_set;
static std::unique_ptr<expirykit::process::Cluster> held_cluster;

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "hang";
  if (mode == "replicaset") {
    expirykit::process::ReplicaSet::Options o;
    o.replicas = 2;
    held_set = std::make_unique<expirykit::process::ReplicaSet>(o);
    std::printf("%d %d\n", static_cast<int>(held_set->primary().pid()), held_set->primary().port());
    for (std::size_t i = 0; i < held_set->replica_count(); ++i)
      std::printf("%d %d\n", static_cast<int>(held_set->replica(i).pid()), held_set->replica(i).port());
    std::fflush(stdout);
    for (;;) ::pause();
  }
  if (mode == "cluster") {
    held_cluster = std::make_unique<expirykit::process::Cluster>(expirykit::process::ClusterOptions{.primaries = 3, .replicas = 1});
    for (auto* n : held_cluster->nodes()) std::printf("%d %d\n", static_cast<int>(n->pid()), n->port());
    std::fflush(stdout);
    for (;;) ::pause();
  }
  held = std::make_unique<expirykit::process::Server>();
  if (mode == "bgsave" || mode == "bgsave-hung") {
    auto c = held->client();
    for (int i = 0; i < 100; ++i) c("SET", "k" + std::to_string(i), "v");
    c("CONFIG", "SET", "rdb-key-save-delay", "1000000");  // 1 s per key: the child runs 100 s
    c("BGSAVE");
    pid_t child = -1;
    for (int i = 0; i < 500 && child < 0; ++i) {
      for (pid_t p : group_members(held->pid()))
        if (p != held->pid()) child = p;
      if (child < 0) ::usleep(10000);
    }
    if (child < 0) {
      std::fprintf(stderr, "orphan_probe: no BGSAVE child appeared\n");
      return 2;
    }
    if (mode == "bgsave-hung") ::kill(child, SIGSTOP);
    std::printf("%d %d %d\n", static_cast<int>(held->pid()), held->port(), static_cast<int>(child));
    std::fflush(stdout);
    for (;;) ::pause();
  }
  std::printf("%d %d\n", static_cast<int>(held->pid()), held->port());
  std::fflush(stdout);
  if (mode == "throw") throw std::runtime_error("orphan_probe: uncaught on purpose");
  if (mode == "exit") std::exit(3);
  if (mode == "return") return 0;
  for (;;) ::pause();
}
