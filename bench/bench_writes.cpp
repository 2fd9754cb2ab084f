// bench_writes: what a TTL costs on writes: HSETEX (field with TTL) vs SET EX (string key with
// TTL) vs HSET (field without TTL), in two shapes: many small keys ("keys": one field per key,
// like user:<id> -> auth_token) and one big hash ("hash": one field per request in one hash).
// Each run starts from an empty server (FLUSHALL); variants rotate order across --repeat.
#include "common.hpp"

using namespace ekb;

namespace ekb::bench_writes {

/// The program bench_writes (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  std::uint64_t keys = 100000;
  unsigned value_size = 35;
  std::string shapes = "keys,hash";
  Cli cli("bench_writes",
          "keys shape (keyspace --keys):\n"
          "  HSETEX ek:u:__rand_int__ EX 900 FIELDS 1 auth_token V\n"
          "  SET    ek:u:__rand_int__:auth_token V EX 900\n"
          "  HSET   ek:u:__rand_int__ auth_token V\n"
          "hash shape (one hash, --keys fields):\n"
          "  HSETEX ek:big EX 900 FIELDS 1 f:__rand_int__ V\n"
          "  SET    ek:s:__rand_int__ V EX 900\n"
          "  HSET   ek:big f:__rand_int__ V\n"
          "Every run starts from FLUSHALL; the warm-up inserts, the measured part mostly overwrites\n"
          "when requests exceed the keyspace. Records: <out>/writes.jsonl, plot data <out>/writes.dat.");
  c.add_to(cli);
  cli.opt("keys", keys, "keyspace (-r) of every variant")
      .opt("value-size", value_size, "bytes per value")
      .opt("shapes", shapes, "keys,hash or one of them");
  cli.parse(argc, argv);
  return guarded([&] {
    Harness h("writes", c);
    const std::string v(value_size, 'v');
    struct Variant {
      std::string shape, name;
      bench::Template t;
    };
    std::vector<Variant> vs;
    if (shapes.find("keys") != std::string::npos) {
      vs.push_back({"keys", "HSETEX", bench::Template({"HSETEX", "ek:u:__rand_int__", "EX", "900", "FIELDS", "1", "auth_token", v}, keys)});
      vs.push_back({"keys", "SET EX", bench::Template({"SET", "ek:u:__rand_int__:auth_token", v, "EX", "900"}, keys)});
      vs.push_back({"keys", "HSET", bench::Template({"HSET", "ek:u:__rand_int__", "auth_token", v}, keys)});
    }
    if (shapes.find("hash") != std::string::npos) {
      vs.push_back({"hash", "HSETEX", bench::Template({"HSETEX", "ek:big", "EX", "900", "FIELDS", "1", "f:__rand_int__", v}, keys)});
      vs.push_back({"hash", "SET EX", bench::Template({"SET", "ek:s:__rand_int__", v, "EX", "900"}, keys)});
      vs.push_back({"hash", "HSET", bench::Template({"HSET", "ek:big", "f:__rand_int__", v}, keys)});
    }
    std::filesystem::create_directories(c.out);
    std::ofstream dat(h.out_path("writes.dat"), std::ios::app);
    for (unsigned p : c.pipelines) {
      std::map<std::string, std::vector<double>> got, cpu;
      for (unsigned rep = 0; rep < c.repeat; ++rep) {
        for (std::size_t i = 0; i < vs.size(); ++i) {
          const auto& x = vs[(i + rep) % vs.size()];
          h.flush();
          auto r = h.run(x.shape + " " + x.name, h.options(p), x.t,
                         {{"shape", x.shape}, {"variant", x.name}, {"keyspace", keys}, {"command", x.t.to_string()}});
          got[x.shape + " " + x.name].push_back(r.ops_per_sec());
          cpu[x.shape + " " + x.name].push_back(per_op_us(r.server_cpu_s, r));
        }
      }
      for (const auto& x : vs) {
        auto s = Stats::of(got[x.shape + " " + x.name]);
        auto sc = Stats::of(cpu[x.shape + " " + x.name]);
        std::printf("= P=%u %-5s %-7s median %9.0f ops/s (min %.0f, max %.0f, n=%zu); server CPU %.3f us/op\n", p, x.shape.c_str(), x.name.c_str(),
                    s.median, s.min, s.max, s.n, sc.median);
        dat << p << " \"" << x.shape << " " << x.name << "\" " << s.median << " " << s.min << " " << s.max << " " << sc.median << "\n";
      }
      std::fflush(stdout);
    }
    return 0;
  });
}

}  // namespace ekb::bench_writes
