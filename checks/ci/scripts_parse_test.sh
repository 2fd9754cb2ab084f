#!/usr/bin/env bash
# Every shell script of the repository parses (bash -n): a quote that ends an embedded awk
# program early (an apostrophe in an awk comment inside '...') breaks a script only when it runs,
# and ci/conformance, say, runs only in the main job. Lists each script that does not parse.
set -u
root=$1
bad=0; n=0
while IFS= read -r f; do
  n=$((n + 1))
  if ! out=$(bash -n "$f" 2>&1); then
    echo "does not parse: ${f#"$root"/}"; echo "$out" | sed 's/^/  /'; bad=$((bad + 1))
  fi
done < <(
  { find "$root/ci" "$root/.ci" -maxdepth 1 -type f 2>/dev/null
    find "$root/bench" "$root/checks" "$root/suites" "$root/examples" "$root/tools" -name '*.sh' -type f 2>/dev/null
  } | while IFS= read -r f; do head -1 "$f" | grep -qE '^#!.*\b(ba)?sh\b' && echo "$f"; done | sort)
[ "$n" -gt 10 ] || { echo "FAIL: found only $n scripts under $root"; exit 1; }
[ "$bad" -eq 0 ] || { echo "FAIL: $bad of $n scripts do not parse"; exit 1; }
echo "PASS ($n scripts parse)"
