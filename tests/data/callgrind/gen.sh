#!/usr/bin/env bash
# Writes Callgrind and Cachegrind profiles of tests/programs/tp_cgwork with a
# spread of Valgrind options, one file per option set:
#
#   vg-default.cg       valgrind --tool=callgrind
#   vg-nocompress.cg    --compress-strings=no --compress-pos=no
#   vg-instr.cg         --dump-instr=yes (positions: instr line)
#   vg-jumps.cg         --dump-instr=yes --collect-jumps=yes (jump=, jcnd=)
#   vg-bb.cg            --dump-instr=yes --dump-bb=yes (positions: instr bb line)
#   vg-cache.cg         --cache-sim=yes --branch-sim=yes (13 events)
#   vg-threads.cg-NN    --separate-threads=yes (one file per thread)
#   vg-dump.cg, .1      --dump-before=phase_two (a file per part)
#   vg-cachegrind.out   valgrind --tool=cachegrind (--cache-sim=no, or $CACHEGRIND_OPTS)
#
# The other files of this directory are written by hand, one or a few
# rules of the format each.
#
# usage: gen.sh [OUTDIR [PROGRAM]]
#   OUTDIR   where to write (default: this directory, the committed copies)
#   PROGRAM  the tp_cgwork to profile (default: built here from
#            tests/programs with cc -O2 -g)
# FULL=1 profiles the whole run; by default only main and the worker
# threads are collected (--toggle-collect), which keeps the files small.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
command -v valgrind >/dev/null || { echo "gen.sh: valgrind not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog=${2:-}
if [ -z "$prog" ]; then
	src=$here/../../programs
	prog=$tmp/tp_cgwork
	cc -O2 -g -pthread -o "$prog" "$src/tp_cgwork.c" "$src/tp_cgwork_util.c"
fi
collect=(--toggle-collect=main --toggle-collect=worker)
[ "${FULL:-0}" = 1 ] && collect=()

# callgrind NAME OPTIONS...: a profile named NAME (with NAME-NN, NAME.N
# for the threads and dumps callgrind adds)
callgrind() {
	local name=$1
	shift
	rm -f "$out/$name" "$out/$name".* "$out/$name"-*
	(cd "$tmp" && valgrind --tool=callgrind ${collect[@]+"${collect[@]}"} "$@" \
		--callgrind-out-file="$out/$name" "$prog" >/dev/null 2>"$tmp/$name.log") ||
		{ cat "$tmp/$name.log" >&2; exit 1; }
}

callgrind vg-default.cg
callgrind vg-nocompress.cg --compress-strings=no --compress-pos=no
callgrind vg-instr.cg --dump-instr=yes
callgrind vg-jumps.cg --dump-instr=yes --collect-jumps=yes
callgrind vg-bb.cg --dump-instr=yes --dump-bb=yes
callgrind vg-cache.cg --cache-sim=yes --branch-sim=yes
callgrind vg-threads.cg --separate-threads=yes
rm -f "$out/vg-threads.cg" # empty: every thread has its own file
callgrind vg-dump.cg --dump-before=phase_two
(cd "$tmp" && valgrind --tool=cachegrind ${CACHEGRIND_OPTS:---cache-sim=no} --cachegrind-out-file="$out/vg-cachegrind.out" \
	"$prog" >/dev/null 2>"$tmp/cachegrind.log") || { cat "$tmp/cachegrind.log" >&2; exit 1; }
