// bench/common.hpp: what the benchmark programs share: the command line (CLI11), the server
// under test (spawned, or external via EXPIRYKIT_SERVER_ADDR), running a load and recording it,
// filling data, and summary statistics. Not part of the installed kit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <expirykit/bench/load.hpp>
#include <expirykit/bench/record.hpp>
#include <expirykit/process/target.hpp>

namespace ekb {

namespace ek = expirykit;
namespace bench = expirykit::bench;

// ---- command line -------------------------------------------------------------------------
/// The programs' command line, on CLI11 (Debian's libcli11-dev): `--name value` / `--name=value`
/// options with defaults shown in --help (given twice, the last wins), `--flag` switches, and
/// (for bench_compare) a command after `--`. --help exits 0; a bad option prints the error and
/// exits 2.
class Cli {
 public:
  Cli(std::string program, std::string about) : app_(std::move(about), std::move(program)) {
    app_.footer(
        "server: spawns the provisioned default (valkey-9.1), or EXPIRYKIT_SERVER (a path or a\n"
        "provisioned name such as redis-8.0), or --server; EXPIRYKIT_SERVER_ADDR=host:port uses an\n"
        "external server, which the benchmarks FLUSHALL: they refuse unless --allow-flush is given.");
  }

  template <class T>
  Cli& opt(const std::string& name, T& var, const std::string& help) {
    const std::string flag = "--" + name;
    if constexpr (std::is_same_v<T, bool>) {
      app_.add_flag(flag, var, help);
    } else if constexpr (std::is_same_v<T, double>) {  // also "1/25"
      std::ostringstream def;
      def << var;
      app_.add_option_function<std::string>(flag, [&var](const std::string& v) { var = parse_double(v); }, help)
          ->default_str(def.str())
          ->type_name("NUM|A/B")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    } else if constexpr (std::is_same_v<T, std::vector<unsigned>>) {
      std::ostringstream def;
      for (std::size_t i = 0; i < var.size(); ++i) def << (i ? "," : "") << var[i];
      app_.add_option(flag, var, help)->delimiter(',')->default_str(def.str());
    } else {
      app_.add_option(flag, var, help)->capture_default_str()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
    return *this;
  }
  /// Arguments after "--" (a command), described in --help by `what`.
  Cli& rest(std::vector<std::string>& var, const std::string& what) {
    app_.add_option("command", var, what);
    return *this;
  }
  void parse(int argc, char** argv) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int rc = app_.exit(e);
      std::exit(rc == 0 ? 0 : 2);
    }
  }
  static double parse_double(const std::string& v) {
    try {
      if (auto slash = v.find('/'); slash != std::string::npos)  // "1/25"
        return std::stod(v.substr(0, slash)) / std::stod(v.substr(slash + 1));
      return std::stod(v);
    } catch (const std::exception&) {
      throw CLI::ValidationError("'" + v + "' is not a number or a fraction A/B");
    }
  }

 private:
  CLI::App app_;
};

/// Options most benchmarks take.
struct Common {
  unsigned threads = 1;
  unsigned connections = 50;
  std::vector<unsigned> pipelines{1, 32};
  std::uint64_t requests = 200000;
  std::uint64_t requests_pipelined = 2000000;
  double duration = 0;
  double warmup = 1;
  unsigned repeat = 3;
  std::string out = "bench-out";
  std::string server;
  bool allow_flush = false;
  std::uint64_t seed = 0x5eed;

  void add_to(Cli& cli) {
    cli.opt("threads", threads, "load threads")
        .opt("connections", connections, "connections per load thread")
        .opt("pipelines", pipelines, "pipeline depths to run, comma-separated")
        .opt("requests", requests, "requests counted per run at pipeline 1 (0: use --duration)")
        .opt("requests-pipelined", requests_pipelined, "requests counted per run at pipeline > 1 (0: use --duration)")
        .opt("duration", duration, "seconds per run (0: use --requests)")
        .opt("warmup", warmup, "seconds of warm-up load before each run")
        .opt("repeat", repeat, "runs of each variant (interleaved)")
        .opt("out", out, "folder for <benchmark>.jsonl records and .dat plot data")
        .opt("server", server, "server binary path or provisioned name (default: EXPIRYKIT_SERVER, valkey-9.1)")
        .opt("allow-flush", allow_flush, "allow FLUSHALL on an external server (EXPIRYKIT_SERVER_ADDR)")
        .opt("seed", seed, "random seed of the load");
  }
};

// ---- statistics ---------------------------------------------------------------------------
struct Stats {
  std::size_t n = 0;
  double mean = 0, sd = 0, min = 0, max = 0, median = 0;
  /// Half-width of the 95 % confidence interval of the mean (Student t); 0 for n < 2.
  double ci95 = 0;
  static Stats of(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
    s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    if (v.size() > 1) {
      double ss = 0;
      for (double x : v) ss += (x - s.mean) * (x - s.mean);
      s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
      static const double t975[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086};
      std::size_t df = v.size() - 1;
      double t = df <= 20 ? t975[df - 1] : 1.96;
      s.ci95 = t * s.sd / std::sqrt(static_cast<double>(v.size()));
    }
    return s;
  }
};

inline std::string fmt(const char* f, auto... a) {
  char b[512];
  std::snprintf(b, sizeof b, f, a...);
  return b;
}

/// CPU seconds per counted op, in microseconds (-1 when unknown). Server CPU per op is far less
/// sensitive than ops/s to other processes on a shared machine: compare variants on it too.
inline double per_op_us(double cpu_s, const bench::LoadResult& r) {
  return cpu_s < 0 || r.ops == 0 ? -1 : cpu_s / static_cast<double>(r.ops) * 1e6;
}

