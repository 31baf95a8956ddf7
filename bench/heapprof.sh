#!/usr/bin/env bash
# The heap profile of a trace: `rtrace heap` (its report, then collapsed
# stacks) next to heaptrack_print (its report, then -F flame-graph stacks)
# on the same workload, each on its own tracer's recording. See
# bench/README.md, "Heap profiles".
#
#   bench/heapprof.sh            # bench/churn.c, CHURN_N=3000000, RUNS=3
#   bench/heapprof.sh --quick    # CHURN_N=300000, 1 run
#   WORKLOAD=python3 bench/heapprof.sh   # bench/py_workload.py (PY_SCALE 0.5)
#   RAW=1 bench/heapprof.sh      # a raw trace (rtrace run --compress=no)
#
# bench/churn.c (every call an allocation or a release, ~20 frames deep)
# or Debian's python3 on bench/py_workload.py (PYTHONMALLOC=malloc) is
# traced once by `rtrace run` and once by `heaptrack`. Then, in turns,
# RUNS times each (warm: a first run of each fills the caches):
#   rtrace heap          rtrace heap TRACE
#   heaptrack_print      heaptrack_print -f DATA
#   rtrace collapsed     rtrace heap --collapsed=allocations TRACE
#   heaptrack_print -F   heaptrack_print -f DATA -F OUT -p 0 -a 0 -T 0 -l 0
#   rtrace callgrind     rtrace convert --to callgrind TRACE
# and prints median seconds and peak memory, the ratios, and both
# summaries' figures (which agree: tests/cli/heapprof_heaptrack.sh).
#
# Environment:
#   RTRACE=path   rtrace binary (default build/rtrace)
#   RUNS=n        measured runs per tool, median reported (3)
#   CHURN_N=n     churn iterations (3000000; --quick: 300000)
#   IDLE_WAIT=s   wait up to s seconds for an idle CPU before each run (900)
#   WORKLOAD=w    churn (default) or python3
#   PY=path       python interpreter (/usr/bin/python3); PY_SCALE=x (0.5)
#   RAW=1         trace raw, not compressed (rtrace run --compress=no)
#   BASE=path     also time this rtrace binary (an older build) in turn,
#                 on the same trace: rows and ratios marked "(BASE)"
#   J1=1          also time rtrace heap -j 1 (frames decoded on the
#                 reading thread; by default the CPUs, at most 4, read)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/heapprof
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$root/build/rtrace}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	CHURN_N=${CHURN_N:-300000}
fi
RUNS=${RUNS:-3}
CHURN_N=${CHURN_N:-3000000}
need_tools "$RTRACE" cc heaptrack heaptrack_print /usr/bin/time
rm -rf "$out"
mkdir -p "$out/rt" "$out/ht"
export RTRACE_CACHE_DIR=$out/cache
cc -O2 -g -pthread -o "$out/churn" "$here/churn.c"

WORKLOAD=${WORKLOAD:-churn}
PY=${PY:-/usr/bin/python3}
PY_SCALE=${PY_SCALE:-0.5}
compress=()
[ -n "${RAW:-}" ] && compress=(--compress=no)
if [ "$WORKLOAD" = python3 ]; then
	echo "== tracing $PY bench/py_workload.py $PY_SCALE with rtrace run ${compress[*]} and heaptrack"
	PYTHONMALLOC=malloc "$RTRACE" run -q "${compress[@]}" -o "$out/rt" -- "$PY" "$here/py_workload.py" "$PY_SCALE" > /dev/null
	(cd "$out/ht" && PYTHONMALLOC=malloc heaptrack -o "$out/ht/py" "$PY" "$here/py_workload.py" "$PY_SCALE" > /dev/null 2>&1)
else
	echo "== tracing churn $CHURN_N 1 with rtrace run ${compress[*]} and heaptrack"
	"$RTRACE" run -q "${compress[@]}" -o "$out/rt" -- "$out/churn" "$CHURN_N" 1 > /dev/null
	(cd "$out/ht" && heaptrack -o "$out/ht/churn" "$out/churn" "$CHURN_N" 1 > /dev/null 2>&1)
