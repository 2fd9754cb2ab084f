// expirykit_memory_probe: measures memory layouts on fresh servers of one binary and prints a
// table (and optionally JSON) of bytes per item. Used by ci/memory-report.
//
// usage: expirykit_memory_probe [--server NAME|PATH] [--n N] [--value-size B] [--reps K]
//                               [--ttl paced|ex] [--layout NAME]... [--json FILE] [--tsv FILE]
//                               [--list]
//   --server  provisioned name (valkey-9.1, redis-8.0, ...) or a server binary; default:
//             EXPIRYKIT_SERVER, then the provisioned default
//   --layout  measure only these layouts (repeatable); default: all built-in layouts
//   --json    write a JSON array of measurements (memory::to_json) to FILE
//   --tsv     write one tab-separated line per layout to FILE (header first): line, server,
//             layout, unit, value_size, n, ttl, bytes_per_item (median), min, max, spread,
//             spread_pct, encoding, memory_usage; unsupported layouts get "n/a" figures
// Exit status: 0 on success (unsupported layouts are reported and skipped), 1 on errors.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <expirykit/memory/baseline.hpp>
#include <expirykit/memory/layouts.hpp>
#include <expirykit/memory/probe.hpp>

using namespace expirykit;

static int usage(int rc) {
  std::cerr << "usage: expirykit_memory_probe [--server NAME|PATH] [--n N] [--value-size B] [--reps K]\n"
               "                              [--ttl paced|ex] [--layout NAME]... [--json FILE] [--tsv FILE]\n"
               "                              [--list]\n";
  return rc;
}

int main(int argc, char** argv) {
  memory::LayoutParams p;
  memory::ProbeOptions o;
  std::string ttl = "paced", json_path, tsv_path, server;
  std::vector<std::string> only;
  bool list = false;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--server") server = next();
      else if (a == "--n") p.n = std::stoul(next());
      else if (a == "--value-size") p.value_size = std::stoul(next());
      else if (a == "--reps") o.repetitions = std::stoi(next());
      else if (a == "--ttl") ttl = next();
      else if (a == "--layout") only.push_back(next());
      else if (a == "--json") json_path = next();
      else if (a == "--tsv") tsv_path = next();
      else if (a == "--list") list = true;
      else if (a == "-h" || a == "--help") return usage(0);
      else throw std::invalid_argument("unknown argument " + a);
    }
    if (ttl == "paced") {
      p.expire_at_ms = memory::aligned_expiry_ms(p.ttl_s);
      p.expire_step_ms = 1;
    } else if (ttl != "ex") {
      throw std::invalid_argument("--ttl must be paced or ex");
    }
    if (list) {
      for (const auto& l : memory::all(p)) std::cout << l.name << "\t" << l.description << "\n";
      return 0;
    }
    if (!server.empty()) {
      o.server.binary = server.find('/') == std::string::npos ? process::provisioned_server(server)
                                                                  : std::filesystem::path(server);
      if (o.server.binary.empty()) throw std::invalid_argument("--server " + server + ": not provisioned (ci/provision-servers)");
    }
  } catch (const std::exception& e) {
    std::cerr << "expirykit_memory_probe: " << e.what() << "\n";
    return usage(1);
  }

  std::vector<memory::Layout> layouts;
  if (only.empty()) layouts = memory::all(p);
  try {
    for (const auto& n : only) layouts.push_back(memory::by_name(n, p));
  } catch (const std::exception& e) {
    std::cerr << "expirykit_memory_probe: " << e.what() << "\n";
    return 1;
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::ofstream tsv;
  if (!tsv_path.empty()) {
    tsv.open(tsv_path);
    tsv << "line\tserver\tlayout\tunit\tvalue_size\tn\tttl\tbytes_per_item\tmin\tmax\tspread\tspread_pct\tencoding"
           "\tmemory_usage\n";
  }
  std::string line = "?", server_name = "?";
  int rc = 0;
  for (const auto& l : layouts) {
    try {
      auto m = memory::Probe(o).run(l);
      std::cout << m.summary() << std::endl;
      out.push_back(memory::to_json(m));
      line = m.line;
      server_name = m.server;
      if (tsv.is_open())
        tsv << m.line << '\t' << m.server << '\t' << m.layout << '\t' << m.unit << '\t' << m.params.value_size << '\t'
            << m.params.n << '\t' << m.params.ttl_mode() << '\t' << m.stats.median << '\t' << m.stats.min << '\t'
            << m.stats.max << '\t' << m.stats.spread() << '\t' << m.stats.spread_pct() << '\t' << m.encoding() << '\t'
            << m.memory_usage << '\n';
    } catch (const memory::Unsupported& e) {
      std::cout << l.name << ": unsupported: " << e.what() << std::endl;
      if (tsv.is_open())
        tsv << line << '\t' << server_name << '\t' << l.name << '\t' << l.unit << '\t' << p.value_size << '\t' << p.n
            << '\t' << p.ttl_mode() << "\tn/a\tn/a\tn/a\tn/a\tn/a\tunsupported\tn/a\n";
    } catch (const std::exception& e) {
      std::cerr << l.name << ": " << e.what() << std::endl;
      rc = 1;
    }
  }
  if (tsv.is_open() && !tsv) {
    std::cerr << "expirykit_memory_probe: cannot write " << tsv_path << "\n";
    return 1;
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << out.dump(2) << "\n";
    if (!f) {
      std::cerr << "expirykit_memory_probe: cannot write " << json_path << "\n";
      return 1;
    }
  }
  return rc;
}
