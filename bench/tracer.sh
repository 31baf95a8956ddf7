#!/usr/bin/env bash
# Overhead of the tracer (`rtrace run`) side by side with heaptrack and
# valgrind's memcheck, on four workloads. See bench/README.md, "Tracer
# overhead".
#
#   bench/tracer.sh              # everything: RUNS=3 per configuration
#   bench/tracer.sh --quick      # smoke run: small workloads, 1 run each
#
# Workloads (WORKLOADS="churn1 churn4 python cc1 gcc"):
#   churn1  bench/churn.c (-O2 -g): CHURN_N iterations, 1 thread
#   churn4  the same with 4 threads (each does CHURN_N iterations)
#   python  Debian's /usr/bin/python3 bench/py_workload.py (json + regex)
#   cc1     gcc's compiler proper on a generated C file (bench/gen_big_c.py):
#           cc1 is run directly with the arguments `gcc -### -O2 -c` gives,
#           so that every tool traces the same process (heaptrack cannot
#           follow gcc's exec of cc1)
#   gcc     `gcc -O2 -c` on the same file, plain and under
#           `rtrace run --follow-children` only (traces gcc, cc1 and as)
# Configurations (CONFIGS="plain rtrace heaptrack heaptrack-raw memcheck"):
#   plain          the program alone
#   rtrace         rtrace run -q -o DIR -- PROGRAM
#   rtrace-libunwind  the same with --unwinder libunwind (every stack read by
#                  libunwind's unw_backtrace instead of the cached rules)
#   heaptrack      heaptrack -o FILE PROGRAM (interprets and compresses
#                  on the fly, in two more processes)
#   heaptrack-raw  heaptrack -r -o FILE PROGRAM (records only, compressed)
#   memcheck       valgrind --tool=memcheck --leak-check=no; on the churn
#                  workloads with fewer iterations when a full run would
#                  take more than VG_LIMIT seconds (the output says so)
#
# Environment:
#   RTRACE=path    rtrace binary (default build/rtrace, built if missing);
#                  librtrace-preload.so must be next to it
#   RUNS=n         measured runs per configuration, median reported (3)
#   CHURN_N=n      churn iterations (3000000)
#   PY_SCALE=x     bench/py_workload.py scale (1.0)
#   CC_FUNCS=n     functions in the generated C file (150)
#   VG_LIMIT=s     longest memcheck run wanted on churn (60)
#   HT_VMEM_KB=n   virtual memory limit (ulimit -v) of heaptrack runs
#                  (8388608): heaptrack_interpret 1.4 can run away with
#                  memory (KDE bug 477018) and would take the machine down
#   PERF=0         skip the perf profile of the traced churn
#   UNWIND=0       skip bench/unwind.sh at the end
#   IDLE_WAIT=s    before each measured run, wait up to s seconds (900)
#                  for other processes to leave the CPU idle
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/tracer

quick_or_help "$0" "$@"
if [ "${QUICK:-0}" = 1 ]; then
	RUNS=${RUNS:-1}
	CHURN_N=${CHURN_N:-300000}
	PY_SCALE=${PY_SCALE:-0.2}
	CC_FUNCS=${CC_FUNCS:-20}
fi
RUNS=${RUNS:-3}
CHURN_N=${CHURN_N:-3000000}
PY_SCALE=${PY_SCALE:-1.0}
CC_FUNCS=${CC_FUNCS:-150}
VG_LIMIT=${VG_LIMIT:-60}
HT_VMEM_KB=${HT_VMEM_KB:-8388608}
PERF=${PERF:-1}
UNWIND=${UNWIND:-1}
read -r -a workloads <<<"${WORKLOADS:-churn1 churn4 python cc1 gcc}"
read -r -a configs <<<"${CONFIGS:-plain rtrace heaptrack heaptrack-raw memcheck}"

die() {
	echo "tracer.sh: $*" >&2
	exit 1
}
[ -x /usr/bin/time ] || die "needs GNU time at /usr/bin/time"
[ -n "${EPOCHREALTIME:-}" ] || die "needs bash >= 5 (EPOCHREALTIME)"
for t in heaptrack valgrind zstd; do
	command -v "$t" >/dev/null || die "needs $t"
done
PY=/usr/bin/python3 # Debian's, not whatever python3 is first in PATH
[ -x "$PY" ] || die "needs Debian's python3 at $PY"

