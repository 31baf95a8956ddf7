# rtrace postproc reads binary traces, told by content: from a file, from
# standard input (a redirected file or a pipe), whole or cut off; text
# traces through a pipe still stream as before.
. "$(dirname "$0")/lib.sh"
: "${GEN_BIN_TRACE:?GEN_BIN_TRACE must name the gen_bin_trace program}"
export TZ=UTC # the trace's times are printed in local time
B="$TMP/app.rtrace"
"$GEN_BIN_TRACE" sample "$B" || { echo "gen_bin_trace failed" >&2; exit 1; }

# two threads (tid 100: calls 1 3 5 7, tid 101: 2 4 6) in 128-byte chunks;
# 0x1000 is freed by 3 and allocated again by 5; both threads define the
# stack 0x400123 0x400456 under ids of their own
cat > "$TMP/want.lc" <<'EOF'
version=2.0, arch=x86_64, timestamp=2011.6.16 15:49:48, process=/usr/bin/app, pid=4242, filter=leaks|compress, backtrace depth=10, origin=rtrace 0.1.0, 
@ 1 : first context
<1> : memory (memory allocation in bytes)
: /usr/bin/app => 0x400000-0x401000
: /lib/libc.so.6 => 0x7f0000000000-0x7f0000100000
5. [15:49:48.503] malloc(16) = 0x1000
7. [15:49:48.504] malloc(8) = 0x4000
# allocation summary: 2 block(s) with total size 24
	0x400123
	0x400456

4. [15:49:48.505] calloc(64) = 0x3000
# allocation summary: 1 block(s) with total size 64
	0x7f0000001000
	0x400789

## rtrace: tracing stopped: disk full
# Resource - memory (memory allocation in bytes):
# 3 block(s) leaked with total size of 88 bytes
EOF
cat > "$TMP/want.plain" <<'EOF'
version=2.0, arch=x86_64, timestamp=2011.6.16 15:49:48, process=/usr/bin/app, pid=4242, backtrace depth=10, origin=rtrace 0.1.0, 
@ 1 : first context
<1> : memory (memory allocation in bytes)
: /usr/bin/app => 0x400000-0x401000
: /lib/libc.so.6 => 0x7f0000000000-0x7f0000100000
1. [15:49:48.501] malloc(16) = 0x1000
	0x400123
	0x400456

2. @1 [15:49:48.502] malloc(32) = 0x2000
	0x400123
	0x400456

3. [15:49:48.502] free(0x1000)

4. [15:49:48.505] calloc(64) = 0x3000
	0x7f0000001000
	0x400789

5. [15:49:48.503] malloc(16) = 0x1000
	0x400123
	0x400456

6. @1 [15:49:48.506] free(0x2000)

7. [15:49:48.504] malloc(8) = 0x4000
	0x400123
	0x400456

## rtrace: tracing stopped: disk full
EOF

# run NAME WANT_RC ARGS... (stdout in $TMP/out, stderr in $TMP/err)
run() {
  local name=$1 want_rc=$2
  shift 2
  "$RTRACE" "$@" > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  [ "$rc" -eq "$want_rc" ] && ok || bad "$name: exit $rc, expected $want_rc ($(head -c 300 "$TMP/err"))"
}

run "-lc -i binary" 0 postproc -lc -i "$B"
check_same "-lc -i binary" "$TMP/want.lc" "$TMP/out"
grep -q "^rtrace: warning: $B: byte offset [0-9]*: tracer message: rtrace: tracing stopped: disk full$" "$TMP/err" \
  && ok || bad "tracer message not warned about: $(cat "$TMP/err")"
run "-q -lc -i binary" 0 postproc -q -lc -i "$B"
[ -s "$TMP/err" ] && bad "-q still warns: $(cat "$TMP/err")" || ok
run "plain -i binary" 0 postproc -q -i "$B"
check_same "plain -i binary" "$TMP/want.plain" "$TMP/out"

# standard input: a redirected file (mapped) and a pipe (read into memory)
"$RTRACE" postproc -q -lc < "$B" > "$TMP/redir" 2>&1
check_same "binary on redirected stdin" "$TMP/want.lc" "$TMP/redir"
cat "$B" | "$RTRACE" postproc -q -lc > "$TMP/piped" 2>&1
check_same "binary through a pipe" "$TMP/want.lc" "$TMP/piped"

# the output is text that reads back to the same result
"$RTRACE" postproc -q -i "$B" > "$TMP/as.txt"
"$RTRACE" postproc -lc -i "$TMP/as.txt" > "$TMP/again" 2> "$TMP/err"
check_same "binary converted to text, then -lc" "$TMP/want.lc" "$TMP/again"

