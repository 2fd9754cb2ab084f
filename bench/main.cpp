// expirykit_bench: the benchmark programs of bench/ as one binary, so that their common code
// (bench/common.hpp, the kit's load generator, RapidCheck-free but Boost.Process-heavy headers) is
// compiled once instead of once per program (bench/RESULTS.md "Compile cost").
//
// Each program keeps its name: the build makes bench_compare, bench_writes, ... as links to this
// binary, and it runs the program it was called as (the last path component of argv[0]).
// `expirykit_bench NAME [args...]` runs NAME too; `expirykit_bench` alone lists the programs.
#include <cstdio>
#include <cstring>
#include <string>

namespace ekb {
#define EKB_PROGRAM(n) namespace n { int run(int argc, char** argv); }
EKB_PROGRAM(bench_compare)
EKB_PROGRAM(bench_hget_ttl)
EKB_PROGRAM(bench_writes)
EKB_PROGRAM(bench_hexpire)
EKB_PROGRAM(bench_threads)
EKB_PROGRAM(bench_active_expire)
EKB_PROGRAM(bench_bulk_load)
EKB_PROGRAM(bench_spawn)
EKB_PROGRAM(bench_checker)
#undef EKB_PROGRAM
}  // namespace ekb

namespace {
struct Program {
  const char* name;
  int (*run)(int, char**);
  const char* what;
};
const Program programs[] = {
    {"bench_compare", ekb::bench_compare::run, "the kit's load generator vs valkey-benchmark, same command"},
    {"bench_hget_ttl", ekb::bench_hget_ttl::run, "HGET with and without a TTL on every field"},
    {"bench_writes", ekb::bench_writes::run, "HSETEX vs SET EX vs HSET"},
    {"bench_hexpire", ekb::bench_hexpire::run, "HEXPIRE updates on existing fields"},
    {"bench_threads", ekb::bench_threads::run, "pipelined threads: per-thread hashes vs one shared hash vs strings"},
    {"bench_active_expire", ekb::bench_active_expire::run, "the cost of active expiry"},
    {"bench_bulk_load", ekb::bench_bulk_load::run, "bulk load of the '1.25 billion values' layout, scaled"},
    {"bench_spawn", ekb::bench_spawn::run, "process::Server start to PONG vs a bare spawn"},
    {"bench_checker", ekb::bench_checker::run, "model-checked commands per second vs raw round trips (issue 21)"},
};

const Program* find(const char* name) {
  for (const auto& p : programs)
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

int usage(FILE* to) {
  std::fprintf(to, "usage: expirykit_bench PROGRAM [args...]   (or call PROGRAM, a link to this binary)\n");
  for (const auto& p : programs) std::fprintf(to, "  %-20s %s\n", p.name, p.what);
  return to == stdout ? 0 : 2;
}
}  // namespace

int main(int argc, char** argv) {
  const char* called = argc > 0 ? argv[0] : "";
  if (const char* slash = std::strrchr(called, '/')) called = slash + 1;
  if (const Program* p = find(called)) return p->run(argc, argv);
  if (argc < 2) return usage(stderr);
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) return usage(stdout);
  if (const Program* p = find(argv[1])) return p->run(argc - 1, argv + 1);
  std::fprintf(stderr, "expirykit_bench: no program '%s'\n", argv[1]);
  return usage(stderr);
}