fi
trace=$(ls "$out"/rt/*.rtrace)
data=$(ls "$out"/ht/* | head -1) # churn.zst or py.zst

declare -A cmds times mems cpus
cmds[rt_report]="$RTRACE heap -q $trace"
cmds[ht_report]="heaptrack_print -f $data"
cmds[rt_folded]="$RTRACE heap -q --collapsed=allocations $trace"
cmds[ht_folded]="heaptrack_print -f $data -F $out/ht.stacks -p 0 -a 0 -T 0 -l 0"
cmds[rt_cg]="$RTRACE convert -q --to callgrind -o $out/rt.callgrind $trace"
order=(rt_report ht_report rt_folded ht_folded rt_cg)
if [ -n "${BASE:-}" ]; then
	cmds[b_report]="$BASE heap -q $trace"
	cmds[b_folded]="$BASE heap -q --collapsed=allocations $trace"
	cmds[b_cg]="$BASE convert -q --to callgrind -o $out/b.callgrind $trace"
	order+=(b_report b_folded b_cg)
fi
if [ -n "${J1:-}" ]; then
	cmds[j1_report]="$RTRACE heap -q -j 1 $trace"
	order+=(j1_report)
fi
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for t in "${order[@]}"; do # warm-up
	${cmds[$t]} > "$out/$t.out" 2> /dev/null
done
for ((r = 0; r < RUNS; r++)); do
	for t in "${order[@]}"; do
		wait_idle
		/usr/bin/time -o "$out/time" -f "%e %M %U %S" ${cmds[$t]} > /dev/null 2>&1
		read -r secs kb us ss < "$out/time"
		times[$t]+="$secs "
		mems[$t]+="$kb "
		cpus[$t]+="$(awk -v u="$us" -v s="$ss" 'BEGIN { print u + s }') "
		echo "  $t run $((r + 1)): $secs s, $kb KB peak" >&2
	done
done

med() { tr ' ' '\n' <<< "$1" | grep . | median; }
printf '\n%-48s %9s %9s %11s\n' tool "median s" "CPU s" "peak MB"
declare -A label=([rt_report]="rtrace heap" [ht_report]="heaptrack_print" \
	[rt_folded]="rtrace heap --collapsed=allocations" [ht_folded]="heaptrack_print -F (flame-graph stacks)" \
	[rt_cg]="rtrace convert --to callgrind" [b_report]="rtrace heap (BASE)" [j1_report]="rtrace heap -j 1" \
	[b_folded]="rtrace heap --collapsed=allocations (BASE)" [b_cg]="rtrace convert --to callgrind (BASE)")
for t in "${order[@]}"; do
	printf '%-48s %9s %9s %11s\n' "${label[$t]}" "$(med "${times[$t]}")" "$(med "${cpus[$t]}")" \
		"$(awk -v k="$(med "${mems[$t]}")" 'BEGIN { printf "%.1f", k / 1024 }')"
done
ratio() { # NAME RTRACE HEAPTRACK
	awk -v n="$1" -v rs="$(med "${times[$2]}")" -v hs="$(med "${times[$3]}")" \
		-v rm="$(med "${mems[$2]}")" -v hm="$(med "${mems[$3]}")" \
		'BEGIN { printf "%s: heaptrack_print / rtrace: time %.1fx, memory %.1fx\n", n, hs / (rs > 0 ? rs : 0.01), hm / rm }'
	awk -v n="$1" -v rc="$(med "${cpus[$2]}")" -v hc="$(med "${cpus[$3]}")" \
		'BEGIN { printf "%s: CPU seconds (user + sys): rtrace %s, heaptrack_print %s: %.1fx\n", n, rc, hc, hc / (rc > 0 ? rc : 0.01) }'
}
echo
ratio report rt_report ht_report
ratio "flame-graph stacks" rt_folded ht_folded
ratio "callgrind profile (against -F)" rt_cg ht_folded
[ -n "${J1:-}" ] && ratio "report (-j 1)" j1_report ht_report
if [ -n "${BASE:-}" ]; then
	ratio "report (BASE)" b_report ht_report
	ratio "flame-graph stacks (BASE)" b_folded ht_folded
	ratio "callgrind profile (BASE, against -F)" b_cg ht_folded
fi
echo
echo "summaries (rtrace heap, then heaptrack_print):"
(cd "$out" && grep -E '^(calls to|temporary|peak heap|total memory leaked)' rt_report.out ht_report.out)
echo "load: $(uptime)"
echo "trace sizes: rtrace $(du -k "$trace" | cut -f1) KB, heaptrack $(du -k "$data" | cut -f1) KB"
