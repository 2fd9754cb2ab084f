// expirykit/bench/record.hpp: benchmark result records as JSON, with the machine and server.
//
//   auto rec = bench::record("hget_ttl", opts, result, target.identity(), {{"variant", "ttl"}});
//   bench::append_jsonl("results/hget_ttl.jsonl", rec);      // one record per line per run
//
// A record holds everything needed to judge and repeat the run: the exact load parameters, the
// command, the server's flavor/version, the machine's core count, CPU model and load average
// (the machine may be shared: read the load next to the numbers), and the results with units
// in the key names (_s seconds, _us microseconds, _per_sec per second).
#pragma once

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include <expirykit/bench/histogram.hpp>
#include <expirykit/bench/load.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::bench {

/// The 1, 5 and 15 minute load averages from /proc/loadavg (-1 when unreadable).
struct LoadAvg {
  double m1 = -1, m5 = -1, m15 = -1;
  static LoadAvg now() {
    LoadAvg l;
    std::ifstream in("/proc/loadavg");
    in >> l.m1 >> l.m5 >> l.m15;
    return l;
  }
  std::string to_string() const {
    char b[64];
    std::snprintf(b, sizeof b, "%.2f %.2f %.2f", m1, m5, m15);
    return b;
  }
};

/// The machine the benchmark ran on.
struct Machine {
  unsigned cores = 0;      ///< std::thread::hardware_concurrency()
  std::string cpu_model;   ///< "model name" from /proc/cpuinfo
  std::string hostname;
  long long mem_total_kib = 0;      ///< MemTotal, KiB
  long long mem_available_kib = 0;  ///< MemAvailable, KiB (at the time of the call)
  static Machine now() {
    Machine m;
    m.cores = std::thread::hardware_concurrency();
    std::ifstream ci("/proc/cpuinfo");
    for (std::string l; std::getline(ci, l);)
      if (l.rfind("model name", 0) == 0) {
        m.cpu_model = l.substr(l.find(':') + 2);
        break;
      }
    char h[256] = {};
    ::gethostname(h, sizeof h - 1);
    m.hostname = h;
    std::ifstream mi("/proc/meminfo");
    for (std::string k; mi >> k;) {
      long long v = 0;
      mi >> v;
      if (k == "MemTotal:") m.mem_total_kib = v;
      if (k == "MemAvailable:") m.mem_available_kib = v;
      mi.ignore(1 << 10, '\n');
    }
    return m;
  }
};

/// UTC time as "2026-11-29T21:03:15Z".
inline std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return b;
}

/// Latency summary in microseconds: count, min, mean, p50, p99, p99.9, max.
inline nlohmann::json latency_json(const Histogram& ns) {
  auto us = [](double v) { return v / 1000.0; };
  return {{"count", ns.count()},
          {"min_us", us(static_cast<double>(ns.min()))},
          {"mean_us", us(ns.mean())},
          {"p50_us", us(static_cast<double>(ns.percentile(50)))},
          {"p99_us", us(static_cast<double>(ns.percentile(99)))},
          {"p99_9_us", us(static_cast<double>(ns.percentile(99.9)))},
          {"max_us", us(static_cast<double>(ns.max()))}};
}

inline nlohmann::json params_json(const LoadOptions& o) {
  return {{"host", o.host},           {"port", o.port},
          {"threads", o.threads},     {"connections_per_thread", o.connections},
          {"connections_total", o.threads * o.connections},
          {"pipeline", o.pipeline},   {"requests", o.requests},
          {"duration_s", o.duration_s}, {"warmup_s", o.warmup_s},
          {"seed", o.seed}};
}

inline nlohmann::json result_json(const LoadResult& r) {
  return {{"ops", r.ops},
          {"errors", r.errors},
          {"warmup_ops", r.warmup_ops},
          {"elapsed_s", r.elapsed_s},
          {"ops_per_sec", r.ops_per_sec()},
          {"client_cpu_s", r.client_cpu_s},
          {"server_cpu_s", r.server_cpu_s},
          {"ops_per_thread", r.ops_per_thread},
          {"latency", latency_json(r.latency_ns)}};
}

inline nlohmann::json identity_json(const server::Identity& id) {
  return {{"flavor", server::to_string(id.flavor)}, {"version", id.version.to_string()}, {"line", id.line()}};
}

inline nlohmann::json machine_json(const Machine& m = Machine::now()) {
  return {{"cores", m.cores}, {"cpu_model", m.cpu_model}, {"hostname", m.hostname}, {"mem_total_kib", m.mem_total_kib}};
}

/// One run as a JSON object: benchmark name, time, server, machine, load average after the run,
/// parameters, results; `extra` (an object) is merged in at the top level (command, variant, ...).
inline nlohmann::json record(const std::string& benchmark, const LoadOptions& o, const LoadResult& r,
                             const server::Identity& id, const nlohmann::json& extra = nlohmann::json::object()) {
  auto l = LoadAvg::now();
  nlohmann::json j = {{"benchmark", benchmark},
                      {"time_utc", utc_now()},
                      {"server", identity_json(id)},
                      {"machine", machine_json()},
                      {"loadavg_after", {l.m1, l.m5, l.m15}},
                      {"params", params_json(o)},
                      {"result", result_json(r)}};
  if (extra.is_object())
    for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

/// Appends `j` as one line to `path` (JSON Lines), creating parent folders.
/// Throws std::runtime_error if the file cannot be written.
inline void append_jsonl(const std::filesystem::path& path, const nlohmann::json& j) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << j.dump() << '\n';
}

}  // namespace expirykit::bench