rm -rf "$out"
mkdir -p "$out/bin"

# --- rtrace: a private copy, so that a rebuild during the run cannot swap it
RTRACE=${RTRACE:-}
if [ -z "$RTRACE" ]; then
	RTRACE=$root/build/rtrace
	if [ ! -x "$RTRACE" ] || [ ! -f "$root/build/librtrace-preload.so" ]; then
		echo "building rtrace in $root/build ..." >&2
		cmake -S "$root" -B "$root/build" >/dev/null
		cmake --build "$root/build" -j2 >/dev/null
	fi
fi
rtrace_src=$RTRACE
[ -x "$RTRACE" ] || die "rtrace binary '$RTRACE' is not executable"
[ -f "$(dirname "$RTRACE")/librtrace-preload.so" ] || die "no librtrace-preload.so next to $RTRACE"
cp "$RTRACE" "$out/bin/rtrace"
cp "$(dirname "$RTRACE")/librtrace-preload.so" "$out/bin/librtrace-preload.so"
RTRACE=$out/bin/rtrace
PRELOAD=$out/bin/librtrace-preload.so

# heaptrack opens heaptrack_gui after a run when it is installed (and with
# no display the GUI aborts): a private copy of its script that does not
ht_real=$(readlink -f "$(command -v heaptrack)")
sed -e "s|^EXE_PATH=.*|EXE_PATH=$(dirname "$ht_real")|" \
	-e 's|\[ -z "\$write_raw_data" \] && \[ -x "\$EXE_PATH/heaptrack_gui" \]|false|' "$ht_real" >"$out/bin/heaptrack"
chmod +x "$out/bin/heaptrack"
HEAPTRACK=$out/bin/heaptrack

# --- workload inputs
cc -O2 -g -pthread -o "$here/out/churn" "$here/churn.c"
"$PY" "$here/gen_big_c.py" "$CC_FUNCS" >"$out/big.c"
cc1_line=$(cd "$root" && gcc -O2 -c "$out/big.c" -o "$out/big.o" -### 2>&1 | grep -E '^ [^ ]*/cc1 ' | head -1)
[ -n "$cc1_line" ] || die "cannot find the cc1 command in gcc -### output"
eval "cc1_argv=($cc1_line)"
# write cc1's assembly to a fixed file (it goes to /tmp/ccXXXX.s under gcc)
for ((i = 0; i < ${#cc1_argv[@]}; i++)); do
	if [ "${cc1_argv[$i]}" = -o ]; then cc1_argv[i + 1]=$out/cc1-out.s; fi
done

# workload WL: sets prog_argv (the program and its arguments) and
# check_file (an output file compared with the plain run's, or empty)
workload_cmd() { # workload [iterations]
	check_file=
	case $1 in
	churn1) prog_argv=("$here/out/churn" "${2:-$CHURN_N}" 1) ;;
	churn4) prog_argv=("$here/out/churn" "${2:-$CHURN_N}" 4) ;;
	python) prog_argv=("$PY" "$here/py_workload.py" "$PY_SCALE") ;;
	cc1)
		prog_argv=("${cc1_argv[@]}")
		check_file=$out/cc1-out.s
		;;
	gcc)
		prog_argv=(gcc -O2 -c "$out/big.c" -o "$out/gcc-out.o")
		check_file=$out/gcc-out.o
		;;
	esac
}
declare -A wl_label
wl_label[churn1]="churn $CHURN_N x 1 thread"
wl_label[churn4]="churn $CHURN_N x 4 threads"
wl_label[python]="python3 py_workload.py"
wl_label[cc1]="cc1 -O2 (big.c, $CC_FUNCS functions)"
wl_label[gcc]="gcc -O2 -c (driver, follows exec)"
supports() { # workload config: whether the pair is measured
	case $1:$2 in
	gcc:plain | gcc:rtrace) return 0 ;;
	gcc:*) return 1 ;;
	esac
	return 0
}

# --- CPU accounting (as in bench/postproc.sh)
cpu_jiffies() { awk '/^cpu / { print $2+$3+$4+$7+$8+$9 }' /proc/stat; }
hz=$(getconf CLK_TCK)
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# heaptrack talks on stdout; these are its lines, not the program's
ht_filter() { grep -v -E '^(heaptrack output will be written to |/.*libheaptrack_preload\.so$|starting application, this might take some time\.\.\.$|Heaptrack finished! Now run the following to investigate the data:$|  heaptrack --analyze |  zstd -dc < |$)' || true; }

