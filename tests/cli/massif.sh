# rtrace heap --massif: valgrind massif's output of a trace, read by the
# real consumer, ms_print, and compared with massif's own run of the same
# deterministic program (tp_heapprof): the peak snapshot's heap is the
# trace's peak (rtrace heap's exact figure, and massif's mem_heap_B), its
# tree names the allocating functions with their bytes as massif's does.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
need_valgrind
cd "$TMP" || exit 1

"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run tp_heapprof"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace 2>/dev/null | head -1)
[ -n "$trace" ] || { bad "no trace written"; finish; exit; }
"$RTRACE" heap "$trace" > heap.out || bad "rtrace heap"
peak=$(sed -nE 's/^peak heap memory consumption: .*\(([0-9]+) bytes.*/\1/p' heap.out)

"$RTRACE" heap --massif --time-unit=i -o rt.massif "$trace" 2> massif.err && ok || bad "rtrace heap --massif exits 0"
ms_print rt.massif > rt.ms_print 2> ms_print.err && ok || bad "ms_print reads the export: $(head -3 ms_print.err)"
grep -q '^Command: *.*/tp_heapprof$' rt.ms_print && ok || bad "ms_print: the traced command"
grep -qE '^ Detailed snapshots: \[.*[0-9]+ \(peak\)' rt.ms_print && ok || bad "ms_print: a peak snapshot"
grep -qE '^ Detailed snapshots: \[[0-9]+, ' rt.ms_print && ok || bad "ms_print: detailed snapshots besides the peak"

# massif-visualizer's stricter reading (its parserprivate.cpp): one desc,
# cmd and time_unit line each, "#-----------" around "snapshot=N", and
# each tree node indented by exactly its depth, "nK: BYTES LABEL", its K
# children following; a child holds no more than its parent
strict() {
  awk 'function fail(m) { print FILENAME ":" NR ": " m; bad = 1; exit 1 }
    NR == 1 { if ($0 !~ /^desc: /) fail("desc"); next }
    NR == 2 { if ($0 !~ /^cmd: /) fail("cmd"); next }
    NR == 3 { if ($0 !~ /^time_unit: (i|ms|B)$/) fail("time_unit"); next }
    tree {
      match($0, /^ */)
      if (RLENGTH != level || !match($0, /^ *n[0-9]+: [0-9]+ ./)) fail("tree node at depth " level)
      split(substr($0, level + 2), f, /[: ]+/)
      if (level && f[2] > bytes[level - 1]) fail("a child above its parent")
      bytes[level] = f[2]; rem[level]--
      if (f[1] > 0) { rem[++level] = f[1]; next }
      while (level > 0 && rem[level] == 0) level--
      if (level == 0 && rem[0] == 0) { tree = 0; level = 0 }
      next
    }
    /^heap_tree=(detailed|peak)$/ { tree = 1; level = 0; rem[0] = 1; next }
    /^snapshot=/ { if (prev != "#-----------") fail("snapshot separator") }
    { prev = $0 }
    END { if (!bad && tree) fail("unfinished tree") }' "$1"
}
strict rt.massif && ok || bad "massif-visualizer's reading"

# the peak snapshot: massif's fields, its heap the trace's peak
peak_field() { # FIELD FILE: FIELD= of the heap_tree=peak snapshot
  awk -v f="$1" -F= '$1 == "snapshot" { delete v } { v[$1] = $2 } $0 == "heap_tree=peak" { print v[f]; exit }' "$2"
}
[ -n "$peak" ] && [ "$(peak_field mem_heap_B rt.massif)" = "$peak" ] && ok ||
  bad "peak snapshot: $(peak_field mem_heap_B rt.massif) bytes, rtrace heap's peak $peak"
[ "$(peak_field mem_heap_extra_B rt.massif)" = 0 ] && [ "$(peak_field mem_stacks_B rt.massif)" = 0 ] && ok ||
  bad "no extra heap, no stacks"
peak_max=$(awk -F= '$1 == "mem_heap_B" && $2 > m { m = $2 } END { print m + 0 }' rt.massif)
[ "$peak_max" = "$peak" ] && ok || bad "no snapshot above the peak: $peak_max"
n=$(grep -c '^snapshot=' rt.massif)
[ "$n" -gt 10 ] && [ "$n" -le 103 ] && ok || bad "massif's snapshot count: $n"
awk -F= '$1 == "time" { if ($2 < t) exit 1; t = $2 }' rt.massif && ok || bad "times in order"
[ "$(awk -F= '$1 == "time" { t = $2 } END { print t }' rt.massif)" = 103 ] && ok ||
  bad "time unit i: the last snapshot at the 103rd call (53 allocations, 50 releases)"

