// bench_spawn: how long process::Server takes from construction to a server that answers PING,
// next to a bare `<flavor>-server` started with posix_spawn and polled with `<flavor>-cli ping`
// (the way a shell script would), in the same run, alternating, median of N.
//
// usage: bench_spawn [--runs N] [--server NAME|PATH]   (default 20 runs, the provisioned default)
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <expirykit/process/server.hpp>

extern char** environ;

namespace ekb::bench_spawn {
using clk = std::chrono::steady_clock;
namespace fs = std::filesystem;

static pid_t spawn(const std::vector<std::string>& argv, bool quiet) {
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

static bool cli_ping(const std::string& cli, int port) {
  // valkey-cli exits 0 even when the server is down (it prints an error); read its output.
  std::string cmd = cli + " -p " + std::to_string(port) + " ping 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[64] = {};
  bool pong = p && std::fgets(buf, sizeof buf, p) && std::strncmp(buf, "PONG", 4) == 0;
  if (p) ::pclose(p);
  return pong;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/// The program bench_spawn (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  int runs = 20;
  fs::path binary;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs = std::stoi(argv[++i]);
    else if (a == "--server" && i + 1 < argc) {
      std::string s = argv[++i];
      binary = s.find('/') == std::string::npos ? expirykit::process::provisioned_server(s) : fs::path(s);
    } else {
      std::printf("usage: bench_spawn [--runs N] [--server NAME|PATH]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (binary.empty()) binary = expirykit::process::find_server_binary();
  auto ver = expirykit::process::vet_server_binary(binary);
  std::string cli = (binary.parent_path() / (ver.flavor + "-cli")).string();
  std::vector<double> kit, bare;
  for (int r = 0; r < runs; ++r) {
    {
      auto t0 = clk::now();
      expirykit::process::ServerOptions o;
      o.binary = binary;
      expirykit::process::Server s(o);
      kit.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
    }
    {
      char dir[] = "/tmp/ekbench-XXXXXX";
      if (!::mkdtemp(dir)) return 1;
      // A free port below the ephemeral range, as process::Server picks one (a fixed port may be
      // taken by another test's server or an outgoing connection: the bare server then exits).
      int port = 0;
      do port = expirykit::process::detail::random_port();
      while (!expirykit::process::detail::port_bindable(port));
      auto t0 = clk::now();
      pid_t pid = spawn({binary.string(), "--port", std::to_string(port), "--bind", "127.0.0.1", "--save", "",
                         "--dir", dir, "--daemonize", "no"},
                        true);
      if (pid < 0) return std::fprintf(stderr, "bench_spawn: cannot start %s\n", binary.c_str()), 1;
      bool up = false, exited = false;
      while (!(up = cli_ping(cli, port)) && clk::now() - t0 < std::chrono::seconds(10))
        if (::waitpid(pid, nullptr, WNOHANG) == pid) {
          exited = true;
          break;
        }
      if (!up) {
        if (!exited) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
        fs::remove_all(dir);
        std::fprintf(stderr, "bench_spawn: the bare server on port %d %s\n", port,
                     exited ? "exited before answering PING" : "did not answer PING within 10 s");
        return 1;
      }
      bare.push_back(std::chrono::duration<double, std::milli>(clk::now() - t0).count());
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      fs::remove_all(dir);
    }
  }
  std::printf("server: %s (%s %s), %d runs each, alternating\n", binary.c_str(), ver.flavor.c_str(), ver.version.c_str(), runs);
  std::printf("process::Server construct -> PONG: median %.1f ms (min %.1f, max %.1f)\n", median(kit),
              *std::min_element(kit.begin(), kit.end()), *std::max_element(kit.begin(), kit.end()));
  std::printf("bare spawn + %s ping loop:  median %.1f ms (min %.1f, max %.1f)\n", (ver.flavor + "-cli").c_str(),
              median(bare), *std::min_element(bare.begin(), bare.end()), *std::max_element(bare.begin(), bare.end()));
  return 0;
}

}  // namespace ekb::bench_spawn
