// Whether a flock() request waits for a lock this process holds, read from /proc/locks: tests
// of process/external_lock.hpp release the lock once the other side waits, instead of after a
// fixed sleep that a loaded machine outlasts (checks/catch2/integration_test.cpp,
// checks/process/external_lock_test.cpp).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace ekcheck {

/// Whether another process, or another thread of this one, waits in flock() for the lock this
/// process holds on the file at `path`. /proc/locks (proc_locks(5)) lists a held lock as
/// "N: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF" and each request blocked on it
/// under the same N as "N: -> FLOCK ..."; matching the holder by our pid and the inode keeps
/// another filesystem's file with the same inode number out.
inline bool someone_waits_for(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  const std::string inode = ":" + std::to_string(st.st_ino) + " ", pid = " " + std::to_string(::getpid()) + " ";
  std::ifstream locks("/proc/locks");
  std::string held;  // "N:" of our lock
  for (std::string l; std::getline(locks, l);) {
    if (l.find(inode) == std::string::npos) continue;
    const std::string n = l.substr(0, l.find(':') + 1);
    if (l.find("-> FLOCK") == std::string::npos && l.find(" FLOCK ") != std::string::npos && l.find(pid) != std::string::npos)
      held = n;
    else if (!held.empty() && n == held && l.find("-> FLOCK") != std::string::npos)
      return true;
  }
  return false;
}

/// Polls someone_waits_for(`path`) every 20 ms until it holds, `stop()` holds (the other side
/// ended without waiting) or `timeout` passes; then returns someone_waits_for(`path`).
inline bool wait_for_waiter(const std::string& path, const std::function<bool()>& stop = {},
                            std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (!someone_waits_for(path) && !(stop && stop()) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return someone_waits_for(path);
}

}  // namespace ekcheck