# --- one run
declare -A walls rsss cpus others fails notes vg_iters
declare -A rt_bytes ht_bytes ht_allocs
nfails=0
run_argv() { # config workload tag: sets cmd_argv
	local c=$1 w=$2 tag=$3
	case $c in
	plain | plain-vg) cmd_argv=("${prog_argv[@]}") ;;
	rtrace)
		rm -rf "$out/rt-$w"
		mkdir -p "$out/rt-$w"
		if [ "$w" = gcc ]; then
			cmd_argv=("$RTRACE" run --follow-children -q -o "$out/rt-$w" -- "${prog_argv[@]}")
		else
			cmd_argv=("$RTRACE" run -q -o "$out/rt-$w" -- "${prog_argv[@]}")
		fi
		;;
	rtrace-libunwind)
		rm -rf "$out/rt-$w"
		mkdir -p "$out/rt-$w"
		cmd_argv=("$RTRACE" run --unwinder libunwind -q -o "$out/rt-$w" -- "${prog_argv[@]}")
		;;
	heaptrack)
		rm -f "$out/ht-$w".*
		cmd_argv=(bash -c 'ulimit -v "$0" && exec "$@"' "$HT_VMEM_KB" "$HEAPTRACK" -o "$out/ht-$w" "${prog_argv[@]}")
		;;
	heaptrack-raw)
		rm -f "$out/htr-$w".*
		cmd_argv=(bash -c 'ulimit -v "$0" && exec "$@"' "$HT_VMEM_KB" "$HEAPTRACK" -r -o "$out/htr-$w" "${prog_argv[@]}")
		;;
	memcheck) cmd_argv=(valgrind --tool=memcheck --leak-check=no --log-file="$out/vg-$w.log" "${prog_argv[@]}") ;;
	esac
	: "$tag"
}

