# The tracer's live-block table with blocks that leave the thread that
# allocated them (it keeps a part per thread, src/preload/heap.c): freed
# by another thread, freed twice by two others, held by threads that
# ended (more threads than the table has parts), freed by a forked child,
# checked on demand while other threads churn, allocated by a signal
# handler while its thread holds its part. Verdicts and errors are
# memcheck's where memcheck runs the same program (tests/programs/tp_xfree.c).
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind

# The summaries of a report, memcheck's or rtrace run's: leak kinds of
# the program's own blocks and the error count.
summary() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' |
    sed -nE '/^ +definitely lost:|^ +indirectly lost:|^All heap blocks/p; s/^(ERROR SUMMARY: [0-9]+ errors).*/\1/p'
}
# An invalid free's stacks: the releasing function, the one that freed
# the block before, the one that allocated it.
invalid() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' | awk '
    /^Invalid free\(\)/ { on = 1; next }
    on && /^   by 0x[0-9A-Fa-f]+: / { sub(/^   by 0x[0-9A-Fa-f]+: /, ""); sub(/ .*/, ""); print; nby++ }
    on && /^ Address .* free.d$/ { sub(/ 0x[0-9a-f]+ /, " ADDR "); print }
    on && /^ Block was alloc/ { print }
    on && /^$/ { on = 0 }' | grep -v -e start_thread -e clone
}

for mode in handoff double exited; do
  valgrind --leak-check=full "$P/tp_xfree" $mode 2> vg.err > vg.out
  timeout 120 "$RTRACE" run -o "$TMP" --trace-frees -- "$P/tp_xfree" $mode 2> rt.err > rt.out
  summary < vg.err > vg.sum
  summary < rt.err > rt.sum
  check_same "$mode: leaks and errors as memcheck's" vg.sum rt.sum
  check_same "$mode: program output" vg.out rt.out
  if [ $mode = double ]; then
    invalid < vg.err > vg.inv
    invalid < rt.err > rt.inv
    if grep -q free_in_b rt.inv; then ok; else bad "double: the first free's stack is missing"; cat rt.err >&2; fi
    check_same "double: the invalid free as memcheck describes it" vg.inv rt.inv
  fi
done
grep -q "definitely lost: 1,680 bytes in 70 blocks" rt.err && ok ||
  bad "exited: the ended threads' leaks: $(grep -A3 'LEAK SUMMARY' rt.err)"

# fork: the child frees the blocks of a thread it does not have
timeout 120 "$RTRACE" run -o "$TMP" -- "$P/tp_xfree" fork 2> rt.err > rt.out
rc=$?
n0=$(grep -c 'ERROR SUMMARY: 0 errors' rt.err)
[ $rc = 0 ] && [ "$n0" = 2 ] && grep -q 'child: freed' rt.out && ok ||
  bad "fork: status $rc, $n0 clean processes of 2: $(grep -B2 -A8 'Invalid' rt.err | head -20)"

# leak checks on demand while three threads churn: each sees the 5 blocks
timeout 120 "$RTRACE" run -o "$TMP" --check-signal=USR2 -- "$P/tp_xfree" live 2> rt.err > rt.out
n=$(grep -c 'definitely lost: 240 bytes in 5 blocks' rt.err)
[ "$n" = 3 ] && ! grep -q 'Invalid free' rt.err && ok ||
  bad "live: $n of 3 checks saw the 5 lost blocks: $(grep -A2 'LEAK SUMMARY' rt.err)"

# a signal handler allocates while its thread is in its part of the table
timeout 120 "$RTRACE" run -o "$TMP" -- "$P/tp_sigheap" alloc 1 > sig.out 2> sig.err
rc=$?
[ $rc = 0 ] && grep -qx "sigheap alloc: signals" sig.out && ! grep -q 'Invalid free' sig.err &&
  grep -q "still reachable: 0 bytes in 0 blocks" sig.err && grep -q "definitely lost: 0 bytes in 0 blocks" sig.err && ok ||
  bad "signal handler allocating inside the table: status $rc, $(cat sig.out) $(grep -A6 'LEAK SUMMARY' sig.err)"
finish
