# rtrace heap against heaptrack on the same program (tp_heapprof): the
# summary figures heaptrack_print gives on heaptrack's own recording
# (allocation calls, temporary allocations, peak heap consumption, memory
# leaked) are rtrace heap's on rtrace run's trace. Skipped (77) without
# heaptrack.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1
if ! command -v heaptrack > /dev/null || ! command -v heaptrack_print > /dev/null; then
  echo "heaptrack is not installed: skipped"
  exit 77
fi

heaptrack -o "$TMP/ht" "$PROGRAMS/tp_heapprof" > heaptrack.log 2>&1 || bad "heaptrack tp_heapprof"
ht=$(ls "$TMP"/ht.* 2>/dev/null | head -1)
heaptrack_print -f "$ht" > ht.out 2>&1 || bad "heaptrack_print"
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run"
"$RTRACE" heap "$TMP"/tp_heapprof-*.rtrace > rt.out 2> rt.err || bad "rtrace heap"

# heaptrack_print: "LABEL: VALUE (rate/s)" or "LABEL: VALUE"; rtrace heap
# prints heaptrack's formatted value in the same place
value() { sed -nE "s/^$1: ([^ ]+).*/\1/p" "$2"; }
for label in 'calls to allocation functions' 'temporary memory allocations' \
  'peak heap memory consumption' 'total memory leaked'; do
  h=$(value "$label" ht.out)
  r=$(value "$label" rt.out)
  [ -n "$h" ] && [ "$h" = "$r" ] && ok || bad "$label: heaptrack_print '$h', rtrace heap '$r'"
done
finish
