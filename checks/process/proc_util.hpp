// Helpers for the process checks: find server processes by the temp dir on their command line.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace ekcheck {

/// The whole of a /proc file, "" when it cannot be read: a process that exits while it is read
/// makes libstdc++'s filebuf throw ("basic_filebuf::underflow error reading the file: No such
/// process", seen once in a fresh .ci/run).
inline std::string read_proc_file(const std::filesystem::path& p) {
  try {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return {};
  }
}

/// PIDs of live (non-zombie) processes whose command line contains `needle`.
inline std::vector<pid_t> processes_with_arg(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string all = read_proc_file(e.path() / "cmdline");
    if (all.find(needle) == std::string::npos) continue;
    std::ifstream st(e.path() / "stat");
    std::string stat;
    std::getline(st, stat);
    auto rp = stat.rfind(')');
    if (rp != std::string::npos && rp + 2 < stat.size() && stat[rp + 2] == 'Z') continue;  // zombie: dead
    pid_t p = static_cast<pid_t>(std::stol(name));
    if (p != ::getpid()) out.push_back(p);
  }
  return out;
}

/// True if a live process `pid` exists (zombies count as dead).
inline bool alive(pid_t pid) {
  std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(st, stat)) return false;
  auto rp = stat.rfind(')');
  return !(rp != std::string::npos && rp + 2 < stat.size() && stat[rp + 2] == 'Z');
}

/// Polls `pred` every 10 ms until it holds or `timeout` passes; returns whether it held.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

/// PIDs of live (non-zombie) processes whose working directory path contains `needle`.
inline std::vector<pid_t> processes_in_dir(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    // A deleted directory still reads as "<path> (deleted)".
    const auto cwd = std::filesystem::read_symlink(e.path() / "cwd", ec);
    if (ec || cwd.string().find(needle) == std::string::npos) continue;
    pid_t p = static_cast<pid_t>(std::stol(name));
    if (p != ::getpid() && alive(p)) out.push_back(p);
  }
  return out;
}

/// Server processes whose temp dir belongs to `owner` (dirs are named expirykit-<owner>-XXXXXX):
/// by command line (a server still starting) or by working directory. Valkey and Redis rewrite
/// their command line once running (proc-title-template, default "{title} {listen-addr}
/// {server-mode}", valkey.conf), so `--dir` is no longer visible there; but they chdir into
/// `dir`, so /proc/<pid>/cwd names it.
inline std::vector<pid_t> servers_of(pid_t owner) {
  const std::string needle = "/expirykit-" + std::to_string(owner) + "-";
  auto out = processes_with_arg(needle);
  for (pid_t p : processes_in_dir(needle))
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

/// Live (non-zombie) processes in the process group `pgid` (field 5 of /proc/<pid>/stat).
inline std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream st(e.path() / "stat");
    std::string stat;
    if (!std::getline(st, stat)) continue;
    const auto rp = stat.rfind(')');
    if (rp == std::string::npos || rp + 2 >= stat.size() || stat[rp + 2] == 'Z') continue;
    // After ")": state ppid pgrp ...
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (std::sscanf(stat.c_str() + rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

/// Temp dirs of `owner` under `root`.
inline std::vector<std::filesystem::path> dirs_of(pid_t owner, const std::filesystem::path& root = "/tmp") {
  std::vector<std::filesystem::path> out;
  std::string prefix = "expirykit-" + std::to_string(owner) + "-";
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

}  // namespace ekcheck
