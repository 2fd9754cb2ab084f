// expirykit_fault_proxy: a RESP proxy in front of a real server that injects one fault of the
// catalogue (include/expirykit/fault/faults.hpp), for measuring what a test suite catches
// (ci/kill-table runs the conformance run through it, once per fault).
//
//   expirykit_fault_proxy --upstream 127.0.0.1:6379 --fault httl-plus-1s [--listen 7000] [--delay-ms 3]
//   expirykit_fault_proxy --list
//
// Prints "listening 127.0.0.1:<port>" on stdout once it accepts connections and runs until
// SIGTERM or SIGINT, then closes every connection and prints a one-line summary on stderr.
// Exit status: 0 after a signal, 1 when it cannot listen, 2 on a usage error.
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <string>

#include <expirykit/fault/faults.hpp>
#include <expirykit/fault/proxy.hpp>

namespace expirykit_tools::fault_proxy {

namespace {

const char* kUsage =
    "usage: expirykit_fault_proxy --upstream HOST:PORT --fault ID [--listen PORT] [--delay-ms MS]\n"
    "       expirykit_fault_proxy --list\n"
    "  --upstream HOST:PORT  the server to forward to\n"
    "  --fault ID            the fault to inject (see --list); \"none\" passes everything through\n"
    "  --listen PORT         port on 127.0.0.1 (default 0: a free one; the line \"listening 127.0.0.1:PORT\" says which)\n"
    "  --delay-ms MS         hold what the server sends MS milliseconds before passing it on (default 0):\n"
    "                        every round trip at least MS ms slower (fault::Proxy::Options::reply_delay)\n"
    "  --list                print the catalogue: id, area, description (tab-separated)\n"
    "Runs until SIGTERM or SIGINT.\n";

int usage_error(const std::string& msg) {
  std::cerr << "expirykit_fault_proxy: " << msg << "\n" << kUsage;
  return 2;
}

bool parse_port(const std::string& s, int& out, int lo) {
  auto v = expirykit::fault::detail::cmd::integer(s);
  if (!v || *v < lo || *v > 65535) return false;
  out = static_cast<int>(*v);
  return true;
}

}  // namespace

/// The program expirykit_fault_proxy (tools/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  namespace fault = expirykit::fault;
  std::string upstream, fault_id;
  int listen_port = 0;
  long long delay_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--list") {
      for (const auto& f : fault::catalogue()) std::cout << f.id << "\t" << f.area << "\t" << f.description << "\n";
      return 0;
    }
    if (a == "--upstream" || a == "--fault" || a == "--listen" || a == "--delay-ms") {
      if (i + 1 >= argc) return usage_error(a + " needs a value");
      const std::string v = argv[++i];
      if (a == "--upstream") upstream = v;
      else if (a == "--fault") fault_id = v;
      else if (a == "--delay-ms") {
        const auto d = fault::detail::cmd::integer(v);
        if (!d || *d < 0 || *d > 60000) return usage_error("--delay-ms " + v + " is not a number of milliseconds (0..60000)");
        delay_ms = *d;
      }
      else if (!parse_port(v, listen_port, 0)) return usage_error("--listen " + v + " is not a port (0..65535)");
      continue;
    }
    return usage_error("unknown argument '" + a + "'");
  }
  if (upstream.empty()) return usage_error("--upstream HOST:PORT is required");
  if (fault_id.empty()) return usage_error("--fault ID is required (--list shows them; \"none\" for no fault)");
  const auto colon = upstream.rfind(':');
  int upstream_port = 0;
  if (colon == std::string::npos || colon == 0 || !parse_port(upstream.substr(colon + 1), upstream_port, 1))
    return usage_error("--upstream " + upstream + " is not HOST:PORT");
  const auto f = fault::find(fault_id);
  if (!f) return usage_error("unknown fault '" + fault_id + "' (--list shows the catalogue)");

  // Block the stop signals before any thread starts, so that only sigwait() below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  try {
    fault::Proxy proxy({.upstream_host = upstream.substr(0, colon),
                        .upstream_port = upstream_port,
                        .listen_port = listen_port,
                        .hooks = f->hooks,
                        .reply_delay = std::chrono::milliseconds(delay_ms)});
    std::cout << "listening " << proxy.address() << std::endl;
    int sig = 0;
    sigwait(&stop_signals, &sig);
    proxy.stop();
    const auto s = proxy.stats();
    std::cerr << "expirykit_fault_proxy: fault " << f->id << (delay_ms ? ", replies held " + std::to_string(delay_ms) + " ms" : "") << ", " << s.accepted << " connections, " << s.errors
              << " closed on errors" << (s.last_error.empty() ? "" : " (last: " + s.last_error + ")") << "\n";
  } catch (const std::exception& e) {
    std::cerr << "expirykit_fault_proxy: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace expirykit_tools::fault_proxy
