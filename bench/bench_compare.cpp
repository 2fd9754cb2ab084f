// bench_compare: our load generator side by side with the server's own valkey-benchmark /
// redis-benchmark, same server, same command, connections, pipeline and request count, runs
// interleaved (ours first on odd repeats, theirs first on even ones); prints ours/theirs.
#include <sys/resource.h>

#include <expirykit/bench/compare.hpp>

#include "common.hpp"

using namespace ekb;

namespace ekb::bench_compare {

namespace {
double children_cpu() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}
struct Case {
  std::string name;
  std::vector<std::string> argv;
  std::uint64_t keyspace;
};
}  // namespace

/// The program bench_compare (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  c.connections = 50;
  c.requests = 500000;
  c.warmup = 0;
  std::string tests = "get,hget,hsetex";
  std::uint64_t keys = 100000, fields = 5000;
  bool ours_only = false;
  c.requests_pipelined = 5000000;
  std::vector<std::string> command;
  std::uint64_t keyspace = 0;
  Cli cli("bench_compare",
          "Runs the same command with expirykit's bench::Load (1 thread x --connections) and with the\n"
          "server's own benchmark tool (-c --connections, one thread) on the same server, interleaved,\n"
          "and prints ops/s of each and the ratio ours/theirs, plus client CPU seconds of each.\n"
          "Presets: get = GET key:__rand_int__ over --keys SET keys (3-byte values, like -d 3);\n"
          "hget = HGET on one hash of --fields fields; hsetex = HSETEX ek:hx:__rand_int__ EX 900\n"
          "FIELDS 1 f v over --keys keys. A command after -- replaces the presets.\n"
          "The tool is <flavor>-benchmark next to the server binary, or EXPIRYKIT_BENCHMARK.");
  c.add_to(cli);
  cli.opt("tests", tests, "presets to run: get,hget,hsetex")
      .opt("keys", keys, "keyspace (-r) of the get and hsetex presets")
      .opt("fields", fields, "fields of the hget preset's hash (-r)")
      .opt("keyspace", keyspace, "-r for a custom command (0: placeholders stay literal)")
      .opt("ours-only", ours_only, "do not run the server's tool")
      .rest(command, "a custom command, with valkey-benchmark placeholders (__rand_int__)");
  cli.parse(argc, argv);
  return guarded([&] {
    Harness h("compare", c);
    std::vector<Case> cases;
    if (!command.empty()) {
      cases.push_back({"custom", command, keyspace});
    } else {
      std::stringstream ss(tests);
      for (std::string t; std::getline(ss, t, ',');) {
        if (t == "get") cases.push_back({"GET", {"GET", "key:__rand_int__"}, keys});
        else if (t == "hget") cases.push_back({"HGET", {"HGET", "ek:h", "f:__rand_int__"}, fields});
        else if (t == "hsetex") cases.push_back({"HSETEX", {"HSETEX", "ek:hx:__rand_int__", "EX", "900", "FIELDS", "1", "f", "v"}, keys});
        else throw std::invalid_argument("unknown preset " + t);
      }
    }
    std::filesystem::path tool;
    if (!ours_only) {
      auto* s = h.target().owned();
      tool = bench::find_benchmark_binary(s ? s->binary() : ek::process::find_server_binary());
    }
    std::filesystem::create_directories(c.out);
    std::ofstream dat(h.out_path("compare.dat"), std::ios::app);
    std::printf("# our load: 1 thread x %u connections; theirs: %s -c %u (one thread)\n", c.connections,
                ours_only ? "-" : tool.filename().c_str(), c.connections);
    for (const auto& k : cases) {
      h.flush();
      if (k.name == "GET") h.fill({"SET", "key:__rand_int__", "xxx"}, k.keyspace);
      if (k.name == "HGET") h.fill({"HSET", "ek:h", "f:__rand_int__", "xxx"}, k.keyspace);
      bench::Template tmpl(k.argv, k.keyspace);
      for (unsigned p : c.pipelines) {
        const std::uint64_t requests = p > 1 ? c.requests_pipelined : c.requests;
        std::vector<double> ours, theirs, ratio;
        for (unsigned rep = 0; rep < c.repeat; ++rep) {
          auto run_ours = [&] {
            auto o = h.options(p);
            o.threads = 1;
            o.requests = requests;
            auto r = h.run(k.name + " ours", o, tmpl, {{"command", tmpl.to_string()}, {"keyspace", k.keyspace}, {"side", "ours"}});
            ours.push_back(r.ops_per_sec());
            return r;
          };
          auto run_theirs = [&] {
            bench::TheirOptions t;
            t.host = h.target().host();
            t.port = h.target().port();
            t.clients = c.connections;
            t.pipeline = p;
            t.requests = requests;
            t.keyspace = k.keyspace;
            auto before = bench::LoadAvg::now();
            double cpu0 = children_cpu();
            auto r = bench::run_their_benchmark(tool, k.argv, t);
            double cpu = children_cpu() - cpu0;
            theirs.push_back(r.ops_per_sec);
            std::printf("%-30s T=1  C=%-3u P=%-3u %10.0f ops/s  p50 %7.1f  p99 %7.1f            max %8.1f us  "
                        "       cpu/op client %.2f us              load %.2f\n",
                        (k.name + " theirs").c_str(), c.connections, p, r.ops_per_sec, r.p50_ms * 1e3, r.p99_ms * 1e3,
                        r.max_ms * 1e3, cpu / static_cast<double>(requests) * 1e6, bench::LoadAvg::now().m1);
            std::fflush(stdout);
            auto a = bench::LoadAvg::now();
            bench::append_jsonl(h.out_path("compare.jsonl"),
                                {{"benchmark", "compare"}, {"side", "theirs"}, {"label", k.name + " theirs"},
                                 {"time_utc", bench::utc_now()}, {"server", bench::identity_json(h.identity())},
                                 {"machine", bench::machine_json()}, {"command_line", r.command_line},
                                 {"loadavg_before", {before.m1, before.m5, before.m15}}, {"loadavg_after", {a.m1, a.m5, a.m15}},
                                 {"params", {{"clients", t.clients}, {"pipeline", p}, {"requests", t.requests}, {"keyspace", t.keyspace}}},
                                 {"result", {{"ops_per_sec", r.ops_per_sec}, {"client_cpu_s", cpu}, {"avg_ms", r.avg_ms},
                                             {"p50_ms", r.p50_ms}, {"p99_ms", r.p99_ms}, {"max_ms", r.max_ms}}}});
          };
          if (ours_only) {
            run_ours();
            continue;
          }
          if (rep % 2 == 0) run_ours(), run_theirs();
          else run_theirs(), run_ours();
          ratio.push_back(ours.back() / theirs.back());
        }
        auto so = Stats::of(ours);
        if (ours_only) {
          std::printf("= %s P=%u ours median %.0f ops/s (min %.0f max %.0f, n=%zu)\n", k.name.c_str(), p, so.median, so.min, so.max, so.n);
          continue;
        }
        auto st = Stats::of(theirs), sr = Stats::of(ratio);
        std::printf("= %s P=%u: ours median %.0f ops/s, theirs median %.0f ops/s; ours/theirs per pair: median %.3f "
                    "(min %.3f, max %.3f, n=%zu)%s\n",
                    k.name.c_str(), p, so.median, st.median, sr.median, sr.min, sr.max, sr.n,
                    sr.median < 0.95 ? "  BELOW 0.95" : "");
        dat << k.name << " " << p << " " << so.median << " " << st.median << " " << sr.median << " " << sr.min << " "
            << sr.max << "\n";
        std::fflush(stdout);
      }
    }
    return 0;
  });
}

}  // namespace ekb::bench_compare
