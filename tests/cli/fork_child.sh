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
[ "$(ls bash-*.rtrace | wc -l)" = 4 ] && ok || bad "the loop: $(ls bash-*.rtrace | wc -l) bash traces, not 4"

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

# a forked child's first record empties the tracer's stack cache (the
# parent's 4096 stacks: 192 KiB of slots) by dropping its pages, not by
# clearing them: the child's private dirty memory grows by less than that
# (the rest: the child's trace and the tables its first calls write)
"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_forkbt" > bt.out 2>&1
read -r _ _ before after < bt.out
[ -n "$after" ] && [ $((after - before)) -lt 160 ] && ok ||
  bad "tp_forkbt: the child's private dirty memory grew by $((${after:-0} - ${before:-0})) kB at its first record ($(cat bt.out))"

finish
