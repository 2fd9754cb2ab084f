// expirykit/triage/crash_triage.hpp: from a command sequence that crashed a server to the
// shortest one that crashes a freshly started server, checked with the server's own CLI.
//
//   auto t = triage::triage_crash(server.options(), history, server.log_path());
//   FAIL(t.message());   // "server crashed: SIGSEGV (signal 11) in HRANDFIELD h2 (entryGetExpiry)
//                        //  after 3 commands; replay (verified with valkey-cli: it crashes a
//                        //  fresh valkey 9.1.2): ..."
//
// How:
//  1. The crash to look for is the one the original server logged (triage/crash_report.hpp):
//     its signal or assertion and the command it names. A candidate "crashes" when a fresh server
//     logs the same crash (CrashReport::same_crash); a different crash does not count, so the
//     shrink cannot wander off to another defect.
//  2. Every attempt starts a fresh server (the same binary and options: ServerOptions), sets
//     hide-user-data-from-log no (so the report shows the arguments), sends the candidate's
//     commands one by one as valkey-cli would, and reads the log once the server is gone.
//     A command that sets a TTL is followed by DEBUG SLEEP 0.002 in every candidate and in the
//     replay, so a 1 ms TTL has passed before the next command, as it had in the original run
//     (where each command was a round trip of its own and the model waited on the server clock).
//  3. Shrinking is delta debugging (Zeller's ddmin: drop chunks, then single commands, until no
//     command can go), bounded by Options::max_attempts and Options::max_seconds; the result is
//     the shortest sequence found that still crashes.
//  4. The replay script (one command per line, resp::cli_line quoting) is run with the CLI
//     binary that sits beside the server binary (valkey-cli, redis-cli, redict-cli) against one
//     more fresh server: `verified` says whether that crashed it with the same crash.
// Needs DEBUG (the kit starts its servers with enable-debug-command yes).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/process/server.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/triage/crash_report.hpp>

namespace expirykit::triage {

using resp::Argv;

struct TriageOptions {
  int max_attempts = 400;  ///< fresh servers started while shrinking, at most
  double max_seconds = 90; ///< wall-clock bound on the shrink
};

struct CrashTriage {
  CrashReport original;             ///< what the server that crashed in the check logged
  CrashReport reproduced;           ///< what a fresh server logged for `minimal`
  bool reproducible = false;        ///< the whole original sequence crashed a fresh server too
  std::vector<Argv> minimal;        ///< the shortest crashing sequence found (without the sleeps)
  std::string script;               ///< the replay: CLI lines, sleeps included
  bool verified = false;            ///< the script, run with the CLI binary, crashed a fresh server
  std::string verification;         ///< how it was verified (the CLI command), or why it was not
  int attempts = 0;                 ///< fresh servers started
  double seconds = 0;               ///< time taken
  std::string server;               ///< "valkey 9.1.2 (<binary>)"

