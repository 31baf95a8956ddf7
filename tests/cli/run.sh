# rtrace run: the traced program does not notice the tracer (output, exit
# status, errno, environment, descriptors), and every process it becomes
# leaves a trace file, whatever way it ends.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

# same stdout+stderr and exit status as a plain run
same() { # NAME PROGRAM ARGS...
  local name=$1
  shift
  "$@" > plain.out 2>&1
  local prc=$?
  "$RTRACE" run -q -o "$TMP" -- "$@" > traced.out 2>&1
  local trc=$?
  if [ $prc -ne $trc ]; then bad "$name: exit $trc under rtrace, $prc without"; return; fi
  cmp -s plain.out traced.out && ok || { bad "$name: output differs"; diff plain.out traced.out | head -5 >&2; }
}
same "leaks (exit 7, errno)" "$P/tp_leaks"
grep -q "errno kept 1234, huge refused, errno ENOMEM" traced.out && ok || bad "errno not preserved: $(cat traced.out)"
same "8 threads" "$P/tp_threads"
same "fork" "$P/tp_fork"
same "fork+exec" "$P/tp_fork" "$P/tp_env"
same "SIGSEGV" "$P/tp_crash" segv
same "abort" "$P/tp_crash" abort
same "C++" "$P/tp_cxx"
same "dlopen" "$P/tp_dlopen" "$P/libtp_plugin.so"
same "environment and descriptors" "$P/tp_env"
# (a sanitized rtrace objects to any library preloaded before its runtime)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
  LD_PRELOAD=/lib/x86_64-linux-gnu/libc.so.6 same "user LD_PRELOAD kept" "$P/tp_env"

# a signal ignored when rtrace run starts (nohup, trap '') is ignored in
# the program too, as without rtrace
# shellcheck disable=SC2016
out=$(bash -c 'trap "" HUP USR1; exec "$@"' - "$RTRACE" run -q -o "$TMP" -- sh -c 'kill -HUP $$; kill -USR1 $$; echo alive' 2>&1)
[ "$out" = alive ] && ok || bad "a SIGHUP ignored by rtrace run's caller killed the program: '$out'"

# exit statuses: the program's; killed by the program's signal (after
# the report, without a core of its own); 127 when it cannot start
"$RTRACE" run -q -o "$TMP" -- "$P/tp_crash" segv; [ $? -eq 139 ] && ok || bad "SIGSEGV status"
# shellcheck disable=SC2016
waiter='import subprocess, sys
p = subprocess.run(sys.argv[1:], stderr=open("report.err", "w"))
print(p.returncode)'
rc=$(python3 -c "$waiter" "$RTRACE" run -o "$TMP" -- "$P/tp_crash" segv)
[ "$rc" = -11 ] && ok || bad "rtrace run not killed by SIGSEGV: returncode $rc"
grep -q "^rtrace: Process [0-9]* killed by signal 11 (SIGSEGV)$" report.err && grep -q "^rtrace: LEAK SUMMARY:$" report.err &&
  grep -q "^rtrace: ERROR SUMMARY: 1 errors from 1 contexts$" report.err &&
  ok || bad "report of a killed program: $(cat report.err)"
rc=$(python3 -c "$waiter" "$RTRACE" run -o "$TMP" --error-exitcode=9 -- "$P/tp_crash" abort)
[ "$rc" = -6 ] && ok || bad "killed by SIGABRT, --error-exitcode: returncode $rc (valgrind's -6)"
pattern=$(cat /proc/sys/kernel/core_pattern)
if [ "${pattern#core}" != "$pattern" ] && [ "${pattern#*/}" = "$pattern" ]; then
  rm -rf cores && mkdir cores
  (cd cores && ulimit -c unlimited && "$RTRACE" run -q -o "$TMP" -- "$P/tp_crash" segv) 2> /dev/null
  for c in cores/core*; do
    [ -e "$c" ] || continue
    file "$c" | grep -q "from '$RTRACE" && bad "rtrace run dumped core: $(file "$c")" || ok
  done
fi
"$RTRACE" run -q -o "$TMP" -- /nonexistent/program 2> err; [ $? -eq 127 ] && ok || bad "missing program status"
grep -q "cannot run '/nonexistent/program': No such file or directory" err && ok || bad "missing program message"
"$RTRACE" run 2> err; [ $? -eq 2 ] && grep -q "no program to run" err && ok || bad "no program"

