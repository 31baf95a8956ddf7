# Leak checks on demand: `rtrace run --check-signal` with the program
# asking for them itself, and `rtrace check PID` asking from outside,
# compared with memcheck answering VALGRIND_DO_LEAK_CHECK and
# VALGRIND_DO_ADDED_LEAK_CHECK at the same points of the same program
# (tests/programs/tp_livecheck.c): loss records (numbered as memcheck
# numbers them, deltas included), their stacks, each LEAK SUMMARY and the
# error count must be memcheck's. Then the checks in the trace as
# postproc shows them, and rtrace check's errors.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind
USR2=$(kill -l USR2)

# The checks of a report (memcheck's or rtrace run's), then the exit
# check's: loss record lines, the program's frames ("by fn (file:line)")
# and the summaries.
checks_of() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' |
    sed -nE 's/^   by 0x[0-9A-F]+: (lose|lose_list|hold|phase[0-9]|main) /   by \1 /p;
             /in loss record|^LEAK SUMMARY|lost:|reachable:|^ +suppressed:|All heap/p'
}
errors_of() { sed -nE 's/^(==[0-9]+== |rtrace: )ERROR SUMMARY: ([0-9]+ errors from [0-9]+ contexts).*/\2/p'; }

valgrind --leak-check=full "$P/tp_livecheck" self "$USR2" 2> vg.err > vg.out
checks_of < vg.err > vg.checks
grep -c 'LEAK SUMMARY' vg.checks > vg.n
if [ "$(cat vg.n)" = 5 ] && grep -q '(+100) bytes in 1 (+1) blocks' vg.checks; then ok; else
  bad "memcheck's answers are not the expected ones ($(cat vg.n) checks)"; fi

# the program asks, with the check signal
"$RTRACE" run -o "$TMP" --check-signal=USR2 -- "$P/tp_livecheck" self "$USR2" 2> rt.err > rt.out
checks_of < rt.err > rt.checks
check_same "self: checks as memcheck's" vg.checks rt.checks
errors_of < vg.err > vg.errs
errors_of < rt.err > rt.errs
check_same "self: errors counted as memcheck's" vg.errs rt.errs
check_same "self: program output" vg.out rt.out

# the checks in the trace, in order, as postproc and convert show them
"$RTRACE" postproc -i tp_livecheck-*.rtrace > pp.txt 2> pp.err
sed -nE 's/^## leak check ([0-9]+) at call ([0-9]+) \(([a-z]+)\).*/\1 \3 \2/p' pp.txt > pp.checks
awk '{ print $1, $2 }' pp.checks | tr '\n' ' ' > pp.order
[ "$(cat pp.order)" = "1 full 2 increased 3 increased 4 full " ] && ok || bad "postproc: checks $(cat pp.order)"
sort -n -k3 pp.checks | cmp -s - pp.checks && ok || bad "postproc: checks not in call order"
grep -q '^## leak check 2: 100 (+100) bytes in 1 (+1) blocks are definitely lost in loss record 6 of 7$' pp.txt &&
  ok || bad "postproc: the increased check's loss record"
grep -q '^## leak check 2: definitely lost: 348 (+100) bytes in 4 (+1) blocks$' pp.txt && ok ||
  bad "postproc: the increased check's totals"
