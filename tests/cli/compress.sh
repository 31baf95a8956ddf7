#!/usr/bin/env bash
# Compressed traces (docs/binary-format.md, "Compressed traces"): the
# size of a churn trace under `rtrace run`, every reader's output on the
# raw and the compressed trace of one run, traces written without rtrace
# run, a compressed trace cut anywhere, and SIGKILL of the program and of
# rtrace run itself.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${ZPACK:?ZPACK must name tests/cli/zpack}"
P=$PROGRAMS
cd "$TMP" || exit 1

magic() { head -c 8 "$1" | od -An -c | tr -d ' '; }
calls() { grep -c '^[0-9]' "$1"; } # the calls of a text trace

# --- size: at most 2 bytes a record on the churn (bound 3: a behaviour
# check, not a measurement; bench/tracesize.sh measures) ---
mkdir size
"$RTRACE" run -q -o size -- "$P/tp_churn" 300000 > /dev/null 2> err || bad "churn run: $(cat err)"
f=$(ls size/tp_churn-*.rtrace)
[ "$(magic "$f")" = 'RTRACE\0002' ] && ok || bad "churn trace not compressed: $(magic "$f")"
[ -z "$(ls size/*.raw 2> /dev/null)" ] && ok || bad "raw file left: $(ls size)"
"$RTRACE" convert --to text -o size.txt "$f" 2> err || bad "convert: $(cat err)"
n=$(calls size.txt)
bytes=$(stat -c %s "$f")
[ "$n" -ge 600000 ] && ok || bad "churn: $n calls, expected 600000 and more"
[ $((bytes * 100 / n)) -le 300 ] && ok || bad "churn: $bytes bytes for $n calls"
echo "compress: churn trace $bytes bytes, $n calls: $((bytes * 100 / n))/100 bytes a call"

