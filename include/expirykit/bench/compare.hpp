// expirykit/bench/compare.hpp: running the server's own benchmark tool (valkey-benchmark or
// redis-benchmark) with the same command, connections and pipeline, for a side-by-side ratio.
//
//   auto bin = bench::find_benchmark_binary(server.binary());   // sibling <flavor>-benchmark
//   bench::TheirOptions t{.host = "127.0.0.1", .port = p, .clients = 50, .pipeline = 32,
//                         .requests = 1'000'000, .keyspace = 5000};
//   bench::TheirResult r = bench::run_their_benchmark(bin, {"HGET", "h", "f:__rand_int__"}, t);
//
// Their -c is the total number of connections and they run one event-loop thread (unless
// --threads), so compare with bench::Load at threads = 1, connections = clients.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>

#include <expirykit/config.hpp>

namespace expirykit::bench {

/// $EXPIRYKIT_BENCHMARK (config().benchmark) if set; else valkey-benchmark or redis-benchmark next
/// to the server binary. Throws std::runtime_error naming what was looked for,
/// std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline std::filesystem::path find_benchmark_binary(const std::filesystem::path& server_binary) {
  if (const auto& e = config().benchmark) return *e;
  for (const char* name : {"valkey-benchmark", "redis-benchmark"}) {
    auto p = server_binary.parent_path() / name;
    if (std::filesystem::exists(p)) return p;
  }
  throw std::runtime_error("no valkey-benchmark/redis-benchmark next to " + server_binary.string() +
                           "; set EXPIRYKIT_BENCHMARK to one");
}

struct TheirOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  unsigned clients = 50;        ///< -c: total connections
  unsigned pipeline = 1;        ///< -P
  std::uint64_t requests = 100000;  ///< -n
  std::uint64_t keyspace = 0;   ///< -r (0: not passed; placeholders stay literal)
  unsigned threads = 0;         ///< --threads (0: not passed: one thread)
};

struct TheirResult {
  double ops_per_sec = 0;  ///< "rps"
  double avg_ms = -1, p50_ms = -1, p99_ms = -1, max_ms = -1;  ///< milliseconds, -1 if absent
  std::string command_line;  ///< exactly what was run
  std::string output;        ///< its stdout
};

/// Parses `--csv` output: a header line "test","rps",... then one line per test (the last wins).
/// Throws std::runtime_error if no data line is found.
inline TheirResult parse_their_csv(const std::string& out) {
  std::istringstream in(out);
  std::vector<std::string> header, row;
  auto split = [](const std::string& line) {
    std::vector<std::string> f;
    std::string cur;
    bool q = false;
    for (char c : line) {
      if (c == '"') q = !q;
      else if (c == ',' && !q) f.push_back(cur), cur.clear();
      else if (c != '\r') cur += c;
    }
    f.push_back(cur);
    return f;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\"test\"", 0) == 0) header = split(line);
    else if (!header.empty() && !line.empty() && line[0] == '"') row = split(line);
  }
  if (header.empty() || row.size() != header.size())
    throw std::runtime_error("cannot parse the benchmark tool's CSV output:\n" + out);
  TheirResult r;
  for (std::size_t i = 0; i < header.size(); ++i) {
    double v = -1;
    try {
      v = std::stod(row[i]);
    } catch (const std::exception&) {
    }
    if (header[i] == "rps") r.ops_per_sec = v;
    if (header[i] == "avg_latency_ms") r.avg_ms = v;
    if (header[i] == "p50_latency_ms") r.p50_ms = v;
    if (header[i] == "p99_latency_ms") r.p99_ms = v;
    if (header[i] == "max_latency_ms") r.max_ms = v;
  }
  return r;
}

/// Runs `bin -h host -p port -c clients -P pipeline -n requests [-r keyspace] [--threads n]
/// --csv -q COMMAND...` and parses its result. Throws std::runtime_error if it fails.
inline TheirResult run_their_benchmark(const std::filesystem::path& bin, const std::vector<std::string>& command,
                                       const TheirOptions& o) {
  namespace bp = boost::process;
  std::vector<std::string> args = {"-h", o.host, "-p", std::to_string(o.port), "-c", std::to_string(o.clients),
                                   "-P", std::to_string(o.pipeline), "-n", std::to_string(o.requests)};
  if (o.keyspace) args.insert(args.end(), {"-r", std::to_string(o.keyspace)});
  if (o.threads) args.insert(args.end(), {"--threads", std::to_string(o.threads)});
  args.insert(args.end(), {"--csv", "-q"});
  args.insert(args.end(), command.begin(), command.end());
  std::string line = bin.string();
  for (const auto& a : args) line += " " + (a.find(' ') != std::string::npos || a.empty() ? "'" + a + "'" : a);
  bp::ipstream out;
  std::error_code ec;
  bp::child c(bin.string(), bp::args(args), bp::std_out > out, bp::std_err > bp::null, bp::std_in < bp::null, ec);
  if (ec) throw std::runtime_error("cannot run " + line + ": " + ec.message());
  std::string text;
  for (std::string l; std::getline(out, l);) text += l + "\n";
  c.wait();
  if (c.exit_code() != 0) throw std::runtime_error(line + " exited with " + std::to_string(c.exit_code()) + ":\n" + text);
  TheirResult r = parse_their_csv(text);
  r.command_line = line;
  r.output = text;
  return r;
}

}  // namespace expirykit::bench
