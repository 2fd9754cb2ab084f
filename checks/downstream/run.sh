#!/usr/bin/env bash
# Installs expirykit into a temporary prefix and builds + runs the downstream example both
# through find_package(expirykit CONFIG) and through add_subdirectory.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
q() { "$@" >"$tmp/log" 2>&1 || { echo "downstream: '$*' failed:"; tail -30 "$tmp/log"; exit 1; }; }
q cmake -S "$root" -B "$tmp/kit" -G Ninja -DEXPIRYKIT_BUILD_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$tmp/prefix"
q cmake --install "$tmp/kit"
q cmake -S "$root/checks/downstream" -B "$tmp/a" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix"
q cmake --build "$tmp/a"
"$tmp/a/tokens_tests"
q cmake -S "$root/checks/downstream" -B "$tmp/b" -G Ninja -DEXPIRYKIT_SOURCE_DIR="$root"
q cmake --build "$tmp/b"
"$tmp/b/tokens_tests"
echo "downstream: find_package and add_subdirectory both built and passed"
