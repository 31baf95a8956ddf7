#!/usr/bin/env bash
# Per-process cost of the tracer: what tracing adds to a process that does
# next to nothing, side by side with the process alone and heaptrack, and
# what it does to a shell loop of short processes under --follow-children.
# See bench/README.md, "Per-process cost". Not a test: prints figures.
#
#   bench/startup.sh              # N=30 runs per configuration
#   bench/startup.sh --quick      # N=5
#
# Configurations (wall time, and CPU time under perf stat; medians of N):
#   plain       /bin/true
#   rtrace      rtrace run -q -o DIR -- /bin/true
#   env         env /bin/true: the base of preload, which needs env(1) to
#               set the variables (env's own exec costs as much as
#               /bin/true: ~1 ms wall, ~0.9 ms CPU here)
#   preload     env with LD_PRELOAD=librtrace-preload.so and the
#               environment rtrace run sets (src/format/run_env.h)
#               before /bin/true
#   heaptrack   heaptrack -o FILE /bin/true (skipped when not installed)
#   loop        bash -c 'for i in 1..100; do /bin/true; done'
#   loop-rtrace the same under rtrace run -q --follow-children
#   loop-preload the same with only the tracer library preloaded (and
#               the environment rtrace run sets, children followed): what
#               loop-rtrace costs beyond it is rtrace run's own process
#   loop-base   loop-rtrace with another build's rtrace (BASE=path/rtrace,
#               with the librtrace-preload.so next to it): before and after
#               in turns
# Then the memory the tracer adds to the traced process (RssAnon and
# RssFile of /proc/PID/status, kB, medians of 3): an idle program
# (`sleep`, sampled while it sleeps) and bench/churn.c (CHURN_N
# iterations, peak RSS from wait4, as /usr/bin/time's %M), each plain and
# with the tracer library preloaded.
#
# Environment:
#   RTRACE=path    rtrace binary (default build/rtrace)
#   BASE=path      the rtrace of loop-base (skipped without it)
#   PRELOAD=path   the tracer library (default: librtrace-preload.so next
#                  to rtrace), for rtrace run too (as RTRACE_PRELOAD): a
#                  before/after comparison needs only the two libraries
#   N=n            runs per configuration (30; loops: N/3, at least 3)
#   CONFIGS="..."  a subset of the configurations above
#   PERF=1         also profile 100 preloaded /bin/true (perf record with
#                  DWARF call chains, bench/out/startup/perf.data): each
#                  sample's class (loading, tracer start, exit leak check,
#                  ...), then the top symbols
#   IDLE_WAIT=s    wait up to s seconds for an idle CPU first (60)
#   CHURN_N=n      churn iterations for the RSS figures (200000)
#   OUT=dir        where the traces go (bench/out/startup): a tmpfs
#                  directory (OUT=/dev/shm/rtstart) separates the tracer's
#                  own cost from the filesystem's cost of creating a file
#   KEEP=1         leave the runs' traces in OUT/old instead of removing
#                  them at the end (and OUT's at the start): ext4 without
#                  a journal passes over the inodes freed in the last
#                  minutes at every create, so a run started within ~5
#                  minutes of removing the last one's thousands of files
#                  measures that state too (rounds back to back then
#                  compare; give each its own OUT)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${OUT:-$here/out/startup}

quick_or_help "$0" "$@"
N=${N:-$([ "${QUICK:-0}" = 1 ] && echo 5 || echo 30)}
LOOP_N=$((N / 3 < 3 ? 3 : N / 3))
RTRACE=${RTRACE:-$root/build/rtrace}
PRELOAD=${PRELOAD:-$(dirname "$RTRACE")/librtrace-preload.so}
export RTRACE_PRELOAD=$PRELOAD
[ -x "$RTRACE" ] && [ -f "$PRELOAD" ] || { echo "startup.sh: no $RTRACE or $PRELOAD (build first)" >&2; exit 2; }
read -r -a configs <<<"${CONFIGS:-plain rtrace env preload heaptrack loop loop-preload loop-rtrace}"
command -v heaptrack >/dev/null || configs=("${configs[@]/heaptrack/}")
[ -n "${BASE:-}" ] || configs=("${configs[@]/loop-base/}")

[ "${KEEP:-0}" = 1 ] || rm -rf "$out"
mkdir -p "$out/traces" "$out/ht" "$out/old"
: >"$out/manifest"

# the preloaded process's environment, as `rtrace run -q` sets it
preload_env=(LD_PRELOAD="$PRELOAD" RTRACE_DIR="$out/traces" RTRACE_MANIFEST="$out/manifest"
	RTRACE_DEPTH=32 RTRACE_FLAGS= RTRACE_TOGGLE_SIGNAL=0 RTRACE_LEAK_CHECK=full RTRACE_MODULES=memory)
loop='for i in $(seq 100); do /bin/true; done'

