// bench_active_expire: the cost of the server's active expiry of hash fields. Loads --fields
// fields over --keys hashes, gives them expiry times either all at one instant T0 ("instant") or
// spread evenly over [T0, T0 + --window-ms] ("spread"; every hash gets fields across the whole
// window), then touches nothing and watches INFO from T0 until every field is gone: fields
// expired per second, the server's expire_cycle_cpu_milliseconds per 1,000 fields, and the curve
// of fields left over time. T0 is set after loading, far enough ahead that nothing expires early.
#include <thread>

#include <expirykit/server/clock.hpp>

#include "common.hpp"

using namespace ekb;

namespace ekb::bench_active_expire {

namespace {
struct Sample {
  double t_s;                ///< seconds since T0 (server clock)
  long long expired;         ///< fields expired since the start
  long long cycle_cpu_ms;    ///< expire_cycle_cpu_milliseconds since the start
  double server_cpu_s;       ///< used_cpu_user + used_cpu_sys since the start
};
}  // namespace

/// The program bench_active_expire (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Common c;
  std::uint64_t fields = 1000000, keys = 100, window_ms = 10000, batch = 100;
  std::string modes = "instant,spread";
  unsigned hz = 10, poll_ms = 20;
  double timeout_s = 600;
  Cli cli("bench_active_expire",
          "Per mode: FLUSHALL; HSET --fields fields (f<n>, value v) over --keys hashes ek:ae:<k>;\n"
          "HPEXPIREAT them (--batch fields per command) to T0 (instant) or spread over the window;\n"
          "then poll INFO stats every --poll-ms from T0 until all fields expired. Active expiry is the\n"
          "only thing that removes them (no reads). expired_fields (Valkey) / expired_subkeys (Redis).\n"
          "Records: <out>/active_expire.jsonl; curves <out>/active_expire_<mode>.dat.\n"
          "Uses only --out, --repeat, --server, --allow-flush of the common options.");
  c.add_to(cli);
  cli.opt("fields", fields, "fields in total")
      .opt("keys", keys, "hashes (fields are split evenly)")
      .opt("window-ms", window_ms, "spread mode: expiry times spread over this many ms")
      .opt("batch", batch, "fields per HSET / HPEXPIREAT command")
      .opt("modes", modes, "instant,spread or one of them")
      .opt("hz", hz, "server hz (active expiry runs hz times a second)")
      .opt("poll-ms", poll_ms, "INFO polling interval, ms")
      .opt("timeout", timeout_s, "give up this many seconds after the last expiry time");
  cli.parse(argc, argv);
  return guarded([&] {
    if (keys == 0 || fields % keys || (fields / keys) % batch)
      throw std::invalid_argument("--fields must split evenly into --keys hashes of whole --batch batches");
    ek::process::ServerOptions so;
    so.set("hz", std::to_string(hz));
    Harness h("active_expire", c, so);
    if (!h.identity().caps.hexpire) throw std::runtime_error("this server has no field TTLs (HEXPIRE)");
    if (h.target().external()) h.must({"CONFIG", "SET", "hz", std::to_string(hz)});
    const std::uint64_t commands = fields / batch;
    // Command i covers hash i % keys, fields (i / keys) * batch ... + batch - 1, so each hash gets
    // fields from every part of the window in spread mode.
    auto write_cmd = [&](std::uint64_t i, std::string& out, const std::string& head, const std::string* at) {
      std::uint64_t k = i % keys, f0 = (i / keys) * batch;
      std::vector<std::string> a = {head, "ek:ae:" + std::to_string(k)};
      if (at) a.insert(a.end(), {*at, "FIELDS", std::to_string(batch)});
      for (std::uint64_t j = 0; j < batch; ++j) {
        a.push_back("f" + std::to_string(f0 + j));
        if (!at) a.push_back("v");
      }
      bench::append_resp(out, std::vector<std::string_view>(a.begin(), a.end()));
    };
    auto quick = [&](std::uint64_t n, bench::Generator g) {
      bench::LoadOptions o;
      o.host = h.target().host();
      o.port = h.target().port();
      o.connections = 1;
      o.pipeline = 64;
      o.requests = n;
      o.probe = false;
      o.server_cpu = false;
      auto r = bench::Load(o, std::move(g)).run();
      if (r.errors) throw std::runtime_error(std::to_string(r.errors) + " error replies while loading");
      return r.elapsed_s;
    };
    const char* expired_stat = h.identity().flavor == ek::server::Flavor::valkey ? "expired_fields" : "expired_subkeys";
    auto sample = [&](long long t0_ms) {
      auto st = ek::server::Info::fetch(h.ctl(), "stats");
      auto cpu = ek::server::Info::fetch(h.ctl(), "cpu");
      Sample s;
      s.t_s = static_cast<double>(ek::server::now_ms(h.ctl()) - t0_ms) / 1e3;
      s.expired = st.get_int(expired_stat, -1);
      s.cycle_cpu_ms = st.get_int("expire_cycle_cpu_milliseconds", -1);
      s.server_cpu_s = std::stod(cpu.get("used_cpu_user").value_or("0")) + std::stod(cpu.get("used_cpu_sys").value_or("0"));
      return s;
    };
    std::filesystem::create_directories(c.out);
    std::ofstream sum(h.out_path("active_expire_summary.dat"), std::ios::app);
    std::stringstream ms(modes);
    std::vector<std::string> mode_list;
    for (std::string m; std::getline(ms, m, ',');) mode_list.push_back(m);
    for (unsigned rep = 0; rep < c.repeat; ++rep)
      for (const auto& mode : mode_list) {
        if (mode != "instant" && mode != "spread") throw std::invalid_argument("unknown mode " + mode);
        const bool spread = mode == "spread";
        h.flush();
        auto load_before = bench::LoadAvg::now();
        double fill_s = quick(commands, [&](bench::RequestContext& ctx, std::string& out) { write_cmd(ctx.seq, out, "HSET", nullptr); });
        // HPEXPIREAT takes about as long as HSET did; leave 3x that (at least 2 s) before T0.
        const long long t0 = ek::server::now_ms(h.ctl()) + std::max<long long>(2000, static_cast<long long>(3000 * fill_s));
        const long long w = spread ? static_cast<long long>(window_ms) : 0;
        double exp_s = quick(commands, [&](bench::RequestContext& ctx, std::string& out) {
          std::string at = std::to_string(t0 + (spread ? w * static_cast<long long>(ctx.seq) / static_cast<long long>(commands) : 0));
          write_cmd(ctx.seq, out, "HPEXPIREAT", &at);
        });
        long long left_ms = t0 - ek::server::now_ms(h.ctl());
        auto ks = ek::server::Info::fetch(h.ctl(), "keyspace");
        std::printf("# %s: %llu fields in %llu hashes loaded in %.2f s, TTLs set in %.2f s, T0 in %lld ms; keyspace: %s\n",
                    mode.c_str(), (unsigned long long)fields, (unsigned long long)keys, fill_s, exp_s, left_ms,
                    ks.get("db0").value_or("-").c_str());
        if (left_ms < 0) std::printf("# WARNING: loading overran T0: fields began expiring while loading\n");
        while (ek::server::now_ms(h.ctl()) < t0 - 50) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const Sample base = sample(t0);
        std::vector<Sample> curve;
        const double give_up = static_cast<double>(w) / 1e3 + timeout_s;
        for (;;) {
          Sample s = sample(t0);
          s.expired -= base.expired;
          s.cycle_cpu_ms -= base.cycle_cpu_ms;
          s.server_cpu_s -= base.server_cpu_s;
          curve.push_back(s);
          if (s.expired >= static_cast<long long>(fields) || s.t_s > give_up) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
        }
        const Sample& end = curve.back();
        // The first sample at which all were gone bounds the drain time from above (by one poll).
        double drain_s = end.t_s;
        double rate = drain_s > 0 ? static_cast<double>(end.expired) / drain_s : 0;
        double peak = 0;  // best rate over any 1 s stretch of samples
        for (std::size_t i = 0, j = 0; j < curve.size(); ++j) {
          while (curve[j].t_s - curve[i].t_s > 1.0) ++i;
          double dt = curve[j].t_s - curve[i].t_s;
          if (dt >= 0.5) peak = std::max(peak, static_cast<double>(curve[j].expired - curve[i].expired) / dt);
        }
        double cpu_per_k = end.expired ? static_cast<double>(end.cycle_cpu_ms) / (static_cast<double>(end.expired) / 1e3) : 0;
        bool complete = end.expired >= static_cast<long long>(fields);
        std::printf("= %-7s %s: %lld of %llu fields expired in %.3f s after T0 (window %.1f s, lag %.3f s): %.0f fields/s "
                    "overall, peak %.0f fields/s over 1 s; expire_cycle_cpu_milliseconds %lld = %.3f ms per 1,000 fields; "
                    "server CPU %.2f s; load %s\n",
                    mode.c_str(), complete ? "done" : "INCOMPLETE", end.expired, (unsigned long long)fields, drain_s,
                    static_cast<double>(w) / 1e3, drain_s - static_cast<double>(w) / 1e3, rate, peak, end.cycle_cpu_ms,
                    cpu_per_k, end.server_cpu_s, bench::LoadAvg::now().to_string().c_str());
        std::fflush(stdout);
        std::ofstream dat(h.out_path("active_expire_" + mode + ".dat"));
        dat << "# t_s_since_T0 fields_left expire_cycle_cpu_ms server_cpu_s\n";
        for (const auto& s : curve) dat << s.t_s << " " << (static_cast<long long>(fields) - s.expired) << " " << s.cycle_cpu_ms << " " << s.server_cpu_s << "\n";
        sum << mode << " " << fields << " " << drain_s << " " << rate << " " << peak << " " << cpu_per_k << "\n";
        auto la = bench::LoadAvg::now();
        bench::append_jsonl(h.out_path("active_expire.jsonl"),
                            {{"benchmark", "active_expire"}, {"mode", mode}, {"time_utc", bench::utc_now()},
                             {"server", bench::identity_json(h.identity())}, {"machine", bench::machine_json()},
                             {"loadavg_before", {load_before.m1, load_before.m5, load_before.m15}},
                             {"loadavg_after", {la.m1, la.m5, la.m15}},
                             {"params", {{"fields", fields}, {"keys", keys}, {"window_ms", w}, {"batch", batch}, {"hz", hz}, {"poll_ms", poll_ms}}},
                             {"result", {{"complete", complete}, {"expired", end.expired}, {"drain_s", drain_s},
                                         {"fields_per_sec", rate}, {"peak_fields_per_sec_1s", peak},
                                         {"expire_cycle_cpu_ms", end.cycle_cpu_ms}, {"expire_cycle_cpu_ms_per_1000_fields", cpu_per_k},
                                         {"server_cpu_s", end.server_cpu_s}, {"load_s", fill_s}, {"ttl_set_s", exp_s},
                                         {"t0_margin_ms", left_ms}}}});
      }
    return 0;
  });
}

}  // namespace ekb::bench_active_expire