measure() { # workload config run
	local w=$1 c=$2 r=$3 key="$1/$2" tf rc t0 t1 j0 j1 kb us sy
	if [ -n "${fails[$key]:-}" ]; then return; fi # failed before: not again
	if [ "$c" = memcheck ] || [ "$c" = plain-vg ]; then
		workload_cmd "$w" "${vg_iters[$w]:-}"
	else
		workload_cmd "$w"
	fi
	run_argv "$c" "$w" "$r"
	[ -n "$check_file" ] && rm -f "$check_file"
	wait_idle
	tf=$out/time.txt
	j0=$(cpu_jiffies)
	t0=$EPOCHREALTIME
	rc=0
	(cd "$root" && /usr/bin/time -f '%e %M %U %S' -o "$tf" "${cmd_argv[@]}" >"$out/stdout.txt" 2>"$out/stderr.txt") || rc=$?
	t1=$EPOCHREALTIME
	j1=$(cpu_jiffies)
	kb='' us=0 sy=0
	read -r _ kb us sy < <(grep -E '^[0-9.]+ [0-9]+ [0-9.]+ [0-9.]+$' "$tf" | tail -1) || true
	walls[$key]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
	rsss[$key]+="$kb "
	cpus[$key]+="$(awk -v u="$us" -v s="$sy" 'BEGIN { printf "%.2f", u + s }') "
	others[$key]+="$(awk -v j="$((j1 - j0))" -v hz="$hz" -v u="$us" -v s="$sy" \
		'BEGIN { o = j / hz - u - s; printf "%.1f", o < 0 ? 0 : o }') "

	# --- the program must behave as it does alone
	local got ref_rc=${ref_rc[$w]}
	[ "$c" = plain-vg ] && ref_rc=0
	case $c in heaptrack*) got=$(ht_filter <"$out/stdout.txt") ;; *) got=$(cat "$out/stdout.txt") ;; esac
	local problem=
	if [ "$rc" != "$ref_rc" ]; then
		problem="exit status $rc (plain: $ref_rc)"
	fi
	if [ "$c" != memcheck ] && [ "$c" != plain-vg ] && [ "$got" != "${ref_out[$w]}" ]; then
		problem+="${problem:+; }stdout differs: '$(head -c 200 <<<"$got")' (plain: '$(head -c 200 <<<"${ref_out[$w]}")')"
	fi
	if [ "$c" = memcheck ] || [ "$c" = plain-vg ]; then
		# with fewer iterations the line says so: compare all but the count
		local ref_n got_n
		ref_n=$(sed -E 's/[0-9]+ iterations/N iterations/' <<<"${ref_out[$w]}")
		got_n=$(sed -E 's/[0-9]+ iterations/N iterations/' <<<"$got")
		[ "$got_n" = "$ref_n" ] || problem+="${problem:+; }stdout differs: '$(head -c 200 <<<"$got")' (plain: '$(head -c 200 <<<"${ref_out[$w]}")')"
	fi
	if [ -n "$check_file" ] && ! cmp -s "$check_file" "$out/ref-$w.out"; then
		problem+="${problem:+; }$(basename "$check_file") differs from the plain run's ($(stat -c %s "$check_file" 2>/dev/null || echo missing) bytes, plain: $(stat -c %s "$out/ref-$w.out") bytes)"
	fi
	if [ -n "$problem" ]; then
		nfails=$((nfails + 1))
		fails[$key]="run $r: $problem; stderr: $(tail -n 3 "$out/stderr.txt" | tr '\n' '|' | head -c 300)"
		echo "  !! $w under $c: ${fails[$key]}" >&2
		cp "$out/stdout.txt" "$out/fail-$w-$c.stdout"
		cp "$out/stderr.txt" "$out/fail-$w-$c.stderr"
		return
	fi

	# --- trace sizes (of this run; the last one is kept)
	case $c in
	rtrace) rt_bytes[$w]=$(cat "$out/rt-$w"/*.rtrace | wc -c) ;;
	heaptrack)
		ht_bytes[$w]=$(stat -c %s "$out/ht-$w.zst")
		ht_allocs[$w]=$(awk -F'\t' '/^\tallocations:/ { print $3 }' "$out/stderr.txt" | tail -1)
		;;
	heaptrack-raw) ht_bytes[$w/raw]=$(stat -c %s "$out/htr-$w.raw.zst") ;;
	memcheck)
		notes[$key]="$(grep -o 'ERROR SUMMARY: [0-9,]* errors' "$out/vg-$w.log" | tail -1 | sed 's/ERROR SUMMARY: //; s/ errors/ memcheck errors/')"
		;;
	esac
}

# --- machine
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
dirty=$(git -C "$root" status --porcelain -- src include CMakeLists.txt 2>/dev/null | grep -q . && echo "+dirty" || true)
echo "== tracer overhead benchmark, $(date '+%Y-%m-%d %H:%M %Z')"
echo "machine: $cpu, $(nproc) cores, $mem RAM, Linux $(uname -r)"
echo "rtrace:  $rtrace_src (tree at git $rev$dirty; sha256 rtrace $(sha256sum "$RTRACE" | cut -c1-12), librtrace-preload.so $(sha256sum "$PRELOAD" | cut -c1-12))"
echo "tools:   heaptrack $(heaptrack --version 2>/dev/null | awk '{ print $2 }'), $(valgrind --version), $(gcc --version | head -1), $("$PY" --version)"
busy0=$(cpu_busy)
echo "load:    ${busy0}% CPU busy before the run (load average $(cut -d' ' -f1-3 /proc/loadavg))"
[ "$busy0" -gt 10 ] && echo "WARNING: other processes used ${busy0}% of the CPU at the start"
echo "runs:    $RUNS per configuration (median reported); churn $CHURN_N iterations; python scale $PY_SCALE; big.c $(wc -l <"$out/big.c") lines"
echo

# --- reference runs: output and exit status of each program alone
declare -A ref_out ref_rc
for w in "${workloads[@]}"; do
	workload_cmd "$w"
	rc=0
	(cd "$root" && "${prog_argv[@]}" >"$out/ref-$w.stdout" 2>"$out/ref-$w.stderr") || rc=$?
	ref_rc[$w]=$rc
	ref_out[$w]=$(cat "$out/ref-$w.stdout")
	[ -n "$check_file" ] && cp "$check_file" "$out/ref-$w.out"
	echo "reference $w: exit $rc, stdout: $(head -1 "$out/ref-$w.stdout")" >&2
done

# --- memcheck on churn: fewer iterations when a full run would be long
for w in "${workloads[@]}"; do
	case $w in churn*) ;; *) continue ;; esac
	[[ " ${configs[*]} " == *" memcheck "* ]] || continue
	cal=$((CHURN_N / 10))
	workload_cmd "$w" "$cal"
	t0=$EPOCHREALTIME
	(cd "$root" && valgrind -q --tool=memcheck --leak-check=no --log-file="$out/vg-cal.log" "${prog_argv[@]}" >/dev/null 2>&1) || true
	t1=$EPOCHREALTIME
	est=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b - a) * 10 }')
	if [ "$est" -gt "$VG_LIMIT" ]; then
		n=$(awk -v n="$CHURN_N" -v e="$est" -v l="$VG_LIMIT" 'BEGIN { k = int(n * l / e / 100000) * 100000; print k < 100000 ? 100000 : k }')
		vg_iters[$w]=$n
		echo "memcheck on $w: a full run would take ~${est} s (> ${VG_LIMIT} s): memcheck runs $n iterations, and slowdown is against plain at $n iterations"
	else
		echo "memcheck on $w: full $CHURN_N iterations (estimated ~${est} s from $cal iterations)"
	fi
done

# --- measured runs: rounds of every configuration, so drift hits all alike
for ((r = 1; r <= RUNS; r++)); do
	for w in "${workloads[@]}"; do
		for c in "${configs[@]}"; do
			supports "$w" "$c" || continue
			echo "run $r/$RUNS: $w under $c ..." >&2
			measure "$w" "$c" "$r"
			if [ "$c" = memcheck ] && [ -n "${vg_iters[$w]:-}" ]; then
				measure "$w" plain-vg "$r"
			fi
		done
	done
done

# --- call records in the rtrace traces (of the last run)
declare -A rt_calls rt_allocs
for w in "${workloads[@]}"; do
	[ -d "$out/rt-$w" ] || continue
	calls=0 allocs=0
	for f in "$out/rt-$w"/*.rtrace; do
		read -r a b < <("$RTRACE" postproc -i "$f" | awk '/^[0-9]+\. / { n++; if (/\) = 0x[0-9a-f]+$/) a++ } END { print n + 0, a + 0 }')
		calls=$((calls + a)) allocs=$((allocs + b))
	done
	rt_calls[$w]=$calls rt_allocs[$w]=$allocs
done
# allocations in heaptrack's raw traces
declare -A htr_allocs
for w in "${workloads[@]}"; do
	[ -f "$out/htr-$w.raw.zst" ] || continue
	htr_allocs[$w]=$(zstd -dc "$out/htr-$w.raw.zst" | grep -c '^+ ' || true)
done

# --- results
med() { median <<<"${1:-}"; }
echo
echo "Per configuration (median of $RUNS; slowdown against plain; other CPU s: CPU time other"
echo "processes used during each run, 0.0 = the run had the machine)"
printf '%-36s %-13s %8s %7s %9s %8s %9s %-22s %s\n' workload config "wall s" slowdn "RSS MiB" "CPU s" "trace MB" "B/event" "runs (s) | other CPU s | notes"
declare -A mwall
for w in "${workloads[@]}"; do
	for c in "${configs[@]}" plain-vg; do
		supports "$w" "$c" || continue
		key="$w/$c"
		[ -n "${walls[$key]:-}" ] || [ -n "${fails[$key]:-}" ] || continue
		wall=$(med "${walls[$key]:-}")
		mwall[$key]=$wall
		rss=$(med "${rsss[$key]:-}")
		cpu_s=$(med "${cpus[$key]:-}")
		base=${mwall[$w/plain]:-}
		[ "$c" = memcheck ] && [ -n "${vg_iters[$w]:-}" ] && base=${mwall[$w/plain-vg]:-}
		size='' bpe='' note=${notes[$key]:-}
		case $c in
		rtrace)
			size=${rt_bytes[$w]:-}
			[ -n "$size" ] && [ "${rt_calls[$w]:-0}" -gt 0 ] && bpe=$(awk -v s="$size" -v n="${rt_calls[$w]}" -v a="${rt_allocs[$w]}" \
				'BEGIN { printf "%.1f/rec %.1f/alloc", s / n, s / a }')
			note+="${note:+; }${rt_calls[$w]:-?} call records (${rt_allocs[$w]:-?} allocations)"
			;;
		heaptrack)
			size=${ht_bytes[$w]:-}
			[ -n "$size" ] && [ -n "${ht_allocs[$w]:-}" ] && bpe=$(awk -v s="$size" -v n="${ht_allocs[$w]}" 'BEGIN { printf "%.3f/alloc", s / n }')
			[ -n "${ht_allocs[$w]:-}" ] && note+="${note:+; }${ht_allocs[$w]} allocations reported"
			;;
		heaptrack-raw)
			size=${ht_bytes[$w/raw]:-}
			[ -n "$size" ] && [ -n "${htr_allocs[$w]:-}" ] && bpe=$(awk -v s="$size" -v n="${htr_allocs[$w]}" 'BEGIN { printf "%.3f/alloc", s / n }')
			;;
		memcheck) [ -n "${vg_iters[$w]:-}" ] && note+="${note:+; }${vg_iters[$w]} iterations (reduced)" ;;
		plain-vg) note+="plain at ${vg_iters[$w]} iterations, for memcheck's slowdown" ;;
		esac
		[ -n "${fails[$key]:-}" ] && note+="${note:+; }FAILED ${fails[$key]}"
		slow=
		[ -n "$wall" ] && [ -n "$base" ] && slow=$(awk -v a="$wall" -v b="$base" 'BEGIN { printf "%.2fx", a / b }')
		printf '%-36s %-13s %8s %7s %9s %8s %9s %-22s %s | %s | %s\n' "${wl_label[$w]}" "$c" "${wall:--}" "${slow:--}" \
			"$([ -n "$rss" ] && awk -v r="$rss" 'BEGIN { printf "%.1f", r / 1024 }' || echo -)" "${cpu_s:--}" \
			"$([ -n "$size" ] && awk -v s="$size" 'BEGIN { printf "%.2f", s / 1e6 }' || echo -)" "${bpe:--}" \
			"${walls[$key]:-}" "${others[$key]:-}" "$note"
	done
done

echo
echo "Summary: wall s (slowdown against plain) and rtrace's ratios; target rtrace/heaptrack <= 0.5, goal beyond: rtrace under 2x plain"
printf '%-36s %8s %16s %16s %16s %16s %10s %10s %6s %6s\n' workload plain rtrace heaptrack heaptrack-raw memcheck "rt/ht" "rt/memchk" "<=0.5" "<2x"
cell() { # key
	local w=${1%/*} c=${1#*/} base
	base=${mwall[$w/plain]:-}
	[ "$c" = memcheck ] && [ -n "${vg_iters[$w]:-}" ] && base=${mwall[$w/plain-vg]:-}
	if [ -n "${fails[$1]:-}" ]; then
		echo FAILED
	elif [ -n "${mwall[$1]:-}" ] && [ -n "$base" ]; then
		awk -v a="${mwall[$1]}" -v b="$base" -v red="${vg_iters[$w]:-}" -v c="$c" \
			'BEGIN { printf "%.2f (%.1fx)%s", a, a / b, (c == "memcheck" && red != "") ? "*" : "" }'
	else
		echo -
	fi
}
for w in "${workloads[@]}"; do
	rt=${mwall[$w/rtrace]:-} pl=${mwall[$w/plain]:-}
	ht=${mwall[$w/heaptrack]:-} htsrc=""
	if [ -n "${fails[$w/heaptrack]:-}" ] || [ -z "$ht" ]; then ht=${mwall[$w/heaptrack-raw]:-} htsrc="(raw)"; fi
	[ -n "${fails[$w/rtrace]:-}" ] && rt=
	ratio=- vratio=- ok=- ok2=-
	if [ -n "$rt" ] && [ -n "$ht" ]; then
		ratio=$(awk -v a="$rt" -v b="$ht" 'BEGIN { printf "%.2f", a / b }')$htsrc
		ok=$(awk -v a="$rt" -v b="$ht" 'BEGIN { print a / b <= 0.5 ? "yes" : "no" }')
	fi
	if [ -n "$rt" ] && [ -n "${mwall[$w/memcheck]:-}" ] && [ -z "${fails[$w/memcheck]:-}" ]; then
		if [ -n "${vg_iters[$w]:-}" ]; then # compare slowdowns: different iteration counts
			vratio=$(awk -v a="$rt" -v p="$pl" -v v="${mwall[$w/memcheck]}" -v q="${mwall[$w/plain-vg]}" 'BEGIN { printf "%.3f*", (a / p) / (v / q) }')
		else
			vratio=$(awk -v a="$rt" -v b="${mwall[$w/memcheck]}" 'BEGIN { printf "%.3f", a / b }')
		fi
	fi
	[ -n "$rt" ] && [ -n "$pl" ] && ok2=$(awk -v a="$rt" -v b="$pl" 'BEGIN { print a / b < 2 ? "yes" : "no" }')
	printf '%-36s %8s %16s %16s %16s %16s %10s %10s %6s %6s\n' "${wl_label[$w]}" "${pl:--}" "$(cell "$w/rtrace")" \
		"$(cell "$w/heaptrack")" "$(cell "$w/heaptrack-raw")" "$(cell "$w/memcheck")" "$ratio" "$vratio" "$ok" "$ok2"
