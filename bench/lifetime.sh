#!/usr/bin/env bash
# The lifetime filter (`rtrace run --min-lifetime=N`) on bench/churn.c:
# wall time, ns per event over the plain program and trace bytes per
# event, unfiltered and with N = 64, 1024 and 4096, side by side with
# heaptrack's raw recording (`heaptrack -r`, compressed, the smallest
# trace of the tools here) when heaptrack is installed.
#
#   bench/lifetime.sh            # CHURN_N=3000000 iterations, RUNS=3
#   bench/lifetime.sh --quick    # CHURN_N=300000, 1 run
#
# churn's blocks live about 256 of its thread's allocations (a slot of
# 256 picked by hash is freed and refilled), so a ring of 64 calls
# catches few of them and one of 1024 most: the figures show both ends.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$here/../build/rtrace}
RUNS=${RUNS:-3} CHURN_N=${CHURN_N:-3000000} THREADS=${THREADS:-1}
if [ "${QUICK:-0}" = 1 ]; then RUNS=1 CHURN_N=300000; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -g -o "$out/churn" "$here/churn.c" -lpthread
wait_idle

events=$((CHURN_N * THREADS * 2))
configs="plain rtrace lt64 lt1024 lt4096"
command -v heaptrack > /dev/null && configs="$configs heaptrack-raw"
echo "churn, $CHURN_N iterations x $THREADS thread(s) ($events events), median of $RUNS:"
printf '  %-14s %8s %10s %12s %10s\n' config wall ns/event "trace bytes" bytes/event
for cfg in $configs; do
	for _ in $(seq "$RUNS"); do
		rm -rf "$out/t" && mkdir "$out/t"
		case $cfg in
		plain) wall "$out/churn" "$CHURN_N" "$THREADS" ;;
		rtrace) wall "$RTRACE" run -q --leak-check=no -o "$out/t" -- "$out/churn" "$CHURN_N" "$THREADS" ;;
		lt*) wall "$RTRACE" run -q --leak-check=no --min-lifetime="${cfg#lt}" -o "$out/t" -- \
			"$out/churn" "$CHURN_N" "$THREADS" ;;
		heaptrack-raw) wall heaptrack -r -o "$out/t/ht" "$out/churn" "$CHURN_N" "$THREADS" ;;
		esac
	done | median > "$out/$cfg.t"
	bytes=$( (cat "$out"/t/* 2> /dev/null || true) | wc -c)
	awk -v c="$cfg" -v t="$(cat "$out/$cfg.t")" -v p="$(cat "$out/plain.t")" -v b="$bytes" -v e="$events" \
		'BEGIN { printf "  %-14s %7.2fs %10.1f %12d %10.3f\n", c, t, (t - p) * 1e9 / e, b, b / e }'
	if [ "$cfg" != plain ] && [ "$cfg" != heaptrack-raw ]; then
		"$RTRACE" heap "$out"/t/*.rtrace | sed -n 's/^calls to allocation functions: /    allocation calls read: /p'
	fi
done
