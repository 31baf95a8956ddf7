# The Callgrind allocation profile's heap events: Temporary and PeakBytes
# of `rtrace convert --to callgrind` are rtrace heap's figures. On
# tp_heapprof (21 temporary allocations, a peak of P + 3500 + 81920
# bytes), callgrind_annotate's PROGRAM TOTALS for Temporary and PeakBytes
# equal rtrace heap's summary; peak() holds its 81,920 bytes self and
# main inclusive; temporaries() its 10 temporary allocations; the same
# profile streamed from the binary trace and from its text conversion.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
command -v callgrind_annotate > /dev/null || { echo "needs callgrind_annotate" >&2; exit 1; }
cd "$TMP" || exit 1

"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run tp_heapprof"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace 2>/dev/null | head -1)
[ -n "$trace" ] || { bad "no trace written"; finish; exit; }
"$RTRACE" heap "$trace" > heap.out || bad "rtrace heap"
"$RTRACE" convert --to callgrind -o heap.cg "$trace" 2> conv.err && ok || bad "convert: $(cat conv.err)"

fig() { sed -nE "s/^$1: ([0-9]+).*/\1/p" heap.out; }
exact() { sed -nE "s/^$1: .*\(([0-9]+) bytes.*/\1/p" heap.out; }
# total EVENT: callgrind_annotate's PROGRAM TOTALS of one event
total() {
  callgrind_annotate --auto=no --show="$1" heap.cg | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}
# row FN EVENT [OPTIONS]: callgrind_annotate's number for function FN
row() {
  local fn=$1 ev=$2
  shift 2
  callgrind_annotate --auto=no --threshold=100 --show="$ev" "$@" heap.cg |
    grep ":$fn \[" | head -1 | sed 's/([^)]*)//g' | awk '{ gsub(",", "", $1); print $1 }'
}

grep -q '^events: Allocs Bytes Leaks LeakedBytes Temporary PeakBytes$' heap.cg && ok || bad "events line: $(grep '^events:' heap.cg)"
grep -q '^event: Temporary : temporary allocations' heap.cg && ok || bad "Temporary's long name"
grep -q '^event: PeakBytes : bytes live at the peak' heap.cg && ok || bad "PeakBytes' long name"
temp=$(fig 'temporary memory allocations')
peak=$(exact 'peak heap memory consumption')
[ "$temp" = 21 ] && [ "$peak" -gt 85420 ] && ok || bad "rtrace heap's figures: $temp, $peak"
[ "$(total Temporary)" = "$temp" ] && ok || bad "Temporary total $(total Temporary) = rtrace heap's $temp"
[ "$(total PeakBytes)" = "$peak" ] && ok || bad "PeakBytes total $(total PeakBytes) = rtrace heap's $peak"
[ "$(total Allocs)" = "$(fig 'calls to allocation functions')" ] && ok || bad "Allocs total $(total Allocs)"

# self at the sites, inclusive up to main
[ "$(row peak PeakBytes)" = 81920 ] && ok || bad "peak() self PeakBytes '$(row peak PeakBytes)'"
[ "$(row temporaries Temporary)" = 10 ] && ok || bad "temporaries() self Temporary '$(row temporaries Temporary)'"
[ "$(row grow Temporary)" = 9 ] && ok || bad "grow() self Temporary '$(row grow Temporary)'"
[ "$(row leaks PeakBytes --inclusive=yes)" = 3500 ] && ok || bad "leaks() PeakBytes '$(row leaks PeakBytes --inclusive=yes)'"
main=$(row main PeakBytes --inclusive=yes)
[ "$main" = $((81920 + 3500)) ] && ok || bad "main's inclusive PeakBytes '$main' = peak() + leaks()"
main=$(row main Temporary --inclusive=yes)
[ "$main" = 20 ] && ok || bad "main's inclusive Temporary '$main' (all but the pool's release)"

# the text trace streams to the same totals
"$RTRACE" convert --to text -o trace.txt "$trace"
"$RTRACE" convert --to callgrind -o text.cg trace.txt 2> conv.err && ok || bad "convert the text trace: $(cat conv.err)"
[ "$(grep '^totals:' text.cg)" = "$(grep '^totals:' heap.cg)" ] && ok ||
  bad "text trace totals '$(grep '^totals:' text.cg)' = binary's '$(grep '^totals:' heap.cg)'"
finish
