# Descriptors under stress: a signal handler opening and closing them while
# the program does too (the trace stays in index order and reads whole),
# a leak check with no descriptor free (it still runs, or says why not and
# fails the run), and the report of descriptors, streams and mappings left
# open at exit, line for line as valgrind --track-fds=yes prints them.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

# a SIGALRM handler every 100 us opening and closing /dev/null against a
# main loop doing the same: every call recorded reads back, in order, and
# nothing is left open
for run in 1 2; do
  rm -f ./*.rtrace
  "$RTRACE" run -m fd -o "$TMP" -- "$P/tp_sigfd" 100000 > race.out 2> race.err
  main=$(sed -n 's/^race main=\([0-9]*\).*/\1/p' race.out) hnd=$(sed -n 's/^race .*handler=\([0-9]*\).*/\1/p' race.out)
  "$RTRACE" postproc -i tp_sigfd-*.rtrace > race.txt 2> race.pp; rc=$?
  [ $rc -eq 0 ] && [ ! -s race.pp ] && ok || bad "signal handler run $run: trace reads with status $rc: $(head -3 race.pp)"
  calls=$(grep -cE '^[0-9]+\. ' race.txt)
  # the handler's calls that interrupt the tracer's own work are not traced
  [ "$calls" -ge $((main + 3)) ] && [ "$calls" -le $((main + hnd + 3)) ] && [ "$hnd" -gt 0 ] && ok ||
    bad "signal handler run $run: $calls calls read back, main made $main, the handler $hnd"
  grep -q '^rtrace: FILE DESCRIPTORS: 3 open (3 std) at exit\.$' race.err && ! grep -q 'Open file descriptor' race.err &&
    ! grep -q 'warning' race.err && ok || bad "signal handler run $run: $(grep -v '^rtrace:  ' race.err | head -5)"
done

# no descriptor free at exit (the limit lowered and filled with open, or
# with dup2 onto every number): the check reads /proc through descriptors
# it kept from the start, and gives memcheck's verdict
for how in fill dup2; do
  "$RTRACE" run --error-exitcode=7 -o "$TMP" -- "$P/tp_sigfd" $how > $how.out 2> $how.err; rc=$?
  grep -q "^fill taken=[0-9]* next=Too many open files" $how.out && ok || bad "$how: the program left descriptors free: $(cat $how.out)"
  [ $rc -eq 7 ] && ok || bad "$how: exit status $rc, not --error-exitcode's 7"
  grep -q '^rtrace:    definitely lost: 77 bytes in 1 blocks$' $how.err && grep -q '^rtrace: ERROR SUMMARY: 1 errors from 1 contexts$' $how.err &&
    ok || bad "$how: leak check: $(grep -v '^rtrace:   ' $how.err)"
  if command -v valgrind > /dev/null; then
    valgrind --leak-check=full "$P/tp_sigfd" $how > /dev/null 2> vg-$how.err
    grep -q '==    definitely lost: 77 bytes in 1 blocks$' vg-$how.err && ok || bad "$how: memcheck's verdict: $(grep lost vg-$how.err)"
  fi
done
# a program that takes those too: the check cannot run, says why, and that
# is an error
"$RTRACE" run --error-exitcode=7 -o "$TMP" -- "$P/tp_sigfd" hostile > hostile.out 2> hostile.err; rc=$?
[ $rc -eq 7 ] && ok || bad "hostile: exit status $rc, not --error-exitcode's 7"
grep -q '^rtrace: leak check: cannot read /proc/self/maps (Too many open files); no verdicts$' hostile.err &&
  grep -q '^rtrace: ERROR SUMMARY: 1 errors from 1 contexts$' hostile.err && ok || bad "hostile: $(cat hostile.err)"

# -m fd,file,mmap: the descriptors open at exit in valgrind
# --track-fds=yes's lines and order, those under the leaked stream and
# directory included (a socket's addresses at exit are valgrind's alone:
# its line is compared up to the number); then rtrace's own lines for the
# streams and mappings left open, which are no errors (the descriptors
# are). Both run with no descriptor inherited but the standard ones.
bare() { bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@"' bare "$@"; }
fdlines() { sed -n -E "s/^$1(FILE DESCRIPTORS: .*|Open (file descriptor|AF_[A-Z0-9]* socket) [0-9]+:.*)\$/\1/p" | sed -E 's/^(Open AF_[A-Z0-9]* socket [0-9]+:).*/\1/'; }
bare "$P/tp_fds" > fds.out 2>&1
bare "$RTRACE" run -m fd,file,mmap --error-exitcode=9 -o "$TMP" -- "$P/tp_fds" > /dev/null 2> fds.err; rc=$?
[ $rc -eq 9 ] && ok || bad "fd report: exit status $rc"
fdlines 'rtrace: ' < fds.err > rt.lines
sfd=$(sed -n 's/^streams fileno=\([0-9]*\),.*/\1/p' fds.out) dfd=$(sed -n 's/^streams .*dirfd=\([0-9]*\)/\1/p' fds.out)
grep -qx "Open file descriptor $sfd: /etc/hostname" rt.lines && grep -qx "Open file descriptor $dfd: /etc" rt.lines &&
  grep -qx "FILE DESCRIPTORS: 8 open (3 std) at exit." rt.lines && ok || bad "fd report: the streams' descriptors: $(cat rt.lines)"
if command -v valgrind > /dev/null; then
  bare valgrind --track-fds=yes "$P/tp_fds" > /dev/null 2> vg.err
  fdlines '==[0-9]+== ' < vg.err > vg.lines
  check_same "descriptor lines differ from valgrind --track-fds=yes's" vg.lines rt.lines
fi
grep -q '^rtrace: ERROR SUMMARY: 6 errors from 6 contexts$' fds.err && ok || bad "fd report: $(grep 'ERROR SUMMARY' fds.err)"
grep -A1 '^rtrace: FILE STREAMS: 1 open at exit\.$' fds.err | grep -qE '^rtrace: Open file stream 0x[0-9A-F]+: /etc/hostname \(mode "r"\)$' &&
  ok || bad "fd report: the leaked stream: $(grep -A3 STREAMS fds.err)"
grep -A2 '^rtrace: DIRECTORY STREAMS: 1 open at exit\.$' fds.err | grep -qE '^rtrace:    at opendir$' &&
  grep -qE '^rtrace: Open directory stream 0x[0-9A-F]+: /etc$' fds.err && ok || bad "fd report: the leaked directory"
grep -qx 'rtrace: MEMORY MAPPINGS: 2 mapped at exit (12,288 bytes)\.' fds.err &&
  [ "$(grep -cE '^rtrace: Mapping of (4,096|8,192) bytes at 0x[0-9A-F]+: ' fds.err)" = 2 ] && ok || bad "fd report: the mappings: $(grep -A2 MAPP fds.err)"
finish
