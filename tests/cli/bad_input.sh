# Bad input gets a clear "file:line:col: expected ..." error and a non-zero
# exit, and nothing read before the error is lost from the output.
. "$(dirname "$0")/lib.sh"
need_fixtures
F="$PP/context.txt"

# run NAME WANT_RC WANT_STDERR_REGEX ARGS... (stdout kept in $TMP/out)
run() {
  local name=$1 want_rc=$2 want_err=$3
  shift 3
  "$RTRACE" "$@" > "$TMP/out" 2> "$TMP/err"
  local rc=$?
  if [ "$rc" -ne "$want_rc" ]; then bad "$name: exit $rc, expected $want_rc ($(head -c 300 "$TMP/err"))"; return; fi
  if ! grep -Eq -- "$want_err" "$TMP/err"; then bad "$name: stderr '$(head -c 300 "$TMP/err")' lacks /$want_err/"; return; fi
  ok
}

run "missing file" 1 "cannot open '$TMP/none': No such file" postproc -i "$TMP/none"
run "unknown long option" 2 "unknown option '--bogus'" postproc --bogus
run "unknown short option" 2 "unknown option '-x'" postproc -x
run "missing option value" 2 "option '-i' needs a value" postproc -i
run "stray argument" 2 "unexpected argument 'extra'" postproc -i "$F" extra
run "bad context mask" 2 "invalid context mask 'zz'" postproc -C zz -i "$F"
run "bad depth" 2 "invalid backtrace depth" postproc -b 0 -i "$F"
run "bad sort" 2 "invalid sort order 'big'" postproc -c -s big -i "$F"
run "sort without compress" 2 "add -c" postproc -s size -i "$F"
run "unknown command" 2 "unknown command 'frobnicate'" frobnicate

# a malformed call record: error with its position; the calls before it
# are still written
{ head -n 45 "$F"; echo "13. [14:54:27.465] malloc(abc) = 0x1"; tail -n +46 "$F"; } > "$TMP/mal.txt"
run "malformed call" 1 "mal.txt:46:27: expected a decimal resource size" postproc -i "$TMP/mal.txt"
head -n 45 "$F" > "$TMP/head.txt"
"$RTRACE" postproc -i "$TMP/head.txt" > "$TMP/want" 2>/dev/null
check_same "malformed call keeps what came before" "$TMP/want" "$TMP/out"
grep -q "note: the output is partial" "$TMP/err" && ok || bad "partial output not announced"

# a trace cut in the middle of a line (program killed): the incomplete
# line is reported and dropped, everything before it kept, with -l too
for cut in 3000 5001 9000; do
  head -c $cut "$F" > "$TMP/cut.txt"
  lines=$(wc -l < "$TMP/cut.txt")
  run "truncated at byte $cut" 1 "cut.txt:$((lines + 1)):[0-9]+: expected '\\\\n' ending the line, found end of file" postproc -l -i "$TMP/cut.txt"
  head -n "$lines" "$TMP/cut.txt" > "$TMP/whole.txt"
  "$RTRACE" postproc -l -i "$TMP/whole.txt" > "$TMP/want" 2>/dev/null
  check_same "truncated at $cut keeps complete records" "$TMP/want" "$TMP/out"
done

# binary garbage: rejected at the first non-text byte, nothing written
printf 'version=2.0, \n1. malloc(1) = 0x1\n\x00\x01\x02garbage\n' > "$TMP/bin.txt"
run "NUL byte" 1 "bin.txt:3:1: expected text, found byte 0x00" postproc -i "$TMP/bin.txt"
grep -q '^1\. malloc(1) = 0x1$' "$TMP/out" && ok || bad "record before binary garbage lost"
head -c 4096 /dev/urandom | tr -d '\n' | tr '\000' '\001' > "$TMP/random.bin"
run "random bytes" 1 "random.bin:1:[0-9]+: expected" postproc -i "$TMP/random.bin"
[ -s "$TMP/out" ] && bad "output written for a file with no header" || ok

# a line of megabytes
{ head -n 40 "$F"; head -c 3000000 /dev/zero | tr '\0' 'x'; echo; } > "$TMP/long.txt"
run "3 MB line" 1 "long.txt:41:1048577: expected a line of at most 1048576 bytes" postproc -i "$TMP/long.txt"

