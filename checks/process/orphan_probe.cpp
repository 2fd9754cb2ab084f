// Starts a server, prints "<server pid> <port>" and then ends the way argv[1] says:
//   hang   wait to be killed (SIGKILL, SIGTERM or SIGINT from the test)
//   throw  an uncaught exception (std::terminate -> abort)
//   exit   std::exit(3) with the server held in a static object
//   return return from main normally
//   replicaset  start a process::ReplicaSet (primary + 2 replicas) instead, print one line per
//               node (primary first), then wait to be killed
//   cluster     start a process::Cluster (3 primaries x 1 replica) instead, print one line per
//               node, then wait to be killed
// checks/process/no_leak_test.cpp asserts that no server outlives it in any of these cases.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <expirykit/process/cluster.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>

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
  std::printf("%d %d\n", static_cast<int>(held->pid()), held->port());
  std::fflush(stdout);
  if (mode == "throw") throw std::runtime_error("orphan_probe: uncaught on purpose");
  if (mode == "exit") std::exit(3);
  if (mode == "return") return 0;
  for (;;) ::pause();
}
