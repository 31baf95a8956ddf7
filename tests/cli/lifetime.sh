# The lifetime filter (`rtrace run --min-lifetime=N`) on a deterministic
# churn (tests/programs/tp_lifetime.c), against the unfiltered run of the
# same program:
#  (a) rtrace heap's summary (allocation calls, temporary, bytes, leaked,
#      frees, the leak check) and run's leak report (verdicts, loss
#      records, stacks) are the same, one thread or two in strict turns
#      freeing each other's blocks; the peak may only miss the bytes of
#      blocks dropped while live at the peak (at most N per thread);
#  (b) on a steady churn 10 times longer the filtered trace keeps its
#      size while the unfiltered one grows about tenfold;
#  (c) fork (both processes' traces), exec and a leak check on demand
#      in a filtered run are the unfiltered run's;
#  (d) a filtered run killed with SIGKILL leaves a trace that reads.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS/tp_lifetime
N=64
LT=--min-lifetime=$N # compare's filter
cd "$TMP" || exit 1
USR2=$(kill -l USR2)

# trace DIR "RUN OPTIONS" ARGS...: runs tp_lifetime ARGS into DIR (made
# empty); run's report without pids, addresses and the trace's name in
# DIR.report
trace() {
  d=$1; opts=$2; shift 2
  rm -rf "$d"; mkdir "$d"
  # shellcheck disable=SC2086
  "$RTRACE" run -o "$d" $opts -- "$P" "$@" > /dev/null 2> "$d.err"
  grep -v 'trace written to' "$d.err" | sed -E 's/0x[0-9A-Fa-f]+//g; s/\(pid [0-9]+\)//; s/==[0-9]+==//' > "$d.report"
}
# summary TRACE: rtrace heap's summary, the peak line apart (TRACE.peak)
summary() {
  "$RTRACE" heap "$1" | sed -n '/^total runtime/,$p' | grep -v '^total runtime' > "$1.all"
  grep -v '^peak heap' "$1.all"
  sed -nE 's/^peak heap memory consumption: .*\(([0-9]+) bytes.*/\1/p' "$1.all" > "$1.peak"
}
# peak_bound NAME PLAIN FILTERED THREADS: filtered <= plain <= filtered
# + THREADS * N blocks of at most 100 bytes (the churn's largest)
peak_bound() {
  a=$(cat "$2.peak"); b=$(cat "$3.peak")
  if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -le "$a" ] && [ $((a - b)) -le $(($4 * N * 100)) ]; then ok; else
    bad "$1: peak $b filtered against $a"; fi
}
# compare NAME "RUN OPTIONS" ARGS...: the filtered run of tp_lifetime
# ARGS against the plain one (summaries of every trace, sorted by their
# text; reports)
compare() {
  name=$1; opts=$2; shift 2
  trace plain "$opts" "$@"
  trace filt "$opts $LT" "$@"
  for f in plain/*.rtrace; do summary "$f"; echo; done | sort > plain.sum
  for f in filt/*.rtrace; do summary "$f"; echo; done | sort > filt.sum
  if grep -q '^calls to allocation functions: [1-9]' plain.sum; then ok; else bad "$name: no calls read"; fi
  check_same "$name: heap summary as unfiltered" plain.sum filt.sum
  check_same "$name: leak report as unfiltered" plain.report filt.report
  # dropped calls are counted, not recorded: the filtered trace has
  # fewer CALL records (postproc lists each) and says what it dropped
  a=$(for f in plain/*.rtrace; do "$RTRACE" postproc -i "$f"; done | grep -c '^[0-9]*\. ')
  b=$(for f in filt/*.rtrace; do "$RTRACE" postproc -i "$f"; done | grep -c '^[0-9]*\. ')
  if [ "$b" -lt $((a / 4)) ] &&
     for f in filt/*.rtrace; do "$RTRACE" postproc -i "$f"; done | grep -q '^## dropped: [1-9][0-9]* allocations'; then ok; else
    bad "$name: $b calls recorded filtered against $a, or no dropped counts"; fi
}

# (a)
compare plain "" 2000
peak_bound plain plain/*.rtrace filt/*.rtrace 1
compare threads "" 2000 threads
peak_bound threads plain/*.rtrace filt/*.rtrace 2
grep -q 'definitely lost: 4,776 bytes in 199 blocks' filt.report && ok || bad "threads: leak verdicts"
compare "no leak check" "--leak-check=no" 2000 threads
compare "_exit, no leak check" "--leak-check=no" 2000 threads _exit

# the Callgrind profile's totals and churn()'s row, read by
# callgrind_annotate (the consumer), as unfiltered (PeakBytes aside: the
# peak may miss blocks dropped while live at it, as above)
if command -v callgrind_annotate > /dev/null; then
  cg() {
    "$RTRACE" convert --to callgrind -o "$1.cg" "$1"/*.rtrace &&
      callgrind_annotate --auto=no --threshold=100 --show=Allocs,Bytes,Leaks,LeakedBytes,Temporary "$1.cg" |
      grep -E 'PROGRAM TOTALS|:churn \[' | sed 's/\[.*//'
  }
  trace plain "" 2000; trace filt "--min-lifetime=$N" 2000
  cg plain > plain.cga; cg filt > filt.cga
  if [ "$(wc -l < plain.cga)" = 2 ]; then ok; else bad "callgrind_annotate: no totals or churn row"; cat plain.cga >&2; fi
  check_same "Callgrind profile as unfiltered" plain.cga filt.cga
