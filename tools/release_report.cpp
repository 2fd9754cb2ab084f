// expirykit_release_report: what changed from one release to the next. The same generated
// command sequences run on both (each spawned here on 127.0.0.1, from a provisioned name or a
// binary path), both checked against the model of the previous release's dialect; every command
// the new release answers otherwise is a change, grouped by kind (state/release_report.hpp).
// A crash of the new release is triaged on fresh servers (triage/crash_triage.hpp) and the run
// goes on with a fresh server. ci/release-report and ci/conformance (for a release without a
// dialect of its own) run it.
//
//   expirykit_release_report --from redis-8.0 --to redis-8.6 [--sequences 200] [--seed N]
//                            [--out report.md] [--summary changes.tsv]
//
// Exit status: 0 when nothing changed, 1 when something did (see the report), 2 on a usage error
// or a previous release without a model dialect.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include <expirykit/gen/commands.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/dialect_choice.hpp>
#include <expirykit/state/release_report.hpp>
#include <expirykit/triage/crash_triage.hpp>

using namespace expirykit;

namespace expirykit_tools::release_report {

namespace {

const char* kUsage =
    "usage: expirykit_release_report --from NAME|PATH --to NAME|PATH [--sequences N] [--seed N]\n"
    "                                [--out FILE] [--summary FILE]\n"
    "  --from       the previous release: a provisioned server (redis-8.0, ...) or a server binary;\n"
    "               its dialect is the model both are checked against\n"
    "  --to         the new release\n"
    "  --sequences  generated sequences of up to 40 commands (default 200)\n"
    "  --seed N     the generator's seed (default: random; the report names it)\n"
    "  --out FILE   the Markdown report (default: stdout)\n"
    "  --summary F  one tab-separated line per group of changes: kind, command, count, example\n"
    "       expirykit_release_report --dialect-of NAME|PATH\n"
    "  prints the model dialect of that server and whether it is its own or a stand-in\n";

std::filesystem::path binary_of(const std::string& s) {
  if (s.find('/') != std::string::npos) return s;
  return process::provisioned_server(s);
}

struct Side {
  process::ServerOptions opts;
  std::unique_ptr<process::Server> server;
  std::unique_ptr<resp::Client> client;
  std::unique_ptr<state::Twin> twin;
  server::Identity id;
  void start(const model::Dialect& d) {
    twin.reset();
    client.reset();
    server = std::make_unique<process::Server>(opts);
    client = std::make_unique<resp::Client>(server->client());
    id = server::Identity::probe(*client);
    state::Twin::Options o;
    o.server = id;  // known issues of this server are excused and named
    twin = std::make_unique<state::Twin>(*client, d, o);
    twin->observe_events();
    twin->observe_counters();
  }
};

}  // namespace

/// The program expirykit_release_report (tools/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  std::string from, to, out, summary, dialect_of;
  long sequences = 200;
  std::optional<std::uint64_t> seed;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "-h" || k == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) {
      std::cerr << "expirykit_release_report: " << k << " needs a value\n" << kUsage;
      return 2;
    }
    const std::string v = argv[++i];
    try {
      if (k == "--dialect-of") dialect_of = v;
      else if (k == "--from") from = v;
      else if (k == "--to") to = v;
      else if (k == "--out") out = v;
      else if (k == "--summary") summary = v;
      else if (k == "--sequences") sequences = std::stol(v);
      else if (k == "--seed") seed = std::stoull(v);
      else {
        std::cerr << "expirykit_release_report: unknown argument " << k << "\n" << kUsage;
        return 2;
      }
    } catch (const std::exception&) {
      std::cerr << "expirykit_release_report: " << k << " '" << v << "' is not a number\n";
      return 2;
    }
  }
  if (!dialect_of.empty()) {
    // "<dialect> own" or "<dialect> stand-in" (the newest older dialect of the flavor stands in
    // for a release without one), or "none" (no hash field TTLs): for ci/conformance.
    try {
      process::ServerOptions o;
      o.binary = binary_of(dialect_of);
      if (o.binary.empty()) {
        std::cerr << "expirykit_release_report: " << dialect_of << " is not provisioned\n";
        return 2;
      }
      process::Server s(o);
      auto c = s.client();
      const auto id = server::Identity::probe(c);
      const auto d = server::dialect_for(id);  // EXPIRYKIT_DIALECT forces one
      std::cout << (d ? d->name + (server::is_stand_in(*d, id) ? " stand-in" : " own") : std::string("none")) << "\n";
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "expirykit_release_report: " << e.what() << "\n";
      return 2;
    }
  }
  if (from.empty() || to.empty() || sequences < 1) {
    std::cerr << "expirykit_release_report: --from and --to are required, --sequences must be positive\n" << kUsage;
    return 2;
  }
  try {
    Side a, b;
    a.opts.binary = binary_of(from);
    b.opts.binary = binary_of(to);
    for (const auto& [name, path] : {std::pair{from, a.opts.binary}, std::pair{to, b.opts.binary}})
      if (path.empty()) {
        std::cerr << "expirykit_release_report: " << name << " is not provisioned (bash ci/provision-servers " << name << ")\n";
        return 2;
      }
    // The previous release's dialect is the model of both.
    process::Server probe(a.opts);
    auto pc = probe.client();
    const auto aid = server::Identity::probe(pc);
    const auto d = model::Dialect::for_server(server::to_string(aid.flavor), aid.version.major, aid.version.minor);
    if (!d) {
      std::cerr << "expirykit_release_report: " << aid.to_string() << " has no model dialect (no hash field TTLs)\n";
      return 2;
    }
    a.start(*d);
    b.start(*d);
    const std::uint64_t s = seed ? *seed : std::random_device{}();
    rc::Random random(s);
    state::ReleaseComparison all;
    std::vector<std::string> crashes;
    const auto g = gen::property_sequence(*d, 40);
    for (long i = 0; i < sequences; ++i) {
      const auto cmds = g(random.split(), 40).value();
      auto r = state::run_release_comparison(*a.twin, *b.twin, cmds);
      all.commands += r.commands;
      for (auto& [id, n] : r.known_issues) all.known_issues[id] += n;
      for (auto& g : r.model_gaps) all.model_gaps.push_back(std::move(g));
      for (auto& c : r.changes) {
        if (c.kind == "crash") {
          // Shrink on fresh servers of the new release; then go on with a fresh one.
          const auto t = triage::triage_crash(b.opts, c.script, b.server->log_path());
          c.detail = t.message();
          c.after = resp::Reply::error(t.reproduced.found ? t.reproduced.headline() : t.original.headline());
          if (!t.minimal.empty()) c.argv = t.minimal.back();
          c.script = t.minimal;
        }
        all.changes.push_back(std::move(c));
      }
      if (r.crashed) b.start(*d);
    }
    std::string report = state::release_report(all, aid.to_string(), b.id.to_string());
    report += "\n---\n" + std::to_string(sequences) + " sequences, " + std::to_string(all.commands) + " commands, seed " +
              std::to_string(s) + " (re-run: expirykit_release_report --from " + from + " --to " + to + " --sequences " +
              std::to_string(sequences) + " --seed " + std::to_string(s) + ")\n";
    if (out.empty()) {
      std::cout << report;
    } else {
      std::ofstream f(out);
      f << report;
      if (!f) {
        std::cerr << "expirykit_release_report: cannot write " << out << "\n";
        return 2;
      }
    }
    if (!summary.empty()) std::ofstream(summary) << state::release_summary(all);
    std::cerr << "expirykit_release_report: " << all.changes.size() << " changes since " << aid.to_string() << " on "
              << b.id.to_string() << " (" << all.commands << " commands, seed " << s << ")"
              << (out.empty() ? "" : ": " + out) << "\n";
    return all.changes.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "expirykit_release_report: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace expirykit_tools::release_report
