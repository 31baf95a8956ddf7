# rtrace heap --diff on two runs of one program (tp_heapdiff 1 and 3):
# the summary's deltas and the call sites' changes, matched across the
# two processes' addresses (ASLR) and two builds by resolved stack; --fail-if-grown's
# exit status; the difffolded output. With heaptrack installed, the
# deltas are heaptrack_print -d's on heaptrack's recordings of the same
# two runs (else that part is said skipped).
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1

for k in 1 3; do
  mkdir "r$k"
  "$RTRACE" run -o "$TMP/r$k" -- "$PROGRAMS/tp_heapdiff" $k 2> "run$k.err" || bad "rtrace run tp_heapdiff $k"
done
old=$(ls r1/*.rtrace | head -1) new=$(ls r3/*.rtrace | head -1)
"$RTRACE" heap --diff "$old" "$new" > diff.out 2> diff.err && ok || bad "rtrace heap --diff exits 0"
value() { sed -nE "s/^$1: ([^ ]+).*/\1/p" "$2"; }
# tp_heapdiff K: 2K + 10K + 8K allocations, + 3 (K = 1) or + 1 (K > 1)
[ "$(value 'calls to allocation functions' diff.out)" = 36 ] && ok || bad "allocations +36: $(value 'calls to allocation functions' diff.out)"
[ "$(value 'total memory leaked' diff.out)" = 2.30K ] && ok || bad "leaked +2.30K"
grep -q '^peak heap memory consumption: 67.54K (106.47K -> 174.01K)$' diff.out && ok || bad "peak's delta, before and after"
# the sites, matched by stack: held() grew by 16 calls, only_one() left, only_more() came
sed -n '/^MOST CALLS/,/^MOST TEMPORARY/p' diff.out > calls.out
grep -A1 '^16 (8 -> 24) calls to allocation functions from$' calls.out | grep -q '^held (tp_heapdiff.c:' && ok || bad "held: +16"
grep -A1 '^-3 (3 -> 0) calls' calls.out | grep -q '^only_one ' && ok || bad "only_one: -3"
grep -A1 '^1 (0 -> 1) calls' calls.out | grep -q '^only_more ' && ok || bad "only_more: +1"
grep -q 'stable' calls.out && bad "stable() did not change: not listed" || ok
# sorted by the size of the change: 20, 16, -3, 2, 1
[ "$(grep -E '^-?[0-9]+ \(' calls.out | cut -d' ' -f1 | tr '\n' ' ')" = "20 16 -3 2 1 " ] && ok ||
  bad "order by |change|: $(grep -E '^-?[0-9]+ \(' calls.out | cut -d' ' -f1 | tr '\n' ' ')"
"$RTRACE" heap --diff -n 1 "$old" "$new" | grep -c ' from$' | grep -qx 4 && ok || bad "-n 1: one site per list"

# another build of the same program (its functions elsewhere): nothing changed
mkdir rb
"$RTRACE" run -o "$TMP/rb" -- "$(dirname "$PROGRAMS/x")/build_b/tp_heapdiff" 1 2> runb.err || bad "rtrace run build_b"
"$RTRACE" heap --diff --stacks "$old" rb/*.rtrace > same.out && ok || bad "--diff between builds"
[ "$(grep -c ' from$' same.out)" = 0 ] && ok || bad "between builds: no site changed: $(grep -c ' from$' same.out)"
grep -q '^calls to allocation functions: 0 (27 -> 27)$' same.out && ok || bad "between builds: 27 calls each"

# --fail-if-grown: 3 when a total grew past the threshold, 0 otherwise
"$RTRACE" heap --diff --fail-if-grown=peak:10% "$old" "$new" > /dev/null 2> grown.err; rc=$?
[ $rc = 3 ] && ok || bad "peak grew by 63%: exit 3, got $rc"
grep -q 'peak consumption grew by 67.54K' grown.err && ok || bad "what grew is said"
"$RTRACE" heap --diff --fail-if-grown=peak:70% --fail-if-grown=leaked:3K "$old" "$new" > /dev/null 2>&1 && ok ||
  bad "growth within the thresholds: exit 0"
"$RTRACE" heap --diff --fail-if-grown=allocations:0 "$new" "$old" > /dev/null 2>&1 && ok || bad "shrank: exit 0"
"$RTRACE" heap --diff --fail-if-grown=allocations:35 "$old" "$new" > /dev/null 2>&1; [ $? = 3 ] && ok || bad "36 > 35: exit 3"
"$RTRACE" heap --diff --fail-if-grown=size:1 "$old" "$new" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "bad cost: exit 2"
"$RTRACE" heap --fail-if-grown=peak:1 "$new" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "without --diff: exit 2"

# flamegraph.pl's difffolded input: "stack before after"
"$RTRACE" heap --diff --collapsed=allocations "$old" "$new" > folded.out && ok || bad "--diff --collapsed"
grep -qE '^_start in tp_heapdiff;.*;main \(tp_heapdiff.c:[0-9]+\) in tp_heapdiff;held \(tp_heapdiff.c:[0-9]+\) in tp_heapdiff 8 24$' folded.out && ok || bad "held: 8 24"
grep -qE ';only_one \(tp_heapdiff.c:[0-9]+\) in tp_heapdiff 3 0$' folded.out && ok || bad "only_one: 3 0"
awk '{ b += $(NF-1); a += $NF } END { exit !(b == 27 && a == 63) }' folded.out && ok || bad "columns sum to the totals"

if command -v heaptrack > /dev/null && command -v heaptrack_print > /dev/null; then
  heaptrack -o "$TMP/ht1" "$PROGRAMS/tp_heapdiff" 1 > log1 2>&1 || bad "heaptrack tp_heapdiff 1"
  heaptrack -o "$TMP/ht3" "$PROGRAMS/tp_heapdiff" 3 > log3 2>&1 || bad "heaptrack tp_heapdiff 3"
  heaptrack_print -d "$(ls ht1.* | head -1)" -f "$(ls ht3.* | head -1)" > htd.out 2>&1 || bad "heaptrack_print -d"
  for label in 'calls to allocation functions' 'temporary memory allocations' \
    'peak heap memory consumption' 'total memory leaked'; do
    h=$(value "$label" htd.out) r=$(value "$label" diff.out)
    [ -n "$h" ] && [ "$h" = "$r" ] && ok || bad "$label: heaptrack_print -d '$h', rtrace heap --diff '$r'"
  done
else
  echo "heaptrack is not installed: the comparison with heaptrack_print -d is skipped"
fi
finish
