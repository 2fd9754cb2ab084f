// expirykit/env.hpp: every EXPIRYKIT_* variable, as one table, and the server variables as the
// start of a replay command line.
//
//   for (const auto& v : expirykit::env::variables) std::cout << v.name << ": " << v.meaning << "\n";
//   std::string replay = expirykit::env::server_assignments() + "./my_tests 'HTTL*'";
//
// `variables` lists each name the kit's headers, its suites and tools, its ci/ scripts and its
// CMake files read, with its value, default, meaning and readers; docs/reference/env.md is
// generated from it (tools/env_page.cpp) and a check (checks/ci/env_page_test.sh) fails when a
// name read anywhere in the repository is missing here, or when the committed page differs.
// The variables the C++ code reads are parsed once, into expirykit::Config (config.hpp).
#pragma once

#include <string>
#include <string_view>

#include <expirykit/config.hpp>

namespace expirykit::env {

/// Who reads a variable, which is also the section of docs/reference/env.md it is listed in.
enum class Readers {
  headers,  ///< the kit's headers, through expirykit::Config: your tests read them too
  suites,   ///< the kit's own suites and tools, through expirykit::Config
  scripts,  ///< the ci/ scripts (and the shell scripts of examples/ and bench/), not the C++ code
  cmake,    ///< CMake options and cache variables
  defines,  ///< compile definitions and macros: names, not environment variables
};

/// One row of the table. Text is markdown (`code` in backquotes).
struct Variable {
  std::string_view name;           ///< "EXPIRYKIT_SERVER"
  Readers readers;                 ///< who reads it (the section)
  std::string_view value;          ///< its form and unit, e.g. "`host:port`", "a number > 0"
  std::string_view default_value;  ///< what holds when it is unset (or empty)
  std::string_view meaning;        ///< what it does
  std::string_view read_by;        ///< comma-separated: headers (linked on the page), files, scripts
};

/// Every EXPIRYKIT_* name of the repository, by section, each once.
inline constexpr Variable variables[] = {
    // ---- the kit's headers (expirykit::Config) ----
    {"EXPIRYKIT_SERVER", Readers::headers, "a provisioned line (`redis-8.6`) or a path to a server binary", "`valkey-9.1`",
     "the server binary the kit spawns (vetted with `--version`)",
     "process/discovery.hpp, ci/conformance, ci/memory-gate, ci/provision-servers, ci/github-actions/conformance.yml"},
    {"EXPIRYKIT_SERVER_ADDR", Readers::headers, "`host:port` or `[v6-address]:port`", "spawn one",
     "a server you started: the tests use it instead of spawning one (external mode; the kit FLUSHALLs it). "
     "ReplicaFixture and ClusterFixture SKIP; `memory::Probe` throws ProbeError unless `ProbeOptions::server.binary` is set",
     "process/under_test.hpp, process/target.hpp, memory/probe.hpp, ci/conformance, ci/kill-table"},
    {"EXPIRYKIT_SERVER_PASSWORD", Readers::headers, "a password; never printed, not in replay lines (keep it set when you replay)",
     "no AUTH",
     "with `EXPIRYKIT_SERVER_ADDR` or `EXPIRYKIT_CLUSTER_SEED` set, every connection the kit opens to a server it did not "
     "spawn sends `AUTH` (the external server's `requirepass`, or an ACL user's password)",
     "process/under_test.hpp, resp/credentials.hpp"},
    {"EXPIRYKIT_SERVER_USER", Readers::headers, "an ACL user name (Redis 6.0+, Valkey 7.2+)", "the default user",
     "the user of `AUTH <user> <password>`; set without `EXPIRYKIT_SERVER_PASSWORD` it is an error", "process/under_test.hpp"},
    {"EXPIRYKIT_SERVER_TLS_CA", Readers::headers, "a PEM file (the CA of the server's certificate); an absolute path (ctest runs tests in the build folder)", "plain TCP",
     "with `EXPIRYKIT_SERVER_ADDR` or `EXPIRYKIT_CLUSTER_SEED` set, every connection the kit opens to a server it did not "
     "spawn speaks TLS, verifying the server against this CA; needs a build with TLS (hiredis 1.x with hiredis_ssl: "
     "Debian 12's hiredis 0.14 has none, and then the connection fails saying so)",
     "process/under_test.hpp, resp/tls.hpp"},
    {"EXPIRYKIT_SERVER_TLS_CERT", Readers::headers, "a PEM file (a client certificate)", "none",
     "the certificate those TLS connections present, for a server with `tls-auth-clients yes`; needs "
     "`EXPIRYKIT_SERVER_TLS_KEY` and `EXPIRYKIT_SERVER_TLS_CA`",
     "process/under_test.hpp"},
    {"EXPIRYKIT_SERVER_TLS_KEY", Readers::headers, "a PEM file (the client certificate's private key)", "none",
     "the key of `EXPIRYKIT_SERVER_TLS_CERT`; set without it it is an error", "process/under_test.hpp"},
    {"EXPIRYKIT_SERVERS_DIR", Readers::headers, "a folder",
     "`$XDG_CACHE_HOME/expirykit/servers`, else `~/.cache/expirykit/servers`",
     "where the provisioned server binaries are (`manifest.tsv` there lists name, version, suite, sha256)",
     "process/discovery.hpp, ci/provision-servers, ci/hiredis1, ci/kill-table, ci/memory-report"},
    {"EXPIRYKIT_KEEP_DIRS", Readers::headers, "`1` or `0`", "`0`",
     "`1`: keep each spawned server's folder and log (the path is printed)", "process/server.hpp"},
    {"EXPIRYKIT_FAIL_NOT_SUPPORTED", Readers::headers, "`1` or `0`", "`0`",
     "`1`: a NOT SUPPORTED skip (the server lacks field TTLs, DEBUG, a model dialect, HSETEX...) fails the test instead, "
     "so a CI gate fails when a release loses what the tests need; KNOWN ISSUE, KNOWN GAP, FIXED and other skips "
     "(external mode, no replicas) stay skips",
     "catch2/verdict_kind.hpp"},
    {"EXPIRYKIT_CLUSTER_SHAPE", Readers::headers, "`<primaries>x<replicas>`: 1-99 primaries, 0-9 replicas each", "`3x1`",
     "the shape of the clusters the kit spawns (ClusterFixture's shared one, `fresh_cluster()`'s default)",
     "process/under_test.hpp, catch2/cluster_fixture.hpp, ci/conformance"},
    {"EXPIRYKIT_CLUSTER_SEED", Readers::headers, "`host:port` of a node", "spawn one",
     "a running cluster: ClusterFixture's `client()` and `twin()` use it (flushing its primaries); what needs a "
     "cluster the kit spawns SKIPs",
     "process/under_test.hpp, catch2/cluster_fixture.hpp, ci/conformance"},
    {"EXPIRYKIT_DIALECT", Readers::headers, "a dialect name of the server's flavor, e.g. `redis-8.0`",
     "the server's own, else the newest older one of its flavor", "the model dialect that checks the server",
     "server/dialect_choice.hpp"},
    {"EXPIRYKIT_WIRE_DELAY_MS", Readers::headers, "milliseconds, 0 to 60000 (0: none)", "none",
     "every connection the kit opens (`resp::Client`) waits this long after it sends, before it reads the replies: "
     "each round trip that much slower, as on a slow network or a busy runner, to show that a suite's time margins "
     "hold (the fixtures' first line says it is on, replay lines keep it; a property with a time budget checks fewer "
     "sequences)",
     "resp/client.hpp, catch2/fixture.hpp"},
    {"EXPIRYKIT_READ_SPIN_US", Readers::headers, "microseconds, 0 to 100000 (0: never)", "`300`",
     "how long every connection the kit opens (`resp::Client`, not over TLS) polls its socket for the reply it waits "
     "for, yielding the processor between polls, before it sleeps in the kernel: on a virtual machine the kernel's "
     "wake-up costs more than a small command (a PING round trip 90-140 us asleep, about 30 us polling on the 2-core "
     "machine of bench/RESULTS.md 9.11); after 8 reads in a row whose polling ran out, a connection blocks at once for "
     "its next 64 reads; read by each connection as it opens (a bad value fails config(), which the fixtures call; "
     "a program that never calls it gets the default), not in replay lines; `0` for a server on another host (a round "
     "trip longer than the spin), a machine where every core is busy or a CPU quota that polling would use up; "
     "`resp::Client::set_read_spin` for one connection",
     "resp/client.hpp"},
    {"EXPIRYKIT_PROP_SCALE", Readers::headers, "a number > 0", "`1`", "multiplies property rounds and time budgets",
     "property/property.hpp, property/durable_property.hpp, ci/conformance"},
    {"EXPIRYKIT_PROP_SECONDS", Readers::headers, "seconds, a number >= 0", "each property's own x `EXPIRYKIT_PROP_SCALE`",
     "the wall-clock budget of a property (`0`: one round)", "property/property.hpp, ci/nightly"},
    {"EXPIRYKIT_PROTOCOL", Readers::headers, "`2`, `3` or `both`", "`both` with hiredis 1.1 or later, else `2`",
     "the protocols the main, durability and cluster properties draw from for each sequence (RESP2, RESP3 after HELLO 3); `3` and `both` "
     "need a build with hiredis 1.1 or later",
     "property/property.hpp, state/twin.hpp, docs/guide/resp3.md"},
    {"EXPIRYKIT_VERDICT_FILE", Readers::headers, "a file", "none written",
     "the verdict listener appends one tab-separated line per test case to it", "catch2/verdict.hpp, ci/conformance"},
    {"EXPIRYKIT_UPDATE_BASELINES", Readers::headers, "`1` or `0`", "`0`",
     "`1`: record memory baselines instead of comparing with them",
     "memory/baseline.hpp, memory/matchers.hpp, ci/memory-gate"},
    {"EXPIRYKIT_BASELINE_DIR", Readers::headers, "a folder", "the caller's fallback (`memory::baseline_dir`)",
     "where the memory baselines (`<line>.json`) are", "memory/baseline.hpp, ci/memory-gate"},
    {"EXPIRYKIT_BENCHMARK", Readers::headers, "a path", "`valkey-benchmark` or `redis-benchmark` next to the server binary",
     "the server's own benchmark tool, for a side-by-side ratio", "bench/compare.hpp"},
    // ---- the kit's own suites and tools (expirykit::Config) ----
    {"EXPIRYKIT_UPGRADE_FROM", Readers::suites, "a provisioned name or a path to a server binary",
     "the newest provisioned line of the server's flavor older than the server",
     "the previous release the upgrade checks start from", "suites/durability/upgrade.cpp"},
    {"EXPIRYKIT_MEMORY_N", Readers::suites, "a whole number, 1 to 10^9", "`20000`", "items per memory layout",
     "suites/memory, ci/memory-gate"},
    {"EXPIRYKIT_MEMORY_VALUE_SIZE", Readers::suites, "bytes, 1 to 10^6", "`40`", "bytes per value of a memory layout",
     "suites/memory, ci/memory-gate"},
    {"EXPIRYKIT_MEMORY_REPS", Readers::suites, "a whole number, 1 to 100", "`3`", "fresh servers measured per layout",
     "suites/memory, ci/memory-gate"},
    {"EXPIRYKIT_MEMORY_TTL", Readers::suites, "`paced` or `ex`", "`paced`",
     "`paced`: PXAT from an aligned base, 1 ms apart per item (repeatable); `ex`: EX 900", "suites/memory, ci/memory-gate"},
    // ---- the ci/ scripts ----
    {"EXPIRYKIT_RELEASE_SEQUENCES", Readers::scripts, "a whole number", "`100`", "generated sequences of a release report",
     "ci/conformance"},
    {"EXPIRYKIT_JOBS", Readers::scripts, "a whole number > 0", "the number of cores (ci/build), `2` (the others)",
     "build jobs", "ci/build, ci/memory-gate, ci/memory-report, examples/downstream/run.sh, bench/build_cost.sh"},
    {"EXPIRYKIT_BUILD_TYPE", Readers::scripts, "a CMake build type", "`Release`", "the build type",
     "ci/build, ci/test, bench/build_cost.sh"},
    {"EXPIRYKIT_TARGETS", Readers::scripts, "an extended regex", "every target", "build only the targets it matches",
     "ci/build (and the scripts that call it)"},
    {"EXPIRYKIT_SKIP_TARGETS", Readers::scripts, "an extended regex", "none", "leave the targets it matches out",
     "ci/build, ci/test"},
    {"EXPIRYKIT_BUILD_DIR", Readers::scripts, "a folder", "`<checkout>/build`", "the build folder",
     "ci/memory-gate, ci/memory-report"},
    {"EXPIRYKIT_DEBIAN_MIRROR", Readers::scripts, "a Debian archive URL", "the machine's apt sources, else deb.debian.org",
     "where server packages and hiredis 1.x come from", "ci/provision-servers, ci/hiredis1"},
    {"EXPIRYKIT_DEBIAN_SUITES", Readers::scripts, "Debian suite names, space-separated",
     "`bookworm bookworm-backports trixie trixie-backports sid experimental`",
     "the suites searched for a server line; the newest version wins", "ci/provision-servers"},
    {"EXPIRYKIT_REPO", Readers::scripts, "`owner/name`", "none (set it)", "where your CI gets the kit",
     "ci/github-actions/conformance.yml"},
    {"EXPIRYKIT_REF", Readers::scripts, "a commit SHA", "none (set it)", "the version of the kit your CI uses",
     "ci/github-actions/conformance.yml"},
    // ---- CMake ----
    {"EXPIRYKIT_BUILD_TESTS", Readers::cmake, "`ON` or `OFF`", "`ON` at top level, `OFF` under `add_subdirectory`",
     "build checks/, suites/, tools/ and bench/", "CMakeLists.txt"},
    {"EXPIRYKIT_BUILD_SUITES", Readers::cmake, "`ON` or `OFF`", "`ON`", "with tests: also suites/, bench/ and most of tools/",
     "CMakeLists.txt, checks/process/CMakeLists.txt, ci/test"},
    {"EXPIRYKIT_WERROR", Readers::cmake, "`ON` or `OFF`", "`ON` at top level",
     "the kit's own targets with `-Wall -Wextra -Werror`", "CMakeLists.txt"},
    {"EXPIRYKIT_SANITIZE", Readers::cmake, "sanitizer names, e.g. `address,undefined`", "none",
     "sanitizers of the kit's own targets", "CMakeLists.txt"},
    {"EXPIRYKIT_HIREDIS_PREFIX", Readers::cmake, "an install prefix", "pkg-config's hiredis",
     "use the hiredis 1.x installed under this prefix", "CMakeLists.txt, cmake/expirykitDependencies.cmake"},
    {"EXPIRYKIT_JUNIT_DIR", Readers::cmake, "a folder", "none", "every test writes JUnit XML here", "CMakeLists.txt"},
    {"EXPIRYKIT_PCH", Readers::cmake, "`ON` or `OFF`", "`ON`",
     "the kit's targets share a precompiled header of the third-party headers (pch.hpp)",
     "CMakeLists.txt, checks/docs/CMakeLists.txt"},
    {"EXPIRYKIT_UNITY", Readers::cmake, "`ON` or `OFF`", "`ON`", "each test binary's sources as one unity TU",
     "CMakeLists.txt, checks/docs/CMakeLists.txt"},
    {"EXPIRYKIT_JEMALLOC", Readers::cmake, "`ON` or `OFF`", "`ON`",
     "the kit's own test and bench binaries link jemalloc when pkg-config finds it and EXPIRYKIT_SANITIZE is empty "
     "(the checker spends about a fifth of its CPU in malloc; bench/RESULTS.md 9.6)",
     "CMakeLists.txt"},
    {"EXPIRYKIT_CHECK_AREAS", Readers::cmake, "a `;`-list of checks/ folders", "all", "the check binaries to build",
     "checks/CMakeLists.txt, ci/test"},
    {"EXPIRYKIT_CHECK_HEADERS", Readers::cmake, "`ON` or `OFF`", "`ON`", "build check_headers (every public header on its own; the TU of all of them together is built anyway)",
     "checks/CMakeLists.txt, ci/test"},
    {"EXPIRYKIT_CHECK_HEADERS_ONLY", Readers::cmake, "a `;`-list of headers under include/", "every header",
     "the headers check_headers compiles on its own (ci/test: those changed since the commit ci/landed names)",
     "checks/headers/CMakeLists.txt, ci/test"},
    {"EXPIRYKIT_BENCH_PROGRAMS", Readers::cmake, "a list of programs (set by bench/CMakeLists.txt)", "all",
     "the bench/ programs", "bench/CMakeLists.txt"},
    {"EXPIRYKIT_GNUPLOT", Readers::cmake, "a program (`find_program`)", "found on `PATH`", "draws the benchmark plots",
     "bench/CMakeLists.txt"},
    {"EXPIRYKIT_BASH", Readers::cmake, "a program (`find_program`)", "found on `PATH`", "runs the docs' code extractor",
     "checks/docs/CMakeLists.txt"},
    {"EXPIRYKIT_SOURCE_DIR", Readers::cmake, "a checkout of the kit", "empty: `find_package`",
     "examples/downstream: `add_subdirectory` of that checkout", "examples/downstream/CMakeLists.txt"},
    // ---- compile definitions and macros ----
    {"EXPIRYKIT_HIREDIS_SSL", Readers::defines, "`1` (set by CMake on the `expirykit::expirykit` target)",
     "unset: no TLS", "the hiredis linked is 1.x with hiredis_ssl: resp::Client can speak TLS (`resp::tls_supported`)",
     "cmake/expirykitDependencies.cmake, resp/tls.hpp"},
    {"EXPIRYKIT_CATCH2_PROBE", Readers::defines, "a path (set by CMake)", "-", "the helper test binary of checks/catch2",
     "checks/catch2/CMakeLists.txt"},
    {"EXPIRYKIT_ORPHAN_PROBE", Readers::defines, "a path (set by CMake)", "-", "the helper program of the leak checks",
     "checks/process/CMakeLists.txt"},
    {"EXPIRYKIT_SUITE_SEMANTICS", Readers::defines, "a path (set by CMake)", "empty without suites",
     "suite_semantics, SIGKILLed by a leak check", "checks/process/CMakeLists.txt"},
    {"EXPIRYKIT_SUITE_CLUSTER", Readers::defines, "a path (set by CMake)", "empty without suites",
     "suite_cluster, SIGKILLed by a leak check", "checks/process/CMakeLists.txt"},
    {"EXPIRYKIT_MEMORY_BASELINE_DIR", Readers::defines, "a path (set by CMake)", "`ci/baselines/memory`",
     "the memory suite's baselines folder (`EXPIRYKIT_BASELINE_DIR` wins)", "suites/memory/CMakeLists.txt"},
    {"EXPIRYKIT_REGISTER_VERDICT_LISTENER", Readers::defines, "a macro: `EXPIRYKIT_REGISTER_VERDICT_LISTENER()`", "-",
     "registers the verdict listener in one source file of a test binary", "catch2/verdict.hpp"},
};

/// The row of `name`, or nullptr when the table has none.
inline const Variable* find_variable(std::string_view name) {
  for (const auto& v : variables)
    if (v.name == name) return &v;
  return nullptr;
}

/// `s` as one shell word: single-quoted, with ' written as '\''.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The variables that pick the servers under test and the model that checks them
/// (EXPIRYKIT_SERVER, EXPIRYKIT_SERVER_ADDR, EXPIRYKIT_SERVERS_DIR, EXPIRYKIT_CLUSTER_SHAPE,
/// EXPIRYKIT_CLUSTER_SEED, EXPIRYKIT_DIALECT, EXPIRYKIT_WIRE_DELAY_MS), how the server is reached
/// (EXPIRYKIT_SERVER_TLS_CA, _CERT, _KEY) and EXPIRYKIT_FAIL_NOT_SUPPORTED as the configuration
/// holds them now (config(): the environment as last read), as shell assignments each followed
/// by a space ("" when none is set): the start of a replay command line. The password is never
/// printed. Throws std::invalid_argument as config() does.
inline std::string server_assignments() {
  const Config& c = config();
  std::string out;
  const auto put = [&out](const char* name, const std::string& value) { out += std::string(name) + "=" + shell_quote(value) + " "; };
  if (c.server) put("EXPIRYKIT_SERVER", *c.server);
  if (c.server_addr) put("EXPIRYKIT_SERVER_ADDR", c.server_addr->text);
  if (c.servers_dir) put("EXPIRYKIT_SERVERS_DIR", c.servers_dir->string());
  if (c.cluster_shape) put("EXPIRYKIT_CLUSTER_SHAPE", c.cluster_shape->to_string());
  if (c.cluster_seed) put("EXPIRYKIT_CLUSTER_SEED", c.cluster_seed->text);
  if (c.dialect) put("EXPIRYKIT_DIALECT", *c.dialect);  // another dialect checks other replies
  if (c.wire_delay_ms) put("EXPIRYKIT_WIRE_DELAY_MS", std::to_string(c.wire_delay_ms));  // a margin it broke
  if (c.protocol) put("EXPIRYKIT_PROTOCOL", *c.protocol);  // the seed draws the same protocols only from the same set
  // How the server is reached (file paths, no secret: the password stays out) and a gate that
  // turned a skip into the failure.
  if (c.server_tls_ca) put("EXPIRYKIT_SERVER_TLS_CA", c.server_tls_ca->string());
  if (c.server_tls_cert) put("EXPIRYKIT_SERVER_TLS_CERT", c.server_tls_cert->string());
  if (c.server_tls_key) put("EXPIRYKIT_SERVER_TLS_KEY", c.server_tls_key->string());
  if (c.fail_not_supported) put("EXPIRYKIT_FAIL_NOT_SUPPORTED", "1");
  return out;
}

}  // namespace expirykit::env
