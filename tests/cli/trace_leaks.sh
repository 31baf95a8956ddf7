# Programs whose leaks are known, traced with rtrace run and read back with
# rtrace postproc -lc: exact blocks and sizes, per process, whatever way
# the process ended. At a clean exit glibc frees its own memory first
# (__libc_freeres, as under memcheck), so its stdout buffer is no leak;
# a program that crashed still holds it.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

trace() { # PROGRAM ARGS... -> $T: the trace of the first process
  rm -f ./*.rtrace
  "$RTRACE" run -q -o "$TMP" -- "$@" > run.out 2> run.err
  T=$(ls -tr ./*.rtrace 2>/dev/null | head -n 1)
}
leaks() { "$RTRACE" postproc -lc -i "$1" > leaks.txt 2> leaks.err || bad "postproc $1: $(cat leaks.err)"; }
has() { grep -qxF -- "$2" leaks.txt && ok || bad "$1: no line '$2' in $(grep '^#' leaks.txt | tr '\n' '|')"; }
hasnt() { grep -qE -- "$2" leaks.txt && bad "$1: unexpected /$2/" || ok; }

trace "$P/tp_leaks"
leaks "$T"
has "tp_leaks leak_a" "# allocation summary: 3 block(s) with total size 300"
has "tp_leaks leak_b" "# allocation summary: 2 block(s) with total size 400"
has "tp_leaks realloc" "# allocation summary: 1 block(s) with total size 300"
has "tp_leaks total" "# 6 block(s) leaked with total size of 1000 bytes"
grep -q "realloc(300) = 0x" leaks.txt && ok || bad "realloc recorded under its name"
# the summary rtrace run prints (same totals as memcheck for this program)
"$RTRACE" run -o "$TMP" -- "$P/tp_leaks" > /dev/null 2> summary.err
grep -q "in use at exit: 1,000 bytes in 6 blocks" summary.err && ok || bad "heap summary: $(cat summary.err)"
grep -q "total heap usage: 1,009 allocs, 1,003 frees, 505,622 bytes allocated" summary.err && ok ||
  bad "heap totals: $(cat summary.err)"

trace "$P/tp_threads"
leaks "$T"
has "8 threads x 10 leaks" "# allocation summary: 80 block(s) with total size 2560"
[ "$(grep -c '^[0-9]*\. .*malloc(32) = ' leaks.txt)" = 80 ] && ok || bad "80 leaked malloc(32) calls"

trace "$P/tp_fork"
[ "$(ls ./*.rtrace | wc -l)" = 2 ] && ok || bad "fork: two traces"
for f in ./*.rtrace; do
  leaks "$f"
  if grep -q "malloc(11)" leaks.txt; then
    has "fork parent" "# 1 block(s) leaked with total size of 11 bytes"
  else
    has "fork child" "# allocation summary: 1 block(s) with total size 22"
    [ "$(grep -c 'malloc(22)' leaks.txt)" = 2 ] && ok || bad "fork child: two malloc(22)"
    hasnt "fork child has no parent allocation" "malloc\(11\)"
  fi
done

for how in segv abort; do
  trace "$P/tp_crash" $how
  leaks "$T"
  has "crash by $how" "# 5 block(s) leaked with total size of 250 bytes"
done

# SIGKILL: nothing runs at exit, the trace is complete all the same
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$P/tp_crash" wait > wait.out &
rpid=$!
for _ in $(seq 50); do grep -q ready wait.out 2>/dev/null && break; sleep 0.1; done
kill -KILL "$(pgrep -P $rpid)"
wait $rpid
[ $? -eq 137 ] && ok || bad "SIGKILL status"
leaks "$(ls ./*.rtrace)"
has "killed by SIGKILL" "# 5 block(s) leaked with total size of 250 bytes"

trace "$P/tp_cxx"
leaks "$T"
grep -q '^[0-9]*\. \[[0-9:.]*\] operator new(4) = 0x' leaks.txt && ok || bad "operator new leak"
grep -q '^[0-9]*\. \[[0-9:.]*\] operator new\[\](40) = 0x' leaks.txt && ok || bad "operator new[] leak"
has "C++ total" "# 2 block(s) leaked with total size of 44 bytes"
"$RTRACE" postproc -i "$T" > all.txt
grep -q "operator delete\[\](0x" all.txt && ok || bad "operator delete[] recorded"
grep -q "operator new(nothrow)(4) = 0x" all.txt && ok || bad "nothrow new recorded under its name"
grep -q "malloc(4) = " all.txt && bad "operator new's inner malloc recorded too" || ok

trace "$P/tp_dlopen" "$P/libtp_plugin.so"
leaks "$T"
has "dlopen'ed module's leak" "# allocation summary: 1 block(s) with total size 77"
grep -q "libtp_plugin.so => 0x" leaks.txt && ok || bad "dlopen'ed module in the memory map"

trace "$P/tp_context"
for mask in 1 2 0; do "$RTRACE" postproc -l -C $mask -i "$T" > ctx$mask.txt; done
[ "$(grep -o '^[0-9]*\.' ctx1.txt | tr -d '\n')" = "1.2.3." ] && ok || bad "context 1 calls"
[ "$(grep -o '^[0-9]*\.' ctx2.txt | tr -d '\n')" = "3.4." ] && ok || bad "context 2 calls"
[ "$(grep -o '^[0-9]*\.' ctx0.txt | tr -d '\n')" = "5." ] && ok || bad "no-context calls"
"$RTRACE" postproc -i "$T" > ctx.txt
grep -qx "@ 1 : first context" ctx.txt && grep -qx "@ 2 : second context" ctx.txt && ok || bad "context registry"
# --start-paused with a toggle signal: only the middle allocation
rm -f ./*.rtrace
"$RTRACE" run -q --start-paused --toggle-signal SIGUSR2 -o "$TMP" -- "$P/tp_toggle" 12
leaks "$(ls ./*.rtrace)"
grep -o 'malloc([0-9]*)' leaks.txt | tr '\n' ' ' > got
[ "$(cat got)" = "malloc(200) " ] && ok || bad "toggled tracing: $(cat got)"

# --trace-frees gives releases a backtrace; --no-timestamps drops times;
# -b caps the frames
rm -f ./*.rtrace
"$RTRACE" run -q --trace-frees --no-timestamps -b 2 -o "$TMP" -- "$P/tp_crash" segv
"$RTRACE" postproc -i "$(ls ./*.rtrace)" > all.txt
grep -q '^[0-9]*\. malloc(50) = 0x' all.txt && ok || bad "--no-timestamps still prints times"
head -n 1 all.txt | grep -q 'backtrace depth=2, ' && ok || bad "-b 2 in the header"
awk '/^\t0x/ { n++ } /^$/ { if (n > 2) bad = 1; n = 0 } END { exit bad }' all.txt && ok || bad "-b 2 deeper stacks"
rm -f ./*.rtrace
"$RTRACE" run -q --trace-frees -o "$TMP" -- "$P/tp_leaks" > /dev/null
"$RTRACE" postproc -i "$(ls ./*.rtrace)" > all.txt
grep -A1 '\] free(0x' all.txt | grep -q "^	0x" && ok || bad "--trace-frees: no backtrace on free"
finish