# the command of configuration $1, into the array cmd
cmd_of() {
	case $1 in
	plain) cmd=(/bin/true) ;;
	env) cmd=(env /bin/true) ;;
	rtrace) cmd=("$RTRACE" run -q -o "$out/traces" -- /bin/true) ;;
	preload) cmd=(env "${preload_env[@]}" /bin/true) ;;
	heaptrack) cmd=(heaptrack -o "$out/ht/t" /bin/true) ;;
	loop) cmd=(bash -c "$loop") ;;
	loop-rtrace) cmd=("$RTRACE" run -q --follow-children -o "$out/traces" -- bash -c "$loop") ;;
	loop-preload) cmd=(env "${preload_env[@]}" RTRACE_FLAGS=c bash -c "$loop") ;;
	loop-base) cmd=(env RTRACE_PRELOAD="$(dirname "$BASE")/librtrace-preload.so" "$BASE" run -q --follow-children -o "$out/traces" -- bash -c "$loop") ;;
	esac
}
one() { cmd_of "$1" && "${cmd[@]}" >/dev/null 2>&1; } # one quiet run of $1

# The traces go after each run (outside the timing), into a directory of
# their own that is removed at the end: no growing directory, and no file
# deleted while runs are timed. Deleting each run's files made ext4's
# inode allocator pass over the inodes freed in the last minute on every
# create (recently_deleted, find_inode_bit: 15-25% of a traced process's
# samples), a cost of the benchmark's own clean-up that grew as it ran.
cleaned=0
clean() {
	cleaned=$((cleaned + 1))
	mkdir -p "$out/old"
	mv "$out/traces" "$out/old/t$$-$cleaned" && mv "$out/ht" "$out/old/h$$-$cleaned"
	mkdir -p "$out/traces" "$out/ht"
	: >"$out/manifest"
}

# "WALL CPU" microseconds of $1: a run timed from here, then a run under
# perf stat for the CPU time of the whole tree of processes (task-clock),
# which a machine busy with other work disturbs less than wall time
time_one() {
	local t0 t1 cpu=0
	t0=${EPOCHREALTIME/./}
	one "$1"
	t1=${EPOCHREALTIME/./}
	clean
	if [ "$have_perf" = 1 ]; then
		cmd_of "$1"
		perf stat -x, -e task-clock -o "$out/stat" -- "${cmd[@]}" >/dev/null 2>&1
		cpu=$(awk -F, '/task-clock/ { printf "%d", $1 * 1000 }' "$out/stat")
		clean
	fi
	echo $((t1 - t0)) "${cpu:-0}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

have_perf=0
perf stat -x, -e task-clock -o /dev/null -- /bin/true >/dev/null 2>&1 && have_perf=1
IDLE_WAIT=${IDLE_WAIT:-60} wait_idle
for c in "${configs[@]}"; do [ -n "$c" ] && one "$c"; clean; done # warm up
declare -A res
for c in "${configs[@]}"; do [ -n "$c" ] && : >"$out/$c.us"; done
for ((r = 0; r < N; r++)); do # the configurations take turns
	for c in "${configs[@]}"; do
		[ -n "$c" ] || continue
		case $c in loop*) [ "$r" -lt "$LOOP_N" ] || continue ;; esac
		time_one "$c" >>"$out/$c.us"
	done
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$out/old" # the runs' traces, after the timing
declare -A cpu anon file peak
for c in "${configs[@]}"; do
	[ -n "$c" ] || continue
	res[$c]=$(cut -d' ' -f1 "$out/$c.us" | median)
	cpu[$c]=$(cut -d' ' -f2 "$out/$c.us" | median)
done

echo "per-process cost, median of $N runs (loops: $LOOP_N), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo "  wall time, then CPU time of all the processes (perf stat task-clock)"
ms() { awk -v u="$1" 'BEGIN { printf "%7.2f ms", u / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%5.2fx", b ? a / b : 0 }'; }
row() { # CONFIG BASE PER: one line, with the ratios to BASE and the cost added per PER processes
	local c=$1 base=$2 per=$3 line
	line=$(printf '  %-12s %s %s' "$c" "$(ms "${res[$c]}")" "$(ms "${cpu[$c]}")")
	if [ -n "${res[$base]:-}" ] && [ "$c" != "$base" ]; then
		line+=$(printf '   %s %s %s, +%s +%s each' "$(ratio "${res[$c]}" "${res[$base]}")" \
			"$(ratio "${cpu[$c]}" "${cpu[$base]}")" "$base" \
			"$(ms $(((res[$c] - res[$base]) / per)))" "$(ms $(((cpu[$c] - cpu[$base]) / per)))")
	fi
	echo "$line"
}
for c in plain rtrace heaptrack env; do [ -n "${res[$c]:-}" ] && row "$c" plain 1; done
# the library's own cost: against env /bin/true when both ran
[ -n "${res[preload]:-}" ] && row preload "$([ -n "${res[env]:-}" ] && echo env || echo plain)" 1
# the cost per /bin/true of the loop (each is also a traced fork of bash)
for c in loop loop-preload loop-base loop-rtrace; do [ -n "${res[$c]:-}" ] && row "$c" loop 100; done
# rtrace run's own process, per traced process (two per /bin/true)
[ -n "${res[loop-preload]:-}" ] && [ -n "${res[loop-rtrace]:-}" ] && row loop-rtrace loop-preload 200

