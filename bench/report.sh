#!/usr/bin/env bash
# The HTML report of a large trace: `rtrace report` on bench/churn.c's
# trace (every call an allocation or a release, ~20 frames deep) and on
# python3 running bench/py_workload.py (many distinct stacks), next to
# heaptrack_print on heaptrack's recording of the same churn (the anchor
# for a pass over a heap recording). Prints per workload: the trace's
# size, the report's size, rtrace report's seconds and peak memory, and
# the time chromium (headless) takes to open the page until its script
# is done (the page's own performance.now() at that moment, read from
# the DOM: parsing, JSON, tables, first tab), on the summary, the flame
# graph and memory over time. See bench/README.md, "HTML report".
#
#   bench/report.sh            # CHURN_N=2000000, RUNS=3
#   bench/report.sh --quick    # CHURN_N=200000, 1 run
#
# Environment:
#   RTRACE=path   rtrace binary (default build/rtrace)
#   RUNS=n        measured runs, median reported (3)
#   CHURN_N=n     churn iterations (2000000; --quick: 200000)
#   IDLE_WAIT=s   wait up to s seconds for an idle CPU before each run (900)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/report
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$root/build/rtrace}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	CHURN_N=${CHURN_N:-200000}
fi
RUNS=${RUNS:-3}
CHURN_N=${CHURN_N:-2000000}
need_tools "$RTRACE" cc chromium python3 /usr/bin/time
rm -rf "$out"
mkdir -p "$out/churn" "$out/py" "$out/ht"
export RTRACE_CACHE_DIR=$out/cache
cc -O2 -g -pthread -o "$out/churnbin" "$here/churn.c"

echo "== tracing churn $CHURN_N 1 and python3 py_workload.py with rtrace run" >&2
"$RTRACE" run -q -o "$out/churn" -- "$out/churnbin" "$CHURN_N" 1 > /dev/null
"$RTRACE" run -q --follow-children -o "$out/py" -- python3 "$here/py_workload.py" > /dev/null
have_ht=
if command -v heaptrack > /dev/null && command -v heaptrack_print > /dev/null; then
	(cd "$out/ht" && heaptrack -o "$out/ht/churn" "$out/churnbin" "$CHURN_N" 1 > /dev/null 2>&1) && have_ht=1
fi

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
med() { tr ' ' '\n' <<< "$1" | grep . | median; }
# load HTML TAB: the page's time to ready, in ms
load() {
	timeout 300 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$1#$2" 2> /dev/null |
		grep -o 'data-load-ms="[0-9]*"' | grep -o '[0-9]*'
}

printf '%-8s %10s %9s %11s %9s %9s %9s %9s\n' workload "trace MB" "report KB" "report s" "peak MB" \
	"open ms" "flame ms" "time ms"
for w in churn py; do
	trace=$(ls -S "$out/$w"/*.rtrace | sed -n 1p)
	"$RTRACE" report -q -o "$out/$w.html" "$trace" # warm-up
	secs='' mem='' l1='' l2='' l3=''
	for ((r = 0; r < RUNS; r++)); do
		wait_idle
		/usr/bin/time -o "$out/time" -f "%e %M" "$RTRACE" report -q -o "$out/$w.html" "$trace"
		read -r s kb < "$out/time"
		secs+="$s " mem+="$kb "
		l1+="$(load "$out/$w.html" summary) " l2+="$(load "$out/$w.html" flame) " l3+="$(load "$out/$w.html" time) "
	done
	printf '%-8s %10.1f %9d %11s %9.1f %9s %9s %9s\n' "$w" "$(echo "$(stat -c %s "$trace") / 1048576" | bc -l)" \
		$(($(stat -c %s "$out/$w.html") / 1024)) "$(med "$secs")" "$(echo "$(med "$mem") / 1024" | bc -l)" \
		"$(med "$l1")" "$(med "$l2")" "$(med "$l3")"
	if [ "$w" = churn ]; then
		calls=$(grep -o 'id="calls-0">[0-9]*' "$out/churn.html" | grep -o '[0-9]*$')
		echo "  churn: $calls allocation calls in the report" >&2
		rt_secs=$(med "$secs")
	fi
done
if [ -n "$have_ht" ]; then
	data=$(ls "$out"/ht/churn*)
	heaptrack_print -f "$data" > /dev/null 2>&1
	hs=''
	for ((r = 0; r < RUNS; r++)); do
		wait_idle
		/usr/bin/time -o "$out/time" -f "%e %M" heaptrack_print -f "$data" > /dev/null 2>&1
		read -r s kb < "$out/time"
		hs+="$s "
	done
	printf '\nchurn: rtrace report %s s, heaptrack_print (text report of the same run) %s s: ratio %.2f\n' \
		"$rt_secs" "$(med "$hs")" "$(echo "$(med "$hs") / ($rt_secs + 0.001)" | bc -l)"
fi
