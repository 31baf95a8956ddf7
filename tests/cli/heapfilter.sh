# rtrace heap's filters, applied while the trace is read, on programs of
# known behaviour: a function on the stack (tp_heapprof; with heaptrack
# installed, heaptrack_print --filter-bt-function's lists on heaptrack's
# recording), call-index and time ranges (blocks allocated in the range
# and live at its end are its leaks; earlier blocks' releases count for
# nothing), contexts (tp_context), another resource (tp_fds' descriptors),
# and every output of the command (collapsed stacks, massif) filtered.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1

"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_heapprof" 2> run.err || bad "rtrace run tp_heapprof"
trace=$(ls "$TMP"/tp_heapprof-*.rtrace | head -1)
fig() { sed -nE "s/^$1: ([0-9]+).*/\1/p" "$2"; }
exact() { sed -nE "s/^$1: .*\(([0-9]+) bytes.*/\1/p" "$2"; }
pool=$("$RTRACE" convert --to text "$trace" | sed -nE 's/^1\. .*malloc\(([0-9]+)\).*/\1/p')
summary() { # FILE: calls temporary peak leaked
  echo "$(fig 'calls to allocation functions' "$1") $(fig 'temporary memory allocations' "$1")" \
    "$(exact 'peak heap memory consumption' "$1") $(exact 'total memory leaked' "$1")"
}
expect() { # NAME EXPECTED ARGS...: rtrace heap ARGS's summary
  name=$1 want=$2
  shift 2
  "$RTRACE" heap "$@" "$trace" > f.out 2> f.err || bad "$name: exit status"
  got=$(summary f.out)
  [ "$got" = "$want" ] && ok || bad "$name: '$got', expected '$want'"
}

# a function on the stack: temporaries() made 10 blocks of 100 to 109
# bytes, each freed at once; grow() 9 allocations, each temporary
expect "temporaries()" "10 10 109 0" --filter-bt-function=temporaries
expect "grow()" "9 9 4096 0" --filter-bt-function=grow
expect "no such function" "0 0 0 0" --filter-bt-function=no_such_function
grep -q '^peak heap memory consumption: 0B (0 bytes, at call 0)$' f.out && ok || bad "no peak: no time of it"
"$RTRACE" heap --filter-bt-function=temporaries --collapsed=allocations "$trace" > c.out
[ "$(wc -l < c.out)" -ge 1 ] && ! grep -qv ';temporaries ' c.out && ok || bad "collapsed: temporaries() only"
# ranges: the pool (call 1) lives past the range 1-1: a leak of the range
expect "--calls=1-1" "1 0 $pool $pool" --calls=1-1
expect "--calls=2-" "52 20 $((3500 + 81920)) 3500" --calls=2-
expect "--time=0-" "53 21 $((pool + 3500 + 81920)) 3500" --time=0-
expect "--time=3600-" "0 0 0 0" --time=3600-
"$RTRACE" heap --massif --calls=2- "$trace" > massif.out && grep -q "^mem_heap_B=$((3500 + 81920))$" massif.out &&
  ok || bad "massif's peak is the range's"
"$RTRACE" heap --calls=5-2 "$trace" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "--calls=5-2: exit 2"
"$RTRACE" heap --time=x "$trace" > /dev/null 2>&1; [ $? = 2 ] && ok || bad "--time=x: exit 2"

# contexts: tp_context's "first" (1) made 1000 + 1000 + 3000, "second" (2) 3000 + 2000
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_context" > /dev/null 2>&1 || bad "rtrace run tp_context"
trace=$(ls "$TMP"/tp_context-*.rtrace | head -1)
expect "--context=1" "3 0 5000 5000" --context=1
expect "--context=2" "2 0 5000 5000" --context=2
expect "--context=3" "4 0 7000 7000" --context=3
expect "--context='second context'" "2 0 5000 5000" "--context=second context"
expect "--context=nameless" "0 0 0 0" --context=nameless

# another resource: the descriptors of tp_fds, one "byte" each
"$RTRACE" run -m memory,fd -o "$TMP" -- "$PROGRAMS/tp_fds" > /dev/null 2>&1
trace=$(ls "$TMP"/tp_fds-*.rtrace | head -1)
"$RTRACE" convert --to text "$trace" > fds.txt
opens=$(grep -cE '^[0-9]+\. .*<fd>\([0-9]+\) = ' fds.txt)
"$RTRACE" heap --resource=fd "$trace" > fd.out || bad "--resource=fd"
[ "$(fig 'calls to allocation functions' fd.out)" = "$opens" ] && [ "$opens" -gt 0 ] && ok ||
  bad "--resource=fd: $(fig 'calls to allocation functions' fd.out) calls, $opens opens in the trace"
grep -q '^descriptors (tp_fds.c:' fd.out && ok || bad "fd sites resolved"

# heaptrack_print --filter-bt-function on heaptrack's recording of tp_heapprof
if command -v heaptrack > /dev/null && command -v heaptrack_print > /dev/null; then
  heaptrack -o "$TMP/ht" "$PROGRAMS/tp_heapprof" > heaptrack.log 2>&1 || bad "heaptrack tp_heapprof"
  ht=$(ls "$TMP"/ht.* | head -1)
  trace=$(ls "$TMP"/tp_heapprof-*.rtrace | head -1)
  # the heaptrack export of a selection: heaptrack_print's figures are the selection's
  "$RTRACE" heap --calls=2- --heaptrack=sel.gz "$trace" && heaptrack_print -f sel.gz > sel.out 2>&1 || bad "export of --calls=2-"
  "$RTRACE" heap --calls=2- "$trace" > r.out
  value() { sed -nE "s/^$1: ([^ ]+).*/\1/p" "$2"; }
  for label in 'calls to allocation functions' 'temporary memory allocations' \
    'peak heap memory consumption' 'total memory leaked'; do
    [ "$(value "$label" sel.out)" = "$(value "$label" r.out)" ] && [ -n "$(value "$label" r.out)" ] && ok ||
      bad "--calls=2- exported, $label: heaptrack_print '$(value "$label" sel.out)', rtrace heap '$(value "$label" r.out)'"
  done
  # the first site of each list: its figure and its function
  first() { sed -n "/^$1/,\$p" "$2" | sed -n '2,3p' | sed -E 's/^([0-9][0-9.]*[KMG]?B?) .*/\1/; s/^([A-Za-z_]+).*/\1/' | tr '\n' ' '; }
  # (heaptrack_print's peak of a site is what it held at the whole
  # program's peak: the selection's own peak only for peak())
  for fn in temporaries grow peak; do
    heaptrack_print --filter-bt-function=$fn -f "$ht" > h.out 2>&1
    "$RTRACE" heap --filter-bt-function=$fn "$trace" > r.out
    titles='MOST CALLS TO ALLOCATION FUNCTIONS:MOST TEMPORARY ALLOCATIONS'
    [ $fn = peak ] && titles="PEAK MEMORY CONSUMERS:$titles"
    IFS=: read -ra list <<< "$titles"
    for title in "${list[@]}"; do
      h=$(first "$title" h.out) r=$(first "$title" r.out)
      [ -n "$h" ] && [ "$h" = "$r" ] && ok || bad "$fn, $title: heaptrack_print '$h', rtrace heap '$r'"
    done
  done
else
  echo "heaptrack is not installed: the comparison with heaptrack_print is skipped"
fi
finish
