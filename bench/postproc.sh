#!/usr/bin/env bash
# Benchmark of `rtrace postproc` on a large synthetic text trace, side by
# side with `wc -l` and `sort` as floors for "read the bytes". See
# bench/README.md.
#
#   bench/postproc.sh            # full size: N=10000000 calls, B=50000 backtraces
#   bench/postproc.sh --quick    # smoke run: N=1000000
#   bench/postproc.sh --gen-only # only generate the trace (bench/out/)
#   bench/postproc.sh --perf     # same as PERF=1
#
# Environment:
#   RTRACE=path     rtrace binary (default: build/rtrace, built if missing)
#   N=calls         allocation calls in the trace (default 10000000)
#   B=backtraces    distinct backtraces (default 50000)
#   SEED=n          generator seed (default 1)
#   FRAMES=MIN-MAX  frames per backtrace (default 6-24; 1-2 gives ~1 GB at 10M)
#   RUNS=n          measured runs per tool, the median is reported (default 3)
#   SORT_MEM=size   sort's -S (default auto: max(2G, 5 x file size), so that
#                   sort does not spill to disk; the script says if it did)
#   QUICK=1         same as --quick
#   PERF=1          also profile `rtrace postproc -lc` with perf (top 15)
#   TOOLS="..."     measure only these of: wc sort lc plain l (default all)
#   IDLE_WAIT=s     before each measured run, wait up to s seconds (default
#                   900) for other processes to leave the CPU idle
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out

for arg in "$@"; do
	case $arg in
	--quick) QUICK=1 ;;
	--perf) PERF=1 ;;
	--gen-only) GEN_ONLY=1 ;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "postproc.sh: unknown argument '$arg' (try --help)" >&2
		exit 2
		;;
	esac
done

if [ "${QUICK:-0}" = 1 ]; then
	N=${N:-1000000}
fi
N=${N:-10000000}
B=${B:-50000}
SEED=${SEED:-1}
FRAMES=${FRAMES:-6-24}
RUNS=${RUNS:-3}
SORT_MEM=${SORT_MEM:-auto}
PERF=${PERF:-0}
RTRACE=${RTRACE:-}

die() {
	echo "postproc.sh: $*" >&2
	exit 1
}

[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
[ -n "${EPOCHREALTIME:-}" ] || die "needs bash >= 5 (EPOCHREALTIME)"

mkdir -p "$out"

# --- rtrace binary ---
if [ -z "$RTRACE" ]; then
	RTRACE=$root/build/rtrace
	if [ ! -x "$RTRACE" ]; then
		echo "building rtrace in $root/build ..." >&2
		cmake -S "$root" -B "$root/build" >/dev/null
		cmake --build "$root/build" -j2 >/dev/null
	fi
fi
[ -x "$RTRACE" ] || die "rtrace binary '$RTRACE' is not executable"
# measure a private copy: a rebuild in the tree during the run cannot swap it
rtrace_src=$RTRACE
cp "$RTRACE" "$out/rtrace.bench"
RTRACE=$out/rtrace.bench

# --- generator ---
gen=$out/gen_text_trace
if [ ! -x "$gen" ] || [ "$here/gen_text_trace.c" -nt "$gen" ]; then
	cc -O2 -o "$gen" "$here/gen_text_trace.c"
fi
gen_sum=$(sha256sum "$here/gen_text_trace.c" | cut -c1-16)

# --- the trace: generated once per parameter set (and generator version) ---
tag=n$N-b$B-s$SEED-f$FRAMES
file=$out/trace-$tag.txt
meta=$out/trace-$tag.meta
if [ -f "$file" ] && [ -f "$meta" ] && grep -qx "gen_sum=$gen_sum" "$meta" &&
	[ "$(stat -c %s "$file")" = "$(sed -n 's/^file_bytes=//p' "$meta")" ]; then
	echo "using existing $file" >&2
else
	echo "generating $file ..." >&2
	rm -f "$file" "$meta"
	t0=$EPOCHREALTIME
	"$gen" -n "$N" -b "$B" -s "$SEED" -f "$FRAMES" -m "$meta.tmp" >"$file.tmp"
	t1=$EPOCHREALTIME
	echo "gen_sum=$gen_sum" >>"$meta.tmp"
	mv "$file.tmp" "$file"
	mv "$meta.tmp" "$meta"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "generated in %.1f s\n", b - a }' >&2
fi
[ "${GEN_ONLY:-0}" = 1 ] && { echo "$file"; exit 0; }
m() { sed -n "s/^$1=//p" "$meta"; }
size=$(stat -c %s "$file")

