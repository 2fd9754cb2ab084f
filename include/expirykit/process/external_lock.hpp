// expirykit/process/external_lock.hpp: one test process at a time on an external server.
//
//   process::ExternalLock lock("127.0.0.1:6379");   // blocks while another process holds it
//   ...                                               // FLUSHALL, tests
//   // released when `lock` is destroyed or the process ends, however it ends
//
// In external mode (EXPIRYKIT_SERVER_ADDR, EXPIRYKIT_CLUSTER_SEED) every test FLUSHALLs the
// server it is given. `ctest -j` runs each test case as its own process (catch_discover_tests),
// so without this two processes flush and write one server at once, and the twin reports the
// other's writes as server/model mismatches (a new-user trial: `ctest -j2` against a server
// started by hand failed 2 tests in 3 with "HINCRBY ... server 6, model 5"). process::Target and
// catch2::ClusterFixture hold this lock for the life of the test process, so such processes take
// turns: the second prints one line and waits.
//
// The lock is flock(2) on ${TMPDIR:-/tmp}/expirykit-external-<address>.lock (std::filesystem::
// temp_directory_path()): it covers the processes of this machine only; a server shared with
// another machine's tests still needs a scratch instance per job. The kernel drops it when the
// process exits, SIGKILL included, so a killed run never leaves it held.
// Throws ServerError when the lock file cannot be created or locked (naming the file).
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <expirykit/process/errors.hpp>

namespace expirykit::process {

class ExternalLock {
 public:
  /// Takes the lock of `address` ("host:port"), waiting as long as another process of this
  /// machine holds it (one line on stderr says so). Throws ServerError (see the file comment).
  explicit ExternalLock(const std::string& address) : path_(path_for(address)) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("cannot create");
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (errno != EWOULDBLOCK) fail("cannot lock");
    std::fprintf(stderr,
                 "expirykit: another test process is using the external server %s (it FLUSHALLs it before each "
                 "test): waiting for it to finish (processes that share one server take turns; lock %s)\n",
                 address.c_str(), path_.c_str());
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) fail("cannot lock");
  }
  ExternalLock(const ExternalLock&) = delete;
  ExternalLock& operator=(const ExternalLock&) = delete;
  ~ExternalLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }

  /// The lock file of `address`: temp_directory_path()/expirykit-external-<address>.lock, with
  /// every character but letters, digits, '.' and '-' written as '_'.
  static std::string path_for(const std::string& address) {
    std::string name;
    for (char c : address) name += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
    std::error_code ec;
    auto dir = std::filesystem::temp_directory_path(ec);
    if (ec) dir = "/tmp";
    return (dir / ("expirykit-external-" + name + ".lock")).string();
  }

 private:
  [[noreturn]] void fail(const char* what) {
    const std::string msg = std::string("external mode: ") + what + " the lock file " + path_ + " (" +
                            std::strerror(errno) +
                            "); it keeps test processes that share one external server from flushing each other: "
                            "set TMPDIR to a writable folder";
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw ServerError(msg);
  }

  std::string path_;
  int fd_ = -1;
};

}  // namespace expirykit::process
