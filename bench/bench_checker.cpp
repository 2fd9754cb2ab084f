// bench_checker: how many commands per second the kit model-checks, next to how many round trips
// per second the same client makes to the same server, in one run (issue 21).
//
// Sections (--only picks some, comma-separated):
//   raw        PING and HGET, one connection, unpipelined: round trips per second (resp::Client), and
//              PING again with set_read_spin(0) (reads that block at once)
//   gen        gen::property_sequence drawn outside any property: commands generated per second
//   model      those sequences applied to model::Keyspace alone (no server): commands per second
//   twin       the same sequences through state::Twin::run, observations added one at a time:
//              reply; + state (compare_state, encodings off); + events; + tracking; + counters;
//              + encoding (all of them: what the main property checks). Each line splits the
//              time into per-sequence set-up (flushall, counter base), run() and the checks
//              after the sequence (background events, state, counters)
//   sequences  property::check_sequences with every observation (the main property), and the
//              pipelined checker's run statistics (round trips, commands sent alone)
//   durability property::check_durable_sequences (primary + replica, AOF, RDB loader)
//   cluster    property::check_cluster_sequences on a 3x1 cluster
// The timing property (suites/properties/timing.cpp) waits on deadlines by design and is not
// measured. Results: one line per measurement on stdout, and <out>/checker.jsonl.
#include "common.hpp"

#include <chrono>
#include <fstream>
#include <random>

#include <rapidcheck.h>

#include <expirykit/gen/commands.hpp>
#include <expirykit/process/cluster.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/property/cluster_property.hpp>
#include <expirykit/property/durable_property.hpp>
#include <expirykit/property/property.hpp>
#include <expirykit/server/dialect_choice.hpp>
#include <expirykit/state/cluster_twin.hpp>
#include <expirykit/state/twin.hpp>

using namespace ekb;

namespace ekb::bench_checker {

namespace {
using clk = std::chrono::steady_clock;
using ek::resp::Argv;

double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }

/// The pipelined checker's statistics (Twin::run_stats) as one line under a measurement; they
/// count shrinking's runs too when a property failed.
void print_run_stats(const ek::state::Twin::RunStats& rs) {
  std::printf("           runs: %llu round trips for %llu commands, %llu sent alone; %llu choice points, %llu "
              "other milliseconds tried, %llu changed; %llu compare_all() read-backs and %llu DUMPs sent ahead and used; "
              "%llu parts of runs sent before their end was decided\n",
              (unsigned long long)rs.runs, (unsigned long long)rs.run_commands, (unsigned long long)rs.alone,
              (unsigned long long)rs.choice_points, (unsigned long long)rs.tried, (unsigned long long)rs.changed,
              (unsigned long long)rs.compares_ahead, (unsigned long long)rs.dumps_ahead, (unsigned long long)rs.parts_early);
}

struct Out {
  std::filesystem::path file;
  std::string server;
  void line(const std::string& section, const std::string& what, std::size_t commands, double seconds,
            nlohmann::json extra = nlohmann::json::object()) {
    const double rate = seconds > 0 ? static_cast<double>(commands) / seconds : 0;
    std::printf("%-10s %-34s %9zu in %6.2f s  %9.0f /s  load %.2f\n", section.c_str(), what.c_str(), commands, seconds,
                rate, bench::LoadAvg::now().m1);
    std::fflush(stdout);
    extra["section"] = section;
    extra["what"] = what;
    extra["count"] = commands;
    extra["seconds"] = seconds;
    extra["per_second"] = rate;
    extra["server"] = server;
    const auto m = bench::Machine::now();
    extra["machine"] = {{"cores", m.cores}, {"cpu_model", m.cpu_model}, {"hostname", m.hostname}};
    extra["time"] = bench::utc_now();
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::app) << extra.dump() << "\n";
  }
};

/// A property that failed checks fewer commands than it would have (it stops and shrinks): says
/// so under its line, with the summary, so that a rate is never read as a speed.
template <class R>
void failed_property(const R& r) {
  if (r.ok) return;
  std::printf("           FAILED (the rate above is not the checker's speed): %s\n",
              r.summary.c_str());
  std::fprintf(stderr, "%s\n", r.report.c_str());
  std::fflush(stdout);
}

/// Sequences drawn from gen::property_sequence (seeded), `count` of them.
std::vector<std::vector<Argv>> draw(const ek::model::Dialect& d, int max_len, std::size_t count, std::uint64_t seed,
                                    ek::gen::StaleBy by) {
  std::vector<std::vector<Argv>> out;
  const auto g = ek::gen::property_sequence(d, max_len, by);
  rc::Random r(seed);
  for (std::size_t i = 0; i < count; ++i) {
    rc::Random mine = r.split();
    out.push_back(g(mine, static_cast<int>(i % 100)).value());
  }
  return out;
}

