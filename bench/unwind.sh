#!/usr/bin/env bash
# Micro-benchmark of unwinder candidates (bench/unwind.c) on a 20-frame
# call chain, built with -O2 (no frame pointers) and with
# -O2 -fno-omit-frame-pointer. See bench/README.md, "Tracer overhead".
#
#   bench/unwind.sh                 # 200000 backtraces per timing, median of 5
#   ITERATIONS=50000 bench/unwind.sh
#
# Environment:
#   ITERATIONS=n   backtraces per timing (default 200000)
#   REPEATS=n      timings per method, the median is printed (default 5)
#   IDLE_WAIT=s    wait up to s seconds (default 900) for an idle CPU first
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
out=$here/out
ITERATIONS=${ITERATIONS:-200000}
REPEATS=${REPEATS:-5}

case ${1:-} in
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
esac

mkdir -p "$out"

# Two binaries per set of flags: glibc's backtrace() only runs libgcc's
# unwinder in a program without libunwind (libunwind exports _Unwind_*)
cc=${CC:-cc}
for v in O2 O2-fp; do
	flags=(-O2 -g -pthread)
	[ "$v" = O2-fp ] && flags+=(-fno-omit-frame-pointer)
	"$cc" "${flags[@]}" -DUSE_LIBUNWIND=0 -o "$out/unwind-$v-gcc" "$here/unwind.c"
	"$cc" "${flags[@]}" -DUSE_LIBUNWIND=1 -o "$out/unwind-$v-unw" "$here/unwind.c" -lunwind
	"$cc" "${flags[@]}" -DUSE_LIBUNWIND=0 -DUSE_CFI=1 -o "$out/unwind-$v-cfi" "$here/unwind.c" \
		"$here/../src/preload/cfi.c" "$here/../src/preload/ehframe.c"
done

echo "== unwinder micro-benchmark, $(date '+%Y-%m-%d %H:%M %Z')"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, Linux $(uname -r)"
echo "libunwind $(dpkg-query -W -f '${Version}' libunwind-dev 2>/dev/null || echo '?'), $(ldd --version | head -1)"
echo "chain of 20 frames; 'chain' counts the returned addresses inside the chain's code"
echo "(21 when complete: bottom's call site and the 20 chain frames); $ITERATIONS backtraces"
echo "per timing, median of $REPEATS; '2thr': two threads unwinding at once, per thread."
echo "backtrace: glibc backtrace() in a program without libunwind (libgcc's unwinder);"
echo "backtrace*: the same call in a program linked with -lunwind, where it runs libunwind's"
echo "_Unwind_Backtrace; unw-*: libunwind (same binary as backtrace*); cached: the tracer's"
echo "unwinder (rules per return address + memo of the last stack); cached-rules: without the memo"
for v in O2 O2-fp; do
	echo
	case $v in
	O2) echo "-- built with -O2 (no frame pointers)" ;;
	O2-fp) echo "-- built with -O2 -fno-omit-frame-pointer" ;;
	esac
	wait_idle
	busy=$(cpu_busy 1)
	"$out/unwind-$v-gcc" "$ITERATIONS" "$REPEATS"
	"$out/unwind-$v-unw" "$ITERATIONS" "$REPEATS" | tail -n +2
	"$out/unwind-$v-cfi" "$ITERATIONS" "$REPEATS" | tail -n +2
	echo "(CPU busy before: ${busy}%)"
done
