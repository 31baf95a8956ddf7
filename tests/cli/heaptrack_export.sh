# rtrace heap --heaptrack: heaptrack_print reads rtrace's export of a trace
# of tp_heapprof (binary, text, gzip-compressed) and gives the summary
# figures (allocation calls, temporary allocations, peak heap consumption,
# memory leaked) it gives on heaptrack's own recording of the program and
# that rtrace heap prints, and the same top call site by allocations.
# Skipped (77) without heaptrack_print; without heaptrack, the export is
# compared with rtrace heap only.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1
if ! command -v heaptrack_print > /dev/null; then
  echo "heaptrack_print is not installed: skipped"
  exit 77
fi

"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace | head -1)
"$RTRACE" heap "$trace" > rt.out 2> rt.err || bad "rtrace heap"
"$RTRACE" convert --to text -o text.trace "$trace" 2> conv.err || bad "rtrace convert"
"$RTRACE" heap --heaptrack="$TMP/bin.heaptrack" "$trace" 2> x1.err || bad "export of the binary trace"
"$RTRACE" heap --heaptrack="$TMP/text.heaptrack" text.trace 2> x2.err || bad "export of the text trace"
"$RTRACE" heap --heaptrack="$TMP/bin.heaptrack.gz" "$trace" 2> x3.err || bad "gzip export"
"$RTRACE" heap --heaptrack=x --collapsed=peak "$trace" > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--heaptrack with --collapsed is not a usage error"
gzip -t bin.heaptrack.gz 2> /dev/null && ok || bad "the .gz export is not gzip data"
for f in bin.heaptrack text.heaptrack bin.heaptrack.gz; do
  heaptrack_print -f "$f" > "$f.out" 2> "$f.err" || bad "heaptrack_print $f: $(head -3 "$f.err")"
done
refs="rt.out"
if command -v heaptrack > /dev/null; then
  heaptrack -o "$TMP/ht" "$PROGRAMS/tp_heapprof" > heaptrack.log 2>&1 || bad "heaptrack tp_heapprof"
  heaptrack_print -f "$(ls "$TMP"/ht.* | head -1)" > ht.out 2>&1 || bad "heaptrack_print on heaptrack's file"
  refs="rt.out ht.out"
fi

value() { sed -nE "s/^$1: ([^ ]+).*/\1/p" "$2"; }
for label in 'calls to allocation functions' 'temporary memory allocations' \
  'peak heap memory consumption' 'total memory leaked'; do
  for ref in $refs; do
    want=$(value "$label" "$ref")
    for f in bin.heaptrack text.heaptrack bin.heaptrack.gz; do
      got=$(value "$label" "$f.out")
      [ -n "$want" ] && [ "$want" = "$got" ] && ok || bad "$label: $ref '$want', heaptrack_print on $f '$got'"
    done
  done
done

# the top entry of "MOST CALLS TO ALLOCATION FUNCTIONS": its count and function
top() { sed -n '/^MOST CALLS TO ALLOCATION FUNCTIONS/{n;p;n;p;q}' "$1"; }
top bin.heaptrack.out > top.rt
[ "$(sed -n 1p top.rt)" = "20 calls to allocation functions with 81.92K peak consumption from" ] &&
  [ "$(sed -n 2p top.rt)" = "peak" ] && ok || bad "top allocation site: $(cat top.rt)"
top text.heaptrack.out | cmp -s - top.rt && ok || bad "text trace's top site differs"
if [ -f ht.out ]; then
  top ht.out | cmp -s - top.rt && ok || bad "top site: heaptrack's '$(top ht.out | tr '\n' '|')', rtrace's '$(tr '\n' '|' < top.rt)'"
fi
rtop=$(sed -n '/^MOST CALLS TO ALLOCATION FUNCTIONS/{n;p;q}' rt.out)
case "$rtop" in "20 calls to allocation functions"*) ok ;; *) bad "rtrace heap's top site: $rtop" ;; esac
finish
