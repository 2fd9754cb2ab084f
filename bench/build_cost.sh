#!/usr/bin/env bash
# Measures the kit's compile cost: a full build of one build dir from nothing (wall time), every
# TU's compile time and peak memory (each compiler run wrapped in GNU time, /usr/bin/time), and
# optionally an incremental build after touching one header. The build dir is removed first.
# usage: bench/build_cost.sh [--dir DIR] [--source SRC] [--touch HEADER] [--tu REGEX] [--jobs N] [-- extra cmake args]
#   --dir DIR      the build dir (default: build-cost), relative to the checkout
#   --source SRC   the CMake project to build (default: the checkout), relative to the checkout;
#                  e.g. the downstream example: --source examples/downstream -- -DEXPIRYKIT_SOURCE_DIR=$PWD
#   --tu REGEX     also print the rows of the TUs whose object path matches REGEX (e.g. property)
#   --touch H      then touch H (relative to the checkout) and time the incremental build
#   --jobs N       parallel jobs (default: EXPIRYKIT_JOBS, else the number of cores)
#   extra args     go to cmake, e.g. -- -DEXPIRYKIT_SANITIZE=address,undefined
# Environment: EXPIRYKIT_BUILD_TYPE (default Release). Needs GNU time (/usr/bin/time, Debian package time).
# Output: DIR.cost/tu.tsv (seconds, peak KiB, object per TU, slowest first),
# DIR.cost/summary.txt (printed), DIR.cost/build.log. Results: bench/RESULTS.md "Compile cost".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/build-cost"; src="$root"; touch_h=""; tu=""; jobs=${EXPIRYKIT_JOBS:-$(nproc)}; extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --source) src=$2; shift 2 ;;
    --touch) touch_h=$2; shift 2 ;;
    --tu) tu=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0"; exit 0 ;;
    *) echo "build_cost: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$dir" in /*) ;; *) dir="$root/$dir" ;; esac
case "$src" in /*) ;; *) src="$root/$src" ;; esac
out="$dir.cost"; rm -rf "$dir" "$out"; mkdir -p "$out"
wrap="$out/cc-wrap"
cat >"$wrap" <<W
#!/usr/bin/env bash
obj=unknown; prev=""
for a in "\$@"; do [ "\$prev" = -o ] && obj=\$a; prev=\$a; done
exec /usr/bin/time -a -o "$out/tu.raw" -f "%e\t%M\t\$obj" "\$@"
W
chmod +x "$wrap"
cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${EXPIRYKIT_BUILD_TYPE:-Release}" \
  -DCMAKE_CXX_COMPILER_LAUNCHER="$wrap" "${extra[@]}" >"$out/configure.log"
t0=$(date +%s.%N)
cmake --build "$dir" -j "$jobs" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
t1=$(date +%s.%N)
grep -E '\.o$' "$out/tu.raw" | sort -t$'\t' -k1,1 -rn >"$out/tu.tsv" || true
full=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
{
  echo "full build of $(basename "$dir") from ${src#"$root"/} (-j$jobs, ${EXPIRYKIT_BUILD_TYPE:-Release} ${extra[*]}): ${full} s"
  awk -F'\t' '{n++; s+=$1; if ($2>m) m=$2} END {printf "TUs: %d, compile time summed: %.1f s, largest peak memory: %.0f MiB\n", n, s, m/1024}' "$out/tu.tsv"
  echo "slowest TUs (s, peak MiB):"
  head -8 "$out/tu.tsv" | awk -F'\t' '{printf "  %6.1f  %5.0f  %s\n", $1, $2/1024, $3}'
  if [ -n "$tu" ]; then
    echo "TUs matching '$tu' (s, peak MiB):"
    awk -F'\t' -v re="$tu" '$3 ~ re {printf "  %6.1f  %5.0f  %s\n", $1, $2/1024, $3}' "$out/tu.tsv"
  fi
} | tee "$out/summary.txt"
if [ -n "$touch_h" ]; then
  : >"$out/tu.raw"
  touch "$root/$touch_h"
  t0=$(date +%s.%N); cmake --build "$dir" -j "$jobs" >>"$out/build.log" 2>&1; t1=$(date +%s.%N)
  n=$(grep -cE '\.o$' "$out/tu.raw" || true)
  echo "incremental after touching $touch_h: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, $n TUs recompiled" | tee -a "$out/summary.txt"
fi
