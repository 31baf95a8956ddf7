#!/usr/bin/env bash
# Leak checks on demand (`rtrace run --check-signal`), side by side with
# memcheck answering VALGRIND_DO_LEAK_CHECK in the same program, and what
# the check's request costs the hot path when no check is asked for.
#
#   bench/livecheck.sh            # N=200000 blocks, K=5 checks, RUNS=3
#   bench/livecheck.sh --quick    # N=20000, 1 run
#
# Prints, per configuration, the median wall time; for rtrace the time
# each check took (its CHECK record's) and the trace's bytes per check;
# and churn (bench/churn.c, CHURN_N iterations) under rtrace run with the
# current tracer and, when OLD_PRELOAD names one, a tracer built before
# (the pending-check test in every heap interposer is one relaxed load).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$here/../build/rtrace}
N=${N:-200000} K=${K:-5} RUNS=${RUNS:-3} CHURN_N=${CHURN_N:-1000000}
if [ "${QUICK:-0}" = 1 ]; then N=20000 RUNS=1 CHURN_N=200000; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -g -o "$out/livecheck" "$here/livecheck.c"
gcc -O2 -g -o "$out/churn" "$here/churn.c" -lpthread
USR2=$(kill -l USR2)
wait_idle


echo "$N live blocks, $K checks (one every $((N / K)) blocks):"
for cfg in plain rtrace memcheck; do
	for _ in $(seq "$RUNS"); do
		rm -rf "$out/rt" && mkdir "$out/rt"
		case $cfg in
		plain) wall "$out/livecheck" "$N" "$K" 0 ;; # signal 0: none sent
		rtrace)
			wall "$RTRACE" run -q -o "$out/rt" --check-signal=USR2 -- "$out/livecheck" "$N" "$K" "$USR2"
			cp "$out"/rt/*.rtrace "$out/last.rtrace" ;;
		memcheck) wall valgrind --leak-check=full "$out/livecheck" "$N" "$K" ;;
		esac
	done | median > "$out/$cfg.t"
	printf '  %-9s %6.2f s\n' "$cfg" "$(cat "$out/$cfg.t")"
done
trace=$out/last.rtrace
"$RTRACE" postproc -i "$trace" | sed -nE 's/^## leak check ([0-9]+) at call [0-9]+ \(full\): ([0-9]+) blocks checked in ([0-9]+) us/\1 \2 \3/p' |
	awk '{ printf "  check %d: %d blocks in %.1f ms\n", $1, $2, $3 / 1000 }'
"$RTRACE" postproc -i "$trace" | grep -c '^## leak check [0-9]*: .* in loss record' |
	awk -v k="$K" '{ printf "  %d loss records over %d checks\n", $1, k }'
awk -v r="$(cat "$out/rtrace.t")" -v m="$(cat "$out/memcheck.t")" 'BEGIN { printf "  memcheck / rtrace: %.1fx\n", m / r }'

echo "churn, $CHURN_N iterations, 1 thread, no check asked for:"
for lib in current ${OLD_PRELOAD:+old}; do
	pre=
	[ "$lib" = old ] && pre=$OLD_PRELOAD
	for _ in $(seq "$RUNS"); do
		RTRACE_PRELOAD=$pre wall "$RTRACE" run -q --leak-check=no -o "$out" -- "$out/churn" "$CHURN_N" 1
		rm -f "$out"/*.rtrace
	done | median > "$out/churn.$lib"
	printf '  %-9s %6.3f s\n' "$lib" "$(cat "$out/churn.$lib")"
done
