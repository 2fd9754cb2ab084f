#!/usr/bin/env bash
# Builds and runs the downstream example (this folder) the two ways a project consumes expirykit:
#   find_package   the kit installed into a temporary prefix (cmake --install), then
#                  cmake -DCMAKE_PREFIX_PATH=<prefix>; checks that the installed package was used;
#   add_subdirectory  cmake -DEXPIRYKIT_SOURCE_DIR=<this checkout> (add_subdirectory with a binary dir).
# Each: configure, build, then ctest (one test per TEST_CASE). Both build the example as one unity
# TU (CMAKE_UNITY_BUILD, a CMake setting any user may pick): its five files share most of what they
# instantiate from the kit, so five TUs cost about three times one (measured: 5 TUs + precompiled
# header 200 s of CPU, one unity TU with it 66 s, without it 49 s; docs/guide/ci.md). The
# find_package route keeps the precompiled header the example sets up (TOKENS_PCH, through the
# installed expirykit_precompile_headers), the add_subdirectory route builds without it.
# Prints two lines per route and the tests that SKIPped with their reason (a KNOWN ISSUE of the
# server, a server without field TTLs); the whole log of a step that fails. Everything goes to one temporary folder, removed at the end (server
# folders too: TMPDIR points into it). The tests run in a process group of their own, which is
# killed (by its id) if this script is interrupted; the servers they start die with them
# (docs/guide/ci.md: "What the kit guarantees about the servers it starts").
# Needs what `bash ci/install-deps && bash ci/provision-servers` installs (ci/test runs both first).
#
# usage: examples/downstream/run.sh [--keep]    (--keep: leave the temporary folder, print its path)
# Environment: EXPIRYKIT_SERVER (server the tests run against; default valkey-9.1),
#              EXPIRYKIT_JOBS (build jobs, default 2), any other EXPIRYKIT_* the tests read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
keep=0
case "${1:-}" in
  --keep) keep=1 ;;
  -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
  "") ;;
  *) echo "downstream: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
for t in cmake ninja c++; do
  command -v "$t" >/dev/null || { echo "downstream: '$t' is missing; run: bash ci/install-deps" >&2; exit 2; }
done
jobs=${EXPIRYKIT_JOBS:-2}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "downstream: EXPIRYKIT_JOBS='$jobs' is not a positive whole number" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/expirykit-downstream-XXXXXX")
group=""  # process group of the running ctest (its leader's pid)
cleanup() {
  if [ -n "$group" ]; then
    kill -TERM -- "-$group" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 -- "-$group" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$group" 2>/dev/null || true
    wait "$group" 2>/dev/null || true
    group=""
  fi
  if [ $keep = 1 ]; then echo "downstream: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$tmp/tmp"
t0=$SECONDS

# q LOG CMD...: runs CMD with its output in LOG; on failure prints the end of LOG and exits.
q() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    echo "downstream: FAILED: $*"
    tail -60 "$log"
    exit 1
  fi
}

# run_tests NAME BUILD_DIR: ctest in a process group of its own; one summary line; the skipped
# tests with the first line of their reason; everything on failure.
run_tests() {
  local name=$1 dir=$2 log="$tmp/$1-ctest.log" rc=0 t=$SECONDS
  setsid env TMPDIR="$tmp/tmp" ctest --test-dir "$dir" -j 2 --timeout 600 --output-on-failure \
    --output-junit "$tmp/$name-junit.xml" >"$log" 2>&1 </dev/null &
  group=$!
  wait "$group" || rc=$?
  group=""
  if [ $rc -ne 0 ]; then
    echo "downstream: $name: ctest FAILED (exit $rc):"
    cat "$log"
    exit 1
  fi
  local summary
  summary=$(grep -E '^[0-9]+% tests passed' "$log" || echo "(no ctest summary line)")
  echo "downstream: $name: $summary ($((SECONDS - t)) s)"
  # Catch2's console output of every test is in LastTest.log: "SKIPPED:" then the message.
  awk '/^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name) }
       /^[^ ].*SKIPPED:$/ || /^SKIPPED:$/ { s = 1; next }
       s == 1 && /with message/ { s = 2; next }
       s == 2 && /^ *$/ { if (length(msg) > 200) msg = substr(msg, 1, 197) "..."
                          printf "  skipped: %s\n    %s\n", name, msg; s = 0; msg = ""; next }
       # Catch2 wraps at 80 columns: join, without a space after a wrap inside a word or number.
       s == 2 { line = $0; sub(/^ +/, "", line)
                glue = (msg == "" || msg ~ /[\/-]$/ || (msg ~ /[.]$/ && line ~ /^[0-9]/)) ? "" : " "
                msg = msg glue line }' \
    "$dir/Testing/Temporary/LastTest.log" 2>/dev/null || true
}

# The kit, installed as a user would (no tests built).
q "$tmp/kit.log" cmake -S "$root" -B "$tmp/kit-build" -G Ninja -DEXPIRYKIT_BUILD_TESTS=OFF \
  -DCMAKE_INSTALL_PREFIX="$tmp/prefix"
q "$tmp/install.log" cmake --install "$tmp/kit-build"

# (a) find_package(expirykit CONFIG) from the prefix.
t=$SECONDS
q "$tmp/find-configure.log" cmake -S "$here" -B "$tmp/find" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_UNITY_BUILD=ON
found=$(sed -n 's/^expirykit_DIR:PATH=//p' "$tmp/find/CMakeCache.txt")
if [ "$found" != "$tmp/prefix/lib/cmake/expirykit" ]; then
  echo "downstream: find_package used expirykit_DIR='$found', not the installed package in $tmp/prefix"
  exit 1
fi
q "$tmp/find-build.log" cmake --build "$tmp/find" -j "$jobs"
echo "downstream: find_package(expirykit CONFIG) from $(basename "$tmp")/prefix: configured and built ($((SECONDS - t)) s)"
run_tests find_package "$tmp/find"

# (b) add_subdirectory(<checkout> <binary dir>).
t=$SECONDS
q "$tmp/sub-configure.log" cmake -S "$here" -B "$tmp/sub" -G Ninja -DEXPIRYKIT_SOURCE_DIR="$root" \
  -DCMAKE_UNITY_BUILD=ON -DTOKENS_PCH=OFF
q "$tmp/sub-build.log" cmake --build "$tmp/sub" -j "$jobs"
echo "downstream: add_subdirectory($root): configured and built ($((SECONDS - t)) s)"
run_tests add_subdirectory "$tmp/sub"

echo "downstream: PASS: both routes built and passed ($((SECONDS - t0)) s)"
