// bench_hget_ttl: does a TTL on every field slow HGET? Two hashes of --fields fields on one
// server, one plain, one with a TTL (far in the future) on every field; HGET of a random field,
// unpipelined and pipelined, runs of the two variants alternated (ABBA) --repeat times; prints
// each variant's median/min/max and the paired ratio ttl/plain with a 95 % confidence interval.
#include "common.hpp"

using namespace ekb;

namespace ekb::bench_hget_ttl {

/// The program bench_hget_ttl (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  c.repeat = 6;
  std::uint64_t fields = 5000;
  unsigned value_size = 16;
  Cli cli("bench_hget_ttl",
          "HGET ek:plain f:__rand_int__ vs HGET ek:ttl f:__rand_int__: two hashes of --fields fields, the\n"
          "second with HSETEX ... EX 86400 on every field (nothing expires during the run). Runs are\n"
          "paired and alternated; the ratio is ttl/plain ops/s per pair, its mean with a Student-t\n"
          "95 % interval; the same for the server's CPU time per HGET (INFO used_cpu_*), which other load\n"
          "on the machine disturbs far less than ops/s. Records: <out>/hget_ttl.jsonl; plot data <out>/hget_ttl.dat.");
  c.add_to(cli);
  cli.opt("fields", fields, "fields per hash (field names f:000000000000 ...)")
      .opt("value-size", value_size, "bytes per value");
  cli.parse(argc, argv);
  return guarded([&] {
    Harness h("hget_ttl", c);
    h.flush();
    std::string value(value_size, 'v');
    h.fill({"HSET", "ek:plain", "f:__rand_int__", value}, fields);
    h.fill({"HSETEX", "ek:ttl", "EX", "86400", "FIELDS", "1", "f:__rand_int__", value}, fields);
    for (const char* k : {"ek:plain", "ek:ttl"}) {
      auto len = h.must({"HLEN", k}).as_integer();
      auto enc = h.must({"OBJECT", "ENCODING", k}).str();
      auto mem = h.must({"MEMORY", "USAGE", k}).as_integer();
      std::printf("# %s: %lld fields, encoding %s, MEMORY USAGE %lld B (%.1f B/field)\n", k, len, enc.c_str(), mem,
                  static_cast<double>(mem) / static_cast<double>(len));
      if (static_cast<std::uint64_t>(len) != fields) throw std::runtime_error(std::string(k) + " was not filled");
    }
    auto ttl = h.must({"HTTL", "ek:ttl", "FIELDS", "1", "f:000000000000"});
    std::printf("# HTTL ek:ttl f:000000000000 -> %s\n", ttl.to_string().c_str());
    std::filesystem::create_directories(c.out);
    std::ofstream dat(h.out_path("hget_ttl.dat"), std::ios::app), sum(h.out_path("hget_ttl_summary.dat"), std::ios::app);
    bench::Template plain({"HGET", "ek:plain", "f:__rand_int__"}, fields), withttl({"HGET", "ek:ttl", "f:__rand_int__"}, fields);
    for (unsigned p : c.pipelines) {
      std::vector<double> a, b, ratio, p50a, p50b, cpua, cpub, cpu_ratio;
      for (unsigned rep = 0; rep < c.repeat; ++rep) {
        auto run = [&](bool t) {
          auto r = h.run(t ? "hget ttl" : "hget plain", h.options(p), t ? withttl : plain,
                         {{"variant", t ? "ttl" : "plain"}, {"fields", fields}, {"command", (t ? withttl : plain).to_string()}});
          (t ? b : a).push_back(r.ops_per_sec());
          (t ? p50b : p50a).push_back(static_cast<double>(r.latency_ns.percentile(50)) / 1e3);
          (t ? cpub : cpua).push_back(per_op_us(r.server_cpu_s, r));
          dat << p << " " << (t ? 1 : 0) << " " << rep << " " << r.ops_per_sec() << " " << r.latency_ns.percentile(50) / 1e3
              << " " << r.latency_ns.percentile(99) / 1e3 << " " << per_op_us(r.server_cpu_s, r) << "\n";
        };
        bool ttl_first = rep % 2 == 1;  // ABBA: plain,ttl / ttl,plain / ...
        run(ttl_first);
        run(!ttl_first);
        ratio.push_back(b.back() / a.back());
        cpu_ratio.push_back(cpub.back() / cpua.back());
      }
      auto sa = Stats::of(a), sb = Stats::of(b), sr = Stats::of(ratio);
      std::printf("= P=%u plain: median %.0f ops/s (min %.0f, max %.0f, sd %.0f); ttl: median %.0f (min %.0f, max %.0f, sd %.0f)\n",
                  p, sa.median, sa.min, sa.max, sa.sd, sb.median, sb.min, sb.max, sb.sd);
      std::printf("= P=%u ttl/plain per pair: mean %.3f, 95%% CI [%.3f, %.3f], median %.3f, min %.3f, max %.3f, n=%zu: %s\n",
                  p, sr.mean, sr.mean - sr.ci95, sr.mean + sr.ci95, sr.median, sr.min, sr.max, sr.n,
                  sr.n < 2 ? "too few pairs for an interval"
                  : sr.mean + sr.ci95 < 1 ? "field TTLs make HGET slower"
                  : sr.mean - sr.ci95 > 1 ? "field TTLs make HGET faster (noise? check the load)"
                                          : "no difference detectable at this spread");
      auto ca = Stats::of(cpua), cb = Stats::of(cpub), cr = Stats::of(cpu_ratio);
      std::printf("= P=%u server CPU per HGET: plain median %.3f us, ttl median %.3f us; ttl/plain per pair: mean %.3f, "
                  "95%% CI [%.3f, %.3f], min %.3f, max %.3f, n=%zu\n",
                  p, ca.median, cb.median, cr.mean, cr.mean - cr.ci95, cr.mean + cr.ci95, cr.min, cr.max, cr.n);
      sum << p << " " << sa.median << " " << sa.min << " " << sa.max << " " << sb.median << " " << sb.min << " " << sb.max
          << " " << sr.mean << " " << sr.ci95 << " " << cr.mean << " " << cr.ci95 << " " << ca.median << " " << cb.median << "\n";
      std::fflush(stdout);
    }
    return 0;
  });
}

}  // namespace ekb::bench_hget_ttl