"$RTRACE" convert -t text tp_livecheck-*.rtrace > conv.txt 2> /dev/null
grep '^## leak check' conv.txt | cmp -s - <(grep '^## leak check' pp.txt) && ok || bad "convert: the checks differ from postproc's"
rm -f ./*.rtrace

# the records as docs/binary-format.md describes them (tests/cli/bin_encoder.h,
# written from the document): a full check, then an increased one
"$GEN_BIN_TRACE" checks enc.rtrace && "$RTRACE" postproc -i enc.rtrace > enc.txt 2> enc.err
grep '^## leak check' enc.txt > enc.checks
cat > enc.want <<'EOT'
## leak check 1 at call 2 (full): 2 blocks checked in 15 us
## leak check 1: definitely lost: 100 bytes in 1 blocks
## leak check 1: indirectly lost: 0 bytes in 0 blocks
## leak check 1: possibly lost: 0 bytes in 0 blocks
## leak check 1: still reachable: 40 bytes in 1 blocks
## leak check 1: 40 bytes in 1 blocks are still reachable in loss record 1 of 2
## leak check 1: 100 bytes in 1 blocks are definitely lost in loss record 2 of 2
## leak check 2 at call 4 (increased): 2 blocks checked in 12 us
## leak check 2: definitely lost: 300 (+200) bytes in 3 (+2) blocks
## leak check 2: indirectly lost: 0 (+0) bytes in 0 (+0) blocks
## leak check 2: possibly lost: 0 (+0) bytes in 0 (+0) blocks
## leak check 2: still reachable: 0 (-40) bytes in 0 (-1) blocks
## leak check 2: 300 (+200) bytes in 3 (+2) blocks are definitely lost in loss record 2 of 2
EOT
check_same "encoded checks in postproc" enc.want enc.checks
"$GEN_BIN_TRACE" checks-bad bad.rtrace
"$RTRACE" postproc -i bad.rtrace > /dev/null 2> bad.err; rc=$?
[ "$rc" = 1 ] && grep -q 'bad.rtrace: byte offset [0-9]*: expected a CHECK record numbered 5 before this CHECKLOSS record' bad.err &&
  ok || { bad "a CHECKLOSS record without its CHECK: rc $rc"; cat bad.err >&2; }
rm -f ./*.rtrace

# checks while three threads allocate: each stops them and lets them go
# on; requests that come during a check merge into the next one
timeout 120 "$RTRACE" run -q -o "$TMP" --check-signal=USR2 -- "$P/tp_livecheck" threads "$USR2" > thr.out 2> thr.err
rc=$?
[ "$rc" = 0 ] && [ "$(cat thr.out)" = done ] && ok || { bad "threads: status $rc"; cat thr.err >&2; }
"$RTRACE" postproc -i tp_livecheck-*.rtrace | sed -nE 's/^## leak check ([0-9]+) at call ([0-9]+).*/\1 \2/p' > thr.checks
awk 'NR != $1 || $2 < last { bad = 1 } { last = $2 } END { exit bad || NR < 1 }' thr.checks && ok ||
  { bad "threads: checks not numbered in call order"; cat thr.checks >&2; }
rm -f ./*.rtrace

# asked from outside: rtrace check PID at each of the four points
wait_file() { for _ in $(seq 3000); do [ -s "$1" ] && return 0; sleep 0.01; done; return 1; }
mkdir hs
"$RTRACE" run -o "$TMP" --check-signal=SIGUSR2 -- "$P/tp_livecheck" wait "$TMP/hs" 2> ext.err > ext.out &
run=$!
asked=0
for step in 1 2 3 4; do
  wait_file "hs/ready$step" || break
  pid=$(cat "hs/ready$step")
  mode=; [ "$step" = 2 ] || [ "$step" = 3 ] && mode=--increased
  "$RTRACE" check $mode "$pid" 2>> check.err && asked=$((asked + 1))
  : > "hs/go$step"
done
wait "$run"
[ "$asked" = 4 ] && ok || { bad "rtrace check: asked $asked times, not 4"; cat check.err >&2; }
grep -q "asked process [0-9]* for an increased leak check (SIGUSR2)" check.err && ok || bad "rtrace check: its message"
checks_of < ext.err > ext.checks
check_same "rtrace check: checks as memcheck's" vg.checks ext.checks

# rtrace check on processes it cannot ask
sleep 30 & plain=$!
"$RTRACE" check "$plain" 2> e1.err; rc=$?
[ "$rc" = 1 ] && grep -q "process $plain is not traced by rtrace" e1.err && ok || { bad "untraced: rc $rc"; cat e1.err >&2; }
kill "$plain"; wait "$plain" 2> /dev/null
mkdir hs2
"$RTRACE" run -o "$TMP" -- "$P/tp_livecheck" wait "$TMP/hs2" > /dev/null 2>&1 &
run=$!
wait_file hs2/ready1
pid=$(cat hs2/ready1)
"$RTRACE" check "$pid" 2> e2.err; rc=$?
[ "$rc" = 1 ] && grep -q "was not started with rtrace run --check-signal" e2.err && ok || { bad "no check signal: rc $rc"; cat e2.err >&2; }
for s in 1 2 3 4; do : > "hs2/go$s"; done
wait "$run"
"$RTRACE" check 99999999999 2> /dev/null; [ $? = 2 ] && ok || bad "a bad pid is a usage error"
"$RTRACE" check 2147483 2> e3.err; rc=$?
[ "$rc" = 1 ] && grep -q "no such process" e3.err && ok || bad "no such process: rc $rc"

# without --check-signal the tracer leaves the signal alone: the
# program's own SIGUSR2 kills it as it would untraced
bash -c '"$0" run -q -o "$1" -- "$2/tp_livecheck" self "$3" > /dev/null 2>&1; echo $? > rc.killed' \
  "$RTRACE" "$TMP" "$P" "$USR2" 2> /dev/null
rc=$(cat rc.killed)
[ "$rc" = $((128 + USR2)) ] && ok || bad "without --check-signal: status $rc, not $((128 + USR2))"
"$RTRACE" run -o "$TMP" --check-signal=USR2 --toggle-signal=USR2 -- /bin/true 2> /dev/null; [ $? = 2 ] && ok ||
  bad "--check-signal and --toggle-signal on one signal"
finish
