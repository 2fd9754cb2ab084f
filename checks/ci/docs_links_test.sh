#!/usr/bin/env bash
# Every relative link of the README and of docs/**/*.md names a file or folder that exists, and
# every public header of include/expirykit/ (not under a detail/ folder) has its reference page
# docs/reference/<path>.md, so that moving a header without its page, or a page without its
# links, fails here (a header under a detail/ folder may have a page; it is not required).
# A link is a Markdown link target `](target)` that has no scheme (http:, https:, mailto:) and
# does not start with '#'; an anchor after '#' is not checked. Links inside code spans or
# blocks are not links and are skipped (a line inside ``` fences, text between backticks).
set -u
root=$1
cd "$root" || { echo "FAIL: no folder '$root'"; exit 1; }
rc=0
bad=0
while IFS= read -r md; do
  dir=$(dirname "$md")
  # Targets outside fenced blocks and inline code.
  targets=$(awk '/^```/ { fence = !fence; next } !fence { gsub(/`[^`]*`/, ""); print }' "$md" |
            grep -oE '\]\([^) ]+\)' | sed -E 's/^\]\((.*)\)$/\1/' || true)
  for t in $targets; do
    case "$t" in http:*|https:*|mailto:*|\#*) continue ;; esac
    path=${t%%#*}
    [ -n "$path" ] || continue
    if [ ! -e "$dir/$path" ]; then
      echo "FAIL: $md links to '$t', which does not exist"
      bad=$((bad + 1))
    fi
  done
done < <(printf '%s\n' README.md; find docs -name '*.md' | sort)
[ $bad = 0 ] || rc=1
missing=0
while IFS= read -r h; do
  rel=${h#include/expirykit/}
  page="docs/reference/${rel%.hpp}.md"
  if [ ! -f "$page" ]; then
    echo "FAIL: public header $h has no reference page $page"
    missing=$((missing + 1))
  fi
done < <(find include/expirykit -name '*.hpp' -not -path '*/detail/*' | sort)
[ $missing = 0 ] || rc=1
pages=$(find docs -name '*.md' | wc -l)
[ $rc = 0 ] && echo "PASS: every relative link of README.md and $pages docs pages resolves; every public header has its page"
exit $rc