else
  echo "callgrind_annotate is not installed: Callgrind totals not compared" >&2
fi

# (b) steady churn over a live set of 100 blocks, 10 times longer; the
# records counted raw (compression would hide the growth in records)
size() { stat -c %s "$1"/*.rtrace; }
trace p1 "--compress=no" 3000 steady; trace p10 "--compress=no" 30000 steady
trace f1 "--compress=no --min-lifetime=$N" 3000 steady; trace f10 "--compress=no --min-lifetime=$N" 30000 steady
p1=$(size p1); p10=$(size p10); f1=$(size f1); f10=$(size f10)
echo "steady churn, trace bytes: unfiltered $p1 -> $p10, filtered $f1 -> $f10"
if [ "$p10" -ge $((p1 * 7)) ]; then ok; else bad "unfiltered: $p1 -> $p10 bytes, expected about 10x"; fi
if [ "$f10" -le $((f1 * 2)) ] && [ "$f10" -le $((p10 / 10)) ]; then ok; else bad "filtered: $f1 -> $f10 bytes, expected under 2x"; fi
summary f10/*.rtrace > f10.sum; summary p10/*.rtrace > p10.sum
check_same "steady: heap summary as unfiltered" p10.sum f10.sum
# the time bound: the churn's blocks live microseconds
trace m10 "--min-lifetime=200ms" 30000 steady
m10=$(size m10)
if [ "$m10" -le $((p10 / 10)) ]; then ok; else bad "--min-lifetime=200ms: $m10 bytes against $p10"; fi
summary m10/*.rtrace > m10.sum
check_same "steady, 200ms: heap summary as unfiltered" p10.sum m10.sum
LT=--min-lifetime=200ms
compare "threads, 200ms" "" 2000 threads
LT=--min-lifetime=$N

# (c)
compare fork "" 2000 fork
[ "$(ls filt/*.rtrace | wc -l)" = 2 ] && ok || bad "fork: expected two traces"
compare exec "" 2000 exec /bin/true
compare "check on demand" "--check-signal=USR2" 2000 check "$USR2"
grep -q 'in loss record' filt.report && ok || bad "check on demand: no loss records"

# (d) killed half-way: the trace reads, to its last complete chunk
trace filt "--min-lifetime=$N" 20000 kill
if "$RTRACE" heap filt/*.rtrace > killed.out 2> killed.err &&
   grep -qE '^calls to allocation functions: [1-9]' killed.out; then ok; else
  bad "killed: the trace does not read"; cat killed.err >&2; fi
if "$RTRACE" postproc -i filt/*.rtrace > /dev/null; then ok; else bad "killed: postproc"; fi

# bad input: the option's range
if "$RTRACE" run --min-lifetime=0 -- /bin/true 2> bad.err; then bad "--min-lifetime=0 accepted"; else ok; fi
grep -q 'expected 1 to 4096' bad.err && ok || bad "--min-lifetime=0: message"
for arg in 5s 4097 3600001ms ms x; do
  if "$RTRACE" run --min-lifetime=$arg -- /bin/true 2> /dev/null; then bad "--min-lifetime=$arg accepted"; else ok; fi
done

finish