# trace files: named after program and pid, 0600, announced on stderr
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" -- "$P/tp_leaks" > /dev/null 2> err
f=$(ls tp_leaks-*.rtrace 2>/dev/null)
[ -n "$f" ] && ok || bad "no tp_leaks-PID.rtrace"
[ "$(stat -c %a "$f")" = 600 ] && ok || bad "trace mode $(stat -c %a "$f")"
grep -q "trace written to $TMP/$f" err && ok || bad "trace path not announced: $(cat err)"
# a short trace (one chunk) stays raw, a longer one is compressed by
# rtrace run (the container's magic)
[ "$(head -c 8 "$f" | od -An -c | tr -d ' ')" = 'RTRACE\0001' ] && ok || bad "short trace magic"
[ ! -e "$f.raw" ] && ok || bad "short trace: raw file left"
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$P/tp_churn" 20000 > /dev/null 2>&1
f=$(ls tp_churn-*.rtrace 2>/dev/null)
[ "$(head -c 8 "$f" | od -An -c | tr -d ' ')" = 'RTRACE\0002' ] && ok || bad "trace magic"

# fork: a file per process; exec'd children only with --follow-children;
# a fork child's blocks before its exec are no leaks (memcheck reports
# nothing for them either): a child that execs leaves no trace
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$P/tp_fork" > /dev/null
[ "$(ls tp_fork-*.rtrace | wc -l)" = 2 ] && ok || bad "fork: $(ls ./*.rtrace)"
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$P/tp_fork" "$P/tp_env" > out
[ "$(ls ./*.rtrace | wc -l)" = 1 ] && ok || bad "fork+exec without follow: $(ls ./*.rtrace)"
grep -q "LD_PRELOAD=(unset) first-fd=[0-9]* rtrace-vars=0" out && ok || bad "exec'd child saw the tracer's environment: $(cat out)"
rm -f ./*.rtrace
"$RTRACE" run -q --follow-children -o "$TMP" -- "$P/tp_fork" "$P/tp_env" > /dev/null
[ "$(ls tp_env-*.rtrace 2>/dev/null | wc -l)" = 1 ] && ok || bad "--follow-children: $(ls ./*.rtrace)"

# the program and what it starts see exactly their own environment, with
# or without a user's LD_PRELOAD (set, empty), followed or not, through a
# shell too (bash copies environ at start and exports it again)
LIBC=/lib/x86_64-linux-gnu/libc.so.6
for lp in - "" "$LIBC"; do
  for follow in "" --follow-children; do
    set -- env -i A=1 "PATH=$PATH" Z=2
    [ "$lp" = - ] || set -- "$@" "LD_PRELOAD=$lp"
    [ "$lp" != "$LIBC" ] || set -- "$@" ASAN_OPTIONS=verify_asan_link_order=0
    for prog in /usr/bin/env "bash -c env" "bash -c /usr/bin/env"; do
      "$@" $prog > plain.env 2>&1
      "$@" "$RTRACE" run -q $follow -o "$TMP" -- $prog > traced.env 2>&1
      cmp -s plain.env traced.env && ok || { bad "environment of '$prog' (LD_PRELOAD $lp $follow) differs"; diff plain.env traced.env | head -5 >&2; }
    done
  done
done
out=$("$RTRACE" run -q -o "$TMP" -- bash -c 'echo "[$LD_PRELOAD]"')
[ "$out" = "[]" ] && ok || bad "bash sees LD_PRELOAD=$out"

# following children through a shell: bash runs /bin/true, then execs the
# leaking program (its last command); both are traced, with their leaks
rm -f ./*.rtrace
"$RTRACE" run --follow-children -o "$TMP" -- bash -c "/bin/true; $P/tp_leaks" > /dev/null 2> err
[ "$(ls true-*.rtrace tp_leaks-*.rtrace 2>/dev/null | wc -l)" = 2 ] && ok || bad "bash -c, followed: $(ls ./*.rtrace)"
grep -q "definitely lost: 1,000 bytes in 6 blocks" err && ok || bad "bash -c, followed: tp_leaks's leaks not reported"
# ... and every other way a program starts one, its environment unchanged
for how in posix_spawn posix_spawnp system popen execvp execle; do
  rm -f ./*.rtrace
  # (a sanitized build's programs accept the tracer preloaded before ASan;
  # no leak check: this is about following, and scanning ASan's shadow
  # memory in a sanitized program can take minutes)
  out=$(env -i "PATH=$PATH" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
    "$RTRACE" run -q --follow-children --leak-check=no -o "$TMP" -- "$P/tp_spawn" $how "$P/tp_env")
  st=$?
  [ $st = 0 ] && ok || bad "$how, followed: exit status $st (the child not waited for?)"
  [ "$(ls tp_env-*.rtrace 2>/dev/null | wc -l)" = 1 ] && ok || bad "$how, followed: $(ls ./*.rtrace)"
  case $out in "LD_PRELOAD=(unset) first-fd="*" rtrace-vars=0") ok ;; *) bad "$how, followed: child saw $out" ;; esac
done

# a setuid or setgid program (owner, group not the caller's): the loader
# ignores LD_PRELOAD for it, and rtrace says so rather than guessing
if [ "$(id -u)" = 0 ] && id nobody > /dev/null 2>&1; then
  for bit in u g; do
    cp "$P/tp_leaks" "s${bit}id"
    if [ $bit = u ]; then chown nobody "s${bit}id"; else chgrp "$(id -gn nobody)" "s${bit}id" 2> /dev/null || chgrp 65534 "s${bit}id"; fi
    chmod $bit+s "s${bit}id"
    "$RTRACE" run -o "$TMP" -- "./s${bit}id" > /dev/null 2> err
    grep -q "no trace was written: the tracer was not loaded: './s${bit}id' is set${bit}id, and the loader ignores LD_PRELOAD" err &&
      ok || bad "set${bit}id program: $(cat err)"
  done
else
  echo "setuid/setgid checks skipped (they need root to give a copy another owner)" >&2
fi

# an unwritable trace: one line on stderr, the program unaffected
"$RTRACE" run -o /proc -- "$P/tp_leaks" > out 2> err
[ $? -eq 7 ] && grep -q "errno kept 1234" out && ok || bad "program affected by an unwritable trace"
[ "$(grep -c 'tracing stopped' err)" = 1 ] && ok || bad "expected one 'tracing stopped' line: $(cat err)"

# signals sent to rtrace reach the program
"$RTRACE" run -q -o "$TMP" -- sleep 30 &
rpid=$!
sleep 0.5
kill -TERM $rpid
wait $rpid
[ $? -eq 143 ] && ok || bad "SIGTERM not forwarded"

# the trace is not resident in the traced program: its resident size
# stays near a plain run's while the trace grows far beyond it (its pages
# leave the program a MiB at a time: +1 MB for a 70 MB trace, where whole
# 8 MiB segments left it +6 MB)
rm -rf rss && mkdir rss
plain_kb=$("$P/tp_churn" 2000000)
traced_kb=$("$RTRACE" run -q --compress=no -o rss -- "$P/tp_churn" 2000000)
trace_kb=$(( $(cat rss/tp_churn-*.rtrace | wc -c) / 1024 ))
if [ "$trace_kb" -gt 40000 ] && [ "$traced_kb" -lt $((plain_kb + 4096)) ]; then ok; else
  bad "resident size: plain ${plain_kb} kB, traced ${traced_kb} kB, trace ${trace_kb} kB"
fi
# Signal handlers that free, or open a descriptor, while their thread is
# inside the tracer (the live-block table's lock, glibc's arena lock held
# by the malloc interposed): the program ends, and the releases the
# handler made while the table was busy reach it.
for what in free open; do
  timeout 120 "$RTRACE" run -m memory,fd -o "$TMP" -- "$P/tp_sigheap" $what 1 > sig.out 2> sig.err
  rc=$?
  [ $rc = 0 ] && grep -qx "sigheap $what: signals" sig.out && ok ||
    bad "signal handler ($what) inside the tracer: status $rc, $(cat sig.out)"
done
timeout 120 "$RTRACE" run -o "$TMP" -- "$P/tp_sigheap" free 1 > /dev/null 2> sig.err
grep -q "still reachable: 0 bytes in 0 blocks" sig.err && grep -q "definitely lost: 0 bytes in 0 blocks" sig.err && ok ||
  bad "releases deferred from a signal handler: $(grep -A6 'LEAK SUMMARY' sig.err)"
finish
