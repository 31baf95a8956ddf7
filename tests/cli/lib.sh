# Helpers for the CLI tests: each test sources this, calls check/expect_*,
# and ends with `finish`, which prints "N passed, N failed" and sets the
# exit status.
set -u
: "${RTRACE:?RTRACE must name the rtrace binary}"
passed=0
failed=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# check NAME EXPECTED_FILE ACTUAL_FILE
check_same() {
  if cmp -s "$2" "$3"; then ok; else bad "$1"; diff "$2" "$3" | head -20 >&2; fi
}

need_fixtures() {
  if [ ! -d "${FIXTURES:-}/sp-rtrace/postproc" ]; then
    echo "fixtures not found at '${FIXTURES:-}' (configure with -DRTRACE_FIXTURES=...)" >&2
    exit 1
  fi
  PP="$FIXTURES/sp-rtrace/postproc"
}

need_valgrind() {
  command -v valgrind > /dev/null || { echo "valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}
