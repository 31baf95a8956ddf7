# Reading a trace and writing it back is stable: the output of a second
# pass equals the first, for every fixture and for each filter set.
. "$(dirname "$0")/lib.sh"
need_fixtures
for f in "$PP"/sample.txt* "$PP"/context.txt*; do
  for opts in "" "-l" "-c" "-lc"; do
    # shellcheck disable=SC2086
    "$RTRACE" postproc $opts -i "$f" > "$TMP/one" 2>/dev/null || { bad "pass 1 $opts $f"; continue; }
    # shellcheck disable=SC2086
    "$RTRACE" postproc $opts -i "$TMP/one" > "$TMP/two" 2>/dev/null || { bad "pass 2 $opts $f"; continue; }
    check_same "idempotent $opts $(basename "$f")" "$TMP/one" "$TMP/two"
  done
  # with no options an uncompressed trace keeps every permanent line
  # (a compressed one is expanded: each call gets its group's frames)
  head -n 1 "$f" | grep -q compress && continue
  "$RTRACE" postproc -i "$f" > "$TMP/one"
  grep -v '^# ' "$f" | grep -c . > "$TMP/n_in"
  grep -c . "$TMP/one" > "$TMP/n_out"
  check_same "no record lost $(basename "$f")" "$TMP/n_in" "$TMP/n_out"
done
finish
