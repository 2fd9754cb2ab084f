#!/usr/bin/env bash
# A suite binary against a control server (one without hash field TTLs: valkey-8.0, redis-7.0).
# Every check must either PASS (it needs nothing the control lacks) or be NOT SUPPORTED (a skip
# with that verdict, catch2/verdict_kind.hpp: "not supported by <server>: ...") before it sends a
# command the server lacks. Anything else fails this test with the offending verdict lines: a
# check that forgot to ask for a capability (issue: "the controls fail") shows up here, in CTest,
# rather than in a later `ci/conformance --all`.
# usage: control_run.sh SUITE_BINARY SERVER_NAME
set -uo pipefail
bin=$1 server=$2
vf=$(mktemp "${TMPDIR:-/tmp}/expirykit-control-XXXXXX.tsv")
log=$(mktemp "${TMPDIR:-/tmp}/expirykit-control-XXXXXX.log")
trap 'rm -f "$vf" "$log"' EXIT
EXPIRYKIT_SERVER=$server EXPIRYKIT_VERDICT_FILE=$vf "$bin" >"$log" 2>&1
rc=$?
bad=$(awk -F'\t' '$3 != "PASS" && $3 != "NOT SUPPORTED" {
  d = $4; sub(/\\n.*/, "", d); printf "  %s %s: %s\n", $3, $2, substr(d, 1, 300) }' "$vf")
n=$(wc -l <"$vf")
pass=$(awk -F'\t' '$3 == "PASS"' "$vf" | wc -l)
ns=$(awk -F'\t' '$3 == "NOT SUPPORTED"' "$vf" | wc -l)
echo "$(basename "$bin") against $server: $n checks, $pass passed, $ns not supported, $((n - pass - ns)) other (exit code $rc)"
if [ -n "$bad" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; } || [ "$n" -eq 0 ]; then
  [ -z "$bad" ] || { echo "checks that neither passed nor were NOT SUPPORTED before sending what $server lacks:"; echo "$bad"; }
  [ "$n" -gt 0 ] || echo "no verdicts recorded"
  echo "--- the end of the binary's output ---"; tail -40 "$log"
  exit 1
fi
