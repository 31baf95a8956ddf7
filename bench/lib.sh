# Shared by the benchmark scripts: measuring only on an idle machine.

cpu_busy() { # percent of CPU time not idle over $1 (default 2) seconds, all cores
	local a b
	a=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6 }' /proc/stat)
	sleep "${1:-2}"
	b=$(awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6 }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x); split(b, y); printf "%d", 100 - 100 * (y[2] - x[2]) / (y[1] - x[1]) }'
}

wait_idle() { # waits (at most $IDLE_WAIT s, default 900) for the CPU to go idle
	local waited=0
	while [ "$(cpu_busy 1)" -gt 10 ]; do
		if [ "$waited" = 0 ]; then echo "  (CPU busy: waiting for it to go idle ...)" >&2; fi
		waited=$((waited + 1)) # cpu_busy 1 takes a second
		if [ "$waited" -ge "${IDLE_WAIT:-900}" ]; then
			echo "  (still busy after ${IDLE_WAIT:-900} s: measuring anyway)" >&2
			return
		fi
	done
}

# quick_or_help SCRIPT ARGS...: the benchmarks' arguments: --quick sets
# QUICK=1, -h/--help prints SCRIPT's header comment, anything else is an error
quick_or_help() {
	local script=$1 arg
	shift
	for arg in "$@"; do
		case $arg in
		--quick) QUICK=1 ;;
		-h | --help)
			sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'
			exit 0
			;;
		*)
			echo "$(basename "$script"): unknown argument '$arg' (try --help)" >&2
			exit 2
			;;
		esac
	done
}

# median < numbers: the middle one (of an even count, the upper middle)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# wall COMMAND...: its wall time in seconds, its output dropped
wall() {
	local s e
	s=$(date +%s.%N)
	"$@" > /dev/null 2>&1
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}

need_tools() { # need_tools TOOL...: exits 1 naming the first one missing
  local t
  for t in "$@"; do
    command -v "$t" > /dev/null || { echo "$(basename "$0"): $t not found (scripts/setup.sh installs it)" >&2; exit 1; }
  done
}
