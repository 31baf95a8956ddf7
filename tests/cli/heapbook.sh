# The heap's bookkeeping, compared with Valgrind memcheck on the same
# program (tp_heapbook, tp_ctorlib): loss records that tie on size come in
# memcheck's order; reallocarray is one call; "in use at exit" is what the
# leak check classified (a forked child's inherited heap included);
# allocations of library constructors, made before the tracer's own
# constructor ran, are recorded with their stacks; the tracer's own
# mappings and frames appear in no trace.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind

# The report's lines from the HEAP SUMMARY's figures to the LEAK
# SUMMARY's, prefixes cut, stacks left out.
summary() {
  sed -nE 's/^(==[0-9]+== |rtrace: )//p' |
    grep -E '^ +(in use at exit|total heap usage|definitely lost|indirectly lost|possibly lost|still reachable):| in loss record '
}

run_both() { # OPTIONS... -- PROGRAM ARGS...
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  valgrind --leak-check=full --show-leak-kinds=all "$@" 2> vg.err > vg.out
  rm -f ./*.rtrace
  "$RTRACE" run -o "$TMP" --show-leak-kinds=all "${opts[@]}" -- "$@" 2> rt.err > rt.out
}

# Loss records of one total size: still reachable, possibly, indirectly,
# definitely lost, as memcheck orders them ("loss record i of n").
run_both -- "$P/tp_heapbook" ties
summary < vg.err > vg.sum
summary < rt.err > rt.sum
grep -q "64 bytes in 1 blocks are still reachable in loss record 3 of 8" vg.sum && ok || bad "ties: memcheck's order: $(cat vg.sum)"
check_same "ties: the report's figures and loss records are memcheck's" vg.sum rt.sum

# reallocarray: one call each, as memcheck counts them; no phantom leak
run_both -- "$P/tp_heapbook" reallocarray
summary < vg.err > vg.sum
summary < rt.err > rt.sum
check_same "reallocarray: the report's figures and loss records are memcheck's" vg.sum rt.sum
"$RTRACE" postproc -c -i ./tp_heapbook-*.rtrace > calls.txt
[ "$(grep -cE '^[0-9]+\. .*reallocarray\([0-9]+\) = ' calls.txt)" = 4 ] && ! grep -q '^[0-9]*\. .* realloc(' calls.txt && ok ||
  bad "reallocarray: recorded once each: $(grep '^[0-9]' calls.txt)"

# A forked child: in use at exit is what its leak check classified, the
# heap it inherited included, in each process as memcheck says.
run_both -- "$P/tp_heapbook" fork
grep -E '^==[0-9]+== +in use at exit:' vg.err | sed -E 's/^==[0-9]+== //' | sort > vg.use
grep -E '^rtrace: +in use at exit:' rt.err | sed -E 's/^rtrace: //' | sort > rt.use
[ "$(wc -l < vg.use)" = 2 ] && check_same "fork: in use at exit, parent and child" vg.use rt.use
sed -nE 's/^rtrace: +(in use at exit|definitely lost|indirectly lost|possibly lost|still reachable): ([0-9,]+) bytes in ([0-9,]+) blocks$/\1 \2 \3/p' rt.err |
  tr -d , | awk '$1 == "in" { if (n) print use == b " " nb; use = $5 " " $6; b = 0; nb = 0; n = 1; next }
                 { b += $3; nb += $4 } END { print use == b " " nb }' > rt.total
[ "$(sort -u rt.total)" = 1 ] && ok || bad "fork: in use at exit is the sum of the kinds: $(cat rt.err)"

# ... and the verdicts of both (no word of the tracer's own memory, such
# as the unwinder's last walk, is a root)
summary < vg.err | grep -E 'lost:|reachable:' | sort > vg.kinds
summary < rt.err | grep -E 'lost:|reachable:' | sort > rt.kinds
check_same "fork: the leak summaries of parent and child are memcheck's" vg.kinds rt.kinds

# A library constructor's allocations, before the tracer's constructor:
# recorded with their stacks, in the HEAP SUMMARY, listed by postproc.
run_both -- "$P/tp_heapbook" ctor
summary < vg.err > vg.sum
summary < rt.err > rt.sum
check_same "ctor: the report's figures and loss records are memcheck's" vg.sum rt.sum
grep -q "in use at exit: 64 bytes in 2 blocks" rt.sum && ok || bad "ctor: in use: $(cat rt.sum)"
"$RTRACE" postproc -lc -i ./tp_heapbook-*.rtrace > leaks.txt
grep -q "^# 2 block(s) leaked with total size of 64 bytes$" leaks.txt && ok || bad "ctor: postproc -lc: $(cat leaks.txt)"
[ "$(grep -c "$(printf '^\t0x')" leaks.txt)" -ge 4 ] && ok || bad "ctor: the blocks' stacks: $(cat leaks.txt)"

# The tracer's own mappings (the leak check's tables) are no program's
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" -m memory,mmap -- "$P/tp_heapbook" none > /dev/null 2>&1
"$RTRACE" postproc -lc -i ./tp_heapbook-*.rtrace > leaks.txt
grep -q "^<[0-9]*> : mmap " leaks.txt && ! grep -q "mmap<mmap>" leaks.txt && ok ||
  bad "-m mmap: the tracer's mappings are listed: $(grep -A3 'mmap<' leaks.txt)"

# ... nor its frames: an interposer calling on (dlopen, reallocarray)
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" -- "$P/tp_dlopen" "$P/libtp_plugin.so" > /dev/null 2>&1
"$RTRACE" run -o "$TMP" -- "$P/tp_heapbook" reallocarray > /dev/null 2>&1
for t in ./tp_dlopen-*.rtrace ./tp_heapbook-*.rtrace; do
  "$RTRACE" postproc -cr -i "$t" | grep -v '^:' > resolved.txt
  grep -q "$(printf '^\t0x')" resolved.txt && ! grep -qE 'librtrace-preload|src/preload/' resolved.txt && ok ||
    bad "$t: the tracer's frames in the program's stacks: $(grep -E 'librtrace-preload|src/preload/' resolved.txt | sort -u)"
done
finish
