// process::ExternalLock (process/external_lock.hpp): a second holder waits until the first lets
// go, and a process that dies holding it (SIGKILL) leaves it free. flock(2) locks belong to the
// open file, so two ExternalLocks of one process exclude each other as two processes' do.
#include <catch2/catch_test_macros.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include <expirykit/process/external_lock.hpp>

#include "../common/proc_locks.hpp"

using expirykit::process::ExternalLock;

namespace {
/// A unique address per run, so that parallel test runs never share a lock file.
std::string test_address() { return "127.0.0.1:lock-test-" + std::to_string(::getpid()); }
/// True when nothing holds the lock of `address` now (a non-blocking flock of its file).
bool free_now(const std::string& address) {
  const int fd = ::open(ExternalLock::path_for(address).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  REQUIRE(fd >= 0);
  const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return got;
}
}  // namespace

TEST_CASE("ExternalLock: the file name, and a second holder waits until the first releases it", "[process]") {
  const std::string a = test_address();
  const std::string path = ExternalLock::path_for(a);
  CHECK(path.find("expirykit-external-127.0.0.1_lock-test-") != std::string::npos);
  CHECK(path.size() > 5);
  CHECK(path.substr(path.size() - 5) == ".lock");
  CHECK(free_now(a));
  std::optional<ExternalLock> first(std::in_place, a);
  CHECK_FALSE(free_now(a));
  std::atomic<bool> second_has_it{false};
  std::thread t([&] {
    ExternalLock second(a);  // waits: `first` holds it
    second_has_it = true;
  });
  // Release it once `second` waits (a fixed 300 ms could pass before the thread reached flock()).
  CHECK(ekcheck::wait_for_waiter(path));
  CHECK_FALSE(second_has_it);  // never while `first` holds it, however slow the machine
  first.reset();
  for (int i = 0; i < 1000 && !second_has_it; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  t.join();
  CHECK(second_has_it);
  CHECK(free_now(a));  // `second` released it when it went out of scope
  ::unlink(path.c_str());
}

TEST_CASE("ExternalLock: a process SIGKILLed while it holds the lock leaves it free", "[process]") {
  const std::string a = test_address() + "-kill";
  const std::string path = ExternalLock::path_for(a);  // before fork: the child calls no allocator
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the lock as ExternalLock takes it, with async-signal-safe calls only
    ::close(ready[0]);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    const char b = 1;
    [[maybe_unused]] auto n = ::write(ready[1], &b, 1);
    for (;;) ::pause();  // until SIGKILL
  }
  ::close(ready[1]);
  char b = 0;
  REQUIRE(::read(ready[0], &b, 1) == 1);
  ::close(ready[0]);
  CHECK_FALSE(free_now(a));  // the child holds it
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(free_now(a));
  ::unlink(path.c_str());
}