done
echo "(rt/ht: against heaptrack, or heaptrack -r where heaptrack failed, marked (raw);"
echo " * memcheck with fewer iterations: its wall is for those, the ratio compares slowdowns)"
if [ "$nfails" -gt 0 ]; then
	echo
	echo "Failures (a run whose exit status, stdout or output file differs from the plain run):"
	for k in "${!fails[@]}"; do echo "  $k: ${fails[$k]}"; done | sort
fi

# --- where rtrace's time goes on churn
if [ "$PERF" = 1 ]; then
	echo
	echo "perf: traced churn ($CHURN_N x 1, the program's process), self time, top 10 symbols ..."
	wait_idle
	rm -rf "$out/perf-trace"
	mkdir -p "$out/perf-trace"
	# under rtrace run (which populates the trace's pages from a thread of
	# its own, src/cli/run_prefault.c), the program's samples only
	perf record -q -F 4999 -o "$out/perf-churn.data" -- "$RTRACE" run -q -o "$out/perf-trace" -- \
		"$here/out/churn" "$CHURN_N" 1 >/dev/null 2>"$out/perf-record.log"
	perf report -i "$out/perf-churn.data" --comms churn --percentage relative --no-children --stdio \
		--sort dso,symbol >"$out/perf-churn.txt" 2>/dev/null
	# Debian's libunwind has no symbol table for its internal functions, and
	# perf then reports each sampled address on its own: add them up per
	# function, with the function's bounds taken from .eh_frame
	"$PY" - "$out/perf-churn.txt" <<'PYEOF'