# -b keeps the top frames; -o names the file after the process and pid
run "-b 1" 0 postproc -q -lc -b 1 -i "$B"
grep -q "backtrace depth=1," "$TMP/out" && ok || bad "-b 1: header not updated"
[ "$(grep -c "^	0x" "$TMP/out")" -eq 2 ] && ok || bad "-b 1: $(grep -c "^	0x" "$TMP/out") frames"
mkdir "$TMP/dir"
run "-o dir" 0 postproc -q -lc -i "$B" -o "$TMP/dir"
check_same "-o dir" "$TMP/want.lc" "$TMP/dir/app-4242.rtrace.txt"

# a text trace through a pipe still reads (the peeked bytes are replayed)
need_fixtures
C="$PP/context.txt"
"$RTRACE" postproc -lc -i "$C" > "$TMP/text.i"
cat "$C" | "$RTRACE" postproc -lc > "$TMP/text.piped"
check_same "text through a pipe" "$TMP/text.i" "$TMP/text.piped"
head -c 3 "$C" | "$RTRACE" postproc > /dev/null 2> "$TMP/err"
grep -q "<stdin>:1:4: expected '\\\\n' ending the line" "$TMP/err" && ok || bad "3 bytes through a pipe: $(cat "$TMP/err")"
printf '' | "$RTRACE" postproc > /dev/null 2> "$TMP/err"
grep -q "expected the header line, found an empty file" "$TMP/err" && ok || bad "empty pipe: $(cat "$TMP/err")"

# a trace cut inside a chunk's used bytes: an error with the byte offset,
# and the calls before it are written. Chunks: 64 and 192 thread 100
# (calls 1 3), 320 thread 101 (2 4 6), 448 thread 100 (5 7).
size=$(wc -c < "$B")
calls() { sed -n '/^[0-9]*\. /s/\. .*//p' "$1" | tr '\n' ' '; }
# cut_at NAME BYTES WANT_CALLS: cuts the trace, expects an error
cut_at() {
  head -c "$2" "$B" > "$TMP/cut.rtrace"
  run "$1" 1 postproc -i "$TMP/cut.rtrace"
  grep -q "^rtrace: error: $TMP/cut.rtrace: byte offset [0-9]*: expected .*truncated trace" "$TMP/err" \
    && ok || bad "$1: message $(cat "$TMP/err")"
  grep -q "note: the output is partial" "$TMP/err" && ok || bad "$1: partial output not announced"
  [ "$(calls "$TMP/out")" = "$3" ] && ok || bad "$1: calls '$(calls "$TMP/out")', expected '$3'"
}
# in the last chunk, inside call 7: calls 1-6 are complete
cut_at "cut in call 7" $((size - 128 + 40)) "1 2 3 4 5 6 "
# inside call 4 (thread 101): thread 100's call 5 is lost with its chunk,
# so only 1-3 are a prefix that is sure to be complete
cut_at "cut in call 4" $((size - 256 + 60)) "1 2 3 "
sed -n '/^1\. /,/^4\. /p' "$TMP/want.plain" | sed '$d' > "$TMP/want.cut"
sed -n '/^1\. /,$p' "$TMP/out" > "$TMP/got.cut"
check_same "cut in call 4: calls 1-3 as they were" "$TMP/want.cut" "$TMP/got.cut"

# cut at a chunk boundary with data_end set: no error, a warning
head -c $((size - 128)) "$B" > "$TMP/short.rtrace"
run "short copy" 0 postproc -i "$TMP/short.rtrace"
grep -q "expected chunks up to data_end" "$TMP/err" && ok || bad "short copy not warned about: $(cat "$TMP/err")"

# not a trace of a version we know; a bad chunk
{ printf 'RTRACE\000\003'; tail -c +9 "$B"; } > "$TMP/v2.rtrace"
run "version 3" 1 postproc -i "$TMP/v2.rtrace"
grep -q "v2.rtrace: byte offset 7: expected binary format version 1 (or 2, compressed), found version 3" "$TMP/err" \
  && ok || bad "version 3 message: $(cat "$TMP/err")"
[ -s "$TMP/out" ] && bad "output written for an unreadable trace" || ok
{ head -c 64 "$B"; printf 'XXXX'; tail -c +69 "$B"; } > "$TMP/magic.rtrace"
run "bad chunk magic" 1 postproc -i "$TMP/magic.rtrace"
grep -q "byte offset 64: expected chunk magic \"RTCK\"" "$TMP/err" && ok || bad "chunk magic message: $(cat "$TMP/err")"

finish
