#!/usr/bin/env bash
# Cost of the fd module: bench/fdloop.c (open, read, close, FD_N times)
# plain, under `rtrace run -m fd`, under `rtrace run` (memory only: the fd
# interposers are there but record nothing) and under valgrind
# --track-fds=yes (--tool=none, with fewer iterations when slow: scaled).
# Prints the median of RUNS runs and the ratio to plain.
#
#   bench/fd.sh            # RUNS=5, FD_N=200000
#   bench/fd.sh --quick    # RUNS=1, FD_N=20000
#
# Environment: RTRACE (default build/rtrace), RUNS, FD_N, IDLE_WAIT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
quick_or_help "$0" "$@"
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
RTRACE=${RTRACE:-$root/build/rtrace}
RUNS=${RUNS:-5}
FD_N=${FD_N:-200000}
if [ "${QUICK:-0}" = 1 ]; then RUNS=1; FD_N=20000; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/fdloop" "$here/fdloop.c"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() { # NAME N COMMAND...: median seconds of RUNS runs
	local name=$1 n=$2 i s e
	shift 2
	for i in $(seq "$RUNS"); do
		wait_idle
		s=$(date +%s.%N)
		"$@" "$work/fdloop" "$n" > /dev/null 2>&1
		e=$(date +%s.%N)
		echo "$e - $s" | bc
		rm -f "$work"/*.rtrace
	done | median
}

plain=$(run plain "$FD_N" env)
printf '%-22s %8s s  %6s\n' "configuration" "median" "ratio"
printf '%-22s %8.3f s  %6.2f\n' plain "$plain" 1
for cfg in "rtrace -m fd" "rtrace (memory)"; do
	if [ "$cfg" = "rtrace -m fd" ]; then t=$(run "$cfg" "$FD_N" "$RTRACE" run -q -m fd -o "$work" --)
	else t=$(run "$cfg" "$FD_N" "$RTRACE" run -q -o "$work" --); fi
	printf '%-22s %8.3f s  %6.2f\n' "$cfg" "$t" "$(echo "$t / $plain" | bc -l)"
done
if command -v valgrind > /dev/null; then
	n=$((FD_N / 10))
	t=$(run valgrind "$n" valgrind -q --tool=none --track-fds=yes)
	t=$(echo "$t * 10" | bc -l)
	printf '%-22s %8.3f s  %6.2f  (FD_N/10 iterations, scaled)\n' "valgrind --track-fds" "$t" "$(echo "$t / $plain" | bc -l)"
fi
