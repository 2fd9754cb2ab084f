// expirykit_env_page: prints docs/reference/env.md, the page of include/expirykit/env.hpp, from
// the table of every EXPIRYKIT_* variable (env::variables).
//
//   expirykit_env_page > docs/reference/env.md    # after a change to the table
//   expirykit_env_page --names                     # the table's names, one per line, sorted
//
// checks/ci/env_page_test.sh compares the committed page with this program's output and the
// names read in the repository with --names.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/env.hpp>

namespace {

namespace env = expirykit::env;

/// A markdown table cell: '|' escaped.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

/// "process/discovery.hpp, ci/build" -> "[process/discovery](process/discovery.md), ci/build".
std::string readers(std::string_view list) {
  std::string out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(", ", start);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view item = list.substr(start, end - start);
    if (!out.empty()) out += ", ";
    if (item.size() > 4 && item.substr(item.size() - 4) == ".hpp" && item.find(' ') == std::string_view::npos) {
      const std::string_view stem = item.substr(0, item.size() - 4);
      out += "[" + std::string(stem) + "](" + std::string(stem) + ".md)";
    } else {
      out += cell(item);
    }
    start = end + 2;
  }
  return out;
}

const char* title(env::Readers r) {
  switch (r) {
    case env::Readers::headers: return "Read by the kit's headers (`expirykit::Config`: your tests read them too)";
    case env::Readers::suites: return "Read by the kit's own suites and tools (`expirykit::Config`)";
    case env::Readers::scripts: return "Read by the ci/ scripts (not by the C++ code)";
    case env::Readers::cmake: return "CMake options and cache variables";
    case env::Readers::defines: return "Compile definitions and macros (names, not environment variables)";
  }
  return "?";
}

void page() {
  std::printf("%s", R"(# `expirykit/env.hpp`

Every `EXPIRYKIT_*` variable as one table, and the variables that pick the servers under test as the
start of a replay command line. Namespace `expirykit::env`. The variables the C++ code reads are
parsed once into [`expirykit::Config`](config.md) (`config()`, `reload_config()`); which servers a
run tests is chosen from it in [process/under_test](process/under_test.md).

This page is generated from the table (`env::variables`) by `tools/env_page.cpp`; after a change
to the table: `build/tools/expirykit_env_page > docs/reference/env.md`. The CTest check "ci:
docs/reference/env.md is generated from the variable table, which lists every EXPIRYKIT_ name"
(checks/ci/env_page_test.sh) fails when the committed page differs from the program's output, when
a name read anywhere in the repository (headers, suites, tools, bench, checks, ci/ scripts,
examples, CMake files) is missing from the table, when the table lists a name read nowhere, or
when a C++ file but config.hpp reads the environment; checks/process/config_test.cpp fails when
`Config` reads a variable the table does not list as read by the headers or the suites, or the
other way round.

## What it offers

| name | shape | what |
|---|---|---|
| `enum class Readers` | `headers`, `suites`, `scripts`, `cmake`, `defines` | who reads a variable: the sections below |
| `struct Variable` | `name`, `readers`, `value`, `default_value`, `meaning`, `read_by` (`std::string_view`, markdown) | one row of the table |
| `variables` | `inline constexpr Variable[]` | every `EXPIRYKIT_*` name of the repository, by section, each once |
| `find_variable(name)` | `const Variable*(std::string_view)` | the row of `name`; `nullptr` when the table has none |
| `shell_quote(s)` | `std::string(const std::string&)` | `s` as one single-quoted shell word (`'` written as `'\''`) |
| `server_assignments()` | `std::string()` | `EXPIRYKIT_SERVER`, `EXPIRYKIT_SERVER_ADDR`, `EXPIRYKIT_SERVERS_DIR`, `EXPIRYKIT_CLUSTER_SHAPE`, `EXPIRYKIT_CLUSTER_SEED` as the configuration holds them now (`config()`), as shell assignments each followed by a space: the start of a replay command line (`""` when none is set); the password is never printed |

## Errors

`server_assignments()` throws `std::invalid_argument` as `config()` does: an `EXPIRYKIT_*` value
that does not parse, named with its value ([config](config.md)).

## Environment variables

An empty value counts as unset everywhere. The C++ code reads its variables once, on the first
`config()` call; code that changes the environment while it runs calls `reload_config()`.
)");
  for (env::Readers r : {env::Readers::headers, env::Readers::suites, env::Readers::scripts, env::Readers::cmake,
                         env::Readers::defines}) {
    std::printf("\n### %s\n\n| variable | value | default | meaning | read by |\n|---|---|---|---|---|\n", title(r));
    for (const auto& v : env::variables) {
      if (v.readers != r) continue;
      std::printf("| `%s` | %s | %s | %s | %s |\n", std::string(v.name).c_str(), cell(v.value).c_str(),
                  cell(v.default_value).c_str(), cell(v.meaning).c_str(), readers(v.read_by).c_str());
    }
  }
  std::printf("%s", R"(
## Example

```cpp
// snippet
#include <expirykit/config.hpp>
#include <expirykit/env.hpp>
#include <vector>

std::vector<std::string> read_by_headers;   // EXPIRYKIT_SERVER, EXPIRYKIT_SERVER_ADDR, ...
for (const auto& v : expirykit::env::variables)
  if (v.readers == expirykit::env::Readers::headers) read_by_headers.emplace_back(v.name);
const expirykit::Config& c = expirykit::config();   // EXPIRYKIT_PROP_SCALE, parsed once
double scale = c.prop_scale;
std::string replay = expirykit::env::server_assignments() + expirykit::env::shell_quote("./my_tests");
```
)");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string arg = argc > 1 ? argv[1] : "";
  if (arg == "--names") {
    std::vector<std::string> names;
    for (const auto& v : env::variables) names.emplace_back(v.name);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) std::printf("%s\n", n.c_str());
    return 0;
  }
  if (!arg.empty()) {
    std::fprintf(stderr,
                 "usage: expirykit_env_page [--names]\n"
                 "  prints docs/reference/env.md from the table of include/expirykit/env.hpp; --names: its names\n");
    return arg == "-h" || arg == "--help" ? 0 : 2;
  }
  page();
  return 0;
}
