#!/usr/bin/env bash
# Every view of `rtrace heap` (and convert --to callgrind) on some traces,
# written to a directory, so that two builds can be compared byte for
# byte: a change to the profile's memory must not change one output.
#
#   bench/heapsame.sh RTRACE OUTDIR TRACE...     # capture
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER           # compare
#
# The heaptrack export is compared uncompressed; --diff takes the first
# trace as the old one. RTRACE_CACHE_DIR is kept if set.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 RTRACE OUTDIR TRACE..." >&2; exit 2; }
rt=$1 out=$2
shift 2
mkdir -p "$out"
views=(
	"" "-n 3 -s 2" "-n 50 -s 20" "--stacks" "--stacks -n 4"
	"--collapsed=allocations" "--collapsed=temporary" "--collapsed=bytes"
	"--collapsed=peak" "--collapsed=leaked" "--massif" "--series" "--histogram=pow2"
	"--no-resolve" "--filter-bt-function=main"
)
first=$1
k=0
for tr in "$@"; do
	k=$((k + 1))
	v=0
	for args in "${views[@]}"; do
		v=$((v + 1))
		# shellcheck disable=SC2086
		"$rt" heap -q $args "$tr" > "$out/$k.$v.out" 2> "$out/$k.$v.err" || echo "exit $?" >> "$out/$k.$v.err"
	done
	"$rt" heap -q --heaptrack="$out/$k.ht" "$tr" 2> "$out/$k.ht.err" || true
	"$rt" convert -q --to callgrind -o "$out/$k.cg" "$tr" 2> "$out/$k.cg.err" || true
	"$rt" heap -q --diff "$first" "$tr" > "$out/$k.diff" 2>&1 || echo "exit $?" >> "$out/$k.diff"
	"$rt" heap -q --collapsed=allocations --diff "$first" "$tr" > "$out/$k.diffc" 2>&1 || true
done