# --- the same run, raw and compressed: every reader says the same ---
same_readers() { # NAME RAW COMPRESSED
  for r in "convert --to text" "heap" "heap --collapsed=allocations" "postproc -lc -i" "postproc -i"; do
    # shellcheck disable=SC2086
    "$RTRACE" $r "$2" > raw.out 2> raw.err
    a=$?
    # shellcheck disable=SC2086
    "$RTRACE" $r "$3" > z.out 2> z.err
    b=$?
    [ $a = 0 ] && [ $a = $b ] && ok || bad "$1: $r: status $a (raw) and $b (compressed): $(cat z.err)"
    check_same "$1: $r" raw.out z.out
  done
}
mkdir eq
"$RTRACE" run -q --compress=no -o eq -- "$P/tp_threads" > /dev/null 2>&1
"$RTRACE" run -q --compress=no -m memory,fd,file -o eq -- "$P/tp_fds" > /dev/null 2>&1
"$RTRACE" run -q --compress=no -o eq -- "$P/tp_churn" 100000 > /dev/null 2>&1
for f in eq/*.rtrace; do
  [ "$(magic "$f")" = 'RTRACE\0001' ] && ok || bad "--compress=no: $f is not raw"
  cp "$f" "$f.copy"
  "$ZPACK" "$f.copy" "$f.z" 9 || bad "zpack $f"
  [ "$(magic "$f.z")" = 'RTRACE\0002' ] && ok || bad "zpack: $f.z is not compressed"
  same_readers "$(basename "$f")" "$f" "$f.z"
done
# in place (rtrace run's way for a short process's trace): the same
# container, byte for byte, in the raw file's own inode, renamed; a trace
# whose container does not fit in its raw header stays as it was
mkdir ip
"$RTRACE" run -q --compress=no -o ip -- /bin/true > /dev/null 2>&1
"$RTRACE" run -q --compress=no -o ip -- /bin/echo in place > /dev/null 2>&1
for f in ip/*.rtrace; do
  cp "$f" "$f.copy"
  cp "$f" "$f.raw"
  ino=$(stat -c %i "$f.raw")
  "$ZPACK" "$f.copy" "$f.z" 1 || bad "zpack $f"
  "$ZPACK" --in-place "$f.raw" "$f.ip" 1 || bad "zpack --in-place $f: status $?"
  cmp -s "$f.z" "$f.ip" && ok || bad "zpack --in-place $f: not the container zpack writes"
  [ ! -e "$f.raw" ] && [ "$(stat -c %i "$f.ip")" = "$ino" ] && ok || bad "zpack --in-place $f: not the raw file's inode"
  same_readers "in place $(basename "$f")" "$f" "$f.ip"
done
f=$(ls eq/tp_churn-*.rtrace)
cp "$f" big.raw
"$ZPACK" --in-place big.raw big.ip 1; rc=$?
[ $rc = 3 ] && cmp -s "$f" big.raw && [ ! -e big.ip ] && ok || bad "zpack --in-place of a large trace: status $rc"

# CALLA records (descriptors with their arguments) went through the columns
"$RTRACE" convert --to text eq/tp_fds-*.rtrace.z | grep -q '\$path = ' && ok || bad "tp_fds: no call arguments read back"

# --- without rtrace run (LD_PRELOAD alone): raw, and readable ---
mkdir pre
RTRACE_DIR="$TMP/pre" LD_PRELOAD="$(dirname "$RTRACE")/librtrace-preload.so" "$P/tp_leaks" > /dev/null 2>&1
f=$(ls pre/tp_leaks-*.rtrace)
[ "$(magic "$f")" = 'RTRACE\0001' ] && ok || bad "LD_PRELOAD alone: not raw: $(magic "$f")"
"$RTRACE" postproc -lc -i "$f" > /dev/null 2> err && ok || bad "LD_PRELOAD alone: unreadable: $(cat err)"

# --- cut anywhere: the reader warns, naming the file, and reads every
# complete frame: calls of the whole trace, a prefix of each thread's ---
for z in eq/tp_churn-*.rtrace.z eq/tp_threads-*.rtrace.z; do
  "$RTRACE" convert --to text -o full.txt "$z"
  grep '^[0-9]' full.txt > full.calls
  LC_ALL=C sort -u full.calls > full.sorted
  size=$(stat -c %s "$z")
  for cut in 64 88 200 1000 $((size / 3)) $((size / 2)) $((size - 30)) $((size - 24)) $((size - 1)); do
    head -c "$cut" "$z" > cut.rtrace
    "$RTRACE" convert --to text -o cut.txt cut.rtrace 2> err
    rc=$?
    [ $rc = 0 ] && ok || bad "$z cut at $cut: status $rc: $(cat err)"
    grep -q "cut.rtrace: truncated compressed trace" err && ok || bad "$z cut at $cut: no warning: $(cat err)"
    grep '^[0-9]' cut.txt > cut.calls
    k=$(wc -l < cut.calls)
    # every call read is the whole trace's (one thread: its first k)
    [ -z "$(LC_ALL=C sort -u cut.calls | LC_ALL=C comm -23 - full.sorted | head -1)" ] && ok || bad "$z cut at $cut: calls not in the trace"
    case $z in *churn*) head -n "$k" full.calls | cmp -s - cut.calls && ok || bad "$z cut at $cut: not a prefix" ;; esac
  done
  [ "$k" -gt 0 ] && ok || bad "$z cut before the end frame: no calls"
done
head -c 40 "$z" > cut.rtrace
"$RTRACE" convert --to text -o cut.txt cut.rtrace 2> err && bad "cut in the header read" ||
  grep -q "expected the 64-byte file header" err && ok || bad "cut in the header: $(cat err)"

# --- SIGKILL of the program: compressed to its last record ---
mkdir kill
"$RTRACE" run -q -o kill -- "$P/tp_churn" 100000000 > /dev/null 2>&1 &
rpid=$!
sleep 1.5
cpid=$(pgrep -P $rpid | head -1)
[ -n "$cpid" ] && kill -KILL "$cpid"
wait $rpid
[ $? = 137 ] && ok || bad "SIGKILL of the program: rtrace run's status"
f=$(ls kill/tp_churn-*.rtrace)
[ "$(magic "$f")" = 'RTRACE\0002' ] && ok || bad "killed program: not compressed"
[ -z "$(ls kill/*.raw 2> /dev/null)" ] && ok || bad "killed program: raw file left"
"$RTRACE" convert --to text -o k.txt "$f" 2> err && ok || bad "killed program: $(cat err)"
grep -q truncated err && bad "killed program: read as truncated" || ok
[ "$(calls k.txt)" -gt 1000 ] && ok || bad "killed program: $(calls k.txt) calls"

# --- SIGKILL of rtrace run: reads to its last complete frame, warned ---
mkdir rkill
"$RTRACE" run -q -o rkill -- "$P/tp_churn" 100000000 > /dev/null 2>&1 &
rpid=$!
sleep 1.5
cpid=$(pgrep -P $rpid | head -1)
kill -KILL $rpid
wait $rpid 2> /dev/null
[ -n "$cpid" ] && kill -KILL "$cpid"
sleep 0.2
f=$(ls rkill/tp_churn-*.rtrace)
[ -f "$f.raw" ] && ok || bad "killed rtrace run: the raw file with the rest is gone"
"$RTRACE" convert --to text -o r.txt "$f" 2> err && ok || bad "killed rtrace run: status: $(cat err)"
grep -q "truncated compressed trace" err && ok || bad "killed rtrace run: no warning: $(cat err)"
[ "$(calls r.txt)" -gt 1000 ] && ok || bad "killed rtrace run: $(calls r.txt) calls"

finish
