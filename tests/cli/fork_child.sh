# A forked child's cost (issue 21): a shell's fork child, which execs at
# once, opens nothing in /proc for the leak check (its parent's reserved
# descriptors hold the numbers until it needs its own) and has ld.so look
# up no symbol before its exec; a fork child that
# leaves no descriptor free is still checked, whether it fills the
# numbers it inherited or lowers its limit first; the tracer's stack
# cache is emptied in the child without copying its pages.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
command -v strace > /dev/null || { echo "strace is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
cd "$TMP" || exit 1

# per process (-ff), the opens of /proc/self before its first exec: none
# in bash's fork children (nor anywhere before an exec)
strace -ff -qq -e trace=openat,execve -e signal=none -o st "$RTRACE" run -q --follow-children -o "$TMP" -- \
  bash -c 'for i in 1 2 3; do /bin/true; done' > /dev/null 2>&1
kids=0 early=0
for f in st.*; do
  n=$(awk '/^execve\(/ && !/ENOENT/ { exit } /"\/proc\/self\/(maps|task)"/ { n++ } END { print n + 0 }' "$f")
  [ "$n" -gt 0 ] && early=$((early + 1))
  grep -q '^execve("/bin/true"' "$f" && kids=$((kids + 1))
done
[ "$kids" = 3 ] && ok || bad "the loop: $kids processes exec'd /bin/true, not 3"
[ "$early" = 0 ] && ok || bad "$early processes opened /proc/self/maps or task before their exec"
[ "$(ls bash-*.rtrace | wc -l)" = 1 ] && ok || bad "the loop: $(ls bash-*.rtrace | wc -l) bash traces, not 1"

# no symbol is bound by ld.so in a fork child before its exec: a function
# the parent never called (lazy binding) is looked up through every
# library's hash tables, pages the child has not mapped yet. ld.so writes
# a fork child's lines into its parent's LD_DEBUG_OUTPUT file, under the
# child's pid; the program after the exec writes a file of its own.
rm -f ./*.rtrace ldb.*
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$TMP/ldb" "$RTRACE" run -q --follow-children -o "$TMP" -- \
  bash -c 'for i in 1 2 3; do /bin/true; done' > /dev/null 2>&1
late=0 shells=0
for f in ldb.*; do
  grep -q "binding file bash \[0\]" "$f" || continue # bash's (not rtrace run's, not true's)
  shells=$((shells + 1))
  own=${f#ldb.}
  # (a sanitizer's runtime calls, which a sanitized build adds, aside)
  n=$(awk -v own="$own:" '$1 != own && /binding file .*librtrace-preload/ && !/`__(asan|ubsan|sanitizer|lsan)_/ { n++ } END { print n + 0 }' "$f")
  late=$((late + n))
  [ "$n" = 0 ] || head -c 600 "$f" | grep -v "^ *$own:" >&2
done
[ "$shells" = 1 ] && [ "$late" = 0 ] && ok || bad "bash's fork children bound $late symbols of the tracer's (bash's files: $shells)"

# no descriptor free in a fork child at exit: its leak check still reads
# /proc (memcheck's verdict: 77 bytes definitely lost in the child)
for how in forkopen forkfill; do
  (ulimit -n 1024 && "$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_sigfd" $how > $how.out 2> $how.err)
  grep -q "^fill taken=[0-9]* next=Too many open files" $how.out && ok || bad "$how: the child left descriptors free: $(cat $how.out)"
  grep -q '^rtrace:    definitely lost: 77 bytes in 1 blocks$' $how.err && ! grep -q 'cannot read' $how.err &&
    ok || bad "$how: the child's leak check: $(grep -v '^rtrace:   ' $how.err)"
done

# a fork child's trace begins in memory and gets its file when it needs
# one: past what memory holds (3000 calls), then exec'd or killed with
# SIGKILL, it is whole in its file; a descriptor that outlives the exec
# keeps it (-m memory,fd); a child whose threads record has every call,
# and memcheck's verdict on them
fe() { # MODE [RUN-OPTIONS]: tp_forkexec MODE under --follow-children, into fe/
  rm -rf fe && mkdir fe
  "$RTRACE" run -q --follow-children -o "$TMP/fe" ${2:-} -- "$PROGRAMS/tp_forkexec" "$1" > /dev/null 2> fe.err ||
    bad "tp_forkexec $1 failed: $(cat fe.err)"
}
calls() { # TRACE SIZE: its calls of malloc(SIZE), checking that it reads whole
  "$RTRACE" postproc -i "$1" 2> pp.err | grep -c "^[0-9]*\. .*malloc($2)"
  [ ! -s pp.err ] || bad "$1: $(head -2 pp.err)"
}
for mode in many kill; do
  fe $mode
  kid=$(ls fe | sed -n 's/^\(tp_forkexec-[0-9]*\)\.rtrace$/\1/p' | sort | sed -n 2p)
  n=$(calls "fe/$kid.rtrace" 33)
  want=$([ $mode = many ] && echo 3 || echo 2)
  [ "$(ls fe | wc -l)" = "$want" ] && [ "$n" = 3000 ] && ok || bad "$mode: traces $(ls fe | tr '\n' ' '), the child's calls: $n"
done
fe fd "-m memory,fd"
[ "$(ls fe | wc -l)" = 3 ] && ok || bad "fd: traces $(ls fe | tr '\n' ' ')"
fe alloc "-m memory,fd"
[ "$(ls fe | wc -l)" = 2 ] && ok || bad "alloc, -m memory,fd: traces $(ls fe | tr '\n' ' ')"
fe threads
kid=$(ls fe | sort | sed -n 2p)
[ "$(ls fe | wc -l)" = 2 ] && [ "$(calls "fe/$kid" 55)" = 200 ] && ok || bad "threads: traces $(ls fe | tr '\n' ' ')"
if command -v valgrind > /dev/null; then
  valgrind --trace-children=yes --leak-check=full "$PROGRAMS/tp_forkexec" threads 2> vg.err > /dev/null
  want=$(sed -n 's/^==[0-9]*==    definitely lost: \([0-9,]* bytes in [0-9,]* blocks\)$/\1/p' vg.err | sort | tr '\n' ';')
  "$RTRACE" run --follow-children -o "$TMP/fe" -- "$PROGRAMS/tp_forkexec" threads 2> rt.err > /dev/null
  got=$(sed -n 's/^rtrace:    definitely lost: \([0-9,]* bytes in [0-9,]* blocks\)$/\1/p' rt.err | sort | tr '\n' ';')
  [ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "threads: definitely lost '$got', memcheck '$want'"
fi

# the numbers a fork child's tracer holds (its parent's trace descriptor,
# kept for its own file; the leak check's reserved ones) are the
# program's once it dup2s onto them: each close of them works
out=$("$RTRACE" run -q --follow-children -o "$TMP/fe" -- "$PROGRAMS/tp_forkexec" dup2 2> /dev/null)
[ "$out" = "dup2 close failed=0" ] && ok || bad "dup2 onto the tracer's numbers in a fork child: $out"

# a forked child's first record empties the tracer's stack cache (the
# parent's 4096 stacks: 192 KiB of slots) by dropping its pages, not by
# clearing them: the child's private dirty memory grows by less than that
# (the rest: the child's trace and the tables its first calls write)
"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_forkbt" > bt.out 2>&1
read -r _ _ before after < bt.out
[ -n "$after" ] && [ $((after - before)) -lt 160 ] && ok ||
  bad "tp_forkbt: the child's private dirty memory grew by $((${after:-0} - ${before:-0})) kB at its first record ($(cat bt.out))"

finish
