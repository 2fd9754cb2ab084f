// expirykit_tools: the kit's command-line programs as one binary, so that the kit's headers they
// share (the twin, the model, the generators, process::Server) are compiled once instead of once
// per program (bench/RESULTS.md "Compile cost").
//
// Each program keeps its name: the build makes expirykit_differential, expirykit_fault_proxy,
// expirykit_release_report and expirykit_report as links to this binary (target
// expirykit_tool_links), and it runs the program it was called as (the last path component of
// argv[0]). `expirykit_tools NAME [args...]` runs NAME too; `expirykit_tools` alone lists them.
#include <cstdio>
#include <cstring>

#define TOOL_PROGRAM(n) \
  namespace expirykit_tools::n { \
  int run(int argc, char** argv); \
  }
TOOL_PROGRAM(differential)
TOOL_PROGRAM(fault_proxy)
TOOL_PROGRAM(release_report)
TOOL_PROGRAM(report)
#undef TOOL_PROGRAM

namespace {
struct Program {
  const char* name;
  int (*run)(int, char**);
  const char* what;
};
const Program programs[] = {
    {"expirykit_differential", expirykit_tools::differential::run,
     "one command sequence against two servers, the divergences between them (ci/differential)"},
    {"expirykit_fault_proxy", expirykit_tools::fault_proxy::run,
     "a RESP proxy that injects one fault of the catalogue (ci/kill-table)"},
    {"expirykit_release_report", expirykit_tools::release_report::run,
     "what changed from one release to the next, command by command (ci/release-report)"},
    {"expirykit_report", expirykit_tools::report::run, "a known server issue as an upstream bug report (ci/report)"},
};

const Program* find(const char* name) {
  for (const auto& p : programs)
    if (std::strcmp(p.name, name) == 0) return &p;
  return nullptr;
}

int usage(FILE* to) {
  std::fprintf(to, "usage: expirykit_tools PROGRAM [args...]   (or call PROGRAM, a link to this binary)\n");
  for (const auto& p : programs) std::fprintf(to, "  %-26s %s\n", p.name, p.what);
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
  std::fprintf(stderr, "expirykit_tools: no program '%s'\n", argv[1]);
  return usage(stderr);
}
