# The 20 cases of shared/fixtures/sp-rtrace/postproc/cases.tsv must match
# the original post-processor's output byte for byte. Two expected files
# carry a known defect of the original (the context registry printed as
# "@ 0 : (null)"); for them the input's registry is expected instead.
. "$(dirname "$0")/lib.sh"
need_fixtures
ncases=0
while IFS=$'\t' read -r input args expected; do
  [ "$input" = input ] && continue
  ncases=$((ncases + 1))
  want="$PP/$expected"
  if grep -q '^@ 0 : (null)$' "$want"; then
    # replace the defective registry lines by the input's registry
    grep '^@ ' "$PP/$input" > "$TMP/registry"
    awk -v reg="$TMP/registry" '
      /^@ 0 : \(null\)$/ { if (!done) { while ((getline l < reg) > 0) print l; done = 1 } next }
      { print }' "$want" > "$TMP/want"
    want="$TMP/want"
  fi
  # shellcheck disable=SC2086 # args are option words
  (cd "$PP" && "$RTRACE" postproc $args "$input") > "$TMP/got" 2> "$TMP/err"
  rc=$?
  if [ $rc -ne 0 ]; then bad "postproc $args $input exited $rc: $(cat "$TMP/err")"; continue; fi
  if [ -s "$TMP/err" ]; then bad "postproc $args $input wrote to stderr: $(cat "$TMP/err")"; continue; fi
  check_same "postproc $args $input vs $expected" "$want" "$TMP/got"
done < "$PP/cases.tsv"
[ "$ncases" -eq 20 ] || bad "expected 20 cases in cases.tsv, found $ncases"
finish
