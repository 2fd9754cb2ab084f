#!/usr/bin/env bash
# Every EXPIRYKIT_* name read anywhere in the repository (headers, suites, tools, bench, checks,
# ci/ scripts, examples, CMake files) is documented in docs/reference/env.md, and every name that
# page documents is read somewhere: the one list of the kit's configuration stays complete.
# A name is a whole word EXPIRYKIT_[A-Z0-9_]*[A-Z0-9] (a prefix like EXPIRYKIT_PROP_ in prose is
# not a name). Markdown files (the page itself, the README, bench/RESULTS.md) are not sources.
set -u
root=$1
page="$root/docs/reference/env.md"
[ -f "$page" ] || { echo "FAIL: $page is missing"; exit 1; }
names() { grep -rhoE '\bEXPIRYKIT_[A-Z0-9_]*[A-Z0-9]\b' "$@" 2>/dev/null | sort -u; }
used=$(cd "$root" && names --exclude='*.md' include suites tools bench checks ci examples cmake CMakeLists.txt)
documented=$(names "$page")
[ -n "$used" ] || { echo "FAIL: found no EXPIRYKIT_ name in the sources (wrong root '$root'?)"; exit 1; }
missing=$(comm -23 <(echo "$used") <(echo "$documented"))
stale=$(comm -13 <(echo "$used") <(echo "$documented"))
rc=0
if [ -n "$missing" ]; then
  echo "FAIL: read in the repository but not documented in docs/reference/env.md:"
  for n in $missing; do
    echo "  $n  (in: $(cd "$root" && grep -rlE "\\b$n\\b" --exclude='*.md' include suites tools bench checks ci examples cmake CMakeLists.txt | head -3 | tr '\n' ' '))"
  done
  rc=1
fi
if [ -n "$stale" ]; then
  echo "FAIL: documented in docs/reference/env.md but read nowhere:"
  printf '  %s\n' $stale
  rc=1
fi
[ $rc = 0 ] && echo "PASS: $(echo "$used" | wc -l) EXPIRYKIT_ names, each documented in docs/reference/env.md"
exit $rc