  /// The command that crashed the server: the last of `minimal` (every candidate of the shrink
  /// had to log the same crash, naming the same command: CrashReport::same_crash).
  std::string crashing_command() const { return minimal.empty() ? "" : resp::cli_line(minimal.back()); }
  /// The FAIL text: the first line names the crash and the command; then the replay.
  std::string message() const {
    std::string out = "server crashed: " + (reproduced.found ? reproduced : original).headline();
    if (!minimal.empty()) out += "; crashing command: " + crashing_command();
    out += "\n";
    if (!reproducible) {
      out += "the original sequence did not crash a fresh " + server +
             " (the crash needs state or timing the replay lacks); the server's crash report:\n" + original.raw;
      return out;
    }
    out += "shortest crashing sequence: " + std::to_string(minimal.size()) + " command(s), found in " +
           std::to_string(attempts) + " fresh servers (" + std::to_string(static_cast<int>(seconds)) + " s)\n";
    out += "replay (" + std::string(verified ? "verified: " : "NOT verified: ") + verification + "):\n" + script;
    if (!reproduced.stack.empty()) {
      out += "stack:";
      for (const auto& f : reproduced.stack) out += " " + f;
      out += "\n";
    }
    return out;
  }
};

namespace detail {

/// The crash logs triaged in this process (a property triages, then the fixture need not).
inline std::set<std::string>& triaged_logs() {
  static std::set<std::string> s;
  return s;
}

/// Commands after which a TTL may be due within milliseconds: anything that sets one.
inline bool sets_ttl(const Argv& a) {
  if (a.empty()) return false;
  std::string c = a[0];
  for (auto& ch : c) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
  static const std::set<std::string> timed = {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT", "HSETEX",  "HGETEX",
                                              "EXPIRE",  "PEXPIRE",  "EXPIREAT",  "PEXPIREAT",  "SET",     "SETEX",
                                              "PSETEX",  "GETEX",    "RESTORE",   "EVAL",       "EXEC",    "FCALL"};
  return timed.count(c) > 0;
}

/// The lines a candidate sends: each command, and DEBUG SLEEP 0.002 after one that sets a TTL.
inline std::vector<Argv> with_sleeps(const std::vector<Argv>& cmds) {
  std::vector<Argv> out;
  for (const auto& a : cmds) {
    out.push_back(a);
    if (sets_ttl(a)) out.push_back({"DEBUG", "SLEEP", "0.002"});
  }
  return out;
}

/// Waits (at most `bound`) until `s` has exited or its log holds a crash report; returns it.
inline CrashReport wait_for_report(process::Server& s, std::chrono::milliseconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  for (;;) {
    CrashReport r = CrashReport::read(s.log_path());
    const bool running = s.running();
    // A crashing server writes its whole report, then exits; a fork child's assertion leaves
    // the server running (the child hangs): the report is complete once the log stops growing.
    if ((r.found && !running) || std::chrono::steady_clock::now() > until) return r;
    if (r.found && running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return CrashReport::read(s.log_path());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

/// The crashed server's options for a fresh, standalone server: no fixed port, no seed files,
/// and not a replica (a replica that crashed on what its primary sent is triaged with the same
/// commands sent to it directly).
inline process::ServerOptions fresh_options(process::ServerOptions o) {
  o.port = 0;
  o.seed_files.clear();
  o.keep_dir = false;
  std::erase_if(o.config, [](const auto& kv) { return kv.first == "replicaof" || kv.first == "slaveof"; });
  return o;
}

/// Runs `lines` on a fresh server; the crash report it logged (found == false: no crash).
inline CrashReport run_fresh(const process::ServerOptions& opts, const std::vector<Argv>& lines) {
  process::Server s(fresh_options(opts));
  {
    auto c = s.client({std::chrono::milliseconds(2000), std::chrono::milliseconds(10000)});
    c("CONFIG", "SET", "hide-user-data-from-log", "no");  // refused by old servers: harmless
    try {
      for (const auto& a : lines) c.call(a);
    } catch (const resp::ConnectionError&) {
      // the server went away: read its report below
    }
  }
  CrashReport r = wait_for_report(s, std::chrono::milliseconds(s.running() ? 300 : 3000));
  return r;
}

/// The CLI binary beside `server` ("valkey-server" -> "valkey-cli"), or empty.
inline std::filesystem::path cli_beside(const std::filesystem::path& server) {
  std::string name = server.filename().string();
  const auto dash = name.rfind("-server");
  if (dash == std::string::npos) return {};
  const auto cli = server.parent_path() / (name.substr(0, dash) + "-cli");
  std::error_code ec;
  return std::filesystem::exists(cli, ec) ? cli : std::filesystem::path();
}

}  // namespace detail

/// True when triage_crash() already ran for the crash logged in `log` (in this process).
inline bool already_triaged(const std::filesystem::path& log) { return detail::triaged_logs().count(log.string()) > 0; }

/// The replay script of `cmds`: one CLI line per command, DEBUG SLEEP after TTL setters.
inline std::string replay_script(const std::vector<Argv>& cmds) {
  std::string out;
  for (const auto& a : detail::with_sleeps(cmds)) out += resp::cli_line(a) + "\n";
  return out;
}

/// Shrinks `cmds` (what the crashed server was sent, in order; the crash report in `crashed_log`)
/// to the shortest sequence that crashes a fresh server started with `opts`, and verifies its
/// replay with the server's CLI. Never throws for a server that does not crash; throws
/// process::ServerError when no fresh server can be started at all.
inline CrashTriage triage_crash(const process::ServerOptions& opts, const std::vector<Argv>& cmds,
                                const std::filesystem::path& crashed_log, TriageOptions topt = {}) {
  CrashTriage t;
  detail::triaged_logs().insert(crashed_log.string());
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  t.original = CrashReport::read(crashed_log);
  const auto binary = process::find_server_binary(opts.binary);
  const auto v = process::vet_server_binary(binary);
  t.server = v.flavor + " " + v.version + " (" + binary.string() + ")";
  process::ServerOptions o = detail::fresh_options(opts);
  o.binary = binary;

  auto crashes = [&](const std::vector<Argv>& cand, CrashReport* out) {
    ++t.attempts;
    CrashReport r = detail::run_fresh(o, detail::with_sleeps(cand));
    const bool same = t.original.found ? r.same_crash(t.original) : r.found;
    if (same && out) *out = r;
    return same;
  };

  if (!crashes(cmds, &t.reproduced)) {
    t.minimal = cmds;
    t.seconds = elapsed();
    return t;
  }
  t.reproducible = true;
  // The crash happens at the command the report names: nothing after the last command with that
  // name matters.
  std::vector<Argv> cur = cmds;
  const std::string named = t.original.found ? t.original.command() : std::string();
  if (!named.empty()) {
    for (std::size_t i = cur.size(); i-- > 0;) {
      std::string c = cur[i][0];
      for (auto& ch : c) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
      if (c == named || c == "EXEC" || c == "EVAL" || c == "FCALL") {
        std::vector<Argv> cut(cur.begin(), cur.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        if (cut.size() < cur.size() && crashes(cut, &t.reproduced)) cur = std::move(cut);
        break;
      }
    }
  }
  // ddmin: remove chunks of size n/g for g = 2, 4, ... down to single commands.
  std::size_t granularity = 2;
  auto within = [&] { return t.attempts < topt.max_attempts && elapsed() < topt.max_seconds; };
  while (cur.size() >= 2 && within()) {
    const std::size_t chunk = (cur.size() + granularity - 1) / granularity;
    bool removed = false;
    for (std::size_t start = 0; start < cur.size() && within(); start += chunk) {
      std::vector<Argv> cand;
      for (std::size_t i = 0; i < cur.size(); ++i)
        if (i < start || i >= start + chunk) cand.push_back(cur[i]);
      if (!cand.empty() && crashes(cand, &t.reproduced)) {
        cur = std::move(cand);
        granularity = granularity > 2 ? granularity - 1 : 2;
        removed = true;
        break;
      }
    }
    if (!removed) {
      if (chunk <= 1) break;  // 1-minimal: no single command can go
      granularity = std::min(cur.size(), granularity * 2);
    }
  }
  t.minimal = cur;
  t.script = replay_script(cur);
  t.seconds = elapsed();

  // Verify with the CLI: the script on its stdin, against one more fresh server.
  const auto cli = detail::cli_beside(binary);
  if (cli.empty()) {
    CrashReport r;
    t.verified = crashes(cur, &r);
    t.verification = "no CLI beside " + binary.string() + "; re-run with the kit's client on a fresh server: " +
                     (t.verified ? "it crashes" : "it did not crash");
    return t;
  }
  process::Server s(detail::fresh_options(o));
  {
    auto c = s.client();
    c("CONFIG", "SET", "hide-user-data-from-log", "no");
  }
  const auto script_path = s.dir() / "replay.txt";
  std::ofstream(script_path) << t.script;
  const std::string cmd = cli.string() + " -p " + std::to_string(s.port()) + " < " + script_path.string() + " > " +
                          (s.dir() / "replay.out").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  (void)rc;
  const CrashReport r = detail::wait_for_report(s, std::chrono::milliseconds(3000));
  t.verified = t.original.found ? r.same_crash(t.original) : r.found;
  t.verification = cli.filename().string() + " -p PORT < replay.txt against a fresh " + v.flavor + " " + v.version +
                   (t.verified ? ": it crashed the same way (" + r.kind() + " in " + r.command() + ")"
                               : r.found ? ": it crashed differently (" + r.headline() + ")" : ": it did not crash");
  return t;
}

}  // namespace expirykit::triage
