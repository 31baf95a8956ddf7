# The resolver's cache of debug files: a separate debug file with
# compressed sections (found by build id under --debug-dir) is inflated
# into RTRACE_CACHE_DIR on first use, read from there afterwards with the
# same results byte for byte, made again when the copy is damaged; a cache
# that cannot be written gives one warning and changes nothing else;
# --no-cache neither reads nor writes it.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
TRACER=${TRACER:-$RTRACE}
cd "$TMP" || exit 1
for tool in objcopy strip readelf; do
  command -v $tool > /dev/null || { echo "resolve_cache.sh needs $tool (binutils)" >&2; exit 1; }
done
unset XDG_CACHE_HOME

# two stripped modules whose debug files, with zlib sections, are found
# by build id: the executable and the shared library it links
strip_with_debug() { # MODULE COPY
  cp "$1" "$2"
  local id
  id=$(readelf -n "$2" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  mkdir -p "dbg/.build-id/${id:0:2}"
  objcopy --only-keep-debug --compress-debug-sections=zlib "$2" "dbg/.build-id/${id:0:2}/${id:2}.debug"
  strip --strip-all "$2"
  echo "$id"
}
mkdir -p app
ID=$(strip_with_debug "$P/tp_resolve_O2" app/tp_resolve_O2)
LIB_ID=$(strip_with_debug "$P/libtp_reslib.so" app/libtp_reslib.so)
readelf -SW "dbg/.build-id/${ID:0:2}/${ID:2}.debug" | grep -q ' \.debug_info .* C ' && ok ||
  bad "objcopy did not compress the debug sections"
rm -rf tr && mkdir tr
LD_LIBRARY_PATH=$TMP/app "$TRACER" run -q -o tr -- app/tp_resolve_O2 > /dev/null 2>&1 || bad "run"
mv tr/*.rtrace t.rtrace

res() { # OUT [OPTIONS...]: resolve t.rtrace with --debug-dir dbg, warnings in OUT.err
  local out=$1
  shift
  "$RTRACE" resolve --debug-dir "$TMP/dbg" "$@" -i t.rtrace -o "$out" 2> "$out.err" || bad "resolve $*: $(cat "$out.err")"
}
C=$TMP/cache
copy=$C/$ID.debug
no_compressed() { ! readelf -SW "$1" 2> /dev/null | grep -qE '^ *\[ *[0-9]+\] .* [A-Z]*C[A-Z]* +[0-9]+ +[0-9]+ +[0-9]+$'; }

# no cache: the reference
res ref.txt --no-cache
grep -q 'res_inner() at .*/tp_resolve\.c:' ref.txt && ok || bad "--debug-dir with compressed sections"
grep -q 'reslib_fill() at .*/tp_reslib\.c:' ref.txt && ok || bad "shared library's compressed debug file"
[ ! -e "$C" ] && ok || bad "--no-cache made $C"

# created on first use: one copy per build id, inflated, same results
RTRACE_CACHE_DIR=$C res cold.txt
check_same "cold cache: same results as without" ref.txt cold.txt
[ -s "$copy" ] && [ -s "$C/$LIB_ID.debug" ] && ok || bad "cache files: $(ls -la "$C" 2>&1)"
no_compressed "$copy" && readelf -SW "$copy" | grep -q ' \.debug_info ' && ok || bad "the copy is not inflated"
[ "$(find "$C" -name '.*' -type f | wc -l)" = 0 ] && ok || bad "temporary files left in $C"
[ ! -s cold.txt.err ] && ok || bad "cold cache warned: $(cat cold.txt.err)"

# reused: not written again, same results byte for byte
before=$(stat -c '%i %s %Y' "$copy")
RTRACE_CACHE_DIR=$C res warm.txt
check_same "warm cache: same results" ref.txt warm.txt
[ "$(stat -c '%i %s %Y' "$copy")" = "$before" ] && ok || bad "the copy was written again"
RTRACE_CACHE_DIR=$C "$RTRACE" postproc -lcr --debug-dir "$TMP/dbg" -i t.rtrace > lcr.txt 2> lcr.err &&
  "$RTRACE" postproc -lcr --no-cache --debug-dir "$TMP/dbg" -i t.rtrace > lcr.ref 2>&1 && ok || bad "postproc -r"
check_same "postproc -r with the cache" lcr.ref lcr.txt

# damaged copies are ignored and made again: truncated, garbage, another
# build id
damage() { # NAME COMMAND...: damage the copy, resolve, expect the reference and a good copy
  local name=$1
  shift
  "$@"
  RTRACE_CACHE_DIR=$C res "$name.txt"
  check_same "$name copy: same results" ref.txt "$name.txt"
  no_compressed "$copy" && [ "$(stat -c %s "$copy")" = "$(echo "$before" | cut -d' ' -f2)" ] && ok ||
    bad "$name copy was not made again: $(ls -la "$copy")"
  [ ! -s "$name.txt.err" ] && ok || bad "$name copy: $(cat "$name.txt.err")"
}
damage truncated truncate -s 4000 "$copy"
damage truncated-end truncate -s -100 "$copy"
damage garbage sh -c "head -c 100000 /dev/urandom > '$copy'"
damage empty truncate -s 0 "$copy"
damage other-id cp "$C/$LIB_ID.debug" "$copy"

# a cache that cannot be written: one warning, the same results
touch notadir
RTRACE_CACHE_DIR=$TMP/notadir/cache res unwritable.txt
check_same "unwritable cache: same results" ref.txt unwritable.txt
[ "$(grep -c 'warning: .*cache' unwritable.txt.err)" = 1 ] && [ "$(wc -l < unwritable.txt.err)" = 1 ] && ok ||
  bad "unwritable cache: one warning: $(cat unwritable.txt.err)"
RTRACE_CACHE_DIR=$TMP/notadir/cache "$RTRACE" resolve -q --debug-dir "$TMP/dbg" -i t.rtrace -o q.txt 2> q.err
[ ! -s q.err ] && ok || bad "-q: $(cat q.err)"

# the default place: $XDG_CACHE_HOME/rtrace/debug, else ~/.cache/rtrace/debug
XDG_CACHE_HOME=$TMP/xdg res xdg.txt
[ -s "$TMP/xdg/rtrace/debug/$ID.debug" ] && ok || bad "XDG_CACHE_HOME: $(find "$TMP/xdg" 2>&1)"
HOME=$TMP/home res home.txt
[ -s "$TMP/home/.cache/rtrace/debug/$ID.debug" ] && ok || bad "HOME: $(find "$TMP/home" 2>&1)"
check_same "XDG cache: same results" ref.txt xdg.txt

# the command line
"$RTRACE" resolve --help | grep -q -- '--no-cache' && ok || bad "resolve --help: --no-cache"
"$RTRACE" postproc --help | grep -q -- '--no-cache' && ok || bad "postproc --help: --no-cache"
"$RTRACE" postproc --no-cache -i t.rtrace > /dev/null 2> e.err
[ $? = 2 ] && grep -q "add -r" e.err && ok || bad "--no-cache without -r: $(cat e.err)"
finish
