// bench_threads: several pipelined client threads (default 10 threads x 1 connection x P 32)
// writing and reading per-thread hashes vs one shared hash vs plain string keys. The server
// runs commands on one main thread, so this shows the cost of the data layout, not locking.
#include "common.hpp"

using namespace ekb;

namespace ekb::bench_threads {

/// The program bench_threads (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  c.threads = 10;
  c.connections = 1;
  c.pipelines = {32};
  std::uint64_t fields = 5000;
  std::string ops = "write,read";
  Cli cli("bench_threads",
          "Each of --threads threads has --connections connections at each pipeline depth.\n"
          "write: per_thread  HSETEX ek:t:__thread__ EX 900 FIELDS 1 f:__rand_int__ v\n"
          "       shared      HSETEX ek:shared EX 900 FIELDS 1 f:__rand_int__ v\n"
          "       strings     SET ek:s:__thread__:__rand_int__ v EX 900\n"
          "read:  the same keys with HGET / GET, after filling --fields fields per hash (and keys).\n"
          "Records: <out>/threads.jsonl, plot data <out>/threads.dat.");
  c.add_to(cli);
  cli.opt("fields", fields, "fields per hash / string keys per thread (-r)").opt("ops", ops, "write,read or one of them");
  cli.parse(argc, argv);
  return guarded([&] {
    Harness h("threads", c);
    struct V {
      std::string op, layout;
      bench::Template t;
    };
    std::vector<V> vs;
    if (ops.find("write") != std::string::npos) {
      vs.push_back({"write", "per_thread", bench::Template({"HSETEX", "ek:t:__thread__", "EX", "900", "FIELDS", "1", "f:__rand_int__", "v"}, fields)});
      vs.push_back({"write", "shared", bench::Template({"HSETEX", "ek:shared", "EX", "900", "FIELDS", "1", "f:__rand_int__", "v"}, fields)});
      vs.push_back({"write", "strings", bench::Template({"SET", "ek:s:__thread__:__rand_int__", "v", "EX", "900"}, fields)});
    }
    if (ops.find("read") != std::string::npos) {
      vs.push_back({"read", "per_thread", bench::Template({"HGET", "ek:t:__thread__", "f:__rand_int__"}, fields)});
      vs.push_back({"read", "shared", bench::Template({"HGET", "ek:shared", "f:__rand_int__"}, fields)});
      vs.push_back({"read", "strings", bench::Template({"GET", "ek:s:__thread__:__rand_int__"}, fields)});
    }
    auto fill_all = [&] {
      h.flush();
      for (unsigned t = 0; t < c.threads; ++t) {
        std::string id = fmt("%03u", t);
        h.fill({"HSETEX", "ek:t:" + id, "EX", "900", "FIELDS", "1", "f:__rand_int__", "v"}, fields);
        h.fill({"SET", "ek:s:" + id + ":__rand_int__", "v", "EX", "900"}, fields);
      }
      h.fill({"HSETEX", "ek:shared", "EX", "900", "FIELDS", "1", "f:__rand_int__", "v"}, fields);
    };
    std::filesystem::create_directories(c.out);
    std::ofstream dat(h.out_path("threads.dat"), std::ios::app);
    for (unsigned p : c.pipelines) {
      std::map<std::string, std::vector<double>> got, cpu;
      for (unsigned rep = 0; rep < c.repeat; ++rep)
        for (std::size_t i = 0; i < vs.size(); ++i) {
          const auto& x = vs[(i + rep) % vs.size()];
          fill_all();
          auto r = h.run(x.op + " " + x.layout, h.options(p), x.t,
                         {{"op", x.op}, {"layout", x.layout}, {"fields", fields}, {"command", x.t.to_string()}});
          got[x.op + " " + x.layout].push_back(r.ops_per_sec());
          cpu[x.op + " " + x.layout].push_back(per_op_us(r.server_cpu_s, r));
        }
      for (const auto& x : vs) {
        auto s = Stats::of(got[x.op + " " + x.layout]);
        auto sc = Stats::of(cpu[x.op + " " + x.layout]);
        std::printf("= T=%u P=%u %-5s %-10s median %9.0f ops/s (min %.0f, max %.0f, n=%zu); server CPU %.3f us/op\n", c.threads, p, x.op.c_str(),
                    x.layout.c_str(), s.median, s.min, s.max, s.n, sc.median);
        dat << p << " \"" << x.op << " " << x.layout << "\" " << s.median << " " << s.min << " " << s.max << " " << sc.median << "\n";
      }
      std::fflush(stdout);
    }
    return 0;
  });
}

}  // namespace ekb::bench_threads
