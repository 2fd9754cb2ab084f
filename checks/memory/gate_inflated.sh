#!/usr/bin/env bash
# CTest check: ci/memory-gate must exit non-zero and name the layout when the values are 20%
# larger (48 instead of 40 bytes) than in the committed valkey-9.1 baseline: a measurement with
# other layout parameters than the baseline's is INCOMPARABLE, a failure (memory/baseline.hpp).
# usage: gate_inflated.sh <ci/memory-gate> <suite_memory binary>
set -uo pipefail
gate=$1 bin=$2
out=$(EXPIRYKIT_MEMORY_VALUE_SIZE=48 "$gate" --bin "$bin" valkey-9.1 --layout hash1-plain 2>&1)
rc=$?
echo "$out"
if [ "$rc" -eq 0 ]; then echo "gate_inflated: FAIL: the gate passed 20% larger values" >&2; exit 1; fi
for want in "INCOMPARABLE hash1-plain on valkey" "value_size 48 (baseline 40)" "memory-gate: FAILED"; do
  grep -qF "$want" <<<"$out" || { echo "gate_inflated: FAIL: output lacks '$want'" >&2; exit 1; }
done
echo "gate_inflated: ok (gate exited $rc and named the layout)"
