// bench_hexpire: the cost of updating field TTLs: HEXPIRE on existing fields that already have
// a TTL (each update moves the field to a new expiry time), 1 and 10 fields per command, next to
// key-level EXPIRE on string keys. Nothing expires during the run (TTLs of a day).
#include "common.hpp"

using namespace ekb;

namespace ekb::bench_hexpire {

/// The program bench_hexpire (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  std::uint64_t fields = 5000;
  Cli cli("bench_hexpire",
          "Setup: hash ek:h of --fields fields, each with a TTL (HSETEX EX 86400), and --fields string\n"
          "keys ek:s:<n> with EX 86400. Variants:\n"
          "  hexpire_1   HEXPIRE ek:h 86400 FIELDS 1 f:__rand_int__\n"
          "  hexpire_10  HEXPIRE ek:h 86400 FIELDS 10 f:__rand_int__ x10 (ops/s counts commands)\n"
          "  expire      EXPIRE ek:s:__rand_int__ 86400  (key-level baseline)\n"
          "  hpexpire_gt HPEXPIRE ek:h 1000 GT FIELDS 1 f:__rand_int__ (a refused update: the GT check)\n"
          "Records: <out>/hexpire.jsonl, plot data <out>/hexpire.dat.");
  c.add_to(cli);
  cli.opt("fields", fields, "fields in the hash and string keys (-r)");
  cli.parse(argc, argv);
  return guarded([&] {
    Harness h("hexpire", c);
    h.flush();
    h.fill({"HSETEX", "ek:h", "EX", "86400", "FIELDS", "1", "f:__rand_int__", "v"}, fields);
    h.fill({"SET", "ek:s:__rand_int__", "v", "EX", "86400"}, fields);
    std::vector<std::string> ten = {"HEXPIRE", "ek:h", "86400", "FIELDS", "10"};
    for (int i = 0; i < 10; ++i) ten.push_back("f:__rand_int__");
    std::vector<std::pair<std::string, bench::Template>> vs = {
        {"hexpire_1", bench::Template({"HEXPIRE", "ek:h", "86400", "FIELDS", "1", "f:__rand_int__"}, fields)},
        {"hexpire_10", bench::Template(ten, fields)},
        {"expire", bench::Template({"EXPIRE", "ek:s:__rand_int__", "86400"}, fields)},
        {"hpexpire_gt", bench::Template({"HPEXPIRE", "ek:h", "1000", "GT", "FIELDS", "1", "f:__rand_int__"}, fields)}};
    std::filesystem::create_directories(c.out);
    std::ofstream dat(h.out_path("hexpire.dat"), std::ios::app);
    for (unsigned p : c.pipelines) {
      std::map<std::string, std::vector<double>> got, cpu;
      for (unsigned rep = 0; rep < c.repeat; ++rep)
        for (std::size_t i = 0; i < vs.size(); ++i) {
          const auto& [name, t] = vs[(i + rep) % vs.size()];
          auto r = h.run(name, h.options(p), t, {{"variant", name}, {"fields", fields}, {"command", t.to_string()}});
          got[name].push_back(r.ops_per_sec());
          cpu[name].push_back(per_op_us(r.server_cpu_s, r));
        }
      for (const auto& [name, t] : vs) {
        auto s = Stats::of(got[name]);
        auto sc = Stats::of(cpu[name]);
        double per_cmd = name == "hexpire_10" ? 10 : 1;
        std::printf("= P=%u %-12s median %9.0f ops/s = %9.0f field updates/s (min %.0f, max %.0f, n=%zu); server CPU %.3f us/command\n", p,
                    name.c_str(), s.median, s.median * per_cmd, s.min, s.max, s.n, sc.median);
        dat << p << " " << name << " " << s.median << " " << s.min << " " << s.max << " " << s.median * per_cmd << " " << sc.median << "\n";
      }
      std::fflush(stdout);
    }
    auto ttl = h.must({"HTTL", "ek:h", "FIELDS", "1", "f:000000000000"});
    std::printf("# HTTL ek:h f:000000000000 after the runs -> %s (fields left: %lld)\n", ttl.to_string().c_str(),
                h.must({"HLEN", "ek:h"}).as_integer());
    return 0;
  });
}

}  // namespace ekb::bench_hexpire
