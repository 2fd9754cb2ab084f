#!/usr/bin/env bash
# ci/conformance-matrix on hand-written verdict files: two releases of one product line
# (valkey 9.0.3 and 9.1.2, given newer first) and one of another (redis 8.0.6). Asserts the
# Markdown and HTML cells, the "what changed" section (older -> newer), the rows that differ,
# the links to the details and files, the memory table, and the escaping of < > & | and \n;
# that column 3 is taken as the verdict, never read from the detail; and (legacy) that a verdict
# file from before the verdicts were typed (SKIP in column 3) still reads.
set -u
root=$1
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
T=$'\t'
fail() { echo "FAIL: $*"; echo "--- matrix.md:"; cat "$dir/matrix.md" 2>/dev/null; exit 1; }

# <binary> \t <test case> \t <verdict> \t <escaped detail> \t <server identity>, as catch2/verdict.hpp
# writes them (verdict: PASS, FAIL, KNOWN ISSUE, KNOWN GAP, FIXED, NOT SUPPORTED or SKIPPED)
cat > "$dir/valkey-9.1-verdicts.tsv" <<EOF
suite_semantics${T}HEXPIRE on a string key replies WRONGTYPE${T}PASS${T}${T}valkey 9.1.2
suite_semantics${T}HTTL of a field <b> & co${T}FAIL${T}CHECK( a < b ) with 3 < 2 & more\\nreply: |x|\\nreplay: EXPIRYKIT_SERVER=valkey-9.1 suite_semantics 'HTTL'${T}valkey 9.1.2
suite_durability${T}Replica after HPERSIST${T}KNOWN ISSUE${T}KNOWN ISSUE valkey-io/valkey#4732: replica keeps <expired> fields${T}valkey 9.1.2
suite_memory${T}memory: hash1-hsetex within baseline${T}PASS${T}${T}valkey 9.1.2
EOF
cat > "$dir/valkey-9.0-verdicts.tsv" <<EOF
suite_semantics${T}HEXPIRE on a string key replies WRONGTYPE${T}PASS${T}${T}valkey 9.0.3
suite_semantics${T}HTTL of a field <b> & co${T}PASS${T}${T}valkey 9.0.3
suite_durability${T}Replica after HPERSIST${T}NOT SUPPORTED${T}not supported by valkey 9.0.3: HGETDEL${T}valkey 9.0.3
suite_memory${T}memory: hash1-hsetex within baseline${T}PASS${T}${T}valkey 9.0.3
EOF
cat > "$dir/redis-8.0-verdicts.tsv" <<EOF
suite_semantics${T}HEXPIRE on a string key replies WRONGTYPE${T}PASS${T}${T}redis 8.0.6
suite_semantics${T}HTTL of a field <b> & co${T}PASS${T}${T}redis 8.0.6
suite_durability${T}Replica after HPERSIST${T}PASS${T}${T}redis 8.0.6
suite_memory${T}memory: hash1-hsetex within baseline${T}NOT SUPPORTED${T}the memory probes need HSETEX (redis 8.0.6)${T}redis 8.0.6
EOF
touch -d '2026-11-30 10:00 UTC' "$dir/valkey-9.1-verdicts.tsv" "$dir/valkey-9.0-verdicts.tsv" "$dir/redis-8.0-verdicts.tsv"
echo "Debian valkey-9.1 9.1.2-1 (sid), sha256 eceb0ed494df0bee..., /x/valkey-server" > "$dir/valkey-9.1-provenance.txt"
printf '=== FAIL semantics: HTTL of a field <b> & co (valkey 9.1.2)\n...\n' > "$dir/valkey-9.1-failures.txt"
echo '<testsuites/>' > "$dir/valkey-9.1-suite_semantics.xml"
echo '<testsuites/>' > "$dir/redis-8.0-suite_semantics.xml"
cat > "$dir/valkey-9.1-suite_memory.log" <<'EOF'
[memory] PASSED hash1-hsetex on valkey 9.1.2: measured 301.4 B/key (median of 3, spread 0.3 B = 0.1%), encodings hashtable x64; baseline 301.5 B/key (spread 0.2 B, encodings hashtable, valkey-9.1.json, recorded 2026-11-30 on valkey 9.1.2); difference -0.1 B (-0.0%), allowed +/-15.1 B (5% or 8 B, whichever is larger)
[memory] KNOWN GAP valkey-io/valkey#2618: small hashes are not compact: hash1-hsetex on valkey 9.1.2
EOF
# valkey-9.0: as Catch2 writes them, in the JUnit XML, per test case and again per test suite.
cat > "$dir/valkey-9.0-suite_memory.xml" <<'EOF'
<testsuites>
  <testsuite name="suite_memory" errors="0" failures="0" skipped="0" tests="1">
    <testcase classname="suite_memory.global" name="memory: hash1-hsetex within baseline" time="1.0" status="run">
      <system-out>
