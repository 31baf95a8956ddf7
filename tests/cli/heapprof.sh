# rtrace heap on a program of known heap behaviour (tp_heapprof): the
# summary's figures, the same from the binary trace and from its text
# conversion, the call sites' lists, and the collapsed stacks of every
# cost type summing to the summary's totals. heapprof_heaptrack.sh
# compares the figures with heaptrack_print's.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1

"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run tp_heapprof"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace 2>/dev/null | head -1)
[ -n "$trace" ] || { bad "no trace written"; finish; exit; }

"$RTRACE" heap "$trace" > heap.out 2> heap.err && ok || bad "rtrace heap exits 0"
# summary figure: the number after "LABEL: "
fig() { sed -nE "s/^$1: ([0-9]+).*/\1/p" "${2:-heap.out}"; }
exact() { sed -nE "s/^$1: .*\(([0-9]+) bytes.*/\1/p" "${2:-heap.out}"; }
# the emergency pool of libstdc++: the trace's first allocation
pool=$("$RTRACE" convert --to text "$trace" | sed -nE 's/^1\. .*malloc\(([0-9]+)\).*/\1/p')
[ -n "$pool" ] && ok || bad "the first allocation is libstdc++'s pool"
[ "$(fig 'calls to allocation functions')" = 53 ] && ok || bad "53 allocation calls: $(fig 'calls to allocation functions')"
[ "$(fig 'temporary memory allocations')" = 21 ] && ok || bad "21 temporary: $(fig 'temporary memory allocations')"
[ "$(exact 'peak heap memory consumption')" = $((${pool:-0} + 3500 + 81920)) ] && ok ||
  bad "peak: $(exact 'peak heap memory consumption'), pool ${pool:-?}"
[ "$(exact 'total memory leaked')" = 3500 ] && ok || bad "leaked: $(exact 'total memory leaked')"
grep -q '^total memory leaked: 3.50K (3500 bytes in 3 blocks)' heap.out && ok || bad "leaked blocks"
grep -q '^leak check: definitely lost 3500 bytes in 3 blocks, indirectly lost 0 bytes' heap.out && ok ||
  bad "the leak check's verdicts"

# the lists, resolved: who held the peak, who allocated, what was temporary, what leaked
sed -n '/^PEAK MEMORY CONSUMERS/,/^MOST CALLS/p' heap.out | grep -A1 -m1 '^81.92K peak consumption from$' |
  grep -q '^peak (tp_heapprof.c:' && ok || bad "peak held by peak()"
sed -n '/^MOST CALLS/,/^MOST TEMPORARY/p' heap.out | grep -q '^10 calls to allocation functions with 0B peak consumption from$' &&
  ok || bad "interleaved's two sites merged"
sed -n '/^MOST TEMPORARY/,/^MEMORY LEAKS/p' heap.out | grep -A1 -m1 'from$' | grep -q '^temporaries (tp_heapprof.c:' &&
  ok || bad "temporaries() first among temporary allocations"
sed -n '/^MEMORY LEAKS/,/^total runtime/p' heap.out | grep -c ' leaked over 1 calls from$' | grep -qx 3 && ok || bad "3 leak sites"
"$RTRACE" heap --stacks -n 1 "$trace" | grep -c 'from$' | grep -qx 4 && ok || bad "-n 1: one site per list"

# the text trace gives the same figures (its leak check totals are
# comments the text reader does not take back)
"$RTRACE" convert --to text "$trace" > trace.txt
"$RTRACE" heap trace.txt > heap_txt.out && ok || bad "rtrace heap on a text trace"
diff <(sed -n '/^calls to/,/^bytes allocated/p' heap.out) <(sed -n '/^calls to/,/^bytes allocated/p' heap_txt.out) > /dev/null && ok ||
  bad "text and binary traces differ"

# collapsed stacks: outermost first, weights summing to the totals
total() { # COST: the summary's total of that cost
  case $1 in
  allocations) fig 'calls to allocation functions' ;;
  temporary) fig 'temporary memory allocations' ;;
  peak) exact 'peak heap memory consumption' ;;
  leaked) exact 'total memory leaked' ;;
  bytes) exact 'bytes allocated in total' ;;
  esac
}
for cost in allocations temporary peak leaked bytes; do
  "$RTRACE" heap --collapsed="$cost" "$trace" > "c.$cost" || bad "--collapsed=$cost"
  sum=$(awk '{ s += $NF } END { print s + 0 }' "c.$cost")
  [ "$sum" = "$(total "$cost")" ] && ok || bad "$cost: collapsed sum $sum, total $(total "$cost")"
  awk 'NF < 2 || $NF !~ /^[0-9]+$/ { exit 1 }' "c.$cost" && ok || bad "$cost: lines of 'stack weight'"
done
grep -q '^_start;.*;main;leaks 2000$' c.leaked && ok || bad "leaked stack outermost first"
grep -q ';main;peak 20$' c.allocations && ok || bad "allocations of peak()"
"$RTRACE" heap --collapsed=peak -o out.folded "$trace" && cmp -s out.folded c.peak && ok || bad "-o FILE"
"$RTRACE" heap --collapsed=nonsense "$trace" 2> /dev/null; [ $? = 2 ] && ok || bad "bad cost: exit 2"
finish
