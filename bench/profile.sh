#!/usr/bin/env bash
# From a trace to an allocation profile of its call graph: `rtrace convert
# --to callgrind` (resolving the frames, then summing every stack into
# self and inclusive costs) next to heaptrack_print writing its flame-graph
# stacks (the same work from heaptrack's data: symbolising and summing the
# stacks) on the same workload. See bench/README.md, "Allocation profiles".
#
#   bench/profile.sh             # python3 bench/py_workload.py 1.0, RUNS=3
#   bench/profile.sh --quick     # scale 0.2, 1 run
#
# The workload (Debian's python3 with PYTHONMALLOC=malloc, every Python
# object from malloc) is traced once by each tracer: `rtrace run` and
# `heaptrack`. Then, in turns, RUNS times each (warm: rtrace's cache of
# debug files filled by a first run, heaptrack's symbols read from the
# same files):
#   rtrace convert    rtrace convert --to callgrind -o OUT TRACE
#   heaptrack_print   heaptrack_print -f DATA -F OUT (stacks with their
#                     allocation counts) with its text report off
# and prints the medians of time and peak RSS, their ratios and the
# profiles' totals
# (allocation calls: callgrind_annotate's PROGRAM TOTALS for rtrace's,
# the sum of the flame-graph stacks' counts for heaptrack's).
#
# Environment:
#   RTRACE=path   rtrace binary (default build/rtrace)
#   RUNS=n        measured runs per tool, median reported (3)
#   PY=path       python interpreter (/usr/bin/python3)
#   PY_SCALE=x    bench/py_workload.py scale (1.0; --quick: 0.2)
#   IDLE_WAIT=s   wait up to s seconds for an idle CPU before each run (900)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/profile
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$root/build/rtrace}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	PY_SCALE=${PY_SCALE:-0.2}
fi
RUNS=${RUNS:-3}
PY_SCALE=${PY_SCALE:-1.0}
PY=${PY:-/usr/bin/python3}
need_tools "$RTRACE" "$PY" heaptrack heaptrack_print callgrind_annotate /usr/bin/time
rm -rf "$out"
mkdir -p "$out/rt" "$out/ht"
export RTRACE_CACHE_DIR=$out/cache

echo "== tracing $PY bench/py_workload.py $PY_SCALE with rtrace run and heaptrack"
PYTHONMALLOC=malloc "$RTRACE" run -q -o "$out/rt" -- "$PY" "$here/py_workload.py" "$PY_SCALE" > /dev/null
(cd "$out/ht" && PYTHONMALLOC=malloc heaptrack -o "$out/ht/py" "$PY" "$here/py_workload.py" "$PY_SCALE" > /dev/null 2>&1)
trace=$(ls "$out"/rt/*.rtrace)
data=$(ls "$out"/ht/py*)

rt_cmd=("$RTRACE" convert -q --to callgrind -o "$out/rt.cg" "$trace")
ht_cmd=(heaptrack_print -f "$data" -F "$out/ht.stacks" -p 0 -a 0 -T 0)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
"${rt_cmd[@]}" # warm-up: the cache of debug files, the page cache
"${ht_cmd[@]}" > /dev/null
declare -A times mems cpus
for ((r = 0; r < RUNS; r++)); do
	for t in rtrace heaptrack; do
		wait_idle
		if [ $t = rtrace ]; then cmd=("${rt_cmd[@]}"); else cmd=("${ht_cmd[@]}"); fi
		/usr/bin/time -o "$out/time" -f "%e %M %U %S" "${cmd[@]}" > /dev/null
		read -r secs kb us ss < "$out/time"
		times[$t]+="$secs "
		mems[$t]+="$kb "
		cpus[$t]+="$(awk -v u="$us" -v s="$ss" 'BEGIN { print u + s }') "
		echo "  $t run $((r + 1)): $secs s, $kb KB peak" >&2
	done
done

med() { tr ' ' '\n' <<< "$1" | grep . | median; }
rt=$(med "${times[rtrace]}")
ht=$(med "${times[heaptrack]}")
rt_kb=$(med "${mems[rtrace]}")
ht_kb=$(med "${mems[heaptrack]}")
rt_cpu=$(med "${cpus[rtrace]}")
ht_cpu=$(med "${cpus[heaptrack]}")
rt_allocs=$(callgrind_annotate --auto=no --show=Allocs "$out/rt.cg" | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
ht_allocs=$(awk '{ s += $NF } END { print s }' "$out/ht.stacks")
printf '\n%-44s %8s %9s   %s\n' tool "median s" "peak MB" runs
printf '%-44s %8s %9s   %s\n' "rtrace convert --to callgrind" "$rt" "$((rt_kb / 1024))" "${times[rtrace]}"
printf '%-44s %8s %9s   %s\n' "heaptrack_print -F (flame-graph stacks)" "$ht" "$((ht_kb / 1024))" "${times[heaptrack]}"
awk -v a="$ht" -v b="$rt" -v am="$ht_kb" -v bm="$rt_kb" \
	'BEGIN { printf "\nheaptrack_print / rtrace convert: time %.1fx, memory %.2fx\n", a / b, am / bm }'
awk -v a="$ht_cpu" -v b="$rt_cpu" 'BEGIN { printf "CPU seconds (user + sys, medians): rtrace %s, heaptrack_print %s: %.1fx\n", b, a, a / b }'
echo "allocation calls in the profiles: rtrace $rt_allocs, heaptrack $ht_allocs"
echo "trace sizes: rtrace $(du -k "$trace" | cut -f1) KB, heaptrack $(du -k "$data" | cut -f1) KB"
