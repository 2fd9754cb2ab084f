#!/usr/bin/env bash
# docs/reference/env.md is generated from the table of every EXPIRYKIT_* variable
# (include/expirykit/env.hpp, env::variables) by tools/env_page.cpp, and that table is complete:
#   1. the committed page is exactly what the program prints;
#   2. every EXPIRYKIT_* name read anywhere in the repository (headers, suites, tools, bench,
#      checks, ci/ scripts, examples, CMake files) is a row of the table;
#   3. every row's name is read somewhere (no stale row);
#   4. no C++ file of include/, suites/, bench/ or tools/ but include/expirykit/config.hpp reads the
#      environment (std::getenv), besides TMPDIR, XDG_CACHE_HOME and HOME (process/).
# A name is a whole word EXPIRYKIT_[A-Z0-9_]*[A-Z0-9] (a prefix like EXPIRYKIT_PROP_ in prose is
# not a name). Markdown files (the page itself, the README, bench/RESULTS.md) are not sources.
# That Config (config.hpp) reads exactly the rows of the headers and suites sections is checked in
# C++ (checks/process/config_test.cpp).
# usage: env_page_test.sh SOURCE_ROOT PATH_OF_expirykit_env_page
set -u
root=$1 tool=$2
page="$root/docs/reference/env.md"
[ -x "$tool" ] || { echo "FAIL: $tool is not built (cmake --build <dir> --target expirykit_env_page)"; exit 1; }
[ -f "$page" ] || { echo "FAIL: $page is missing ($tool > docs/reference/env.md writes it)"; exit 1; }
rc=0
if ! d=$(diff -u "$page" <("$tool") 2>&1); then
  echo "FAIL: docs/reference/env.md is not what tools/env_page.cpp prints from the table; regenerate it:"
  echo "  $tool > docs/reference/env.md"
  echo "$d" | head -40
  rc=1
fi
names() { grep -rhoE '\bEXPIRYKIT_[A-Z0-9_]*[A-Z0-9]\b' "$@" 2>/dev/null | LC_ALL=C sort -u; }
sources=(include suites tools bench checks ci examples cmake CMakeLists.txt)
used=$(cd "$root" && names --exclude='*.md' "${sources[@]}")
listed=$("$tool" --names | LC_ALL=C sort -u)
[ -n "$used" ] || { echo "FAIL: found no EXPIRYKIT_ name in the sources (wrong root '$root'?)"; exit 1; }
[ -n "$listed" ] || { echo "FAIL: $tool --names printed nothing"; exit 1; }
# The table itself is a source (env.hpp names every row): a stale row is one read nowhere else.
used_elsewhere=$(cd "$root" && names --exclude='*.md' --exclude='env.hpp' --exclude='env_page.cpp' "${sources[@]}")
missing=$(LC_ALL=C comm -23 <(echo "$used") <(echo "$listed"))
stale=$(LC_ALL=C comm -13 <(echo "$used_elsewhere") <(echo "$listed"))
if [ -n "$missing" ]; then
  echo "FAIL: read in the repository but not a row of env::variables (include/expirykit/env.hpp):"
  for n in $missing; do
    echo "  $n  (in: $(cd "$root" && grep -rlE "\\b$n\\b" --exclude='*.md' "${sources[@]}" | head -3 | tr '\n' ' '))"
  done
  rc=1
fi
if [ -n "$stale" ]; then
  echo "FAIL: a row of env::variables (include/expirykit/env.hpp) that nothing reads:"
  printf '  %s\n' $stale
  rc=1
fi
stray=$(cd "$root" && grep -rnE 'getenv *\(' --include='*.hpp' --include='*.cpp' include suites bench tools |
  grep -v '^include/expirykit/config.hpp:' | grep -vE 'getenv\("(TMPDIR|XDG_CACHE_HOME|HOME)"\)')
if [ -n "$stray" ]; then
  echo "FAIL: read from the environment outside include/expirykit/config.hpp (add a Config member instead):"
  echo "$stray" | sed 's/^/  /'
  rc=1
fi
[ $rc = 0 ] && echo "PASS: $(echo "$listed" | wc -l) EXPIRYKIT_ names, each a row of the table; docs/reference/env.md is its page; only config.hpp reads them"
exit $rc