// ---- the harness --------------------------------------------------------------------------
/// `so` with the binary that --server names (a provisioned name or a path); unchanged when
/// --server is empty (then ServerOptions' default: EXPIRYKIT_SERVER, else valkey-9.1).
inline ek::process::ServerOptions server_options(const Common& c, ek::process::ServerOptions so = {}) {
  if (!c.server.empty()) {
    auto p = c.server.find('/') == std::string::npos ? ek::process::provisioned_server(c.server)
                                                    : std::filesystem::path(c.server);
    if (p.empty()) throw std::runtime_error("--server " + c.server + ": not a provisioned server name");
    so.binary = p;
  }
  return so;
}

/// The one-line result of a load: ops/s, latency percentiles, errors, CPU per op, load average.
inline void print_result(const std::string& label, const bench::LoadOptions& o, const bench::LoadResult& r) {
  const auto& h = r.latency_ns;
  std::printf("%-30s T=%-2u C=%-3u P=%-3u %10.0f ops/s  p50 %7.1f  p99 %7.1f  p99.9 %7.1f  max %8.1f us  err %llu"
              "  cpu/op client %.2f server %.2f us  load %.2f\n",
              label.c_str(), o.threads, o.connections, o.pipeline, r.ops_per_sec(), h.percentile(50) / 1e3,
              h.percentile(99) / 1e3, h.percentile(99.9) / 1e3, static_cast<double>(h.max()) / 1e3,
              static_cast<unsigned long long>(r.errors), per_op_us(r.client_cpu_s, r), per_op_us(r.server_cpu_s, r),
              bench::LoadAvg::now().m1);
  std::fflush(stdout);
  if (r.errors) std::printf("  WARNING: %llu error replies\n", static_cast<unsigned long long>(r.errors));
}

class Harness {
 public:
  Harness(std::string name, const Common& c, ek::process::ServerOptions so = {}) : name_(std::move(name)), c_(c) {
    target_ = std::make_unique<ek::process::Target>(server_options(c, std::move(so)));
    if (target_->external() && !c.allow_flush)
      throw std::runtime_error("EXPIRYKIT_SERVER_ADDR is set: this benchmark FLUSHALLs the server; pass --allow-flush");
    ctl_ = std::make_unique<ek::resp::Client>(target_->client());
    auto m = bench::Machine::now();
    std::printf("# %s on %s; %u cores (%s); load average %s\n", name_.c_str(), target_->describe().c_str(), m.cores,
                m.cpu_model.c_str(), bench::LoadAvg::now().to_string().c_str());
    std::fflush(stdout);
  }

  ek::process::Target& target() { return *target_; }
  const ek::server::Identity& identity() { return target_->identity(); }
  ek::resp::Client& ctl() { return *ctl_; }
  const Common& common() const { return c_; }
  std::filesystem::path out_path(const std::string& file) const { return std::filesystem::path(c_.out) / file; }

  void flush() {
    auto r = ctl()("FLUSHALL");
    if (r.is_error()) throw std::runtime_error("FLUSHALL: " + r.to_string());
  }
  /// Sends a command on the control connection; throws if the reply is an error.
  ek::resp::Reply must(const ek::resp::Argv& argv) {
    auto r = ctl().call(argv);
    if (r.is_error()) throw std::runtime_error(ek::resp::cli_line(argv) + ": " + r.to_string());
    return r;
  }

  /// Load options from the common flags for pipeline depth `pipeline`.
  bench::LoadOptions options(unsigned pipeline) const {
    bench::LoadOptions o;
    o.host = target_->host();
    o.port = target_->port();
    o.threads = c_.threads;
    o.connections = c_.connections;
    o.pipeline = pipeline;
    o.requests = pipeline > 1 ? c_.requests_pipelined : c_.requests;
    o.duration_s = c_.duration;
    o.warmup_s = c_.warmup;
    o.seed = c_.seed;
    return o;
  }

  /// Runs one load, prints a line, appends the JSON record to <out>/<benchmark>.jsonl.
  bench::LoadResult run(const std::string& label, const bench::LoadOptions& o, const bench::Generator& g,
                        nlohmann::json extra = nlohmann::json::object()) {
    auto before = bench::LoadAvg::now();
    auto r = bench::Load(o, g).run();
    extra["label"] = label;
    extra["loadavg_before"] = {before.m1, before.m5, before.m15};
    auto rec = bench::record(name_, o, r, identity(), extra);
    bench::append_jsonl(out_path(name_ + ".jsonl"), rec);
    print_result(label, o, r);
    return r;
  }

  /// Sends `count` requests of `argv` (placeholders numbered 0..count-1 in sequence) quickly:
  /// one thread, 4 connections, pipeline 128, not recorded. Fills hashes and keyspaces.
  void fill(const std::vector<std::string>& argv, std::uint64_t count) {
    if (!count) return;
    bench::LoadOptions o;
    o.host = target_->host();
    o.port = target_->port();
    o.threads = 1;
    o.connections = 1;
    o.pipeline = 256;
    o.requests = count;
    o.server_cpu = false;
    auto r = bench::Load(o, bench::Template(argv, count, true)).run();
    if (r.errors) throw std::runtime_error("fill: " + std::to_string(r.errors) + " error replies");
  }

 private:
  std::string name_;
  Common c_;
  std::unique_ptr<ek::process::Target> target_;
  std::unique_ptr<ek::resp::Client> ctl_;
};

/// Runs `body`, printing an exception's message and returning 1 instead of aborting.
inline int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

}  // namespace ekb
