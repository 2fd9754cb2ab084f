#!/usr/bin/env bash
# A suite binary against an external address where nothing listens (EXPIRYKIT_SERVER_ADDR=
# 127.0.0.1:1): the shared server cannot be set up, so every check fails. The first failure must
# carry the full error (what is wrong and what to do), every later one a one-line pointer to it
# (catch2/fixture.hpp shared_target), and the binary must not try again per test.
# usage: setup_error_run.sh SUITE_BINARY
set -uo pipefail
bin=$1
vf=$(mktemp "${TMPDIR:-/tmp}/expirykit-setup-XXXXXX.tsv")
log=$(mktemp "${TMPDIR:-/tmp}/expirykit-setup-XXXXXX.log")
trap 'rm -f "$vf" "$log"' EXIT
EXPIRYKIT_SERVER_ADDR=127.0.0.1:1 EXPIRYKIT_VERDICT_FILE=$vf "$bin" >"$log" 2>&1
rc=$?
n=$(wc -l <"$vf")
full=$(grep "start that server or unset EXPIRYKIT_SERVER_ADDR" "$vf" | grep -vc "see the first failing test")
short=$(grep -c "the shared server could not be set up, see the first failing test of this binary: EXPIRYKIT_SERVER_ADDR=127.0.0.1:1" "$vf")
echo "$(basename "$bin") with nothing at EXPIRYKIT_SERVER_ADDR: $n checks, $full with the full error, $short pointing to it (exit code $rc)"
if [ "$rc" -eq 0 ] || [ "$n" -lt 2 ] || [ "$full" -ne 1 ] || [ "$short" -ne $((n - 1)) ]; then
  echo "expected: a non-zero exit, at least 2 checks, the full error once and a pointer to it in every other check"
  echo "--- the verdicts ---"; cut -c1-300 "$vf" | head -20
  echo "--- the end of the binary's output ---"; tail -30 "$log"
  exit 1
fi
