#!/usr/bin/env bash
# Where the tracer's time goes on allocation-heavy code, part by part: the
# tracer library is built again with one part of the per-call path taken
# out at a time (a copy of src/ with a line added at the top of that
# part's function), and the traced churn's own CPU time (user + sys of
# the program's process under `rtrace run`, rusage_exit.c) is measured
# with each library in turns, plain first. A part's cost per call is
# the full library's CPU minus the library without it, over the calls.
# The libraries without a part write wrong traces (no stacks, no times,
# no records): they only measure. See bench/README.md, "Allocation-heavy
# code: the floor".
#
#   bench/ablate.sh              # churn 1000000 x 1 thread, RUNS=21
#   bench/ablate.sh --quick      # churn 200000, RUNS=3
#
# Parts (PARTS="table lock unwind record clock index"):
#   table   rt_heap_insert and rt_heap_remove return at once (no live-block table)
#   lock    the thread's own front of the table taken without its lock
#           (one thread: nobody else takes it)
#   unwind  rt_backtrace returns a constant id (no stack read)
#   record  rt_record_call_bt returns at once (no CALL record, no trace pages)
#   clock   rt_now_ns and the record's clock read return 1
#   index   the call index from a per-thread counter (no lock xadd)
#
# Environment: RTRACE (default build/rtrace), RUNS, THREADS (1), CHURN_N
# (1000000), LIBS (more libraries to compare, space-separated paths:
# each row then says what the tree's library costs more than it per call,
# negative when it costs more).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/ablate
quick_or_help "$0" "$@"
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-3}
	CHURN_N=${CHURN_N:-200000}
fi
RUNS=${RUNS:-21}
CHURN_N=${CHURN_N:-1000000}
THREADS=${THREADS:-1}
RTRACE=${RTRACE:-$root/build/rtrace}
read -r -a parts <<<"${PARTS:-table lock unwind record clock index}"
need_tools "$RTRACE" cc python3
rm -rf "$out"
mkdir -p "$out/lib"
cc -O2 -g -pthread -o "$out/churn" "$here/churn.c"
cc -O2 -shared -fPIC -o "$out/rusage_exit.so" "$here/rusage_exit.c"

# --- the libraries: the tree's own, and one per part taken out
cp -r "$root/src" "$root/include" "$out/"
python3 - "$out/src/preload" <<'PY'
import sys
d = sys.argv[1]
def add(path, head, line):
	p = d + "/" + path
	s = open(p).read()
	assert head in s, (path, head)
	open(p, "w").write(s.replace(head, head + line, 1))
add("heap.c", "void rt_heap_insert(uintptr_t p, uint64_t size, int fn, uint64_t bt, uint64_t index)\n{\n",
    "#ifdef ABLATE_table\n\treturn;\n#endif\n")
add("heap.c", "int rt_heap_remove(uintptr_t p, int fn, uint64_t free_bt, uint64_t keep, rt_heap_blk *blk)\n{\n",
    "#ifdef ABLATE_table\n\tblk->index = 0;\n\treturn HEAP_OK;\n#endif\n")
add("heap.c", "static inline void st_lock(table *s)\n{\n\trt_h.table++;\n\tatomic_signal_fence(memory_order_seq_cst);\n",
    "#ifdef ABLATE_lock\n\tif (s == rt_h.front)\n\t\treturn;\n#endif\n")
add("heap.c", "static inline void st_unlock(table *s)\n{\n", "#ifdef ABLATE_lock\n\tif (s != rt_h.front)\n#endif\n")
add("unwind.c", "__attribute__((noinline)) uint64_t rt_backtrace(void)\n{\n", "#ifdef ABLATE_unwind\n\treturn 1;\n#endif\n")
add("record.c", "void rt_record_call_bt(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, uint64_t bt)\n{\n",
    "#ifdef ABLATE_record\n\treturn;\n#endif\n")
add("writer.c", "uint64_t rt_now_ns(void)\n{\n", "#ifdef ABLATE_clock\n\treturn 1;\n#endif\n")
add("record.c", "uint64_t rt_next_index(void)\n{\n", "#ifdef ABLATE_index\n\tstatic __thread uint64_t n;\n\treturn ++n;\n#endif\n")
s = open(d + "/record.c").read()
if "static inline __attribute__((always_inline)) uint64_t now_ns(void)\n{\n" in s:
	add("record.c", "static inline __attribute__((always_inline)) uint64_t now_ns(void)\n{\n", "#ifdef ABLATE_clock\n\treturn 1;\n#endif\n")
