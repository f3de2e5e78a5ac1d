#!/bin/sh
# libtracebench.so's dynamic symbol table is its public API (issue 30):
# every symbol it exports must be a function declared in an installed
# header, and every function an installed header declares (but its
# static inline ones) must be exported, or a program built against the
# installed headers would not link.  The declarations are read from the
# headers themselves, preprocessed with TB_API empty, so that a missing
# or stray TB_API (include/tracebench/export.h) cannot hide either way.
# Usage: check-exports.sh LIB NM CC HEADER_LIST [CC_FLAGS...]
# HEADER_LIST names the installed headers one a line, as the build
# installs them (cmake/install.cmake writes it: exports-headers.txt);
# CC_FLAGS are the -I flags that find them.  ctest `exports` runs this.
set -eu

lib=${1:?usage: check-exports.sh LIB NM CC HEADER_LIST [CC_FLAGS...]}
nm=${2:?}
cc=${3:?}
list=${4:?}
shift 4

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One unit that includes every installed header.
grep -v '^$' "$list" | sort -u > "$tmp/headers"
[ -s "$tmp/headers" ] || { echo "check-exports: no headers in $list" >&2; exit 2; }
sed 's/.*/#include "&"/' "$tmp/headers" > "$tmp/all.c"
"$cc" -E -DTB_API= "$@" "$tmp/all.c" > "$tmp/all.i"

# Only the text that comes from the installed headers (line markers
# name each line's file), joined into one line: declarations span lines.
awk -v list="$tmp/headers" '
  BEGIN { while ((getline h < list) > 0) inst["\"" h "\""] = 1 }
  /^# [0-9]+ "/ { keep = ($3 in inst); next }
  keep { printf "%s ", $0 }
  END { print "" }' "$tmp/all.i" > "$tmp/text"

# Declared: every tb_ name followed by "(" outside a typedef (calls in
# the static inline functions' bodies are declared names too).  Inline:
# the static inline functions, which are no symbols of the library.
sed 's/typedef[^;]*;//g' "$tmp/text" | grep -oE '\btb_[A-Za-z0-9_]+[[:space:]]*\(' |
  tr -d ' (\t' | sort -u > "$tmp/declared"
grep -oE 'static[[:space:]]+inline[^;{(]*\btb_[A-Za-z0-9_]+[[:space:]]*\(' "$tmp/text" |
  grep -oE 'tb_[A-Za-z0-9_]+[[:space:]]*\($' | tr -d ' (\t' | sort -u > "$tmp/inline"
comm -23 "$tmp/declared" "$tmp/inline" > "$tmp/functions"
if [ "$(wc -l < "$tmp/functions")" -lt 50 ]; then
  echo "check-exports: found only $(wc -l < "$tmp/functions") functions in the installed headers;" \
       "the header list or the preprocessing is wrong" >&2
  exit 2
fi

# Exported: every defined dynamic symbol, whatever its kind (data too).
"$nm" -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
  sort -u > "$tmp/exported"
[ -s "$tmp/exported" ] || { echo "check-exports: $lib exports nothing" >&2; exit 2; }

fail=0
comm -23 "$tmp/exported" "$tmp/declared" > "$tmp/extra"
if [ -s "$tmp/extra" ]; then
  echo "FAIL: $lib exports $(wc -l < "$tmp/extra") symbols no installed header declares" \
       "(internal functions want no TB_API; the shared library builds with hidden visibility):"
  sed 's/^/  /' "$tmp/extra"
  fail=1
fi
comm -13 "$tmp/exported" "$tmp/functions" > "$tmp/missing"
if [ -s "$tmp/missing" ]; then
  echo "FAIL: $(wc -l < "$tmp/missing") functions of the installed headers are not exported by $lib" \
       "(mark their declarations TB_API, include/tracebench/export.h, or define them):"
  sed 's/^/  /' "$tmp/missing"
  fail=1
fi
[ "$fail" = 0 ] && echo "ok: $lib exports the $(wc -l < "$tmp/exported") functions its" \
  "$(wc -l < "$tmp/headers") installed headers declare, and nothing else"
exit "$fail"
