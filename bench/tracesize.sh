#!/usr/bin/env bash
# Trace size, wall time and peak RSS of `rtrace run` (compressed traces,
# the default; and raw, --compress=no) side by side with heaptrack and
# `heaptrack -r` (its raw recording, compressed). See bench/README.md,
# "Trace size".
#
#   bench/tracesize.sh              # CHURN_N=3000000, RUNS=3
#   bench/tracesize.sh --quick      # smoke run: CHURN_N=300000, 1 run
#
# Workloads: churn1 (bench/churn.c, 1 thread), churn4 (4 threads, each
# CHURN_N iterations), python (Debian's python3 bench/py_workload.py).
# Per configuration: the median wall time of RUNS runs, peak RSS (GNU
# time's %M: the largest process of the run, heaptrack's helpers
# included), the trace's bytes and bytes per record (calls: allocations
# and releases, counted by `rtrace convert --to text` on rtrace's trace)
# and per allocation (`heaptrack_print`'s "calls to allocation
# functions" for heaptrack); for the compressed configuration also the
# CPU time rtrace run's own process spent compressing (RTRACE_ZSTATS),
# the compressor's rate (records per second of that CPU time, user +
# system: "zrec/s") and the most disk the raw file held while the
# program ran (sampled).
#
# Environment: RTRACE (default build/rtrace), RUNS, CHURN_N, PY_SCALE,
# WORKLOADS, IDLE_WAIT (see bench/lib.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/tracesize

quick_or_help "$0" "$@"
if [ "${QUICK:-0}" = 1 ]; then
	RUNS=${RUNS:-1}
	CHURN_N=${CHURN_N:-300000}
	PY_SCALE=${PY_SCALE:-0.2}
fi
RUNS=${RUNS:-3}
CHURN_N=${CHURN_N:-3000000}
PY_SCALE=${PY_SCALE:-1.0}
read -r -a workloads <<<"${WORKLOADS:-churn1 churn4 python}"
PY=/usr/bin/python3
RTRACE=${RTRACE:-$root/build/rtrace}
die() { echo "tracesize.sh: $*" >&2; exit 1; }
[ -x "$RTRACE" ] || die "no rtrace at $RTRACE (build it first)"
[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
for t in heaptrack heaptrack_print; do command -v $t >/dev/null || die "needs $t"; done

rm -rf "$out"
mkdir -p "$out"
cc -O2 -g -pthread -o "$out/churn" "$here/churn.c"

prog() { # workload -> prog_argv
	case $1 in
	churn1) prog_argv=("$out/churn" "$CHURN_N" 1) ;;
	churn4) prog_argv=("$out/churn" "$CHURN_N" 4) ;;
	python) prog_argv=("$PY" "$here/py_workload.py" "$PY_SCALE") ;;
	esac
}

# run CONFIG DIR: one run into DIR; prints "wall_s rss_kb"
run() {
	local cfg=$1 dir=$2
	rm -rf "$dir" && mkdir -p "$dir"
	local cmd
	case $cfg in
	rtrace) cmd=(env RTRACE_ZSTATS=1 "$RTRACE" run --leak-check=no -o "$dir" --) ;;
	rtrace-raw) cmd=("$RTRACE" run -q --leak-check=no --compress=no -o "$dir" --) ;;
	heaptrack) cmd=(heaptrack -o "$dir/ht") ;;
	heaptrack-raw) cmd=(heaptrack -r -o "$dir/ht") ;;
	esac
	wait_idle
	local t0 t1
	t0=$EPOCHREALTIME
	/usr/bin/time -f "%M" -o "$dir/time" "${cmd[@]}" "${prog_argv[@]}" >/dev/null 2>"$dir/err" &
	local tp=$! peak=0 kb
	while kill -0 $tp 2>/dev/null; do # the raw file's disk use while it runs
		kb=$(du -sk "$dir" 2>/dev/null | cut -f1)
		[ "${kb:-0}" -gt "$peak" ] && peak=$kb
		sleep 0.2
	done
	wait $tp || true
	t1=$EPOCHREALTIME
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $(tail -1 "$dir/time") $peak"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '%-8s %-14s %8s %9s %12s %9s %9s %10s %9s %s\n' workload config wall_s rss_MB trace_bytes B/record B/alloc disk_MB zrec/s "rtrace run CPU"
for wl in "${workloads[@]}"; do
	prog "$wl"
	records=
	for cfg in rtrace-raw rtrace heaptrack heaptrack-raw; do
		walls=()
		for ((r = 0; r < RUNS; r++)); do
			read -r wall rss disk < <(run "$cfg" "$out/$wl-$cfg")
			walls+=("$wall")
		done
		wall=$(printf '%s\n' "${walls[@]}" | median)
		d=$out/$wl-$cfg
		f=$(ls "$d"/*.rtrace "$d"/ht* 2>/dev/null | head -1 || true)
		bytes=$(stat -c %s "$f")
		cpu= zrate=-
		case $cfg in
		rtrace*)
			if [ -z "$records" ]; then
				records=$("$RTRACE" convert --to text "$f" 2>/dev/null | grep -c '^[0-9]')
				allocs=$("$RTRACE" heap "$f" 2>/dev/null | awk -F': ' '/^calls to allocation functions:/ { print $2 + 0 }')
			fi
			cpu=$(grep -o "CPU time: .*" "$d/err" || true)
			# records per second of rtrace run's own CPU time (user + system)
			[ -n "$cpu" ] && zrate=$(echo "$cpu" | awk -v n="$records" '{ s = $3 + $6; printf "%.1fM", (s > 0 ? n / s / 1e6 : 0) }')
			;;
		heaptrack) # -r's recording is read by heaptrack_interpret only: the same count
			allocs=$(heaptrack_print "$f" 2>/dev/null | awk -F': ' '/^calls to allocation functions:/ { print $2 + 0 }' || true)
			;;
		esac
		bpr=$(awk -v b="$bytes" -v n="$records" 'BEGIN { printf "%.2f", n ? b / n : 0 }')
		bpa=$(awk -v b="$bytes" -v n="$allocs" 'BEGIN { printf "%.2f", n ? b / n : 0 }')
		case $cfg in heaptrack*) bpr=- ;; esac
		printf '%-8s %-14s %8s %9.1f %12s %9s %9s %10.1f %9s %s\n' "$wl" "$cfg" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
			"$bytes" "$bpr" "$bpa" "$(awk -v k="$disk" 'BEGIN { print k / 1024 }')" "$zrate" "$cpu"
	done
done
