// expirykit/process/detail/reaper.hpp: a watcher process per server that ends the server's whole
// process group, and removes its directory, when the test process dies.
//
// Why: the server itself gets SIGKILL when its parent dies (PR_SET_PDEATHSIG, process/server.hpp),
// but a process the server forked (the BGSAVE child, an AOF rewrite, a diskless replication
// child, a crash-report child that hangs) does not inherit that, and ~Server, which kills the
// group, never runs when the test binary is SIGKILLed (a CI timeout, the OOM killer). Such a child
// keeps a copy of the server's memory and lives on, reparented to init.
//
// How: Reaper forks a small child of the test process that does nothing but read a pipe. The
// test process holds the only write end (O_CLOEXEC, so no exec'd program inherits it; the reaper
// closes every other descriptor it inherited at once). Each message names the server's current
// process group and whether its directory is kept. When the test process dies, however it dies,
// the kernel closes the write end; the reaper reads end-of-file, sends SIGKILL to the group,
// waits until the group is gone (at most 2 s) and then runs `rm -rf` on the directory (unless kept).
// ~Reaper (a normal end) tells it to exit quietly and reaps it. The reaper runs in its own
// session, so a signal to the test's process group (Ctrl-C, a runner killing the group) does not
// take it down before it has done its work; it calls only async-signal-safe functions after the
// fork (read, kill, nanosleep, close, execv, _exit), as a fork of a threaded process must.
// Its name in ps is "expirykit-reap".
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <expirykit/process/errors.hpp>

namespace expirykit::process::detail {

class Reaper {
 public:
  /// Forks the watcher. `dir` is removed (rm -rf) after the group is gone, unless a message says
  /// it is kept. Throws ServerError when pipe() or fork() fails.
  explicit Reaper(const std::string& dir) : dir_(dir) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw ServerError(std::string("cannot create the reaper's pipe: ") + std::strerror(errno));
    // Everything the child needs is prepared before the fork (no allocation after it).
    char* const argv[] = {const_cast<char*>("rm"), const_cast<char*>("-rf"), const_cast<char*>("--"), dir_.data(), nullptr};
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      throw ServerError(std::string("cannot fork the server's reaper: ") + std::strerror(e));
    }
    if (pid == 0) watch(fds[0], argv);  // never returns
    ::close(fds[0]);
    pid_ = pid;
    fd_ = fds[1];
  }
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;
  /// A normal end: the reaper exits without touching anything; reaped here.
  ~Reaper() {
    send(Message{kQuit, 0});
    ::close(fd_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }

  /// The group to kill if the test process dies (0: none running now); `keep_dir`: leave the
  /// directory in place.
  void watch_group(pid_t pgid, bool keep_dir) { send(Message{static_cast<std::int32_t>(pgid), keep_dir ? 1 : 0}); }
  /// The reaper's pid (for tests).
  pid_t pid() const { return pid_; }

 private:
  static constexpr std::int32_t kQuit = -1;
  struct Message {
    std::int32_t pgid;  // > 0: the server's group; 0: none; kQuit: exit quietly
    std::int32_t keep;  // 1: keep the directory
  };

  void send(Message m) {
    const char* p = reinterpret_cast<const char*>(&m);
    std::size_t left = sizeof m;  // below PIPE_BUF: one write is atomic
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the reaper is gone; nothing more to tell it
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  [[noreturn]] static void watch(int in, char* const argv[]) {
    ::setsid();
    ::prctl(PR_SET_NAME, "expirykit-reap", 0, 0, 0);
    // Keep only the pipe's read end: inherited client sockets would keep connections open.
    if (::syscall(SYS_close_range, static_cast<unsigned>(in + 1), ~0u, 0u) != 0) {
      // A kernel before 5.9 (no close_range): close them one by one up to the limit.
      rlimit lim{};
      const long max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < 1048576
                           ? static_cast<long>(lim.rlim_cur) : 65536;
      for (long fd = in + 1; fd < max; ++fd) ::close(static_cast<int>(fd));
    }
    for (int fd = 0; fd < in; ++fd) ::close(fd);
    Message m{0, 0};
    for (;;) {
      Message next;
      char* p = reinterpret_cast<char*>(&next);
      std::size_t got = 0;
      while (got < sizeof next) {
        const ssize_t n = ::read(in, p + got, sizeof next - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      if (got < sizeof next) break;  // end of file: the test process is gone
      if (next.pgid == kQuit) ::_exit(0);
      m = next;
    }
    if (m.pgid > 0) {
      ::kill(-m.pgid, SIGKILL);
      for (int i = 0; i < 400 && ::kill(-m.pgid, 0) == 0; ++i) {
        timespec ts{0, 5'000'000};
        ::nanosleep(&ts, nullptr);
      }
    }
    if (!m.keep) ::execv("/bin/rm", argv);
    ::_exit(0);
  }

  std::string dir_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace expirykit::process::detail
