#!/usr/bin/env bash
# Builds the libFuzzer harness (build-fuzz/, clang) if needed and fuzzes the
# text-protocol reader/writer for a bounded time.
#
#   scripts/fuzz.sh [SECONDS]        default 60
#
# Seeds: the sp-rtrace conformance fixtures (../shared/fixtures relative to
# the repository root, or $RTRACE_FIXTURES), tests/fuzz/corpus/ and the
# regression inputs in tests/fuzz/regressions/ (set FUZZ_NO_REGRESSIONS=1 to
# leave those out, e.g. while a known bug is still open). Everything the run
# writes (new corpus entries, crash inputs, the log) goes to a temporary
# directory ($FUZZ_WORKDIR if set), never into the repository.
#
# Exit status: 0 when no crash was found, 1 when one was (its input path is
# printed), 2 on a usage or setup error.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
if ! [[ $secs =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [SECONDS]   (a positive number of seconds, default 60)" >&2
  exit 2
fi

fixtures=${RTRACE_FIXTURES:-$root/../shared/fixtures}/sp-rtrace/postproc
if [ ! -d "$fixtures" ]; then
  echo "fuzz.sh: seed fixtures not found: $fixtures" >&2
  echo "fuzz.sh: expected shared/fixtures next to the repository (or set RTRACE_FIXTURES)" >&2
  exit 2
fi

build=$root/build-fuzz
bin=$build/fuzz_text_read
if [ ! -f "$build/CMakeCache.txt" ]; then
  command -v clang >/dev/null || { echo "fuzz.sh: clang not found" >&2; exit 2; }
  echo "fuzz.sh: configuring $build" >&2
  CC=clang cmake -S "$root" -B "$build" -DRTRACE_FUZZ=ON -DRTRACE_TESTS=OFF >/dev/null
elif ! grep -q '^RTRACE_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -DRTRACE_FUZZ=ON -DRTRACE_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target fuzz_text_read -j"$(nproc 2>/dev/null || echo 2)" >/dev/null

work=${FUZZ_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/rtrace-fuzz.XXXXXX")}
mkdir -p "$work/corpus" "$work/artifacts"
# the fixtures are the traces; README.md and cases.tsv describe them
for f in "$fixtures"/*; do
  case $(basename "$f") in README.md|cases.tsv) continue ;; esac
  [ -f "$f" ] && cp "$f" "$work/corpus/"
done
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"
if [ -z "${FUZZ_NO_REGRESSIONS:-}" ] && [ -d "$root/tests/fuzz/regressions" ]; then
  for f in "$root"/tests/fuzz/regressions/*; do
    [ -f "$f" ] && cp "$f" "$work/corpus/regression-$(basename "$f")"
  done
fi
nseeds=$(find "$work/corpus" -type f | wc -l)
echo "fuzz.sh: $nseeds seed(s), ${secs}s, work directory $work" >&2

log=$work/fuzz.log
set +e
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" \
  -dict="$root/tests/fuzz/dict/text.dict" \
  -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$secs" -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" \
  "$work/corpus" 2>&1 | tee "$log" | grep -E '^#[0-9]+.*(pulse|DONE)|^stat::|ERROR|SUMMARY|Test unit written|^fuzz_text_read:' >&2
rc=${PIPESTATUS[0]}
set -e

crashes=$(find "$work/artifacts" -type f | sort)
if [ -n "$crashes" ] || [ "$rc" -ne 0 ]; then
  echo "fuzz.sh: the fuzzer found a problem (exit status $rc); full log: $log" >&2
  # the report itself: sanitizer or harness message through the stack
  sed -n '/==ERROR\|runtime error\|^fuzz_text_read:\|^==[0-9]*== ERROR/,/^SUMMARY/p' "$log" | head -80 >&2
  if [ -n "$crashes" ]; then
    echo "fuzz.sh: crash input(s):" >&2
    printf '%s\n' "$crashes" | sed 's/^/  /' >&2
    echo "fuzz.sh: reproduce with: $bin <input>; minimise with: $bin -minimize_crash=1 -runs=100000 <input>" >&2
  fi
  exit 1
fi
echo "fuzz.sh: no crash in ${secs}s; new corpus in $work/corpus, log $log" >&2
