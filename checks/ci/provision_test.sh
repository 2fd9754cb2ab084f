#!/usr/bin/env bash
# ci/provision-servers with a pinned version the archive does not offer must fail, name the
# server and what is offered, and leave the cached good copy alone; an unknown name must fail too.
set -u
root=$1
cache=${EXPIRYKIT_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/expirykit/servers}
before=$(sha256sum "$cache/valkey-9.1/bin/valkey-server" 2>/dev/null | cut -d' ' -f1)
out=$(bash "$root/ci/provision-servers" valkey-9.1=0.0.1-1 2>&1); rc=$?
fail() { echo "FAIL: $*"; echo "--- output:"; echo "$out"; exit 1; }
[ $rc -ne 0 ] || fail "exit code 0 for a version that does not exist"
echo "$out" | grep -q "valkey-9.1: Debian's archive no longer offers valkey-tools 0.0.1-1" || fail "message does not name the pin"
echo "$out" | grep -q "offered: sid:9.1" || fail "message does not say what is offered"
after=$(sha256sum "$cache/valkey-9.1/bin/valkey-server" 2>/dev/null | cut -d' ' -f1)
[ "$before" = "$after" ] || fail "the cached server changed"
out=$(bash "$root/ci/provision-servers" nosuch-1.0 2>&1); rc=$?
[ $rc -ne 0 ] || fail "exit code 0 for an unknown server"
echo "$out" | grep -q "unknown server 'nosuch-1.0'; known: valkey-9.1 redis-8.0" || fail "unknown name not explained"
# Any <flavor>-<major>.<minor> is looked up in every suite; one no suite offers fails naming them.
out=$(bash "$root/ci/provision-servers" redis-1.2 2>&1); rc=$?
[ $rc -ne 0 ] || fail "exit code 0 for a release no suite offers"
echo "$out" | grep -q "redis-1.2: Debian's archive no longer offers redis-tools 5:1.2.\*" || fail "generic line not looked up"
echo "$out" | grep -q "experimental:5:8.6" || fail "the suites searched are not named"
# --latest: the newest version of each flavor in each suite, with the line to provision it by.
out=$(bash "$root/ci/provision-servers" --latest 2>&1); rc=$?
[ $rc -eq 0 ] || fail "--latest failed"
echo "$out" | grep -qE '^experimental +redis-tools +5:8\.6\.[0-9]+-[^ ]+ +redis-8\.6$' || fail "--latest lacks redis 8.6 in experimental"
echo "$out" | grep -qE '^bookworm-backports +redict-tools +7\.3\.' || fail "--latest lacks redict in bookworm-backports"
# The archive: EXPIRYKIT_DEBIAN_MIRROR wins; else this machine's own apt sources (a local mirror
# needs no edit of the script).
out=$(EXPIRYKIT_DEBIAN_MIRROR=http://mirror.example/debian/ bash "$root/ci/provision-servers" --print-mirror 2>&1)
[ "$out" = "http://mirror.example/debian" ] || fail "EXPIRYKIT_DEBIAN_MIRROR not used"
first=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
        grep -oE '(^deb( \[[^]]*\])? |^URIs: )https?://[^ ]+' | grep -vE 'security' | head -1 | grep -oE 'https?://[^ ]+')
out=$(env -u EXPIRYKIT_DEBIAN_MIRROR bash "$root/ci/provision-servers" --print-mirror 2>&1)
[ -z "$first" ] || [ "$out" = "${first%/}" ] || fail "apt's archive $first not used (got $out)"
echo "PASS"
