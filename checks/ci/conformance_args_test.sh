#!/usr/bin/env bash
# ci/conformance refuses what cannot run with one clear error and exit code 2, before it installs,
# builds or writes anything: a server path that does not exist, the same from EXPIRYKIT_SERVER
# (which it reads as the default server), and an EXPIRYKIT_SERVER_ADDR where nothing listens.
set -u
root=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; echo "$out"; exit 1; }
out=$(bash "$root/ci/conformance" --server /nonexistent/valkey-server --junit "$tmp/a" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "exit code $rc for a path that does not exist (want 2)"
echo "$out" | grep -q "/nonexistent/valkey-server does not exist" || fail "a missing path is not named as missing"
out=$(EXPIRYKIT_SERVER=/nonexistent/redis-server bash "$root/ci/conformance" --junit "$tmp/b" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "exit code $rc for EXPIRYKIT_SERVER naming a missing path (want 2)"
echo "$out" | grep -q "the server from EXPIRYKIT_SERVER: /nonexistent/redis-server" || fail "EXPIRYKIT_SERVER not read"
echo "$out" | grep -q "/nonexistent/redis-server does not exist" || fail "EXPIRYKIT_SERVER's missing path not named"
# A port nothing listens on: one bound and closed again by this test (not a fixed port).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
out=$(EXPIRYKIT_SERVER_ADDR=127.0.0.1:$port timeout 60 bash "$root/ci/conformance" --junit "$tmp/c" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "exit code $rc for an external address where nothing listens (want 2)"
echo "$out" | grep -q "nothing accepts a connection at EXPIRYKIT_SERVER_ADDR=127.0.0.1:$port" || fail "the address is not named"
[ ! -e "$tmp/c" ] || fail "it wrote $tmp/c (a verdict file there would stand in later matrices)"
[ "$(echo "$out" | wc -l)" -le 2 ] || fail "more than one error line"
echo "PASS"