# ---- the traced program's memory ----
# "RssAnon RssFile" (kB) of `sleep 2`, sampled after 1 s; $1: preload or
# plain. The tracer takes its variables out of the environment of what it
# traces: env passes them on to sleep with the follow flag (c)
idle_rss() {
	local vars=(X=1)
	[ "$1" = preload ] && vars=("${preload_env[@]}" RTRACE_FLAGS=c)
	env "${vars[@]}" sleep 2 &
	local pid=$!
	sleep 1
	[ "$(readlink "/proc/$pid/exe")" = "$(readlink -f "$(command -v sleep)")" ] ||
		echo "startup.sh: pid $pid is not sleep" >&2
	awk '/^RssAnon/ { a = $2 } /^RssFile/ { f = $2 } END { print a, f }' "/proc/$pid/status"
	wait "$pid"
	clean
}
# peak RSS (kB) of churn; $1: preload or plain (time's figure is churn's)
churn_rss() {
	local vars=(X=1)
	[ "$1" = preload ] && vars=("${preload_env[@]}" RTRACE_FLAGS=c)
	env "${vars[@]}" /usr/bin/time -f %M -o "$out/churn.rss" "$out/churn" "$CHURN_N" 1 >/dev/null 2>&1
	cat "$out/churn.rss"
	clean
}
CHURN_N=${CHURN_N:-200000}
cc -O2 -g -pthread -o "$out/churn" "$here/churn.c"
echo "memory of the traced process (kB, medians of 3)"
for m in plain preload; do
	for i in 1 2 3; do idle_rss "$m"; done >"$out/idle.$m"
	for i in 1 2 3; do churn_rss "$m"; done >"$out/churn.$m"
	anon[$m]=$(cut -d' ' -f1 "$out/idle.$m" | median)
	file[$m]=$(cut -d' ' -f2 "$out/idle.$m" | median)
	peak[$m]=$(median <"$out/churn.$m")
done
printf '  idle (sleep): RssAnon %d + RssFile %d plain; %d + %d traced: +%d kB anonymous, %+d kB file\n' \
	"${anon[plain]}" "${file[plain]}" "${anon[preload]}" "${file[preload]}" \
	$((anon[preload] - anon[plain])) $((file[preload] - file[plain]))
printf '  churn %d 1: peak RSS %d kB plain, %d kB traced: +%d kB\n' "$CHURN_N" "${peak[plain]}" \
	"${peak[preload]}" $((peak[preload] - peak[plain]))

# the class of each sample of the traced /bin/true: the first whose
# functions its call chain holds, in this order
classes='
/^true / { if (n) tally(); n = 1; chain = ""; next }
/^[^ \t]/ { if (n) tally(); n = 0; next }
NF >= 2 && n { chain = chain " " $2; next }
END { if (n) tally(); for (k in c) printf "  %5.1f%%  %s\n", 100 * c[k] / tot, k; printf "  (%d samples)\n", tot }
function tally() {
	tot++; k = "the rest (chains perf could not unwind, the program)"
	if (chain ~ /rt_leak_exit_at|rt_leak_exit_entry|check_now/) k = "exit: the leak check"
	else if (chain ~ /rt_finish|rt_writer_close|rt_fini/) k = "exit: the end of the trace"
	else if (chain ~ /rt_start|rt_init/) k = "tracer start"
	else if (chain ~ /load_elf_binary|bprm_execve/) k = "exec (kernel)"
	else if (chain ~ /exit_mmap|do_exit|do_group_exit/) k = "exit (kernel)"
	else if (chain ~ /_dl_start|dl_main|_dl_sysdep_start|_dl_map_object|_dl_relocate|_dl_init|_dl_catch|do_preload/) k = "loading (ld.so)"
	c[k]++; n = 0
}'
if [ "${PERF:-0}" = 1 ]; then
	cat >"$out/many.sh" <<EOF
for i in \$(seq 100); do env $(printf '%q ' "${preload_env[@]}") /bin/true; rm -f $out/traces/*; done
EOF
	perf record -q --call-graph dwarf,32768 -o "$out/perf.data" -- bash "$out/many.sh" >/dev/null 2>&1 || true
	echo "perf: 100 preloaded /bin/true, samples by class:"
	perf script -i "$out/perf.data" --comm true 2>/dev/null | awk "$classes" | sort -rn
	echo "perf: top symbols (self):"
	perf report -i "$out/perf.data" --comm true --percentage relative --no-children --sort dso,sym -g none \
		--stdio -q 2>/dev/null | grep '%' | head -25
fi