if [ "$SORT_MEM" = auto ]; then
	# GNU sort needs the data plus ~60 bytes per line in memory; the
	# traces average ~18 bytes a line, so about 5x the file
	need_g=$(( (size * 5 + (1 << 30) - 1) >> 30 ))
	mem_g=$(awk '/^MemTotal:/ { printf "%d", $2 / 1048576 * 0.75 }' /proc/meminfo)
	[ "$need_g" -lt 2 ] && need_g=2
	[ "$need_g" -gt "$mem_g" ] && need_g=$mem_g
	SORT_MEM=${need_g}G
fi
sort_tmp=$out/sort-tmp
mkdir -p "$sort_tmp"

# --- tools ---
read -r -a names <<<"${TOOLS:-wc sort lc plain l}"
for t in "${names[@]}"; do
	case $t in wc | sort | lc | plain | l) ;; *) die "unknown tool '$t' in TOOLS (wc sort lc plain l)" ;; esac
done
has() { [[ " ${names[*]} " == *" $1 "* ]]; }
declare -A label
label[wc]="wc -l"
label[sort]="sort (LC_ALL=C, -S $SORT_MEM)"
label[lc]="rtrace postproc -lc"
label[plain]="rtrace postproc (no filter)"
label[l]="rtrace postproc -l"
tool_cmd() { # tool: sets cmd_argv
	case $1 in
	wc) cmd_argv=(wc -l "$file") ;;
	sort) cmd_argv=(env LC_ALL=C sort -S "$SORT_MEM" -T "$sort_tmp" "$file") ;;
	lc) cmd_argv=("$RTRACE" postproc -lc -i "$file") ;;
	plain) cmd_argv=("$RTRACE" postproc -i "$file") ;;
	l) cmd_argv=("$RTRACE" postproc -l -i "$file") ;;
	esac
}

# busy jiffies of all cores (user nice system irq softirq steal: steal is
# CPU the hypervisor gave to someone else, a disturbance all the same)
cpu_jiffies() { awk '/^cpu / { print $2+$3+$4+$7+$8+$9 }' /proc/stat; }
hz=$(getconf CLK_TCK)

# Waits (up to IDLE_WAIT seconds, default 900) until other processes leave
# the CPU alone: the machine is shared and has 2 cores.

declare -A walls rsss outs others
measure() { # tool
	local tf rc t0 t1 j0 j1
	wait_idle
	tf=$(mktemp)
	tool_cmd "$1"
	j0=$(cpu_jiffies)
	t0=$EPOCHREALTIME
	rc=0
	/usr/bin/time -f '%e %M %O %U %S' -o "$tf" "${cmd_argv[@]}" >/dev/null || rc=$?
	t1=$EPOCHREALTIME
	j1=$(cpu_jiffies)
	[ "$rc" = 0 ] || die "${label[$1]} failed with status $rc"
	local e kb ob us sy
	read -r e kb ob us sy <"$tf"
	rm -f "$tf"
	walls[$1]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
	rsss[$1]+="$kb "
	outs[$1]+="$ob "
	# CPU seconds used by other processes during the run
	others[$1]+="$(awk -v j="$((j1 - j0))" -v hz="$hz" -v u="$us" -v s="$sy" \
		'BEGIN { o = j / hz - u - s; printf "%.1f", o < 0 ? 0 : o }') "
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# --- machine ---
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$root" status --porcelain -- src include CMakeLists.txt 2>/dev/null | grep -q . && echo "+dirty" || true)

echo "== rtrace postproc benchmark, $(date '+%Y-%m-%d %H:%M %Z')"
echo "machine: $cpu, $(nproc) cores, $mem RAM, Linux $(uname -r)"
bin_sum=$(sha256sum "$RTRACE" | cut -c1-12)
if [ "$rtrace_src" = "$root/build/rtrace" ]; then
	echo "rtrace:  $rtrace_src (tree at git $rev$dirty; binary sha256 $bin_sum)"
else
	echo "rtrace:  $rtrace_src (RTRACE override; binary sha256 $bin_sum)"
fi
busy0=$(cpu_busy)
echo "load:    ${busy0}% CPU busy before the run (load average $(cut -d' ' -f1-3 /proc/loadavg))"
if [ "$busy0" -gt 10 ]; then
	echo "WARNING: other processes use ${busy0}% of the CPU; the figures below will be noisy" >&2
	echo "WARNING: other processes used ${busy0}% of the CPU at the start"
fi
echo "trace:   $file"
printf '         %s bytes (%.1f MB), %s records: %s allocations over %s backtraces, %s frees\n' \
	"$size" "$(awk -v s="$size" 'BEGIN { print s / 1e6 }')" "$(m records)" "$(m allocs)" "$B" "$(m frees)"
printf '         frames %s per backtrace (mean %s per allocation), seed %s\n' \
	"$FRAMES" "$(m mean_frames_per_alloc)" "$SEED"

# --- warm-up: each tool once; the rtrace runs check the output ---
echo
echo "warm-up (one run each; rtrace output checked) ..."
lines=$(wc -l <"$file")
if has sort; then
	LC_ALL=C sort -S "$SORT_MEM" -T "$sort_tmp" "$file" >/dev/null
fi
if has lc; then
	lc_stats=$("$RTRACE" postproc -lc -i "$file" | awk '
		/^# allocation summary: / {
			g++; gc += $4; gs += $9
			if (g > 1 && $9 < prev) unsorted++  # default order: total size ascending
			prev = $9; last = 0
		}
		/^[0-9]+\. / {
			if (/\) = 0x[0-9a-f]+$/) a++; else f++
			if ($1 + 0 <= last) disorder++      # trace order within a group
			last = $1 + 0
		}
		/^# [0-9]+ block\(s\) leaked with total size of / { lb = $2; ls = $9 }
		END { printf "%d %d %d %.0f %d %.0f %.0f %d %d", g, a, f, gc, lb, ls, gs, unsorted, disorder }')
	read -r lc_groups lc_allocs lc_frees lc_gcount lc_blocks lc_bytes lc_gsize lc_unsorted lc_disorder <<<"$lc_stats"
