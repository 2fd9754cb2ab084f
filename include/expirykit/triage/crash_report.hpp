// expirykit/triage/crash_report.hpp: what a Valkey or Redis server wrote to its log when it
// crashed, as data.
//
//   auto r = triage::CrashReport::read(server.log_path());
//   if (r.found) std::cout << r.headline();   // "SIGSEGV (signal 11) in HRANDFIELD h2 (entryGetExpiry)"
//
// The servers write one crash report to their log file (Valkey src/debug.c, Redis src/debug.c):
//   - "<server> <version> crashed by signal: 11, si_code: 1" for a signal, or
//     "=== ASSERTION FAILED ===" then "==> <file>:<line> '<expression>' is not true" for an
//     assertion (serverAssert), also in a fork child (BGSAVE), which logs to the same file;
//   - "------ STACK TRACE ------": "EIP:" and the crashing frame, then each thread's frames
//     "<binary> <addr>(<function>+0x..) [0x..]";
//   - "------ CURRENT CLIENT INFO ------": "argc: N" and "argv[i]: "<arg>"" of the command that
//     ran; with hide-user-data-from-log yes (the default) only argv[0] is shown and the other
//     arguments read "<n> bytes" (checked on Valkey 9.1.2: crashed by signal 11 with
//     argv[1]: 2 bytes; triage/crash_triage.hpp turns the setting off on the servers it starts).
// A second, "reduced" report may follow when the signal handler itself crashes: the first
// report wins.
#pragma once

#include <signal.h>
#include <string.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace expirykit::triage {

struct CrashReport {
  bool found = false;       ///< the log holds a crash report
  int signal = 0;           ///< the signal number ("crashed by signal: N"); 0 for an assertion
  std::string assertion;    ///< "object.c:751 'hashtableSize(ht) != 0' is not true"; "" for a signal
  bool fork_child = false;  ///< the report came from a forked child (the ASSERTION in BGSAVE, say)
  std::vector<std::string> argv;   ///< the executing client's command as logged ("<n> bytes" when redacted)
  std::vector<std::string> stack;  ///< function names of the crashing frame and its thread, innermost first
  std::string raw;          ///< the report's lines (at most 60), for the failure message

  /// "SIGSEGV (signal 11)" or "assertion object.c:751 '...' is not true".
  std::string kind() const {
    if (signal) {
      const char* n = ::sigabbrev_np(signal);
      return std::string(n ? std::string("SIG") + n : "signal") + " (signal " + std::to_string(signal) + ")";
    }
    return assertion.empty() ? std::string("a crash") : "assertion " + assertion;
  }
  /// The command's name as logged, upper-case ("" when none was logged).
  std::string command() const {
    if (argv.empty()) return "";
    std::string c = argv[0];
    for (auto& ch : c) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
    return c;
  }
  /// One line: the kind, the command as logged and the innermost function.
  std::string headline() const {
    std::string out = kind();
    if (!argv.empty()) {
      out += " in";
      for (const auto& a : argv) out += " " + a;
    }
    if (fork_child) out += " (in a fork child)";
    if (!stack.empty()) out += " (" + stack.front() + ")";
    return out;
  }
  /// Two reports describe the same crash: same signal or assertion, same command name.
  bool same_crash(const CrashReport& o) const {
    return found && o.found && signal == o.signal && assertion == o.assertion && command() == o.command();
  }

  /// Parses a server log. Never throws: an unreadable log gives found == false.
  static CrashReport read(const std::filesystem::path& log) {
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return parse(lines);
  }
  static CrashReport parse(const std::vector<std::string>& lines) {
    CrashReport r;
    std::size_t start = lines.size();
    for (std::size_t i = 0; i < lines.size() && start == lines.size(); ++i) {
      const auto& l = lines[i];
      if (const auto p = l.find("crashed by signal: "); p != std::string::npos) {
        r.signal = std::atoi(l.c_str() + p + 19);
        start = i;
      } else if (l.find("=== ASSERTION FAILED ===") != std::string::npos) {
        start = i;
        for (std::size_t j = i + 1; j < lines.size() && j < i + 5; ++j)
          if (const auto q = lines[j].find("==> "); q != std::string::npos) {
            r.assertion = lines[j].substr(q + 4);
            break;
          }
        // A fork child logs with role "C" (pid:C date ...; src/server.c serverLogRaw).
        r.fork_child = l.find(":C ") != std::string::npos;
      }
    }
    if (start == lines.size()) return r;
    r.found = true;
    bool in_stack = false, in_client = false, eip = false, starred = false, have_starred = false;
    std::vector<std::string> eip_frames;
    auto function_of = [](const std::string& l) {
      const auto open = l.find('('), plus = l.find('+', open == std::string::npos ? 0 : open);
      return open != std::string::npos && plus != std::string::npos && plus > open + 1 ? l.substr(open + 1, plus - open - 1)
                                                                                      : std::string();
    };
    for (std::size_t i = start; i < lines.size(); ++i) {
      const auto& l = lines[i];
      if (i < start + 60) r.raw += l + "\n";
      if (i > start && (l.find("crashed by signal: ") != std::string::npos || l.find("Crashed running signal handler") != std::string::npos))
        break;  // a second (recursive, reduced) report
      if (l.find("------ STACK TRACE ------") != std::string::npos) {
        in_stack = true;
        continue;
      }
      if (l.find("------ STACK TRACE DONE ------") != std::string::npos) in_stack = false;
      if (in_stack) {
        // "EIP:" then the crashing frame; then one block per thread, "<tid> <name>" and its
        // frames, the crashing thread's name ending in " *" (Valkey 9.1.2).
        if (l == "EIP:") {
          eip = true;
          continue;
        }
        if (l.empty()) {
          eip = false;
          starred = false;
          continue;
        }
        if (!l.empty() && l[0] >= '0' && l[0] <= '9' && l.find('(') == std::string::npos) {
          starred = l.size() > 2 && l.compare(l.size() - 2, 2, " *") == 0;
          have_starred = have_starred || starred;
          continue;
        }
        const std::string f = function_of(l);
        if (f.empty()) continue;
        if (eip) eip_frames.push_back(f);
        if (starred && r.stack.size() < 12) r.stack.push_back(f);
        continue;
      }
      if (l.find("------ CURRENT CLIENT INFO ------") != std::string::npos) {
        in_client = true;
        continue;
      }
      if (in_client) {
        if (l.rfind("------", 0) == 0) {
          in_client = false;
          continue;
        }
        if (l.rfind("argv[", 0) == 0) {
          const auto colon = l.find("]: ");
          if (colon == std::string::npos) continue;
          std::string v = l.substr(colon + 3);
          // Valkey writes argv[i]: "x", Redis 8.6 argv[i]: '"x"' (live).
          if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') v = v.substr(1, v.size() - 2);
          if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
          r.argv.push_back(v);
        }
      }
    }
    if (!have_starred) r.stack = eip_frames;
    return r;
  }
};

}  // namespace expirykit::triage
