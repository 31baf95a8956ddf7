#!/usr/bin/env bash
# Speed of `rtrace annotate` next to callgrind_annotate (Valgrind 3.19) on
# one big Callgrind profile, with the same options. See bench/README.md,
# "Callgrind".
#
#   bench/annotate.sh            # a ~140 MB profile, RUNS=3
#   bench/annotate.sh --quick    # a ~20 MB profile, 1 run
#
# The profile: Callgrind on Debian's python3 running bench/py_workload.py
# with --dump-instr=yes --collect-jumps=yes --compress-pos=no and
# --separate-callers=SEP_CALLERS (each chain of callers is a function
# context of its own: tens of thousands of functions with long names, as
# in a big program). Writing it takes about 35 s; it is kept in
# bench/out/annotate/ for the next runs with the same settings.
#
# For each option set, RUNS times, the two tools take turns:
#   callgrind_annotate OPTIONS PROFILE > FILE
#   rtrace annotate OPTIONS PROFILE > FILE
# and the medians are printed side by side with their ratio and peak RSS.
# The outputs must be the same: rtrace's byte for byte with callgrind_
# annotate's where ties are broken by name (tests/cli/
# callgrind_annotate_ties.sh; callgrind_annotate orders ties by Perl's hash
# order, which changes from run to run), and line for line with
# callgrind_annotate's own.
#
# Environment:
#   RTRACE=path      rtrace binary (default build/rtrace)
#   RUNS=n           measured runs per tool and option set (3)
#   OPTIONS="a;b"    option sets, separated by ';' (default: none, then
#                    "--inclusive=yes --tree=both")
#   PY=path          python interpreter (/usr/bin/python3)
#   PY_SCALE=x       bench/py_workload.py scale (0.2; --quick: 0.05)
#   SEP_CALLERS=n    Callgrind's --separate-callers (30; --quick: 8)
#   IDLE_WAIT=s      wait up to s seconds for an idle CPU before each run (900)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/annotate
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$root/build/rtrace}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	PY_SCALE=${PY_SCALE:-0.05}
	SEP_CALLERS=${SEP_CALLERS:-8}
fi
RUNS=${RUNS:-3}
PY_SCALE=${PY_SCALE:-0.2}
SEP_CALLERS=${SEP_CALLERS:-30}
PY=${PY:-/usr/bin/python3} # Debian's, not a wrapper script on PATH
OPTIONS=${OPTIONS-;--inclusive=yes --tree=both}
need_tools "$RTRACE" "$PY" valgrind callgrind_annotate perl /usr/bin/time
CA=$(command -v callgrind_annotate)
mkdir -p "$out"

profile=$out/python-s$PY_SCALE-c$SEP_CALLERS.cg
if [ ! -s "$profile" ]; then
	echo "== writing the profile (valgrind --tool=callgrind on $PY py_workload.py $PY_SCALE)"
	start=$EPOCHREALTIME
	valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --compress-pos=no \
		--separate-callers="$SEP_CALLERS" --callgrind-out-file="$profile.tmp" \
		"$PY" "$here/py_workload.py" "$PY_SCALE" > /dev/null 2> "$out/valgrind.log" ||
		{ tail "$out/valgrind.log" >&2; exit 1; }
	mv "$profile.tmp" "$profile"
	awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "   %.0f s\n", b - a }'
fi
size=$(wc -c < "$profile")
printf '== profile: %s (%.1f MB, %s lines, %s fn= lines)\n' "$profile" "$(awk -v s="$size" 'BEGIN { print s / 1e6 }')" \
	"$(wc -l < "$profile")" "$(grep -c '^fn=' "$profile")"

# callgrind_annotate with its ties broken by name: the byte-for-byte reference
REF=$out/callgrind_annotate.ties
bash "$root/tests/cli/callgrind_annotate_ties.sh" "$REF" "$CA"

# measure OUT COMMAND...: "seconds peak-KB" of one run, its output in OUT
measure() {
	local o=$1 start
	shift
	start=$EPOCHREALTIME
	/usr/bin/time -f %M -o "$out/rss" "$@" > "$o" 2> /dev/null
	awk -v a="$start" -v b="$EPOCHREALTIME" -v m="$(cat "$out/rss")" 'BEGIN { printf "%.3f %d\n", b - a, m }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

status=0
IFS=';' read -r -a optsets <<< "$OPTIONS"
[ ${#optsets[@]} -gt 0 ] || optsets=("")
printf '\n%-40s %12s %12s %9s %10s %10s\n' options "callgrind_a." "rtrace" ratio "RSS c_a." "RSS rtrace"
for opts in "${optsets[@]}"; do
	read -r -a o <<< "$opts"
	# untimed: the outputs to compare (and the page cache warmed)
	perl "$REF" ${o[@]+"${o[@]}"} "$profile" > "$out/ref.txt" 2> /dev/null
	"$CA" ${o[@]+"${o[@]}"} "$profile" 2> /dev/null | sort > "$out/ca.sorted"
	"$RTRACE" annotate -q ${o[@]+"${o[@]}"} "$profile" > "$out/rtrace.txt"
	same=identical
	cmp -s "$out/ref.txt" "$out/rtrace.txt" || same="DIFFERENT (see $out/ref.txt, $out/rtrace.txt)"
	sort "$out/rtrace.txt" | cmp -s - "$out/ca.sorted" || same="DIFFERENT from callgrind_annotate's lines"
	[ "$same" = identical ] || status=1
	ca=() rt=() ca_rss=0 rt_rss=0
	for ((r = 0; r < RUNS; r++)); do
		wait_idle
		read -r t m < <(measure "$out/ca.txt" "$CA" ${o[@]+"${o[@]}"} "$profile")
		ca+=("$t")
		ca_rss=$m
		wait_idle
		read -r t m < <(measure "$out/rtrace.txt" "$RTRACE" annotate -q ${o[@]+"${o[@]}"} "$profile")
		rt+=("$t")
		rt_rss=$m
	done
	mc=$(printf '%s\n' "${ca[@]}" | median)
	mr=$(printf '%s\n' "${rt[@]}" | median)
	printf '%-40s %10.2f s %10.3f s %8.1fx %7d MB %7d MB\n' "${opts:-(none)}" "$mc" "$mr" \
		"$(awk -v a="$mc" -v b="$mr" 'BEGIN { print a / b }')" $((ca_rss / 1024)) $((rt_rss / 1024))
	echo "   runs: callgrind_annotate ${ca[*]}; rtrace ${rt[*]}; outputs $same"
done
exit $status
