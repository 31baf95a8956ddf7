#!/usr/bin/env bash
# The main job on the bundled example: install dependencies, build, trace
# examples/leaky.c with `rtrace run`, and list its leaks by stack with
# `rtrace postproc -lcr`: leaks grouped by stack, with function names and lines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build > /dev/null
cmake --build build -j "$(nproc)" > /dev/null
out=$(mktemp -d)
./build/rtrace run -o "$out" -- ./build/examples/leaky
./build/rtrace postproc -lcr -i "$out"/leaky-*.rtrace
echo "(trace kept in $out)"
