#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz/, clang) if needed and fuzzes,
# each for a fifth of the given time: the text-protocol reader/writer
# (fuzz_text_read), the binary trace reader (fuzz_bin_read), then the
# Valgrind XML reader (fuzz_vgxml_read), the Callgrind reader and annotate
# report (fuzz_cg_read), the suppression file reader and matcher
# (fuzz_supp_read), the tracer's call-frame reader (fuzz_ehframe).
#
#   scripts/fuzz.sh [SECONDS]        default 60, shared by the six harnesses
#
# Seeds of fuzz_text_read: the sp-rtrace conformance fixtures
# (../shared/fixtures relative to the repository root, or $RTRACE_FIXTURES),
# tests/fuzz/corpus/ and the regression inputs in tests/fuzz/regressions/.
# Seeds of fuzz_bin_read: tests/fuzz/corpus-bin/ (written by
# tests/cli/gen_bin_trace) and tests/fuzz/regressions-bin/ when it exists.
# Seeds of fuzz_bin_zread (compressed traces): tests/fuzz/corpus-zbin/.
# Seeds of fuzz_cg_read: the profiles of tests/data/callgrind and
# tests/fuzz/regressions-cg/.
# Seeds of fuzz_vgxml_read: tests/fuzz/corpus-vgxml/ (the files of
# tests/data/vgxml) and tests/fuzz/regressions-vgxml/.
# Seeds of fuzz_supp_read: tests/fuzz/corpus-supp/ and
# tests/fuzz/regressions-supp/ when it exists.
# Seeds of fuzz_ehframe: tests/fuzz/corpus-ehframe/ (real segments cut by
# tests/fuzz/ehframe_seed.sh) and tests/fuzz/regressions-ehframe/ when it exists.
# Set FUZZ_NO_REGRESSIONS=1 to leave the regression inputs out, e.g. while a
# known bug is still open. Everything the run writes (new corpus entries,
# crash inputs, the logs) goes to a temporary directory ($FUZZ_WORKDIR if
# set), never into the repository.
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
share=$((secs / 6 > 0 ? secs / 6 : 1)) # each harness's share

fixtures=${RTRACE_FIXTURES:-$root/../shared/fixtures}/sp-rtrace/postproc
if [ ! -d "$fixtures" ]; then
  echo "fuzz.sh: seed fixtures not found: $fixtures" >&2
  echo "fuzz.sh: expected shared/fixtures next to the repository (or set RTRACE_FIXTURES)" >&2
  exit 2
fi

build=$root/build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  command -v clang >/dev/null || { echo "fuzz.sh: clang not found" >&2; exit 2; }
  echo "fuzz.sh: configuring $build" >&2
  CC=clang cmake -S "$root" -B "$build" -DRTRACE_FUZZ=ON -DRTRACE_TESTS=OFF >/dev/null
else
  # again each time: a build directory from before a harness was added
  # has no rule for it
  cmake -S "$root" -B "$build" -DRTRACE_FUZZ=ON -DRTRACE_TESTS=OFF >/dev/null
fi
cmake --build "$build" --target fuzz_text_read fuzz_bin_read fuzz_bin_zread fuzz_vgxml_read fuzz_cg_read fuzz_supp_read fuzz_ehframe -j"$(nproc 2>/dev/null || echo 2)" >/dev/null