std::size_t commands_in(const std::vector<std::vector<Argv>>& seqs) {
  std::size_t n = 0;
  for (const auto& s : seqs) n += s.size();
  return n;
}

/// Which observations a twin configuration turns on.
struct Config {
  const char* name;
  bool state, events, tracking, counters, encoding;
  bool pipelined = false;  ///< Twin::run_all instead of Twin::run per command
};
}  // namespace

/// The program bench_checker (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  double seconds = 5;
  int max_len = 40;
  std::string only = "raw,gen,model,twin,sequences,durability,cluster";
  std::string twin_only;
  std::size_t draws = 2000;
  std::string stale_by = "restore";
  Cli cli("bench_checker",
          "Model-checked commands per second through state::Twin::run and the property drivers, with\n"
          "each observation on and off, beside raw unpipelined round trips of the same client to the\n"
          "same server. Records: <out>/checker.jsonl.");
  c.add_to(cli);
  cli.opt("seconds", seconds, "seconds per measurement")
      .opt("max-len", max_len, "commands per sequence, at most")
      .opt("only", only, "sections to run: raw,gen,model,twin,sequences,durability,cluster")
      .opt("twin-only", twin_only, "twin section: only the configurations whose name contains this")
      .opt("draws", draws, "sequences drawn for the model and twin sections")
      .opt("stale-by", stale_by, "model and twin sections: stale set-ups by restore (the default) or sleep");
  cli.parse(argc, argv);
  auto want = [&](const std::string& s) { return ("," + only + ",").find("," + s + ",") != std::string::npos; };
  return guarded([&] {
    Harness h("checker", c);
    const auto id = h.identity();
    const auto dialect = ek::server::dialect_for(id);
    if (!dialect) throw std::runtime_error(id.to_string() + " has no model dialect (no hash field TTLs)");
    Out out{h.out_path("checker.jsonl"), id.to_string()};
    const auto budget = std::chrono::duration<double>(seconds);

    if (want("raw")) {
      auto cl = h.target().client();
      h.must({"HSET", "raw:h", "f", "v"});
      // The client as the kit makes it (its read spin: EXPIRYKIT_READ_SPIN_US), and PING again with
      // reads that block at once (set_read_spin(0)): what the spin saves on a round trip.
      const auto spin = cl.read_spin();
      std::vector<std::pair<std::string, std::chrono::microseconds>> lines = {{"PING", spin}, {"HGET", spin}};
      if (spin.count() > 0) lines.emplace_back("PING", std::chrono::microseconds(0));
      for (const auto& [cmd, us] : lines) {
        cl.set_read_spin(us);
        const Argv a = cmd == "PING" ? Argv{"PING"} : Argv{"HGET", "raw:h", "f"};
        std::size_t n = 0;
        const auto t0 = clk::now();
        while (clk::now() - t0 < budget)
          for (int i = 0; i < 100; ++i, ++n) cl.call(a);
        out.line("raw", cmd + " round trips, unpipelined" + (us != spin ? ", no read spin" : ""), n, secs(t0, clk::now()));
      }
      cl.set_read_spin(spin);
    }

    // Enough sequences for every timed section to loop over.
    if (stale_by != "restore" && stale_by != "sleep") throw std::runtime_error("--stale-by: restore or sleep");
    const auto seqs = draw(*dialect, max_len, draws, c.seed,
                           stale_by == "sleep" ? ek::gen::StaleBy::sleep : ek::gen::StaleBy::restore);
    const std::size_t per_pass = commands_in(seqs);

    if (want("gen")) {
      std::size_t n = 0, i = 0;
      const auto g = ek::gen::property_sequence(*dialect, max_len);
      rc::Random r(c.seed + 1);
      const auto t0 = clk::now();
      while (clk::now() - t0 < budget) {
        rc::Random mine = r.split();
        n += g(mine, static_cast<int>(i++ % 100)).value().size();
      }
      out.line("gen", "gen::property_sequence draws", n, secs(t0, clk::now()));
    }

    if (want("model")) {
      std::size_t n = 0;
      const std::int64_t now = 1764547200000;
      const auto t0 = clk::now();
      for (std::size_t i = 0; clk::now() - t0 < budget; i = (i + 1) % seqs.size()) {
        ek::model::Keyspace ks;
        for (const auto& cmd : seqs[i]) {
          if (const auto f = ek::state::stale_fields(cmd))  // as the twin resolves it: deadlines passed
            ks.remember_dump(cmd[3], ek::state::stale_entry(*f, std::vector<std::int64_t>(f->size(), now - 2)));
          try {
            ek::model::apply(ks, *dialect, cmd, now);
          } catch (const ek::model::Unmodelled&) {
          }
          ++n;
        }
      }
      out.line("model", "model::apply alone", n, secs(t0, clk::now()));
    }

    if (want("twin")) {
      const Config configs[] = {
          {"reply", false, false, false, false, false},     {"+ state", true, false, false, false, false},
          {"+ events", true, true, false, false, false},    {"+ tracking", true, true, true, false, false},
          {"+ counters", true, true, true, true, false},    {"+ encoding (all)", true, true, true, true, true},
          {"reply, pipelined", false, false, false, false, false, true},
          {"all, pipelined", true, true, true, true, true, true},
      };
      for (const auto& cf : configs) {
        if (!twin_only.empty() && std::string(cf.name).find(twin_only) == std::string::npos) continue;
        auto conn = h.target().client();
        ek::state::Twin::Options o;
        o.server = id;
        o.check_encoding = cf.encoding;
        ek::state::Twin t(conn, *dialect, o);
        if (cf.events) t.observe_events();
        if (cf.tracking) t.observe_tracking();
        if (cf.counters) t.observe_counters();
        std::size_t n = 0, sequences = 0, failed = 0;
        double setup = 0, running = 0, checks = 0;
        const auto t0 = clk::now();
        for (std::size_t i = 0; clk::now() - t0 < budget; i = (i + 1) % seqs.size()) {
          auto a = clk::now();
          t.begin_sequence();  // FLUSHALL and the counters' base (when observed) in one round trip
          auto b = clk::now();
          bool ok = true;
          if (cf.pipelined) {
            for (const auto& st : t.run_all(seqs[i], false)) ok = st.ok && ok;
          } else {
            for (const auto& cmd : seqs[i]) ok = t.run(cmd).ok && ok;
          }
          auto d = clk::now();
          if (cf.state) {
            ok = t.compare_all().empty() && ok;  // background events, state, counters (when observed)
          } else if (cf.counters) {
            ok = t.compare_counters().empty() && ok;
          }
          auto e = clk::now();
          setup += secs(a, b);
          running += secs(b, d);
          checks += secs(d, e);
          n += seqs[i].size();
          ++sequences;
          failed += ok ? 0 : 1;
          t.clear_history();
        }
        const double total = secs(t0, clk::now());
        out.line("twin", cf.name, n, total,
                 {{"sequences", sequences},
                  {"failed_sequences", failed},
                  {"setup_s", setup},
                  {"run_s", running},
                  {"checks_s", checks}});
        std::printf("           time: set-up %.0f%%, run() %.0f%%, checks after the sequence %.0f%%; %zu sequences%s\n",
                    100 * setup / total, 100 * running / total, 100 * checks / total, sequences,
                    failed ? (", " + std::to_string(failed) + " with a difference (see the suites)").c_str() : "");
        if (cf.pipelined) {
          print_run_stats(t.run_stats());
        }
      }
    }

    if (want("sequences")) {
      auto conn = h.target().client();
      ek::state::Twin::Options o;
      o.server = id;
      ek::state::Twin t(conn, *dialect, o);
      t.observe_events();
      t.observe_counters();
      t.observe_tracking();
      auto r = ek::property::check_sequences(t, ek::property::PropertyBudget{100, max_len, seconds, "bench"});
      out.line("sequences", "property::check_sequences (all)", r.commands, r.seconds,
               {{"sequences", r.sequences}, {"ok", r.ok}});
      print_run_stats(t.run_stats());
      failed_property(r);
    }

    if (want("durability")) {
      ek::process::ReplicaSetOptions ro;
      ro.primary = server_options(c);
      ro.primary.persistence = ek::process::Persistence::aof;
      ro.primary.set("hz", "100");  // as suites/durability: a restarted primary keeps it
      ek::process::ReplicaSet set(ro);
      ek::process::Server loader(server_options(c));
      auto conn = set.primary().client();
      ek::state::Twin::Options o;
      o.server = id;
      ek::state::Twin t(conn, *dialect, o);
      ek::property::Copies copies{set, loader};
      ek::property::DurableOptions dopt;
      dopt.server = id;
      auto r = ek::property::check_durable_sequences(t, copies, ek::property::PropertyBudget{20, 30, seconds, "bench"}, dopt);
      out.line("durability", "property::check_durable_sequences", r.commands, r.seconds,
               {{"sequences", r.sequences}, {"ok", r.ok}});
      failed_property(r);
    }

    if (want("cluster")) {
      ek::process::ClusterOptions co;
      co.primaries = 3;
      co.replicas = 1;
      co.node = server_options(c);
      ek::process::Cluster cl(co);
      cl.wait_agreed();
      ek::cluster::Client cc(cl.seed_host(), cl.seed_port());
      ek::state::Twin::Options o;
      o.server = id;
      ek::state::ClusterTwin t(cc, *dialect, o);
      auto r = ek::property::check_cluster_sequences(t, ek::property::PropertyBudget{100, max_len, seconds, "bench"});
      out.line("cluster", "property::check_cluster_sequences", r.commands, r.seconds,
               {{"sequences", r.sequences}, {"ok", r.ok}});
      failed_property(r);
    }
    (void)per_pass;
    return 0;
  });
}

}  // namespace ekb::bench_checker