PY
files=$(sed -n '/^add_library(rtrace_preload SHARED/,/^)/p' "$root/CMakeLists.txt" | grep -o 'src/preload/[a-z_]*\.c')
build_lib() { # NAME [defines...]
	local name=$1
	shift
	(cd "$out" && cc -O2 -g -fPIC -fvisibility=hidden -fexceptions -ftls-model=initial-exec -std=gnu11 \
		-DRTRACE_LIBUNWIND=\"libunwind.so.8\" -Iinclude -Isrc "$@" -shared -Wl,-soname,librtrace-preload.so \
		-o "lib/$name.so" $files -ldl -lpthread)
}
echo "building the libraries ..." >&2
build_lib full
for p in "${parts[@]}"; do build_lib "no-$p" "-DABLATE_$p"; done
variants=(plain "$out/lib/full.so")
for p in "${parts[@]}"; do variants+=("$out/lib/no-$p.so"); done
for l in ${LIBS:-}; do variants+=("$l"); done

# --- runs: every variant in turns, RUNS rounds
declare -A cpu
calls=$((CHURN_N * THREADS * 2))
for ((r = 1; r <= RUNS; r++)); do
	echo "round $r/$RUNS" >&2
	for v in "${variants[@]}"; do
		rm -rf "$out/tr" "$out/ru"
		mkdir -p "$out/tr"
		if [ "$v" = plain ]; then
			RUSAGE_OUT=$out/ru LD_PRELOAD=$out/rusage_exit.so "$out/churn" "$CHURN_N" "$THREADS" >/dev/null
		else
			RTRACE_PRELOAD=$v RUSAGE_OUT=$out/ru LD_PRELOAD=$out/rusage_exit.so \
				"$RTRACE" run -q -o "$out/tr" -- "$out/churn" "$CHURN_N" "$THREADS" >/dev/null
		fi
		cpu[$v]+="$(awk '{ s += $2 + $3 } END { printf "%.1f", s / 1000 }' "$out/ru") "
	done
done

# --- results
mn() { tr ' ' '\n' | grep . | sort -g | head -1; }
md() { tr ' ' '\n' | grep . | median; }
full_md=$(md <<<"${cpu[$out/lib/full.so]}") full_mn=$(mn <<<"${cpu[$out/lib/full.so]}")
plain_md=$(md <<<"${cpu[plain]}") plain_mn=$(mn <<<"${cpu[plain]}")
echo "churn $CHURN_N x $THREADS thread(s), $calls calls, $RUNS rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %10s %10s %16s %16s\n' variant "median ms" "min ms" "ns/call (med)" "ns/call (min)"
for v in "${variants[@]}"; do
	m=$(md <<<"${cpu[$v]}") n=$(mn <<<"${cpu[$v]}")
	case $v in
	plain) label="plain (the program alone)" ;;
	*/full.so) label="tracer" ;;
	"$out"/lib/no-*) label="tracer without $(basename "$v" .so | sed 's/^no-//')" ;;
	*) label="$(basename "$v") (vs tracer)" ;;
	esac
	if [ "$v" = plain ]; then
		printf '%-34s %10s %10s %16s %16s\n' "$label" "$m" "$n" "$(awk -v a="$m" -v c="$calls" 'BEGIN { printf "%.1f", a * 1e6 / c }')" "$(awk -v a="$n" -v c="$calls" 'BEGIN { printf "%.1f", a * 1e6 / c }')"
	elif [ "$v" = "$out/lib/full.so" ]; then
		printf '%-34s %10s %10s %16s %16s\n' "$label (adds)" "$m" "$n" "$(awk -v a="$m" -v b="$plain_md" -v c="$calls" 'BEGIN { printf "%.1f", (a - b) * 1e6 / c }')" "$(awk -v a="$n" -v b="$plain_mn" -v c="$calls" 'BEGIN { printf "%.1f", (a - b) * 1e6 / c }')"
	else
		printf '%-34s %10s %10s %16s %16s\n' "$label (part costs)" "$m" "$n" "$(awk -v a="$full_md" -v b="$m" -v c="$calls" 'BEGIN { printf "%.1f", (a - b) * 1e6 / c }')" "$(awk -v a="$full_mn" -v b="$n" -v c="$calls" 'BEGIN { printf "%.1f", (a - b) * 1e6 / c }')"
	fi
done
