# rtrace heap --series and --histogram: the series' figures agree with
# rtrace heap's summary whatever the number of buckets (merged pairwise as
# the run outgrows them: allocations and frees sum to the totals, the
# highest bucket reaches the peak, the last one holds the leaks), on a
# timed trace and on an untimed text one; the exact histogram is
# heaptrack_print --print-histogram's on heaptrack's own recording of the
# same program (the rest runs without heaptrack, then 77 says it was not
# there); bad values are usage errors.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run tp_heapprof"
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_churn" 20000 > /dev/null 2>> run.err || bad "rtrace run tp_churn"
hp=$(ls "$TMP"/tp_heapprof-*.rtrace)
churn=$(ls "$TMP"/tp_churn-*.rtrace)
"$RTRACE" convert -o churn.txt "$churn" 2>> run.err || bad "convert to text"
sed -i -E 's/^([0-9]+\. )(\[[^]]*\] )?/\1/' churn.txt # no times: the axis is block events

summary() { sed -nE "s/^$1: [^(]*\(([0-9]+) bytes.*/\1/p;t;s/^$1: ([0-9]+).*/\1/p" "$2" | tail -1; }
# consistent TRACE BUCKETS: the series' sums against rtrace heap's summary
consistent() {
  "$RTRACE" heap --no-resolve "$1" > sum.out 2>&1 || bad "rtrace heap $1"
  "$RTRACE" heap --no-resolve --series --buckets="$2" "$1" > series.out 2>&1 || bad "--series $1"
  calls=$(summary 'calls to allocation functions' sum.out)
  peak=$(summary 'peak heap memory consumption' sum.out)
  leaked=$(summary 'total memory leaked' sum.out)
  frees=$(sed -nE 's/.*, ([0-9]+) frees$/\1/p' sum.out)
  got=$(awk '!/^#/ && $1 ~ /^[0-9]+$/ { n++; a += $3; f += $4; if ($9 > m) m = $9; l = $7 }
             END { print n, a, f, m, l }' series.out)
  set -- $got
  [ "$1" -ge 1 ] && [ "$1" -le "$buckets" ] && ok || bad "$1 rows for --buckets=$buckets"
  [ "$2 $3 $4 $5" = "$calls $frees $peak $leaked" ] && ok ||
    bad "series (allocs frees peak leaked) '$2 $3 $4 $5', rtrace heap '$calls $frees $peak $leaked'"
}
for buckets in 2 7 32; do
  consistent "$hp" $buckets
  consistent "$churn" $buckets
  consistent churn.txt $buckets
done
grep -q '^# .* block events;' series.out && ok || bad "untimed trace: axis of block events"
"$RTRACE" heap --series "$hp" | grep -q '^# .* us;' && ok || bad "timed trace: axis in us"

# power-of-two ranges: the counts sum to the calls; 21 blocks of 4096
"$RTRACE" heap --histogram=pow2 "$hp" > pow2.out || bad "--histogram=pow2"
[ "$(awk '$1 ~ /^[0-9]+$/ { s += $3 } END { print s }' pow2.out)" = 53 ] && ok || bad "pow2 counts"
grep -qE '^ +4096 +8191 +21 +86016 ' pow2.out && ok || bad "pow2 range 4096"

for arg in --buckets=1 --buckets=x --histogram=log; do
  "$RTRACE" heap --series "$arg" "$hp" > /dev/null 2>&1
  [ $? -eq 2 ] && ok || bad "$arg: not a usage error"
done
"$RTRACE" heap --series --histogram=exact "$hp" > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--series with --histogram: not a usage error"

if ! command -v heaptrack > /dev/null || ! command -v heaptrack_print > /dev/null; then
  finish || exit 1
  echo "heaptrack is not installed: its histogram not compared"
  exit 77
fi
heaptrack -o "$TMP/ht" "$PROGRAMS/tp_heapprof" > heaptrack.log 2>&1 || bad "heaptrack tp_heapprof"
heaptrack_print -f "$(ls "$TMP"/ht.* | head -1)" -H ht.hist > /dev/null 2>&1 || bad "heaptrack_print -H"
"$RTRACE" heap --histogram=exact "$hp" > rt.hist || bad "--histogram=exact"
[ -s ht.hist ] && check_same "histogram: heaptrack_print -H and rtrace heap --histogram=exact" ht.hist rt.hist
finish
