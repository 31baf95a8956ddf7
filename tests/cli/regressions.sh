# Inputs the fuzzer found (tests/fuzz/regressions) and its seeds: every
# option set must either succeed or fail cleanly, and whatever postproc
# writes must read back without error.
. "$(dirname "$0")/lib.sh"
dir="${SRCDIR:?}/tests/fuzz"
n=0
for f in "$dir"/regressions/* "$dir"/corpus/* "$dir"/regressions-bin/* "$dir"/corpus-bin/*; do
  n=$((n + 1))
  for opts in "" "-l" "-c" "-lc -s count" "-b 1 -C 0"; do
    # shellcheck disable=SC2086
    "$RTRACE" postproc -q $opts -i "$f" > "$TMP/one" 2> "$TMP/err"
    rc=$?
    if [ $rc -gt 1 ] || grep -q "runtime error\|Sanitizer" "$TMP/err"; then
      bad "postproc $opts $(basename "$f"): exit $rc $(head -c 300 "$TMP/err")"; continue
    fi
    [ $rc -eq 1 ] && [ ! -s "$TMP/one" ] && { ok; continue; }
    "$RTRACE" postproc -q -i "$TMP/one" > /dev/null 2> "$TMP/err2" && ok ||
      bad "output of postproc $opts $(basename "$f") does not read back: $(head -c 300 "$TMP/err2")"
  done
done
[ "$n" -ge 10 ] || bad "expected at least 10 regression and seed inputs, found $n"
finish
