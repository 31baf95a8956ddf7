#!/usr/bin/env bash
# Speed of the Valgrind XML reader (rt_vgxml_read_fd) next to libxml2's
# streaming parser, `xmllint --stream --noout`, on one big memcheck file.
# See bench/README.md, "Valgrind XML".
#
#   bench/vgxml.sh              # a 220 MB file, RUNS=3
#   bench/vgxml.sh --quick      # a 22 MB file, 1 run
#
# The file (bench/out/vgxml-<MB>mb.xml) is written once by
# bench/gen_vgxml.py from tests/data/vgxml/memcheck.xml: its errors,
# suppressions and client messages repeated, each error with its own
# <unique> id and varied addresses. bench/vgxml_read.c is built against
# the build's librtrace.a. Then, in turns, RUNS times each:
#   xmllint --stream   xmllint --stream --noout FILE (libxml2's reader)
#   reader, streaming  vgxml_read FILE: each top-level element dropped
#                      once complete, as a consumer that handles errors
#                      as they come does (constant memory)
#   reader, keeping    vgxml_read --keep FILE: the whole document in the
#                      model
# and prints the medians (wall seconds, from bash's EPOCHREALTIME), the
# ratio to xmllint and the peak RSS (/usr/bin/time -f %M); the streaming
# mode also runs on a file a tenth the size, to show its memory does not
# grow with the input.
#
# Environment:
#   BUILD=dir     build directory with librtrace.a (default build/; built
#                 when missing)
#   SIZE_MB=n     file size in MB (220; --quick: 22)
#   RUNS=n        measured runs per tool, median reported (3)
#   IDLE_WAIT=s   wait up to s seconds for an idle CPU before each run (900)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out
quick_or_help "$0" "$@"
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	SIZE_MB=${SIZE_MB:-22}
fi
RUNS=${RUNS:-3}
SIZE_MB=${SIZE_MB:-220}
BUILD=${BUILD:-$root/build}
die() {
	echo "vgxml.sh: $*" >&2
	exit 1
}
[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
[ -n "${EPOCHREALTIME:-}" ] || die "needs bash >= 5 (EPOCHREALTIME)"
for tool in xmllint python3 cc pkg-config; do
	command -v "$tool" > /dev/null || die "$tool not found (scripts/setup.sh installs it)"
done
mkdir -p "$out"

# --- the driver, against the build's library ---
if [ ! -f "$BUILD/librtrace.a" ]; then
	echo "building librtrace in $BUILD ..." >&2
	cmake -S "$root" -B "$BUILD" > /dev/null
	cmake --build "$BUILD" --target rtrace_static -j2 > /dev/null
fi
driver=$out/vgxml_read
cc -O2 -I"$root/include" -o "$driver" "$here/vgxml_read.c" "$BUILD/librtrace.a" \
	$(pkg-config --libs expat libdw) -lstdc++

# --- the files: written once per size (and generator and template) ---
template=$root/tests/data/vgxml/memcheck.xml
gen_file() { # MB: prints the file's path
	local f=$out/vgxml-$1mb.xml sum
	sum=$(cat "$here/gen_vgxml.py" "$template" | sha256sum | cut -c1-16)
	if [ ! -f "$f" ] || [ "$(cat "$f.sum" 2> /dev/null)" != "$sum" ]; then
		echo "generating $f ..." >&2
		python3 "$here/gen_vgxml.py" "$template" "$1" > "$f.tmp" 2> /dev/null
		mv "$f.tmp" "$f"
		echo "$sum" > "$f.sum"
	fi
	echo "$f"
}
file=$(gen_file "$SIZE_MB")
small=$(gen_file "$(awk -v m="$SIZE_MB" 'BEGIN { print int(m / 10) }')")
size=$(stat -c %s "$file")

# --- checks: both parsers accept it, the reader counts what grep counts ---
xmllint --stream --noout "$file" || die "xmllint rejects $file"
keep=$("$driver" --keep "$file") || die "the reader fails on $file"
drop=$("$driver" "$file") || die "the reader fails on $file (streaming)"
errors=$(grep -c '^<error>' "$file")
[[ $keep == *" errors $errors "* ]] || die "the reader counts other errors than grep ($errors): $keep"
[ "${keep% nodes*}" = "${drop% nodes*}" ] || die "streaming counts differ: $drop / $keep"

declare -A walls rsss label
label=([xmllint]="xmllint --stream" [drop]="reader, streaming" [keep]="reader, keeping")
cmd_of() { # tool: sets cmd
	case $1 in
	xmllint) cmd=(xmllint --stream --noout "$file") ;;
	drop) cmd=("$driver" "$file") ;;
	keep) cmd=("$driver" --keep "$file") ;;
	small) cmd=("$driver" "$small") ;;
	esac
}
measure() { # tool
	local tf t0 t1 e kb
	wait_idle
	tf=$(mktemp)
	cmd_of "$1"
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%e %M' -o "$tf" "${cmd[@]}" > /dev/null
	t1=$EPOCHREALTIME
	read -r e kb < "$tf"
	rm -f "$tf"
	walls[$1]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
	rsss[$1]+="$kb "
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxof() { tr ' ' '\n' | grep . | sort -g | tail -1; }

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
rev=$(git -C "$root" rev-parse --short HEAD 2> /dev/null || echo "?")
echo "== Valgrind XML reader benchmark, $(date '+%Y-%m-%d %H:%M %Z')"
echo "machine: $cpu, $(nproc) cores, Linux $(uname -r); tree at git $rev"
echo "file:    $file ($(awk -v s="$size" 'BEGIN { printf "%.1f MB", s / 1e6 }'), $errors errors)"
echo "xmllint: libxml2 $(xmllint --version 2>&1 | sed -n '1s/.*version //p')"
echo "runs:    $RUNS, median"

tools=(xmllint drop keep)
for t in "${tools[@]}" small; do cmd_of "$t"; "${cmd[@]}" > /dev/null; done # warm the page cache
for _ in $(seq "$RUNS"); do
	for t in "${tools[@]}"; do measure "$t"; done
done
measure small

x=$(echo "${walls[xmllint]}" | median)
printf '\n| %-18s | %7s | %6s | %10s | %11s |\n' tool "wall s" MB/s "vs xmllint" "peak RSS MB"
printf '|%s|%s|%s|%s|%s|\n' "--------------------" "---------" "--------" "------------" "-------------"
for t in "${tools[@]}"; do
	w=$(echo "${walls[$t]}" | median)
	kb=$(echo "${rsss[$t]}" | maxof)
	awk -v l="${label[$t]}" -v w="$w" -v x="$x" -v s="$size" -v kb="$kb" \
		'BEGIN { printf "| %-18s | %7.2f | %6.0f | %9.2fx | %11.1f |\n", l, w, s / 1e6 / w, w / x, kb / 1024 }'
done
awk -v kb="$(echo "${rsss[small]}" | maxof)" -v f="$(basename "$small")" \
	'BEGIN { printf "\nstreaming on %s (a tenth the size): peak RSS %.1f MB\n", f, kb / 1024 }'