work=${FUZZ_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/rtrace-fuzz.XXXXXX")}

# copy_seeds DIR PREFIX: the files of DIR into the corpus being set up
copy_seeds() {
  [ -d "$1" ] || return 0
  for f in "$1"/*; do
    [ -f "$f" ] && cp "$f" "$corpus/$2$(basename "$f")"
  done
  return 0
}

# fuzz HARNESS DICT: runs it on $corpus for $share seconds; 0 when clean
fuzz() {
  local name=$1 dict=$2 bin=$build/$1 dir=$work/$1
  local log=$dir/fuzz.log nseeds rc crashes
  nseeds=$(find "$corpus" -type f | wc -l)
  echo "fuzz.sh: $name: $nseeds seed(s), ${share}s, work directory $dir" >&2
  set +e
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  "$bin" \
    -dict="$dict" \
    -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time="$share" -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" \
    "$corpus" 2>&1 | tee "$log" | grep -E "^#[0-9]+.*(pulse|DONE)|^stat::|ERROR|SUMMARY|Test unit written|^$name:" >&2
  rc=${PIPESTATUS[0]}
  set -e
  crashes=$(find "$dir/artifacts" -type f | sort)
  if [ -z "$crashes" ] && [ "$rc" -eq 0 ]; then
    echo "fuzz.sh: $name: no crash in ${share}s; new corpus in $corpus, log $log" >&2
    return 0
  fi
  echo "fuzz.sh: $name found a problem (exit status $rc); full log: $log" >&2
  # the report itself: sanitizer or harness message through the stack
  sed -n "/==ERROR\|runtime error\|^$name:\|^==[0-9]*== ERROR/,/^SUMMARY/p" "$log" | head -80 >&2
  if [ -n "$crashes" ]; then
    echo "fuzz.sh: crash input(s):" >&2
    printf '%s\n' "$crashes" | sed 's/^/  /' >&2
    echo "fuzz.sh: reproduce with: $bin <input>; minimise with: $bin -minimize_crash=1 -runs=100000 <input>" >&2
  fi
  return 1
}

status=0

# the text reader: the fixtures are the traces; README.md and cases.tsv
# describe them
corpus=$work/fuzz_text_read/corpus
mkdir -p "$corpus" "$work/fuzz_text_read/artifacts"
for f in "$fixtures"/*; do
  case $(basename "$f") in README.md|cases.tsv) continue ;; esac
  [ -f "$f" ] && cp "$f" "$corpus/"
done
copy_seeds "$root/tests/fuzz/corpus" ""
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions" regression-
fuzz fuzz_text_read "$root/tests/fuzz/dict/text.dict" || status=1

# the binary reader
corpus=$work/fuzz_bin_read/corpus
mkdir -p "$corpus" "$work/fuzz_bin_read/artifacts"
copy_seeds "$root/tests/fuzz/corpus-bin" ""
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions-bin" regression-
fuzz fuzz_bin_read "$root/tests/fuzz/dict/bin.dict" || status=1

# compressed traces: the container reader and the frame codec
corpus=$work/fuzz_bin_zread/corpus
mkdir -p "$corpus" "$work/fuzz_bin_zread/artifacts"
copy_seeds "$root/tests/fuzz/corpus-zbin" ""
copy_seeds "$root/tests/fuzz/corpus-bin" "raw-" # a first byte other than R: codec input
fuzz fuzz_bin_zread "$root/tests/fuzz/dict/bin.dict" || status=1

# the Valgrind XML reader
corpus=$work/fuzz_vgxml_read/corpus
mkdir -p "$corpus" "$work/fuzz_vgxml_read/artifacts"
copy_seeds "$root/tests/fuzz/corpus-vgxml" ""
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions-vgxml" regression-
fuzz fuzz_vgxml_read "$root/tests/fuzz/dict/vgxml.dict" || status=1

# the Callgrind reader
corpus=$work/fuzz_cg_read/corpus
mkdir -p "$corpus" "$work/fuzz_cg_read/artifacts"
copy_seeds "$root/tests/data/callgrind" ""
rm -f "$corpus/gen.sh"
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions-cg" regression-
fuzz fuzz_cg_read "$root/tests/fuzz/dict/cg.dict" || status=1

# the suppression reader
corpus=$work/fuzz_supp_read/corpus
mkdir -p "$corpus" "$work/fuzz_supp_read/artifacts"
copy_seeds "$root/tests/fuzz/corpus-supp" ""
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions-supp" regression-
fuzz fuzz_supp_read "$root/tests/fuzz/dict/supp.dict" || status=1

# the tracer's .eh_frame reader: real segments (tests/fuzz/ehframe_seed.sh)
corpus=$work/fuzz_ehframe/corpus
mkdir -p "$corpus" "$work/fuzz_ehframe/artifacts"
copy_seeds "$root/tests/fuzz/corpus-ehframe" ""
[ -n "${FUZZ_NO_REGRESSIONS:-}" ] || copy_seeds "$root/tests/fuzz/regressions-ehframe" regression-
fuzz fuzz_ehframe "$root/tests/fuzz/dict/ehframe.dict" || status=1

exit $status