# empty input, header without key=value pairs, unknown resource type
: > "$TMP/empty.txt"
run "empty file" 1 "empty.txt: expected the header line, found an empty file" postproc -i "$TMP/empty.txt"
printf 'hello\n' > "$TMP/nohdr.txt"
run "no header" 1 "nohdr.txt:1:1: expected the header line" postproc -i "$TMP/nohdr.txt"
printf 'version=2.0, \n<1> : memory (bytes)\n1. malloc<mem>(1) = 0x1\n\n' > "$TMP/type.txt"
run "unknown resource type" 1 "type.txt:3:11: expected a resource type listed in the resource registry, found 'mem'" postproc -i "$TMP/type.txt"
printf 'version=2.0, \n1. malloc(1) = 0x1\n\t0xfoo\n\n' > "$TMP/frame.txt"
run "bad frame" 1 "frame.txt:3:5: expected a space or end of line after the frame address, found 'o'" postproc -i "$TMP/frame.txt"
printf 'version=2.0, \n: /lib/x.so => 0x10-\n' > "$TMP/mmap.txt"
run "bad mmap" 1 "mmap.txt:2:21: expected an end address" postproc -i "$TMP/mmap.txt"

# a directory is said to be one, by every command reading traces
mkdir -p "$TMP/dir"
run "directory, postproc" 1 "dir: is a directory, not a trace" postproc -i "$TMP/dir"
run "directory, convert" 1 "dir: is a directory, not a trace" convert "$TMP/dir"
run "directory, resolve" 1 "dir: is a directory, not a trace" resolve -i "$TMP/dir"
# what no format recognises is an error naming the formats tried, not a
# text trace of comments (XML of another tool, a header of no key=value)
printf '<?xml version="1.0"?>\n<!DOCTYPE html>\n<html>\n</html>\n' > "$TMP/other.xml"
run "other XML" 1 "other.xml:1:1: expected the header line of a text trace .*not a binary trace or Valgrind XML either" postproc -i "$TMP/other.xml"
run "other XML, convert" 1 "other.xml:1:1: expected the header line of a text trace .*not a binary trace, Valgrind XML or a Callgrind profile either" convert "$TMP/other.xml"
[ -s "$TMP/out" ] && bad "output written for an unrecognised input" || ok
printf 'key=value <x>, "a"=b\n1. malloc(1) = 0x1\n' > "$TMP/badkey.txt"
run "header with a non-word key" 1 "badkey.txt:1:1: expected the header line of a text trace" postproc -i "$TMP/badkey.txt"
printf 'backtrace depth=5, version=2.0\n1. malloc(1) = 0x1\n\n' > "$TMP/spacekey.txt"
"$RTRACE" postproc -i "$TMP/spacekey.txt" > /dev/null 2> "$TMP/err" && [ ! -s "$TMP/err" ] && ok ||
  bad "header key with a space: $(cat "$TMP/err")"
cat "$TMP/other.xml" | "$RTRACE" postproc > /dev/null 2> "$TMP/err"
[ $? = 1 ] && grep -q "<stdin>:1:1: expected the header line of a text trace" "$TMP/err" && ok || bad "unrecognised pipe: $(cat "$TMP/err")"

# unrecognised lines are comments (the spec says so), with a warning
printf 'version=2.0, \nhello there\n1. malloc(1) = 0x1\n\n' > "$TMP/odd.txt"
run "unrecognised line warns" 0 "odd.txt:2:1: not a record of the text protocol" postproc -i "$TMP/odd.txt"
grep -q '^hello there$' "$TMP/out" && ok || bad "unrecognised line not kept as comment"
"$RTRACE" postproc -q -i "$TMP/odd.txt" > /dev/null 2> "$TMP/err"
[ $? -eq 0 ] && [ ! -s "$TMP/err" ] && ok || bad "-q did not silence the warning"

# output errors
"$RTRACE" postproc -i "$F" > /dev/full 2> "$TMP/err"
[ $? -eq 1 ] && grep -q "cannot write standard output: No space left on device" "$TMP/err" && ok ||
  bad "write to /dev/full not reported: $(cat "$TMP/err")"
run "missing output dir" 1 "cannot create an output file in '$TMP/nodir'" postproc -i "$F" -o "$TMP/nodir"
finish
