#!/usr/bin/env bash
# Every public header that uses a third-party library includes that library's header itself.
# checks/headers compiles each header on its own with the precompiled header of the third-party
# headers (expirykit/pch.hpp), which would hide a missing include of one of them: this finds it.
# usage: third_party_includes.sh <checkout>
set -euo pipefail
root=${1:?usage: third_party_includes.sh <checkout>}
fail=0
check() {  # check FILE USE-REGEX INCLUDE-REGEX LIBRARY
  local code
  code=$(sed -e 's://.*$::' "$1")  # what comments say does not count
  if grep -qE "$2" <<<"$code" && ! grep -qE "^#include <($3)" "$1"; then
    echo "${1#"$root"/}: uses $4 but does not include it"
    fail=1
  fi
}
while IFS= read -r h; do
  [ "${h##*/}" = pch.hpp ] && continue
  check "$h" 'boost::process|namespace bp = ' 'boost/process' 'Boost.Process (<boost/process...>)'
  check "$h" '(^|[^A-Za-z_:])rc::' 'rapidcheck' 'RapidCheck (<rapidcheck...>)'
  check "$h" 'Catch::|(^|[^A-Za-z_])(TEST_CASE|TEST_CASE_METHOD|REQUIRE|CHECK|SKIP|FAIL|INFO|GENERATE)\(' 'catch2/' 'Catch2 (<catch2/...>)'
  check "$h" 'nlohmann::' 'nlohmann/' 'nlohmann/json (<nlohmann/json.hpp>)'
  check "$h" 'redis(Context|Reply|Reader|Connect|Command|Free|AppendCommand|GetReply)' 'hiredis/' 'hiredis (<hiredis/...>)'
done < <(find "$root/include/expirykit" -name '*.hpp' | sort)
if [ $fail = 0 ]; then echo "third-party includes: every header includes the libraries it uses"; fi
exit $fail
