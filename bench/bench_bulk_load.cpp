// bench_bulk_load: the old "1.25 billion values" layout (25,000,000 hashes of 50 fields of small
// integers; the 2010 Redis 1.3.16 run took 2 h 40 min and 17 GB) at a --scale factor: load rate,
// bytes per value, the memory curve, and a linear estimate of the full run with its basis.
// With --cluster-primaries N, the same layout on a kit-spawned cluster of N primaries: the hashes
// are split by hash slot, and each primary gets its share from its own bench::Load (its own
// connections, the same pipelining), all N loads at once, one thread each.
#include <atomic>
#include <charconv>
#include <chrono>
#include <exception>
#include <thread>

#include <expirykit/cluster/slot.hpp>
#include <expirykit/process/cluster.hpp>
#include <expirykit/process/under_test.hpp>

#include "common.hpp"

using namespace ekb;

namespace ekb::bench_bulk_load {

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

/// The layout and how it is sent: hash i is <prefix><i>, filled by `chunks` HSETs of
/// `per_command` fields each (field j holds (i*31+j) % 1000).
struct Layout {
  std::uint64_t hashes = 0, fields = 0, per_command = 0, chunks = 0;
  std::string prefix;
  std::uint64_t values() const { return hashes * fields; }
  std::uint64_t commands() const { return hashes * chunks; }
  std::string key(std::uint64_t i) const { return prefix + std::to_string(i); }
  /// Appends HSET number `chunk` of hash i.
  void hset(std::string& out, std::uint64_t i, std::uint64_t chunk) const {
    out += '*';
    out += std::to_string(2 + 2 * per_command);
    out += "\r\n$4\r\nHSET\r\n";
    put_bulk(out, key(i));
    const std::uint64_t j0 = chunk * per_command;
    for (std::uint64_t j = j0; j < j0 + per_command; ++j) {
      put_int(out, j);
      put_int(out, (i * 31 + j) % 1000);
    }
  }
};

/// The command `ctx` is about to send when `commands` commands are split over the load threads
/// as bench::Load splits its request quota (thread t sends [first(t), first(t+1))).
std::uint64_t command_index(const bench::RequestContext& ctx, std::uint64_t commands) {
  const std::uint64_t T = ctx.threads, q = commands / T, r = commands % T;
  return ctx.thread * q + std::min<std::uint64_t>(ctx.thread, r) + ctx.seq;
}

std::pair<long long, long long> memory(ek::resp::Client& c) {
  auto i = ek::server::Info::fetch(c, "memory");
  return {i.get_int("used_memory"), i.get_int("used_memory_rss")};
}

long long dbsize(ek::resp::Client& c) {
  auto r = c("DBSIZE");
  if (r.is_error()) throw std::runtime_error(c.address() + ": DBSIZE: " + r.to_string());
  return r.as_integer();
}

/// Up to n hash indexes spread evenly over 0 .. hashes-1, the first and the last included.
std::vector<std::uint64_t> sample_indexes(std::uint64_t hashes, std::uint64_t n) {
  std::vector<std::uint64_t> out;
  n = std::min(n, hashes);
  for (std::uint64_t k = 0; k < n; ++k) out.push_back(n == 1 ? 0 : k * (hashes - 1) / (n - 1));
  return out;
}

/// Rate in the first and second half of the samples (0 with fewer than 4 samples).
std::pair<double, double> halves(const std::vector<std::pair<double, std::uint64_t>>& pts) {
  if (pts.size() < 4) return {0, 0};
  auto mid = pts[pts.size() / 2], last = pts.back();
  return {static_cast<double>(mid.second) / mid.first,
          static_cast<double>(last.second - mid.second) / (last.first - mid.first)};
}

struct Run {
  Common c;
  Layout L;
  double scale = 0, sample_s = 1;
  std::uint64_t full_values = 0, verify = 1000;
  unsigned primaries = 0;
};

int run_single(const Run& R) {
  const Common& c = R.c;
  const Layout& L = R.L;
  const std::uint64_t hashes = L.hashes, fields = L.fields, per_command = L.per_command, values = L.values();
  Harness h("bulk_load", c);
  h.flush();
  const auto [base_used, base_rss] = memory(h.ctl());
  auto o = h.options(c.pipelines.at(0));
  o.requests = L.commands();
  o.duration_s = 0;
  o.warmup_s = 0;
  o.probe = false;
  o.tick_interval = std::chrono::milliseconds(static_cast<long long>(R.sample_s * 1000));
  std::filesystem::create_directories(c.out);
  std::ofstream curve(h.out_path("bulk_load_curve.dat"));
  curve << "# elapsed_s values used_memory_bytes used_memory_rss_bytes\n";
  curve << 0 << " " << 0 << " " << base_used << " " << base_rss << "\n";
  ek::resp::Client mon = h.target().client();
  std::vector<std::pair<double, std::uint64_t>> pts;  // (elapsed, values)
  double last_print = 0;
  o.on_tick = [&](const bench::Progress& p) {
    const auto [u, rss] = memory(mon);
    curve << p.elapsed_s << " " << p.ops * per_command << " " << u << " " << rss << "\n";
    pts.emplace_back(p.elapsed_s, p.ops * per_command);
    if (p.elapsed_s - last_print >= 10) {
      last_print = p.elapsed_s;
      std::printf("  %6.1f s: %llu values, used_memory %.2f GiB, load %.2f\n", p.elapsed_s,
                  (unsigned long long)(p.ops * per_command), static_cast<double>(u) / (1 << 30), bench::LoadAvg::now().m1);
      std::fflush(stdout);
    }
  };
  auto gen = [&](bench::RequestContext& ctx, std::string& out) {
    const std::uint64_t cmd = command_index(ctx, L.commands());
    L.hset(out, cmd / L.chunks, cmd % L.chunks);
  };
  auto res = h.run("bulk load", o, gen, {{"hashes", hashes}, {"fields", fields}, {"fields_per_command", per_command}, {"scale", R.scale}, {"prefix", L.prefix}});
  const auto [end_used, end_rss] = memory(h.ctl());
  curve << res.elapsed_s << " " << values << " " << end_used << " " << end_rss << "\n";
  auto ks = ek::server::Info::fetch(h.ctl(), "keyspace");
  auto enc = h.must({"OBJECT", "ENCODING", L.key(0)}).str();
  auto hlen = h.must({"HLEN", L.key(hashes - 1)}).as_integer();
  // Read back: every hash is there, and a sample of them holds all fields.
  const long long keys = dbsize(h.ctl());
  if (keys != static_cast<long long>(hashes))
    throw std::runtime_error("DBSIZE " + std::to_string(keys) + " after the load, expected " + std::to_string(hashes));
  const auto sample = sample_indexes(hashes, R.verify);
  for (auto i : sample)
    if (auto n = h.must({"HLEN", L.key(i)}).as_integer(); n != static_cast<long long>(fields))
      throw std::runtime_error("HLEN " + L.key(i) + " is " + std::to_string(n) + ", expected " + std::to_string(fields));
  const double rate = static_cast<double>(values) / res.elapsed_s;
  const double bpv = static_cast<double>(end_used - base_used) / static_cast<double>(values);
  const double rss_bpv = static_cast<double>(end_rss - base_rss) / static_cast<double>(values);
  const auto [r1, r2] = halves(pts);
  const double full_s = static_cast<double>(R.full_values) / rate;
  const double full_gb = (static_cast<double>(base_used) + bpv * static_cast<double>(R.full_values)) / 1e9;
  std::printf("= loaded %llu values (%llu hashes; keyspace %s; %s encoding; last HLEN %lld) in %.1f s: %.0f values/s "
              "(%.0f HSET/s of %llu fields; first half %.0f, second half %.0f values/s)\n",
              (unsigned long long)values, (unsigned long long)hashes, ks.get("db0").value_or("-").c_str(), enc.c_str(), hlen,
              res.elapsed_s, rate, rate / static_cast<double>(per_command), (unsigned long long)per_command, r1, r2);
  std::printf("= verified: DBSIZE %lld == hashes; HLEN %llu on %zu sampled hashes\n", keys, (unsigned long long)fields,
              sample.size());
  std::printf("= used_memory %.1f MB -> %.1f MB: %.2f B/value (rss %.2f B/value)\n", base_used / 1e6, end_used / 1e6, bpv, rss_bpv);
  std::printf("= estimate for %llu values (linear in values from this run): %.0f s = %.1f h load, %.1f GB used_memory "
              "(2010, Redis 1.3.16: 2 h 40 min, 17 GB)\n",
              (unsigned long long)R.full_values, full_s, full_s / 3600, full_gb);
  auto la = bench::LoadAvg::now();
  bench::append_jsonl(h.out_path("bulk_load_summary.jsonl"),
                      {{"benchmark", "bulk_load_summary"}, {"time_utc", bench::utc_now()},
                       {"server", bench::identity_json(h.identity())}, {"machine", bench::machine_json()},
                       {"loadavg_after", {la.m1, la.m5, la.m15}}, {"params", bench::params_json(o)},
                       {"hashes", hashes}, {"fields", fields}, {"fields_per_command", per_command}, {"scale", R.scale}, {"encoding", enc},
                       {"values_per_sec", rate}, {"values_per_sec_first_half", r1}, {"values_per_sec_second_half", r2},
                       {"elapsed_s", res.elapsed_s}, {"used_memory_base", base_used}, {"used_memory_end", end_used},
                       {"used_memory_rss_base", base_rss}, {"used_memory_rss_end", end_rss},
                       {"bytes_per_value", bpv}, {"rss_bytes_per_value", rss_bpv},
                       {"verified", {{"dbsize", keys}, {"sampled_hlen", sample.size()}}},
                       {"estimate_full", {{"values", R.full_values}, {"load_s", full_s}, {"used_memory_gb", full_gb},
                                          {"basis", "linear in values from this run's rate and used_memory delta"}}}});
  return 0;
}

int run_cluster(const Run& R) {
  using clock = std::chrono::steady_clock;
  const Common& c = R.c;
  const Layout& L = R.L;
  const std::uint64_t hashes = L.hashes, fields = L.fields, per_command = L.per_command, values = L.values();
  if (ek::process::external_server())
    throw std::runtime_error("--cluster-primaries spawns its own nodes: unset EXPIRYKIT_SERVER_ADDR");
  if (hashes > 0xffffffffULL) throw std::runtime_error("--cluster-primaries: more than 2^32 hashes");
  const auto la0 = bench::LoadAvg::now();
  ek::process::ClusterOptions co;
  co.node = server_options(c);
  co.primaries = static_cast<int>(R.primaries);
  co.replicas = 0;
  const auto spawn0 = clock::now();
  ek::process::Cluster cl(co);
  const double spawn_s = std::chrono::duration<double>(clock::now() - spawn0).count();
  const std::size_t N = cl.primary_count();
  std::vector<ek::resp::Client> ctl;
  for (std::size_t k = 0; k < N; ++k) ctl.push_back(cl.primary(k).client());
  const auto id = ek::server::Identity::probe(ctl[0]);
  auto m = bench::Machine::now();
  std::printf("# bulk_load on %s: a cluster of %zu primaries, no replicas (spawned in %.1f s: %s); %u cores (%s); load average %s\n",
              id.to_string().c_str(), N, spawn_s, cl.primary(0).binary().c_str(), m.cores, m.cpu_model.c_str(),
              la0.to_string().c_str());

  // Split the hashes by the slot of their key over the primaries' slot ranges.
  std::vector<std::uint32_t> owner(ek::cluster::slot_count);
  for (std::size_t k = 0; k < N; ++k) {
    const auto [a, b] = cl.slots_of(k);
    for (int s = a; s <= b; ++s) owner[static_cast<std::size_t>(s)] = static_cast<std::uint32_t>(k);
  }
  std::vector<std::vector<std::uint32_t>> share(N);
  for (auto& s : share) s.reserve(hashes / N + hashes / N / 16 + 16);
  {
    std::string key = L.prefix;
    char n[24];
    for (std::uint64_t i = 0; i < hashes; ++i) {
      key.resize(L.prefix.size());
      key.append(n, std::to_chars(n, n + sizeof n, i).ptr);
      share[owner[static_cast<std::size_t>(ek::cluster::slot_of(key))]].push_back(static_cast<std::uint32_t>(i));
    }
  }
  std::vector<long long> base_used(N), base_rss(N);
  for (std::size_t k = 0; k < N; ++k) {
    auto r = ctl[k]("FLUSHALL");
    if (r.is_error()) throw std::runtime_error(cl.primary(k).address() + ": FLUSHALL: " + r.to_string());
    std::tie(base_used[k], base_rss[k]) = memory(ctl[k]);
    const auto [a, b] = cl.slots_of(k);
    std::printf("# shard %zu: %s, slots %d-%d, %zu hashes (%.2f %%)\n", k, cl.primary(k).address().c_str(), a, b,
                share[k].size(), 100.0 * static_cast<double>(share[k].size()) / static_cast<double>(hashes));
  }
  std::fflush(stdout);

  // One bench::Load per primary, each on its own thread; this thread samples memory.
  std::vector<bench::LoadOptions> opts(N);
  std::vector<bench::Generator> gens(N);
  std::vector<std::atomic<std::uint64_t>> ops(N);
  for (std::size_t k = 0; k < N; ++k) {
    auto& o = opts[k];
    o.host = cl.primary(k).host();
    o.port = cl.primary(k).port();
    o.threads = c.threads;
    o.connections = c.connections;
    o.pipeline = c.pipelines.at(0);
    o.requests = share[k].size() * L.chunks;
    o.duration_s = 0;
    o.warmup_s = 0;
    o.seed = c.seed;
    o.probe = false;
    o.tick_interval = std::chrono::milliseconds(50);
    o.on_tick = [&ops, k](const bench::Progress& p) { ops[k].store(p.ops, std::memory_order_relaxed); };
    const std::uint64_t commands = o.requests;
    const auto* mine = &share[k];
    gens[k] = [&L, mine, commands](bench::RequestContext& ctx, std::string& out) {
      const std::uint64_t cmd = command_index(ctx, commands);
      L.hset(out, (*mine)[cmd / L.chunks], cmd % L.chunks);
    };
  }
  std::filesystem::create_directories(c.out);
  const auto out_path = [&](const std::string& f) { return std::filesystem::path(c.out) / f; };
  std::ofstream curve(out_path("bulk_load_curve.dat"));
  curve << "# elapsed_s values used_memory_bytes used_memory_rss_bytes (sums over the " << N
        << " primaries), then used_memory_bytes of primary 0.." << N - 1 << "\n";
  auto curve_line = [&](double t, std::uint64_t v, const std::vector<long long>& u, const std::vector<long long>& rss) {
    curve << t << " " << v << " " << std::accumulate(u.begin(), u.end(), 0LL) << " "
          << std::accumulate(rss.begin(), rss.end(), 0LL);
    for (auto x : u) curve << " " << x;
    curve << "\n";
  };
  curve_line(0, 0, base_used, base_rss);

  std::vector<bench::LoadResult> res(N);
  std::vector<std::exception_ptr> err(N);
  std::vector<double> end_s(N, 0);
  std::atomic<std::size_t> finished{0};
  const auto la_before = bench::LoadAvg::now();
  const auto t0 = clock::now();
  auto since = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < N; ++k)
    threads.emplace_back([&, k] {
      try {
        if (opts[k].requests) res[k] = bench::Load(opts[k], gens[k]).run();
      } catch (...) {
        err[k] = std::current_exception();
      }
      end_s[k] = since();
      finished.fetch_add(1);
    });
  std::vector<std::pair<double, std::uint64_t>> pts;  // (elapsed, values)
  std::vector<long long> u(N), rss(N);
  std::exception_ptr sample_error;
  double next = R.sample_s, last_print = 0;
  while (finished.load() < N) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double t = since();
    if (t < next || sample_error) continue;
    next += R.sample_s;
    try {
      std::uint64_t done = 0;
      for (std::size_t k = 0; k < N; ++k) {
        done += ops[k].load(std::memory_order_relaxed);
        std::tie(u[k], rss[k]) = memory(ctl[k]);
      }
      curve_line(t, done * per_command, u, rss);
      pts.emplace_back(t, done * per_command);
      if (t - last_print >= 10) {
        last_print = t;
        std::printf("  %6.1f s: %llu values, used_memory %.2f GiB over %zu primaries, load %.2f\n", t,
                    (unsigned long long)(done * per_command),
                    static_cast<double>(std::accumulate(u.begin(), u.end(), 0LL)) / (1 << 30), N, bench::LoadAvg::now().m1);
        std::fflush(stdout);
      }
    } catch (...) {
      sample_error = std::current_exception();  // rethrown after the loads end
    }
  }
  for (auto& th : threads) th.join();
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
  if (sample_error) std::rethrow_exception(sample_error);
  const double wall_s = *std::max_element(end_s.begin(), end_s.end());

  // Per shard: the load's line and record, keys, memory.
  std::vector<long long> end_used(N), end_rss(N), keys(N);
  nlohmann::json shards = nlohmann::json::array();
  const std::string ports = [&] {
    std::string s;
    for (std::size_t k = 0; k < N; ++k) s += (k ? "," : "") + std::to_string(cl.primary(k).port());
    return s;
  }();
  std::uint64_t errors = 0;
  double server_cpu = 0;
  for (std::size_t k = 0; k < N; ++k) {
    std::tie(end_used[k], end_rss[k]) = memory(ctl[k]);
    keys[k] = dbsize(ctl[k]);
    const auto [a, b] = cl.slots_of(k);
    const std::uint64_t v = share[k].size() * fields;
    const double bpv = v ? static_cast<double>(end_used[k] - base_used[k]) / static_cast<double>(v) : 0;
    const double rss_bpv = v ? static_cast<double>(end_rss[k] - base_rss[k]) / static_cast<double>(v) : 0;
    const auto& r = res[k];
    errors += r.errors;
    server_cpu += std::max(0.0, r.server_cpu_s);
    const std::string label = "bulk load shard " + std::to_string(k);
    print_result(label, opts[k], r);
    std::printf("  shard %zu %s slots %d-%d: %lld keys, %llu values in %.1f s (%.0f values/s), used_memory %.1f MB -> %.1f MB: "
                "%.2f B/value (rss %.2f B/value), server cpu %.2f s\n",
                k, cl.primary(k).address().c_str(), a, b, keys[k], (unsigned long long)v, r.elapsed_s,
                r.elapsed_s > 0 ? static_cast<double>(v) / r.elapsed_s : 0.0, base_used[k] / 1e6, end_used[k] / 1e6, bpv,
                rss_bpv, r.server_cpu_s);
    nlohmann::json shard = {{"shard", k}, {"address", cl.primary(k).address()}, {"slots", {a, b}},
                            {"hashes", share[k].size()}, {"values", v}, {"keys", keys[k]},
                            {"elapsed_s", r.elapsed_s}, {"values_per_sec", r.elapsed_s > 0 ? static_cast<double>(v) / r.elapsed_s : 0.0},
                            {"server_cpu_s", r.server_cpu_s},
                            {"used_memory_base", base_used[k]}, {"used_memory_end", end_used[k]},
                            {"used_memory_rss_base", base_rss[k]}, {"used_memory_rss_end", end_rss[k]},
                            {"bytes_per_value", bpv}, {"rss_bytes_per_value", rss_bpv}};
    shards.push_back(shard);
    bench::append_jsonl(out_path("bulk_load.jsonl"),
                        bench::record("bulk_load", opts[k], r, id,
                                      {{"label", label}, {"loadavg_before", {la_before.m1, la_before.m5, la_before.m15}},
                                       {"hashes", share[k].size()}, {"fields", fields}, {"fields_per_command", per_command},
                                       {"scale", R.scale}, {"prefix", L.prefix},
                                       {"cluster", {{"primaries", N}, {"replicas", 0}, {"shard", shard}}}}));
  }
  if (errors) throw std::runtime_error(std::to_string(errors) + " error replies during the load");

  // Read back: the primaries hold every hash once, and a sample of hashes is on the primary
  // that owns its slot (the server agrees on the slot) with all fields.
  const long long total_keys = std::accumulate(keys.begin(), keys.end(), 0LL);
  if (total_keys != static_cast<long long>(hashes))
    throw std::runtime_error("DBSIZE summed over the primaries is " + std::to_string(total_keys) + ", expected " +
                             std::to_string(hashes));
  for (std::size_t k = 0; k < N; ++k)
    if (keys[k] != static_cast<long long>(share[k].size()))
      throw std::runtime_error(cl.primary(k).address() + ": DBSIZE " + std::to_string(keys[k]) + ", expected its share " +
                               std::to_string(share[k].size()));
  const auto sample = sample_indexes(hashes, R.verify);
  for (auto i : sample) {
    const std::string key = L.key(i);
    const int slot = ek::cluster::slot_of(key);
    auto& cc = ctl[owner[static_cast<std::size_t>(slot)]];
    auto ks = cc("CLUSTER", "KEYSLOT", key);
    if (ks.is_error() || ks.as_integer() != slot)
      throw std::runtime_error("CLUSTER KEYSLOT " + key + " answered " + ks.to_string() + ", slot_of says " + std::to_string(slot));
    auto n = cc("HLEN", key);
    if (n.is_error() || n.as_integer() != static_cast<long long>(fields))
      throw std::runtime_error(cc.address() + ": HLEN " + key + " answered " + n.to_string() + ", expected " +
                               std::to_string(fields));
  }
  const std::size_t first_shard = static_cast<std::size_t>(
      std::find_if(share.begin(), share.end(), [](const auto& s) { return !s.empty(); }) - share.begin());
  const auto enc_r = ctl[first_shard]("OBJECT", "ENCODING", L.key(share[first_shard].at(0)));
  const std::string enc = enc_r.is_error() ? enc_r.to_string() : enc_r.str();

  // Aggregate.
  const long long sum_base = std::accumulate(base_used.begin(), base_used.end(), 0LL),
                  sum_end = std::accumulate(end_used.begin(), end_used.end(), 0LL),
                  sum_rss_base = std::accumulate(base_rss.begin(), base_rss.end(), 0LL),
                  sum_rss_end = std::accumulate(end_rss.begin(), end_rss.end(), 0LL);
  const double rate = static_cast<double>(values) / wall_s;
  const double bpv = static_cast<double>(sum_end - sum_base) / static_cast<double>(values);
  const double rss_bpv = static_cast<double>(sum_rss_end - sum_rss_base) / static_cast<double>(values);
  const auto [r1, r2] = halves(pts);
  const double full_s = static_cast<double>(R.full_values) / rate;
  const double full_gb = (static_cast<double>(sum_base) + bpv * static_cast<double>(R.full_values)) / 1e9;
  curve_line(wall_s, values, end_used, end_rss);
  std::printf("= loaded %llu values (%llu hashes over %zu primaries; %s encoding) in %.1f s wall (start of the loads to the "
              "end of the last): %.0f values/s aggregate (%.0f HSET/s of %llu fields; first half %.0f, second half %.0f values/s); "
              "server cpu %.1f s in total\n",
              (unsigned long long)values, (unsigned long long)hashes, N, enc.c_str(), wall_s, rate,
              rate / static_cast<double>(per_command), (unsigned long long)per_command, r1, r2, server_cpu);
  std::printf("= verified: DBSIZE summed over the primaries %lld == hashes, each primary's == its share; %zu sampled hashes: "
              "CLUSTER KEYSLOT == slot_of, HLEN %llu on the owning primary\n",
              total_keys, sample.size(), (unsigned long long)fields);
  std::printf("= used_memory %.1f MB -> %.1f MB summed over %zu primaries: %.2f B/value (rss %.2f B/value)\n", sum_base / 1e6,
              sum_end / 1e6, N, bpv, rss_bpv);
  std::printf("= estimate for %llu values on %zu primaries on this machine (linear in values from this run): %.0f s = %.1f h "
              "load, %.1f GB used_memory in total\n",
              (unsigned long long)R.full_values, N, full_s, full_s / 3600, full_gb);
  auto la = bench::LoadAvg::now();
  auto params = bench::params_json(opts[0]);
  params["port"] = ports;
  params["requests"] = L.commands();
  params["connections_total"] = N * opts[0].threads * opts[0].connections;
  bench::append_jsonl(out_path("bulk_load_summary.jsonl"),
                      {{"benchmark", "bulk_load_summary"}, {"time_utc", bench::utc_now()},
                       {"server", bench::identity_json(id)}, {"machine", bench::machine_json()},
                       {"loadavg_before", {la_before.m1, la_before.m5, la_before.m15}},
                       {"loadavg_after", {la.m1, la.m5, la.m15}}, {"params", params},
                       {"hashes", hashes}, {"fields", fields}, {"fields_per_command", per_command}, {"scale", R.scale}, {"encoding", enc},
                       {"values_per_sec", rate}, {"values_per_sec_first_half", r1}, {"values_per_sec_second_half", r2},
                       {"elapsed_s", wall_s}, {"used_memory_base", sum_base}, {"used_memory_end", sum_end},
                       {"used_memory_rss_base", sum_rss_base}, {"used_memory_rss_end", sum_rss_end},
                       {"bytes_per_value", bpv}, {"rss_bytes_per_value", rss_bpv},
                       {"verified", {{"dbsize", total_keys}, {"sampled_hlen", sample.size()}}},
                       {"cluster", {{"primaries", N}, {"replicas", 0}, {"spawn_s", spawn_s}, {"server_cpu_s", server_cpu},
                                    {"elapsed_basis", "wall time from starting the N loads to the end of the last"},
                                    {"shards", shards}}},
                       {"estimate_full", {{"values", R.full_values}, {"load_s", full_s}, {"used_memory_gb", full_gb},
                                          {"basis", "linear in values from this run's aggregate rate and used_memory delta"}}}});
  return 0;
}
}  // namespace

