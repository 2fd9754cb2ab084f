#!/usr/bin/env bash
# After ci/test has run ci/install-deps once, a second run installs nothing and prints nothing.
set -u
out=$(bash "$1/ci/install-deps" 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit code $rc: $out"; exit 1; }
[ -z "$out" ] || { echo "FAIL: printed: $out"; exit 1; }
echo PASS