# the peak tree: the allocating functions, then below the threshold
tree() { # the peak tree's lines, addresses dropped
  awk '$0 == "heap_tree=peak" { p = 1; next } p && /^#/ { exit } p' "$1" | sed -E 's/ 0x[0-9A-F]+: / /'
}
tree rt.massif > rt.tree
sed -n 1p rt.tree | grep -qx "n4: $peak (heap allocation functions) malloc/new/new\[\], --alloc-fns, etc." && ok ||
  bad "peak tree root: $(sed -n 1p rt.tree)"
grep -qE '^  n0: 81920 main \(tp_heapprof.c:[0-9]+\)$' rt.tree && ok || bad "peak() called by main, the tree cut there"
grep -qE '^ n1: 2000 leaks \(tp_heapprof.c:[0-9]+\)$' rt.tree && ok || bad "leaks() holds 2000 bytes"
# leaks' 1000 and 500, temporaries' and interleaved's two places at 0
grep -qx " n0: 1500 in 5 places, all below massif's threshold (1.00%)" rt.tree && ok || bad "1000 + 500 below 1%"
grep -q -- '->.*peak (tp_heapprof.c:' rt.ms_print && ok || bad "ms_print shows peak()"

# the same export from the text trace
"$RTRACE" convert --to text "$trace" > trace.txt
"$RTRACE" heap --massif --time-unit=i trace.txt | sed 1d > txt.massif
sed 1d rt.massif | cmp -s - txt.massif && ok || bad "text and binary traces give the same massif file"
"$RTRACE" heap --massif --time-unit=B -o b.massif "$trace" && ms_print b.massif > /dev/null && ok || bad "time unit B"
bytes=$(sed -nE 's/^bytes allocated in total: .*\(([0-9]+) bytes.*/\1/p' heap.out)
leaked=$(sed -nE 's/^total memory leaked: .*\(([0-9]+) bytes.*/\1/p' heap.out)
[ "$(awk -F= '$1 == "time" { t = $2 } END { print t }' b.massif)" = $((bytes * 2 - leaked)) ] && ok ||
  bad "time unit B: the last snapshot after the bytes allocated and freed"
"$RTRACE" heap --massif "$trace" | grep -qx 'time_unit: ms' && ok || bad "a timed trace: ms"
"$RTRACE" heap --time-unit=i "$trace" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "--time-unit without --massif: exit 2"
"$RTRACE" heap --massif --time-unit=s "$trace" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "bad time unit: exit 2"

# a longer trace: snapshots culled to massif's bounds, spread over time,
# every 10th detailed, the peak still exact
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_churn" 20000 > /dev/null 2> churn.err || bad "rtrace run tp_churn"
churn=$(ls "$TMP"/tp_churn-*.rtrace 2>/dev/null | head -1)
"$RTRACE" heap "$churn" > churn.out
"$RTRACE" heap --massif --time-unit=i -o churn.massif "$churn" && ms_print churn.massif > churn.ms_print && ok ||
  bad "ms_print reads a culled export"
strict churn.massif && ok || bad "massif-visualizer's reading of a culled export"
n=$(grep -c '^snapshot=' churn.massif)
[ "$n" -ge 50 ] && [ "$n" -le 103 ] && ok || bad "culled to $n snapshots"
d=$(grep -c '^heap_tree=detailed' churn.massif)
[ "$d" -ge 4 ] && [ "$d" -le 10 ] && ok || bad "$d detailed snapshots"
[ "$(peak_field mem_heap_B churn.massif)" = "$(sed -nE 's/^peak heap memory consumption: .*\(([0-9]+) bytes.*/\1/p' churn.out)" ] &&
  ok || bad "culled export: the peak"
awk -F= '$1 == "time" { if ($2 < t) exit 1; t = $2 } END { exit t < 40000 }' churn.massif && ok ||
  bad "culled export: times in order, up to the last call"

# massif's own run: the same peak, the same allocating functions and bytes
valgrind --tool=massif --peak-inaccuracy=0.0 --massif-out-file=vg.massif "$PROGRAMS/tp_heapprof" > vg.log 2>&1 ||
  bad "massif tp_heapprof"
[ "$(peak_field mem_heap_B vg.massif)" = "$peak" ] && ok ||
  bad "massif's peak $(peak_field mem_heap_B vg.massif), rtrace's $peak"
tree vg.massif > vg.tree
diff <(grep 'tp_heapprof.c' vg.tree) <(grep 'tp_heapprof.c' rt.tree) > tree.diff && ok ||
  bad "the program's frames in the peak tree differ from massif's: $(cat tree.diff)"
# the whole tree, but the names of frames without debug information
# (massif's ??? may be a symbol to rtrace's resolver)
diff <(sed -E 's/[^ ]+ \(in /(in /' vg.tree) <(sed -E 's/[^ ]+ \(in /(in /' rt.tree) > tree.diff && ok ||
  bad "the peak tree differs from massif's: $(cat tree.diff)"
finish
