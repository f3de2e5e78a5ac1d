#!/bin/sh
# The layers at link level (issue 30; HELPERS.md "Layers"): reads the
# symbol tables of the objects a build made and fails when an object
# needs a symbol defined in a folder above its own:
#   common/           nothing of decoder/, encoder/, sim/, roundtrip/
#   decoder/          nothing of encoder/, sim/, roundtrip/
#   encoder/          nothing of sim/, roundtrip/ (libtracebench is
#                     installed without them)
# Usage: check-layers.sh OBJECT_LIST [NM]
# OBJECT_LIST names one object a line, as CMake builds them
# (.../CMakeFiles/<target>.dir/<folder>/<file>.c.o, so each object's
# source folder is known); the build writes it (layers-objects.txt, from
# the targets' own object lists, so that objects left behind by moved
# sources are not read) and ctest `layers` runs this on it.  NM defaults
# to nm, which reads GCC's LTO objects through the binutils plugin.
set -eu

list=${1:?usage: check-layers.sh OBJECT_LIST [NM]}
nm=${2:-nm}

# Objects allowed to reach up for now, with the issue that removes them.
# An entry whose object is gone, or no longer reaches up, is reported so
# that it can be dropped.  None now: the spec-coverage catalogue (which
# runs the parsers and the decoder) left common/ for vectors/speccov/.
exceptions=''

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each object as path and folder/file.c.o.
if [ ! -s "$list" ]; then
    echo "check-layers: no object list at $list: configure the build first" >&2
    exit 1
fi
: >"$tmp/objs"
while read -r path; do
    [ -n "$path" ] || continue
    if [ ! -f "$path" ]; then
        echo "check-layers: $path is missing: build first (cmake --build BUILD)" >&2
        exit 1
    fi
    rel=${path##*.dir/}
    case $rel in
    common/* | decoder/* | encoder/* | sim/* | roundtrip/*) echo "$path $rel" >>"$tmp/objs" ;;
    esac
done <"$list"
for f in common decoder encoder; do
    if ! grep -q " $f/" "$tmp/objs"; then
        echo "check-layers: no objects from $f/ in $list: the scan would prove nothing" >&2
        exit 1
    fi
done
for f in sim roundtrip; do
    grep -q " $f/" "$tmp/objs" ||
        echo "check-layers: note: no objects from $f/ (not built here): a need for its symbols goes unseen"
done

# One line per global symbol: object, D (defined) or U (needed), name.
: >"$tmp/syms"
while read -r path o; do
    if ! "$nm" -g "$path" >"$tmp/one" 2>"$tmp/err"; then
        echo "check-layers: $nm failed on $o: $(cat "$tmp/err")" >&2
        exit 1
    fi
    awk -v o="$o" 'NF >= 2 { k = $(NF - 1); s = $NF
        if (k == "U" || k == "w" || k == "v") print o, "U", s
        else if (k ~ /^[A-Z]$/) print o, "D", s }' "$tmp/one" >>"$tmp/syms"
    if ! grep -q "^$o D " "$tmp/syms"; then
        echo "check-layers: $nm found no defined symbol in $o (an LTO object that this nm" \
             "cannot read? give gcc-nm as the second argument)" >&2
        exit 1
    fi
done <"$tmp/objs"

awk -v exceptions="$exceptions" '
function folder(o) { return substr(o, 1, index(o, "/") - 1) }
BEGIN {
    bad["common", "decoder"] = bad["common", "encoder"] = 1
    bad["common", "sim"] = bad["common", "roundtrip"] = 1
    bad["decoder", "encoder"] = bad["decoder", "sim"] = bad["decoder", "roundtrip"] = 1
    bad["encoder", "sim"] = bad["encoder", "roundtrip"] = 1
    n = split(exceptions, ex, " ")
    for (i = 1; i <= n; i++) excepted[ex[i]] = 1
}
NR == FNR { if ($2 == "D") def[$3] = $1; if (!($1 in seen)) nobj++; seen[$1] = 1; next }
$2 == "U" && ($3 in def) {
    edges++
    from = folder($1); to = folder(def[$3])
    if (!((from, to) in bad)) next
    if ($1 in excepted) { used[$1]++; next }
    printf "check-layers: %s needs %s, defined in %s (%s/ may not need %s/)\n", \
        $1, $3, def[$3], from, to
    fails++
}
END {
    if (!edges) { print "check-layers: no object needs a symbol of another: the scan read nothing" > "/dev/stderr"; exit 1 }
    for (e in excepted) {
        if (!(e in seen)) print "check-layers: note: exception " e " is gone from the build: drop it"
        else if (!used[e]) print "check-layers: note: exception " e " no longer reaches up: drop it"
        else print "check-layers: known exception " e ": " used[e] " symbols from above (issue 30)"
    }
    if (fails) { print "check-layers: " fails " symbols needed from above their layer" > "/dev/stderr"; exit 1 }
    printf "check-layers: %d objects, %d links between them, none reaching up\n", nobj, edges
}' "$tmp/syms" "$tmp/syms"