fi
if has l; then
	l_stats=$("$RTRACE" postproc -l -i "$file" | awk '
		/^[0-9]+\. / { if (/\) = 0x[0-9a-f]+$/) a++; else f++ }
		/^# [0-9]+ block\(s\) leaked with total size of / { lb = $2; ls = $9 }
		END { printf "%d %d %d %.0f", a, f, lb, ls }')
	read -r l_allocs l_frees l_blocks l_bytes <<<"$l_stats"
fi
if has plain; then
	set +o pipefail
	"$RTRACE" postproc -i "$file" | cmp - "$file" >"$out/cmp.txt" 2>&1
	plain_cmp=${PIPESTATUS[1]}
	set -o pipefail
fi

# --- measured runs, interleaved so drift hits every tool alike ---
for ((r = 1; r <= RUNS; r++)); do
	echo "run $r/$RUNS ..." >&2
	for t in "${names[@]}"; do
		measure "$t"
	done
done

echo
printf '%-34s %9s %9s %12s   %-26s %s\n' "tool (median of $RUNS)" "wall s" "MB/s" "peak RSS MiB" "runs (s)" "other CPU s"
declare -A med_wall med_rss
for t in "${names[@]}"; do
	med_wall[$t]=$(median <<<"${walls[$t]}")
	med_rss[$t]=$(median <<<"${rsss[$t]}")
	awk -v n="${label[$t]}" -v w="${med_wall[$t]}" -v r="${med_rss[$t]}" -v s="$size" -v runs="${walls[$t]}" \
		-v oth="${others[$t]}" \
		'BEGIN { printf "%-34s %9.3f %9.0f %12.1f   %-26s %s\n", n, w, s / 1e6 / w, r / 1024, runs, oth }'
done
echo "(other CPU s: CPU time other processes used during each run; 0.0 means the run had the machine)"
if has sort; then
	sort_out=$(median <<<"${outs[sort]}")
	if [ "$sort_out" -gt 0 ]; then
		echo "note: sort wrote ${sort_out} blocks of 512 bytes to $sort_tmp: it spilled (raise SORT_MEM)"
	else
		echo "note: sort did not spill (no file system output); it is a floor for reading and splitting lines"
	fi
fi

echo
echo "ratios:"
awk -v lc="${med_wall[lc]:-}" -v wc="${med_wall[wc]:-}" -v so="${med_wall[sort]:-}" -v pl="${med_wall[plain]:-}" \
	-v l="${med_wall[l]:-}" -v rss="${med_rss[lc]:-}" -v prss="${med_rss[plain]:-}" -v s="$size" \
	-v live="${lc_blocks:-$(m leaked_blocks)}" -v recs="$(m records)" -v lines="$lines" 'BEGIN {
	if (lc != "" && wc != "") printf "  rtrace -lc time / wc -l time        %8.1f x\n", lc / wc
	if (lc != "" && so != "") printf "  rtrace -lc time / sort time         %8.2f x\n", lc / so
	if (lc != "" && pl != "") printf "  rtrace -lc time / no-filter time    %8.2f x\n", lc / pl
	if (l != "" && pl != "")  printf "  rtrace -l time / no-filter time     %8.2f x\n", l / pl
	if (rss != "") {
		printf "  rtrace -lc peak RSS / file size     %8.3f   (%.0f MiB for %.0f MiB)\n", rss * 1024 / s, rss / 1024, s / 1048576
		printf "  rtrace -lc peak RSS / live block    %8.0f bytes\n", rss * 1024 / live
	}
	if (prss != "") printf "  rtrace no-filter RSS / record       %8.0f bytes\n", prss * 1024 / recs
	if (lc != "") printf "  rtrace -lc throughput               %8.2f M lines/s, %.2f M records/s\n", lines / lc / 1e6, recs / lc / 1e6
}'

