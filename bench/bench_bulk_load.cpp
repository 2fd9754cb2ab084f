// bench_bulk_load: the old "1.25 billion values" layout (25,000,000 hashes of 50 fields of small
// integers; the 2010 Redis 1.3.16 run took 2 h 40 min and 17 GB) at a --scale factor: load rate,
// bytes per value, the memory curve, and a linear estimate of the full run with its basis.
#include <charconv>

#include "common.hpp"

using namespace ekb;

namespace {
void put_bulk(std::string& out, std::string_view s) {
  char n[24];
  auto e = std::to_chars(n, n + sizeof n, s.size()).ptr;
  out += '$';
  out.append(n, e);
  out += "\r\n";
  out.append(s.data(), s.size());
  out += "\r\n";
}
void put_int(std::string& out, std::uint64_t v) {
  char n[24];
  auto e = std::to_chars(n, n + sizeof n, v).ptr;
  put_bulk(out, std::string_view(n, static_cast<std::size_t>(e - n)));
}
}  // namespace

int main(int argc, char** argv) {
  Common c;
  c.threads = 1;
  c.connections = 4;
  c.pipelines = {16};
  c.warmup = 0;
  double scale = 1.0 / 25;
  std::uint64_t full_hashes = 25000000, fields = 50;
  std::string prefix = "h:";
  double sample_s = 1;
  std::uint64_t per_command = 0;
  bool force = false;
  Cli cli("bench_bulk_load",
          "Loads round(--full-hashes * --scale) hashes <prefix><i> with HSET <key> 0 v0 1 v1 ... (one HSET\n"
          "per hash, or --per-command fields per HSET; --fields fields named 0..n-1, values small integers (i*31+j) % 1000), from --threads x\n"
          "--connections connections at the first of --pipelines. Samples INFO memory every --sample\n"
          "seconds (the memory curve: <out>/bulk_load_curve.dat), reports values/s and used_memory\n"
          "bytes per value, and estimates the full layout linearly. Refuses when MemAvailable looks\n"
          "too small (about 3x the expected 8-10 B/value) unless --force. Record: <out>/bulk_load.jsonl.");
  c.add_to(cli);
  cli.opt("scale", scale, "fraction of the full layout, e.g. 1/25 or 0.001")
      .opt("full-hashes", full_hashes, "hashes in the full layout")
      .opt("fields", fields, "fields per hash")
      .opt("prefix", prefix, "key prefix")
      .opt("per-command", per_command, "fields per HSET (0: all --fields in one HSET; 1: the 2010 one-field HSET)")
      .opt("sample", sample_s, "seconds between memory samples")
      .opt("force", force, "skip the free-memory check");
  cli.parse(argc, argv);
  return guarded([&] {
    const auto hashes = static_cast<std::uint64_t>(std::llround(static_cast<double>(full_hashes) * scale));
    const std::uint64_t values = hashes * fields, full_values = full_hashes * fields;
    if (per_command == 0) per_command = fields;
    if (fields % per_command) throw std::invalid_argument("--per-command must divide --fields");
    const std::uint64_t chunks = fields / per_command, commands = hashes * chunks;
    auto m = bench::Machine::now();
    const double need_kib = static_cast<double>(values) * 30 / 1024;
    std::printf("# %llu hashes x %llu fields = %llu values (scale %g of %llu); MemAvailable %.1f GiB, check needs %.1f GiB\n",
                (unsigned long long)hashes, (unsigned long long)fields, (unsigned long long)values, scale,
                (unsigned long long)full_values, static_cast<double>(m.mem_available_kib) / 1048576, need_kib / 1048576);
    if (!force && need_kib > static_cast<double>(m.mem_available_kib))
      throw std::runtime_error("not enough free memory for this scale (use a smaller --scale, or --force)");
    Harness h("bulk_load", c);
    h.flush();
    auto used = [&] {
      auto i = ek::server::Info::fetch(h.ctl(), "memory");
      return std::make_pair(i.get_int("used_memory"), i.get_int("used_memory_rss"));
    };
    const auto [base_used, base_rss] = used();
    auto o = h.options(c.pipelines.at(0));
    o.requests = commands;
    o.duration_s = 0;
    o.warmup_s = 0;
    o.probe = false;
    o.tick_interval = std::chrono::milliseconds(static_cast<long long>(sample_s * 1000));
    std::filesystem::create_directories(c.out);
    std::ofstream curve(h.out_path("bulk_load_curve.dat"));
    curve << "# elapsed_s values used_memory_bytes used_memory_rss_bytes\n";
    curve << 0 << " " << 0 << " " << base_used << " " << base_rss << "\n";
    ek::resp::Client mon = h.target().client();
    std::vector<std::pair<double, std::uint64_t>> pts;  // (elapsed, values)
    double last_print = 0;
    o.on_tick = [&](const bench::Progress& p) {
      auto i = ek::server::Info::fetch(mon, "memory");
      curve << p.elapsed_s << " " << p.ops * per_command << " " << i.get_int("used_memory") << " " << i.get_int("used_memory_rss") << "\n";
      pts.emplace_back(p.elapsed_s, p.ops * per_command);
      if (p.elapsed_s - last_print >= 10) {
        last_print = p.elapsed_s;
        std::printf("  %6.1f s: %llu values, used_memory %.2f GiB, load %.2f\n", p.elapsed_s,
                    (unsigned long long)(p.ops * per_command), static_cast<double>(i.get_int("used_memory")) / (1 << 30),
                    bench::LoadAvg::now().m1);
        std::fflush(stdout);
      }
    };
    const std::uint64_t T = o.threads;
    auto gen = [&](bench::RequestContext& ctx, std::string& out) {
      // Thread t sends commands [first(t), first(t+1)): the same split as Load's request quota.
      const std::uint64_t q = commands / T, r = commands % T;
      const std::uint64_t cmd = ctx.thread * q + std::min<std::uint64_t>(ctx.thread, r) + ctx.seq;
      const std::uint64_t i = cmd / chunks, j0 = (cmd % chunks) * per_command;
      out += '*';
      out += std::to_string(2 + 2 * per_command);
      out += "\r\n$4\r\nHSET\r\n";
      put_bulk(out, prefix + std::to_string(i));
      for (std::uint64_t j = j0; j < j0 + per_command; ++j) {
        put_int(out, j);
        put_int(out, (i * 31 + j) % 1000);
      }
    };
    auto res = h.run("bulk load", o, gen, {{"hashes", hashes}, {"fields", fields}, {"fields_per_command", per_command}, {"scale", scale}, {"prefix", prefix}});
    const auto [end_used, end_rss] = used();
    curve << res.elapsed_s << " " << values << " " << end_used << " " << end_rss << "\n";
    auto ks = ek::server::Info::fetch(h.ctl(), "keyspace");
    auto enc = h.must({"OBJECT", "ENCODING", prefix + "0"}).str();
    auto hlen = h.must({"HLEN", prefix + std::to_string(hashes - 1)}).as_integer();
    const double rate = static_cast<double>(values) / res.elapsed_s;
    const double bpv = static_cast<double>(end_used - base_used) / static_cast<double>(values);
    const double rss_bpv = static_cast<double>(end_rss - base_rss) / static_cast<double>(values);
    // Trend: rate in the first and second half of the samples.
    double r1 = 0, r2 = 0;
    if (pts.size() >= 4) {
      auto mid = pts[pts.size() / 2], last = pts.back();
      r1 = static_cast<double>(mid.second) / mid.first;
      r2 = static_cast<double>(last.second - mid.second) / (last.first - mid.first);
    }
    const double full_s = static_cast<double>(full_values) / rate;
    const double full_gb = (static_cast<double>(base_used) + bpv * static_cast<double>(full_values)) / 1e9;
    std::printf("= loaded %llu values (%llu hashes; keyspace %s; %s encoding; last HLEN %lld) in %.1f s: %.0f values/s "
                "(%.0f HSET/s of %llu fields; first half %.0f, second half %.0f values/s)\n",
                (unsigned long long)values, (unsigned long long)hashes, ks.get("db0").value_or("-").c_str(), enc.c_str(), hlen,
                res.elapsed_s, rate, rate / static_cast<double>(per_command), (unsigned long long)per_command, r1, r2);
    std::printf("= used_memory %.1f MB -> %.1f MB: %.2f B/value (rss %.2f B/value)\n", base_used / 1e6, end_used / 1e6, bpv, rss_bpv);
    std::printf("= estimate for %llu values (linear in values from this run): %.0f s = %.1f h load, %.1f GB used_memory "
                "(2010, Redis 1.3.16: 2 h 40 min, 17 GB)\n",
                (unsigned long long)full_values, full_s, full_s / 3600, full_gb);
    auto la = bench::LoadAvg::now();
    bench::append_jsonl(h.out_path("bulk_load_summary.jsonl"),
                        {{"benchmark", "bulk_load_summary"}, {"time_utc", bench::utc_now()},
                         {"server", bench::identity_json(h.identity())}, {"machine", bench::machine_json()},
                         {"loadavg_after", {la.m1, la.m5, la.m15}}, {"params", bench::params_json(o)},
                         {"hashes", hashes}, {"fields", fields}, {"fields_per_command", per_command}, {"scale", scale}, {"encoding", enc},
                         {"values_per_sec", rate}, {"values_per_sec_first_half", r1}, {"values_per_sec_second_half", r2},
                         {"elapsed_s", res.elapsed_s}, {"used_memory_base", base_used}, {"used_memory_end", end_used},
                         {"bytes_per_value", bpv}, {"rss_bytes_per_value", rss_bpv},
                         {"estimate_full", {{"values", full_values}, {"load_s", full_s}, {"used_memory_gb", full_gb},
                                            {"basis", "linear in values from this run's rate and used_memory delta"}}}});
    return 0;
  });
}
