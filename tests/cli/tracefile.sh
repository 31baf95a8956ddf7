# The trace file under pressure: a file size limit (the program's own or
# the shell's) never kills the program, a full disk or a limit stops
# tracing with a reason that every reader repeats and that fails
# --error-exitcode, traces are 0600 whatever the umask, a lost trace is
# reported, any byte may be in the program's name, and disk use follows
# what was recorded.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
T=$P/tp_tracefile
cd "$TMP" || exit 1

# same stdout and exit status as a plain run; stderr kept in err
same() { # NAME PROGRAM ARGS...
  local name=$1
  shift
  "$@" > plain.out 2> /dev/null
  local prc=$?
  "$RTRACE" run -o "$TMP" -- "$@" > traced.out 2> err
  local trc=$?
  if [ $prc -ne $trc ]; then bad "$name: exit $trc under rtrace, $prc without"; return; fi
  cmp -s plain.out traced.out && ok || { bad "$name: output differs"; diff plain.out traced.out | head -5 >&2; }
}
once() { # NAME PATTERN: PATTERN on exactly one line of err
  [ "$(grep -c -- "$2" err)" = 1 ] && ok || { bad "$1: '$2' $(grep -c -- "$2" err) times"; head -5 err >&2; }
}

# --- the file size limit (item 3) ---
(ulimit -f 1000; same "ulimit -f 1000: leaks" "$P/tp_leaks")
(ulimit -f 1000; same "ulimit -f 1000: churn" "$T" churn 200000)
once "ulimit: stopped once" "tracing stopped: the trace file reached the file size limit (RLIMIT_FSIZE)"
same "setrlimit in the program" "$T" churn 200000 262144
once "setrlimit: stopped once" "tracing stopped: the trace file reached the file size limit"
# a limit of 0 set by the program: even the end of the trace (its header
# updated at exit) must not raise SIGXFSZ
same "setrlimit 0 in the program" "$T" churn 10 0
# SIGXFSZ blocked by the program: none raised for the tracer's writes, and
# the program's own stays pending
same "SIGXFSZ mask and pending state" "$T" xfsz 262144 200000
grep -q "xfsz: 1 then 3, took 25" traced.out && ok || bad "SIGXFSZ state: $(cat traced.out)"
# room for the header and the first part of the first chunk only (20
# KiB): the trace keeps what that part holds, stops at the second step
rm -f ./*.rtrace
(ulimit -f 20; same "ulimit -f 20" "$T" churn 2000)
once "ulimit -f 20: stopped once" "tracing stopped: the trace file reached the file size limit (RLIMIT_FSIZE)"
"$RTRACE" postproc -i tp_tracefile-*.rtrace 2> /dev/null | grep -q '^## trace incomplete: tracing stopped at call [1-9][0-9]*:' && ok ||
  bad "ulimit -f 20: no calls kept: $("$RTRACE" postproc -i tp_tracefile-*.rtrace 2>&1 | tail -2)"
# no room even for the header: no file, the program runs
rm -f ./*.rtrace
(ulimit -f 2; same "ulimit -f 2" "$T" churn 10)
grep -q "cannot write a trace file in '$TMP': File too large" err && ok || bad "ulimit -f 2: $(cat err)"
[ -z "$(ls ./*.rtrace 2>/dev/null)" ] && ok || bad "ulimit -f 2 left $(ls -l ./*.rtrace)"

# --- an incomplete trace says so wherever it is read (item 6) ---
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" --error-exitcode=9 -- "$T" churn 200000 262144 > /dev/null 2> err
[ $? -eq 9 ] && ok || bad "incomplete trace: --error-exitcode not honoured"
once "run says incomplete" "warning: $TMP/tp_tracefile-[0-9]*.rtrace: trace incomplete: tracing stopped at call [1-9][0-9]*: the trace file reached the file size limit (RLIMIT_FSIZE)"
"$RTRACE" run -q -o "$TMP" -- "$T" churn 200000 262144 > /dev/null 2>&1
[ $? -eq 0 ] && ok || bad "incomplete trace without --error-exitcode: not the program's status"
f=$(ls tp_tracefile-*.rtrace | head -1)
"$RTRACE" postproc -i "$f" > pp.out 2> err
grep -q "warning: .*trace incomplete: tracing stopped at call" err && ok || bad "postproc: no warning: $(cat err)"
grep -q "^## trace incomplete: tracing stopped at call" pp.out && ok || bad "postproc: no comment"

# a full disk, on a 2 MiB tmpfs when this may mount one
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=2m tmpfs "$TMP/small" 2> /dev/null; then
  trap 'umount "$TMP/small"; rm -rf "$TMP"' EXIT
  # the tracer's own full disk: raw traces (compressed, these fit)
  "$RTRACE" run -o "$TMP/small" --compress=no --error-exitcode=9 -- "$T" churn 400000 > out 2> err
  [ $? -eq 9 ] && grep -q "churn: done" out && ok || bad "full disk: status or output"
  once "full disk: stopped once" "tracing stopped: cannot extend the trace file: No space left on device"
  once "full disk: incomplete" "trace incomplete: tracing stopped at call [1-9][0-9]*: cannot extend the trace file: No space left on device"
  rm -f "$TMP"/small/*
  dd if=/dev/zero of="$TMP/small/fill" bs=4k > /dev/null 2>&1
  "$RTRACE" run -o "$TMP/small" --compress=no --error-exitcode=9 -- "$T" churn 10 > out 2> err
  [ $? -eq 9 ] && grep -q "churn: done" out && ok || bad "full disk at start: status or output"
  [ "$(ls "$TMP/small")" = fill ] && ok || bad "full disk at start left $(ls "$TMP/small")"
  grep -q "statically" err && bad "full disk at start blamed a static binary" || ok
  once "full disk at start: said" "no trace of process [0-9]*: the tracer could not write $TMP/small/tp_tracefile-[0-9]*.rtrace"
  umount "$TMP/small"
  trap 'rm -rf "$TMP"' EXIT
else
  echo "tracefile: cannot mount a tmpfs here: full-disk checks skipped (the file size limit stands in)"
fi

# --- traces rtrace run cannot read (item 7) ---
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$T" umask > /dev/null
[ "$(stat -c %a tp_tracefile-*.rtrace | sort -u)" = 600 ] && [ "$(ls tp_tracefile-*.rtrace | wc -l)" = 2 ] \
  && ok || bad "umask 0777: $(stat -c '%a %n' ./*.rtrace)"
mkdir -p "$TMP/gone"
"$RTRACE" run -o "$TMP/gone" --error-exitcode=9 -- "$T" rmdir "$TMP/gone" > out 2> err
[ $? -eq 9 ] && ok || bad "removed output directory: --error-exitcode not honoured"
once "removed output directory: said" "error: trace of process [0-9]* lost: $TMP/gone/tp_tracefile-[0-9]*.rtrace: No such file or directory"
grep -q "trace written to" err && bad "removed output directory: still 'trace written to'" || ok
nl="$TMP/p
1. x"
cp "$P/tp_leaks" "$nl"
"$RTRACE" run -o "$TMP" --xml-file="$TMP/nl.xml" -- "$nl" > /dev/null 2> err
[ $? -eq 7 ] && ok || bad "newline in the program's name: status"
once "newline: one trace" "trace written to"
once "newline: reported" "ERROR SUMMARY: 3 errors"
grep -q "<kind>Leak_DefinitelyLost</kind>" nl.xml 2> /dev/null && ok || bad "newline: no XML"

# --- disk use follows what was recorded (item 14): processes that end by
# exec or SIGKILL never cut their file; each must stay small and readable
# (bash's fork children, which exec, leave none: bash and 10 /bin/true)
mkdir -p "$TMP/du"
"$RTRACE" run -q -o "$TMP/du" --follow-children -- bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done'
kb=$(du -sk "$TMP/du" | cut -f1)
[ "$kb" -lt 4096 ] && ok || bad "10 execs of /bin/true under bash: $kb KiB on disk"
n=0
for f in "$TMP"/du/*.rtrace; do
  "$RTRACE" postproc -i "$f" > /dev/null 2>&1 || bad "unreadable: $f"
  n=$((n + 1))
done
[ $n = 11 ] && ok || bad "expected 11 traces, found $n"

finish
