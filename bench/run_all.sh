#!/bin/sh
# bench/run_all.sh BUILD_DIR OUT_DIR: the measurement run behind bench/RESULTS.md. Runs every
# benchmark at full size against a freshly spawned server (EXPIRYKIT_SERVER picks another),
# one after the other, printing `uptime` before each (the machine may be shared), then plots.
# Takes about 15 minutes on 2 cores. Output: OUT_DIR/*.jsonl, *.dat, *.png and OUT_DIR/log.txt.
set -eu
build=${1:?usage: run_all.sh BUILD_DIR OUT_DIR}
out=${2:?usage: run_all.sh BUILD_DIR OUT_DIR}
b=$build/bench
mkdir -p "$out"
step() {
  echo "\$ $*"
  echo "# uptime: $(uptime)"
  "$@"
  echo "# uptime: $(uptime)"
  echo
}
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -srm); $(nproc) cores"
  step "$b/bench_compare" --repeat 5 --requests 500000 --requests-pipelined 5000000 --out "$out"
  step "$b/bench_hget_ttl" --repeat 10 --requests 500000 --requests-pipelined 5000000 --connections 50 --out "$out"
  step "$b/bench_writes" --repeat 3 --requests 300000 --requests-pipelined 3000000 --out "$out"
  step "$b/bench_hexpire" --repeat 3 --requests 300000 --requests-pipelined 3000000 --out "$out"
  step "$b/bench_threads" --repeat 3 --requests-pipelined 3000000 --out "$out"
  step "$b/bench_active_expire" --repeat 3 --fields 1000000 --keys 100 --window-ms 10000 --out "$out"
  step "$b/bench_bulk_load" --scale 1/25 --sample 0.5 --out "$out"
  "$(dirname "$0")/plot.sh" "$out"
} 2>&1 | tee "$out/log.txt"
