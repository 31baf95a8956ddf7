#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds rtrace twice (release,
# and with AddressSanitizer + UndefinedBehaviorSanitizer), runs every unit and
# CLI test on both builds, then fuzzes the readers for a bounded time.
# Usage: scripts/test.sh            (FUZZ_SECONDS=N to change the fuzz time)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=$(nproc)

echo "== release build"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j "$jobs" > /dev/null
(cd build && ctest --output-on-failure -j "$jobs")

echo "== ASan+UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DRTRACE_SANITIZE=ON > /dev/null
cmake --build build-asan -j "$jobs" > /dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j "$jobs")

echo "== fuzzing the readers (${FUZZ_SECONDS:-60}s)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}"

# set -e stopped at the first failing stage, so all three passed here
echo "stages: 3 passed, 0 failed"