import glob, re, subprocess, sys
rows, fdes = {}, {}
def ranges(dso):
    if dso not in fdes:
        paths = glob.glob("/usr/lib/x86_64-linux-gnu/" + dso) + glob.glob("/lib/x86_64-linux-gnu/" + dso)
        txt = subprocess.run(["readelf", "--debug-dump=frames", paths[0]], capture_output=True, text=True).stdout if paths else ""
        fdes[dso] = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", txt)]
    return fdes[dso]
for line in open(sys.argv[1]):
    m = re.match(r"\s+([0-9.]+)%\s+(\S+)\s+\[.\]\s+(.*?)\s*(-\s+-\s*)?$", line)
    if not m:
        continue
    pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
    if re.fullmatch(r"0x[0-9a-f]+", sym):
        a = int(sym, 16)
        for lo, hi in ranges(dso):
            if lo <= a < hi:
                sym = "function at 0x%x-0x%x (no symbol)" % (lo, hi)
                break
    rows[(dso, sym)] = rows.get((dso, sym), 0.0) + pct
for (dso, sym), pct in sorted(rows.items(), key=lambda kv: -kv[1])[:10]:
    print("  %6.2f%%  %-44s %s" % (pct, sym, dso))
PYEOF
	echo "  (by dso:)"
	perf report -i "$out/perf-churn.data" --comms churn --percentage relative --no-children --stdio --sort dso 2>/dev/null |
		awk '/^ +[0-9.]+%/ { printf "  %7s  %s\n", $1, $2; if (++n == 6) exit }'
	ns=$(perf report -i "$out/perf-churn.data" --comms churn --no-children --stdio --sort comm 2>/dev/null | awk '/^# Event count/ { print $NF; exit }')
	echo "  (per call record, by part of the tracer: bench/perf_events.py)"
	"$PY" "$here/perf_events.py" "$out/perf-churn.txt" "$(awk -v n="${ns:-0}" 'BEGIN { print n / 1e9 }')" $((CHURN_N * 2))
	echo "(full profile: perf report -i $out/perf-churn.data)"
fi

if [ "$UNWIND" = 1 ]; then
	echo
	"$here/unwind.sh"
fi
echo
echo "load at end: $(cpu_busy)% CPU busy (load average $(cut -d' ' -f1-3 /proc/loadavg))"