/// The program bench_bulk_load (bench/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  Run R;
  Common& c = R.c;
  c.threads = 1;
  c.connections = 4;
  c.pipelines = {16};
  c.warmup = 0;
  R.scale = 1.0 / 25;
  std::uint64_t full_hashes = 25000000, fields = 50;
  std::string prefix = "h:";
  std::uint64_t per_command = 0;
  bool force = false;
  Cli cli("bench_bulk_load",
          "Loads round(--full-hashes * --scale) hashes <prefix><i> with HSET <key> 0 v0 1 v1 ... (one HSET\n"
          "per hash, or --per-command fields per HSET; --fields fields named 0..n-1, values small integers (i*31+j) % 1000), from --threads x\n"
          "--connections connections at the first of --pipelines. Samples INFO memory every --sample\n"
          "seconds (the memory curve: <out>/bulk_load_curve.dat), reports values/s and used_memory\n"
          "bytes per value, reads back DBSIZE and --verify hashes' HLEN, and estimates the full layout\n"
          "linearly. With --cluster-primaries N: a kit-spawned cluster of N primaries (no replicas), the\n"
          "hashes split by hash slot, one load of that shape per primary, all at once; per-shard keys and\n"
          "memory, the aggregate rate (wall time). Refuses when MemAvailable looks too small (about 3x the\n"
          "expected 8-10 B/value) unless --force. Record: <out>/bulk_load.jsonl, <out>/bulk_load_summary.jsonl.");
  c.add_to(cli);
  cli.opt("scale", R.scale, "fraction of the full layout, e.g. 1/25 or 0.001")
      .opt("full-hashes", full_hashes, "hashes in the full layout")
      .opt("fields", fields, "fields per hash")
      .opt("prefix", prefix, "key prefix")
      .opt("per-command", per_command, "fields per HSET (0: all --fields in one HSET; 1: the 2010 one-field HSET)")
      .opt("sample", R.sample_s, "seconds between memory samples")
      .opt("verify", R.verify, "hashes read back with HLEN after the load (spread evenly, first and last included)")
      .opt("cluster-primaries", R.primaries,
           "0: one server; N: a cluster of N primaries without replicas (the same --server binary), one load per primary")
      .opt("force", force, "skip the free-memory check");
  cli.parse(argc, argv);
  return guarded([&] {
    Layout& L = R.L;
    L.hashes = static_cast<std::uint64_t>(std::llround(static_cast<double>(full_hashes) * R.scale));
    L.fields = fields;
    L.prefix = prefix;
    L.per_command = per_command ? per_command : fields;
    if (L.hashes == 0 || fields == 0) throw std::invalid_argument("--scale and --fields must give at least one value");
    if (fields % L.per_command) throw std::invalid_argument("--per-command must divide --fields");
    if (R.sample_s <= 0) throw std::invalid_argument("--sample must be > 0");
    L.chunks = fields / L.per_command;
    const std::uint64_t values = L.values();
    R.full_values = full_hashes * fields;
    auto m = bench::Machine::now();
    const double need_kib = static_cast<double>(values) * 30 / 1024;
    std::printf("# %llu hashes x %llu fields = %llu values (scale %g of %llu); MemAvailable %.1f GiB, check needs %.1f GiB\n",
                (unsigned long long)L.hashes, (unsigned long long)fields, (unsigned long long)values, R.scale,
                (unsigned long long)R.full_values, static_cast<double>(m.mem_available_kib) / 1048576, need_kib / 1048576);
    if (!force && need_kib > static_cast<double>(m.mem_available_kib))
      throw std::runtime_error("not enough free memory for this scale (use a smaller --scale, or --force)");
    return R.primaries ? run_cluster(R) : run_single(R);
  });
}

}  // namespace ekb::bench_bulk_load
