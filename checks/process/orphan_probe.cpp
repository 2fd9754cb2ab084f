// Starts a server, prints "<server pid> <port>" and then ends the way argv[1] says:
//   hang   wait to be killed (SIGKILL, SIGTERM or SIGINT from the test)
//   throw  an uncaught exception (std::terminate -> abort)
//   exit   std::exit(3) with the server held in a static object
//   return return from main normally
// checks/process/no_leak_test.cpp asserts that no server outlives it in any of these cases.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include <expirykit/process/server.hpp>

static std::unique_ptr<expirykit::process::Server> held;

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "hang";
  held = std::make_unique<expirykit::process::Server>();
  std::printf("%d %d\n", static_cast<int>(held->pid()), held->port());
  std::fflush(stdout);
  if (mode == "throw") throw std::runtime_error("orphan_probe: uncaught on purpose");
  if (mode == "exit") std::exit(3);
  if (mode == "return") return 0;
  for (;;) ::pause();
}
