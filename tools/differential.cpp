// expirykit_differential: the same generated command sequences against two servers (each spawned
// here, on 127.0.0.1, from a provisioned name or a binary path), each checked against the model
// of its own dialect; writes the Markdown report of property::differential_report(): the behaviours
// on which the servers differ, each with commands and both replies, split into "explained by the
// dialects" and "unexplained". ci/differential builds and runs it.
//
//   expirykit_differential --a valkey-9.1 --b redis-8.0 [--sequences 50] [--seed N] [--out report.md]
//
// Exit status: 0 when every divergence is explained, 1 when some are not (a finding: see the
// report), 2 on a usage error or a server without a model dialect.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>

#include <expirykit/gen/commands.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/property/differential.hpp>

using namespace expirykit;

namespace expirykit_tools::differential {

namespace {

const char* kUsage =
    "usage: expirykit_differential --a NAME|PATH --b NAME|PATH [--sequences N] [--seed N] [--out FILE]\n"
    "  --a, --b        a provisioned server (valkey-9.1, redis-8.0, ...) or a server binary\n"
    "  --sequences N   generated sequences of up to 40 commands (default 50)\n"
    "  --seed N        the generator's seed (default: random; the report names it)\n"
    "  --out FILE      where the Markdown report goes (default: stdout)\n";

std::filesystem::path binary_of(const std::string& s) {
  if (s.find('/') != std::string::npos) return s;
  return process::provisioned_server(s);
}

}  // namespace

/// The program expirykit_differential (tools/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  std::string a, b, out;
  long sequences = 50;
  std::optional<std::uint64_t> seed;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "-h" || k == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) {
      std::cerr << "expirykit_differential: " << k << " needs a value\n" << kUsage;
      return 2;
    }
    const std::string v = argv[++i];
    try {
      if (k == "--a") a = v;
      else if (k == "--b") b = v;
      else if (k == "--out") out = v;
      else if (k == "--sequences") sequences = std::stol(v);
      else if (k == "--seed") seed = std::stoull(v);
      else {
        std::cerr << "expirykit_differential: unknown argument " << k << "\n" << kUsage;
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "expirykit_differential: " << k << " '" << v << "' is not a number\n";
      return 2;
    }
  }
  if (a.empty() || b.empty() || sequences < 1) {
    std::cerr << "expirykit_differential: --a and --b are required, --sequences must be positive\n" << kUsage;
    return 2;
  }
  try {
    process::ServerOptions oa, ob;
    oa.binary = binary_of(a);
    ob.binary = binary_of(b);
    for (const auto& [name, path] : {std::pair{a, oa.binary}, std::pair{b, ob.binary}})
      if (path.empty()) {
        std::cerr << "expirykit_differential: " << name << " is not provisioned (bash ci/provision-servers " << name << ")\n";
        return 2;
      }
    process::Server sa(oa), sb(ob);
    auto ca = sa.client();
    auto cb = sb.client();
    state::Twin::Options ta, tb;
    ta.server = server::Identity::probe(ca);
    tb.server = server::Identity::probe(cb);
    const auto da = model::Dialect::for_server(server::to_string(ta.server->flavor), ta.server->version.major,
                                               ta.server->version.minor);
    const auto db = model::Dialect::for_server(server::to_string(tb.server->flavor), tb.server->version.major,
                                               tb.server->version.minor);
    if (!da || !db) {
      std::cerr << "expirykit_differential: no model dialect (no hash field TTLs) for "
                << (!da ? ta.server->to_string() : tb.server->to_string()) << "\n";
      return 2;
    }
    // Knowing its server, each twin excuses that server's known issues (state/known_divergence.hpp):
    // the models are the specification, so what remains unexplained is new.
    state::Twin ta_twin(ca, *da, ta), tb_twin(cb, *db, tb);
    // Commands both servers have: generate for the dialect with the fewer commands (Redis's when
    // the lines differ, as checks/state/differential_test.cpp does).
    const model::Dialect& common = ta.server->flavor == server::Flavor::redis ? *da : *db;
    const std::uint64_t s = seed ? *seed : std::random_device{}();
    const auto res = property::run_differential_sequences(ta_twin, tb_twin, common, sequences, rc::Random(s));
    const std::vector<property::Divergence>& all = res.divergences;
    const std::size_t commands = res.commands;
    std::string report = property::differential_report(all, ta.server->to_string(), tb.server->to_string());
    report += "\n---\n" + std::to_string(sequences) + " sequences, " + std::to_string(commands) +
              " commands, seed " + std::to_string(s) + " (re-run: expirykit_differential --a " + a + " --b " + b +
              " --sequences " + std::to_string(sequences) + " --seed " + std::to_string(s) + ")\n";
    std::size_t unexplained = 0;
    for (const auto& d : all) unexplained += !d.explained;
    if (out.empty()) {
      std::cout << report;
    } else {
      std::ofstream f(out);
      f << report;
      if (!f) {
        std::cerr << "expirykit_differential: cannot write " << out << "\n";
        return 2;
      }
    }
    std::cerr << "expirykit_differential: " << all.size() << " divergent replies, " << unexplained << " unexplained ("
              << commands << " commands, seed " << s << ")" << (out.empty() ? "" : ": " + out) << "\n";
    return unexplained == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "expirykit_differential: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace expirykit_tools::differential