[memory] REGRESSED hash1-hsetex on valkey 9.0.3: measured 320.0 B/key (median of 3, spread 0.3 B = 0.1%), encodings hashtable x64; baseline 301.5 B/key (spread 0.2 B, encodings hashtable, a&amp;b.json, recorded 2026-11-30 on valkey 9.1.2); difference +18.5 B (+6.1%), allowed +/-15.1 B (5% or 8 B, whichever is larger). This layout costs more
      </system-out>
    </testcase>
    <system-out>
[memory] REGRESSED hash1-hsetex on valkey 9.0.3: measured 320.0 B/key (median of 3, spread 0.3 B = 0.1%), encodings hashtable x64; baseline 301.5 B/key
    </system-out>
  </testsuite>
</testsuites>
EOF

out=$(bash "$root/ci/conformance-matrix" "$dir/valkey-9.1-verdicts.tsv" "$dir/redis-8.0-verdicts.tsv" \
      "$dir/valkey-9.0-verdicts.tsv" 2>&1) || fail "exit code $?: $out"
md=$dir/matrix.md; html=$dir/matrix.html
[ -s "$md" ] && [ -s "$html" ] || fail "matrix.md or matrix.html missing"
has() { grep -qF -- "$2" "$1" || fail "$(basename "$1") lacks: $2"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$(basename "$1") has: $2"; }

# Header: columns in the order given, identity and provenance with the verdict file's time.
has "$md" '| suite | check | valkey-9.1<br>valkey 9.1.2 | redis-8.0<br>redis 8.0.6 | valkey-9.0<br>valkey 9.0.3 |'
has "$md" '| valkey-9.1 | valkey 9.1.2 | Debian valkey-9.1 9.1.2-1 (sid), sha256 eceb0ed494df0bee..., /x/valkey-server; verdicts written 2026-11-30 10:00 UTC | 4 | 2 | 1 | 1 | 0 | 0 | 0 | 0 |'
has "$md" '| valkey-9.0 | valkey 9.0.3 | verdicts written 2026-11-30 10:00 UTC | 4 | 3 | 0 | 0 | 0 | 0 | 1 | 0 |'
has "$md" '| redis-8.0 | redis 8.0.6 | verdicts written 2026-11-30 10:00 UTC | 4 | 3 | 0 | 0 | 0 | 0 | 1 | 0 |'
has "$md" '[valkey-9.1-suite\_semantics.xml](valkey-9.1-suite_semantics.xml)'
has "$md" '[valkey-9.1-failures.txt](valkey-9.1-failures.txt)'
# Cells: escaped check names, FAIL and KNOWN ISSUE linked to their anchors, NOT SUPPORTED plain.
has "$md" '| semantics | HTTL of a field &lt;b&gt; &amp; co | [**FAIL**](#d-valkey-9-1-2) | PASS | PASS |'
has "$md" '| durability | Replica after HPERSIST | [KNOWN ISSUE](#d-valkey-9-1-3) | PASS | NOT SUPPORTED |'
has "$md" '| memory | memory: hash1-hsetex within baseline | PASS | NOT SUPPORTED | PASS |'
has "$md" '| semantics | HEXPIRE on a string key replies WRONGTYPE | PASS | PASS | PASS |'
has "$html" '<td class="fail"><a href="#d-valkey-9-1-2">FAIL</a></td><td class="pass">PASS</td><td class="pass">PASS</td>'
has "$html" '<td class="known-issue"><a href="#d-valkey-9-1-3">KNOWN ISSUE</a></td>'
has "$html" '<td class="not-supported" title="not supported by valkey 9.0.3: HGETDEL">NOT SUPPORTED</td>'
has "$html" '<td>HTTL of a field &lt;b&gt; &amp; co</td>'
# Rows grouped by suite name: durability, memory, semantics.
order=$(sed -n '/^## Matrix/,/^## Details/p' "$md" | grep -oE '^\| (durability|memory|semantics) ' | uniq | tr -d '| ' | xargs)
[ "$order" = "durability memory semantics" ] || fail "rows not grouped by suite: $order"
# What changed: valkey 9.0.3 -> 9.1.2 (older first although given last), 2 rows; redis has no pair.
changed=$(sed -n '/^## What changed/,/^## Rows whose/p' "$md")
echo "$changed" | grep -qF '### valkey-9.0 (valkey 9.0.3) -> valkey-9.1 (valkey 9.1.2)' || fail "no valkey 9.0 -> 9.1 section"
echo "$changed" | grep -qF '**2 verdicts changed.**' || fail "changed count"
echo "$changed" | grep -qF '| semantics | HTTL of a field &lt;b&gt; &amp; co | PASS | [**FAIL**](#d-valkey-9-1-2) |' || fail "changed FAIL row"
echo "$changed" | grep -qF '| durability | Replica after HPERSIST | NOT SUPPORTED | [KNOWN ISSUE](#d-valkey-9-1-3) |' || fail "changed KNOWN ISSUE row"
! echo "$changed" | grep -qF 'WRONGTYPE' || fail "an unchanged row is in the changed section"
! echo "$changed" | grep -qF 'redis' || fail "redis is in the changed section"
has "$html" '<h3>valkey-9.0 (valkey 9.0.3) &rarr; valkey-9.1 (valkey 9.1.2)</h3>'
has "$html" '<tr class="changed"><td>semantics</td><td>HTTL of a field &lt;b&gt; &amp; co</td><td class="pass">PASS</td><td class="fail"><a href="#d-valkey-9-1-2">FAIL</a></td></tr>'
# Rows that differ: 3 of 4 (WRONGTYPE is the same everywhere).
differ=$(sed -n '/^## Rows whose/,/^## Matrix/p' "$md")
echo "$differ" | grep -qF '3 of 4 rows.' || fail "differing row count"
! echo "$differ" | grep -qF 'WRONGTYPE' || fail "an equal row is listed as differing"
# Details: an anchor per FAIL / KNOWN ISSUE, the detail whole with \n unescaped and < > & escaped.
has "$md" '<a id="d-valkey-9-1-2"></a>'
has "$md" 'Every failure of valkey-9.1 in full: [valkey-9.1-failures.txt](valkey-9.1-failures.txt)'
has "$md" '<pre>CHECK( a &lt; b ) with 3 &lt; 2 &amp; more'
has "$md" 'reply: |x|'
has "$md" "replay: EXPIRYKIT_SERVER=valkey-9.1 suite_semantics &#39;HTTL&#39;</pre>"
has "$html" '<h3 id="d-valkey-9-1-2">valkey-9.1: FAIL semantics: HTTL of a field &lt;b&gt; &amp; co</h3>'
has "$html" '<pre>KNOWN ISSUE valkey-io/valkey#4732: replica keeps &lt;expired&gt; fields</pre>'
hasnt "$html" '<b>'
hasnt "$html" '3 < 2'
hasnt "$md" '\n'
# Memory tables: valkey-9.1 from its log, valkey-9.0 from its JUnit XML, none for redis-8.0.
has "$md" '| hash1-hsetex | PASSED | 301.4 B/key | hashtable x64 | 301.5 B/key | -0.1 B (-0.0%), allowed +/-15.1 B |  |'
has "$md" '| hash1-hsetex (encoding guard) | KNOWN GAP |'
has "$md" '| hash1-hsetex | REGRESSED | 320.0 B/key | hashtable x64 | 301.5 B/key | +18.5 B (+6.1%), allowed +/-15.1 B |  |'
[ "$(grep -c '^| hash1-hsetex | REGRESSED' "$md")" = 1 ] || fail "the suite-level <system-out> was read too"
[ "$(sed -n '/^## Memory/,$p' "$md" | grep -c '^### ')" = 2 ] || fail "memory table count (valkey-9.1 from the log, valkey-9.0 from XML)"
# One server: no changed pairs, no differing rows; errors for bad arguments.
bash "$root/ci/conformance-matrix" --out "$dir/one" "$dir/redis-8.0-verdicts.tsv" >/dev/null 2>&1 || fail "one server"
grep -qF "[redis-8.0-suite\\_semantics.xml](../redis-8.0-suite_semantics.xml)" "$dir/one/matrix.md" || fail "--out: links not relative to it"
grep -qF 'No two releases of one product line in this run.' "$dir/one/matrix.md" || fail "one server: changed section"
# Column 3 is the verdict, whatever the detail starts with.
mkdir -p "$dir/typed"
cat > "$dir/typed/valkey-9.1-verdicts.tsv" <<EOF
suite_semantics${T}a skip whose message reads like another verdict${T}SKIPPED${T}not supported by valkey 9.1.2, KNOWN ISSUE-like prose${T}valkey 9.1.2
suite_semantics${T}a known gap${T}KNOWN GAP${T}the model cannot judge this yet${T}valkey 9.1.2
suite_semantics${T}a fixed issue${T}FIXED${T}FIXED unreported [some-row] on valkey 9.1.2: ...${T}valkey 9.1.2
suite_semantics${T}a known issue${T}KNOWN ISSUE${T}unreported [other-row]: a defect${T}valkey 9.1.2
suite_semantics${T}a pass${T}PASS${T}${T}valkey 9.1.2
EOF
touch -d '2026-11-30 10:00 UTC' "$dir/typed/valkey-9.1-verdicts.tsv"
bash "$root/ci/conformance-matrix" "$dir/typed/valkey-9.1-verdicts.tsv" >/dev/null 2>&1 || fail "typed verdicts"
tmd=$dir/typed/matrix.md
has "$tmd" '| valkey-9.1 | valkey 9.1.2 | verdicts written 2026-11-30 10:00 UTC | 5 | 1 | 0 | 1 | 1 | 1 | 0 | 1 |'
has "$tmd" '| semantics | a skip whose message reads like another verdict | SKIPPED |'
has "$tmd" '| semantics | a known gap | [KNOWN GAP](#d-valkey-9-1-2) |'
has "$tmd" '| semantics | a fixed issue | [FIXED](#d-valkey-9-1-3) |'
has "$tmd" '| semantics | a known issue | [KNOWN ISSUE](#d-valkey-9-1-4) |'
has "$tmd" '<pre>the model cannot judge this yet</pre>'
# LEGACY: a verdict file from before the verdicts were typed (PASS, FAIL or SKIP in column 3, a
# skip's verdict only in the prefix of its message) still reads.
mkdir -p "$dir/legacy"
cat > "$dir/legacy/valkey-9.1-verdicts.tsv" <<EOF
suite_semantics${T}not supported${T}SKIP${T}not supported by valkey 9.1.2: HGETDEL${T}valkey 9.1.2
suite_semantics${T}known issue${T}SKIP${T}KNOWN ISSUE unreported [a-row]: a defect${T}valkey 9.1.2
suite_semantics${T}fixed${T}SKIP${T}FIXED unreported [a-row] on valkey 9.1.2: ...${T}valkey 9.1.2
suite_semantics${T}known gap${T}SKIP${T}KNOWN GAP the model cannot judge this yet${T}valkey 9.1.2
suite_semantics${T}skipped${T}SKIP${T}needs a server the kit spawns (restart); EXPIRYKIT_SERVER_ADDR is set${T}valkey 9.1.2
suite_semantics${T}passes${T}PASS${T}${T}valkey 9.1.2
EOF
touch -d '2026-11-30 10:00 UTC' "$dir/legacy/valkey-9.1-verdicts.tsv"
bash "$root/ci/conformance-matrix" "$dir/legacy/valkey-9.1-verdicts.tsv" >/dev/null 2>&1 || fail "legacy verdicts"
lmd=$dir/legacy/matrix.md
has "$lmd" '| valkey-9.1 | valkey 9.1.2 | verdicts written 2026-11-30 10:00 UTC | 6 | 1 | 0 | 1 | 1 | 1 | 1 | 1 |'
has "$lmd" '| semantics | not supported | NOT SUPPORTED |'
has "$lmd" '| semantics | known issue | [KNOWN ISSUE](#d-valkey-9-1-'
has "$lmd" '| semantics | skipped | SKIPPED |'
hasnt "$lmd" '| SKIP |'
# A verdict the kit never writes (a hand-edited file, lower case) is named on stderr and fails.
mkdir -p "$dir/unknown"
cat > "$dir/unknown/valkey-9.1-verdicts.tsv" <<EOF
suite_semantics${T}passes${T}PASS${T}${T}valkey 9.1.2
suite_semantics${T}bogus${T}known issue${T}a defect${T}valkey 9.1.2
EOF
err=$(bash "$root/ci/conformance-matrix" "$dir/unknown/valkey-9.1-verdicts.tsv" 2>&1 >/dev/null) && fail "exit code 0 for an unknown verdict"
case "$err" in *'valkey-9.1-verdicts.tsv:2: unknown verdict "known issue"'*) ;; *) fail "no message naming the unknown verdict: $err" ;; esac
bash "$root/ci/conformance-matrix" "$dir/nosuch.tsv" >/dev/null 2>&1 && fail "exit code 0 for a missing file"
bash "$root/ci/conformance-matrix" --help | grep -q 'usage: ci/conformance-matrix' || fail "--help"
echo "PASS"