check() { # what got expected
	if [ "$2" = "$3" ]; then
		printf '  %-44s %14s   ok\n' "$1" "$2"
	else
		printf '  %-44s %14s   MISMATCH: expected %s\n' "$1" "$2" "$3"
		mismatches=$((${mismatches:-0} + 1))
	fi
}
if has lc || has l || has plain; then
	echo
	echo "output checks (rtrace output against the generator's own count):"
fi
if has lc; then
	check "-lc: live blocks (leak summary)" "$lc_blocks" "$(m leaked_blocks)"
	check "-lc: leaked bytes (leak summary)" "$lc_bytes" "$(m leaked_bytes)"
	check "-lc: groups ('# allocation summary' lines)" "$lc_groups" "$(m backtraces_leaked)"
	check "-lc: call records printed" "$lc_allocs" "$(m leaked_blocks)"
	check "-lc: free records printed" "$lc_frees" 0
	check "-lc: sum of group block counts" "$lc_gcount" "$(m leaked_blocks)"
	check "-lc: sum of group sizes" "$lc_gsize" "$(m leaked_bytes)"
	check "-lc: groups out of size order" "$lc_unsorted" 0
	check "-lc: calls out of trace order in a group" "$lc_disorder" 0
fi
if has l; then
	check "-l: call records printed" "$l_allocs" "$(m leaked_blocks)"
	check "-l: free records printed" "$l_frees" 0
	check "-l: live blocks (leak summary)" "$l_blocks" "$(m leaked_blocks)"
	check "-l: leaked bytes (leak summary)" "$l_bytes" "$(m leaked_bytes)"
fi
if has plain; then
	check "no filter: output identical to the input" "$([ "$plain_cmp" = 0 ] && echo yes || echo no)" yes
	[ "$plain_cmp" = 0 ] || sed 's/^/    /' "$out/cmp.txt"
fi
echo
echo "memory can be judged against: ${lc_blocks:-$(m leaked_blocks)} live blocks at the end" \
	"(peak $(m peak_live_blocks) live), $B distinct backtraces ($(m backtraces_used) used," \
	"$(m backtraces_leaked) with leaks), $(m records) records"

# --- optional profile ---
if [ "$PERF" = 1 ]; then
	echo
	echo "perf: rtrace postproc -lc, self time, top 15 ..."
	# DWARF unwinding: the build has no frame pointers, and it also names
	# the static functions that -O2 inlined (parse_line, flush_group, ...)
	wait_idle
	rm -f "$out/perf-$tag.data" "$out/perf-$tag.data.old"
	perf record -q --call-graph dwarf,16384 -F 499 -o "$out/perf-$tag.data" \
		"$RTRACE" postproc -lc -i "$file" >/dev/null 2>"$out/perf-record.log"
	perf report -i "$out/perf-$tag.data" --no-children --stdio -g none --sort dso,symbol \
		>"$out/perf-$tag.self.txt" 2>/dev/null
	awk '/^ +[0-9.]+%/ { pct = $1; dso = $2; sub(/^ *[0-9.]+% +[^ ]+ +\[.\] /, ""); sub(/ +- +- *$/, "");
		printf "  %7s  %-40s %s\n", pct, $0, dso; if (++n == 15) exit }' "$out/perf-$tag.self.txt"
	echo "perf: the same, inclusive time (children), top 15 ..."
	perf report -i "$out/perf-$tag.data" --children --stdio -g none --sort symbol \
		>"$out/perf-$tag.children.txt" 2>/dev/null
	awk '/^ +[0-9.]+%/ { a = $1; b = $2; sub(/^ *[0-9.]+% +[0-9.]+% +\[.\] /, ""); sub(/ +- +- *$/, "");
		printf "  %7s %7s  %s\n", a, b, $0; if (++n == 15) exit }' "$out/perf-$tag.children.txt"
	echo "  (first column inclusive, second self; '(inlined)' entries are static"
	echo "   functions that -O2 inlined: their self time counts for the caller)"
	echo "(full profile: perf report -i $out/perf-$tag.data)"
fi
echo
echo "load at end: $(cpu_busy)% CPU busy (load average $(cut -d' ' -f1-3 /proc/loadavg))"
[ "${mismatches:-0}" = 0 ] || exit 3
