#!/usr/bin/env bash
# rtrace's leak verdicts on real programs, side by side with valgrind's
# memcheck. Each program runs with a small deterministic workload three
# ways: alone, under memcheck and under `rtrace run`; the script compares
# the program's stdout and exit status (alone against each tool's run) and
# the LEAK SUMMARY figures and "in use at exit" (memcheck against rtrace),
# and prints one markdown row per program. See bench/README.md, "Verdicts
# on real programs, side by side with memcheck".
#
#   bench/memcheck_real.sh            # every program, RUNS=1 (~3 min)
#   bench/memcheck_real.sh --quick    # tp_leakcheck, tp_cxx, sort, mawk, ls
#   PROGRAMS="python3 mawk" bench/memcheck_real.sh
#
# Programs (PROGRAMS="python3 perl bash git-version git-init sqlite3 xmllint
# tar-c tar-t sort find mawk openssl gzip gunzip ls tp_leakcheck tp_cxx"):
# the installed binaries in /usr/bin (Debian's python3, not a pyenv shim),
# and tests/programs/tp_leakcheck.c and tp_cxx.cpp built in BUILD. None of
# the workloads starts another process, so each run is one process for
# both tools. Perl's and Python's hash seeds are fixed (PERL_HASH_SEED=0,
# PYTHONHASHSEED=0): with random seeds perl's heap varies by some 100 bytes
# from run to run.
# Configurations:
#   plain     the program alone
#   memcheck  valgrind --leak-check=full --show-leak-kinds=all
#             --log-file=FILE (without -q, which would drop the HEAP and
#             LEAK SUMMARY this script reads)
#   rtrace    rtrace run --show-leak-kinds=all -o DIR
# Columns: output and exit status same as plain, of rtrace's run and of
# memcheck's (a program that does not run under memcheck as it does alone
# shows there); memcheck's and rtrace's definitely / indirectly / possibly
# lost / still reachable (bytes/blocks); "in use at exit" of each; match
# (exact, or the figures that differ); wall seconds plain / memcheck /
# rtrace (median of RUNS) and rtrace's time over memcheck's.
#
# Environment:
#   BUILD=dir      build directory (default build/, built if rtrace is missing)
#   RTRACE=path    rtrace binary (default BUILD/rtrace); librtrace-preload.so
#                  must be next to it
#   RUNS=n         timed runs per configuration, median reported (1); the
#                  verdicts are those of the last run
#   PROGRAMS="..." the programs to run (all of the list above)
#   IDLE_WAIT=s    before each timed run, wait up to s seconds (2 here,
#                  to stay within a few minutes) for other processes to
#                  leave the CPU idle
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/memcheck_real

quick_or_help "$0" "$@"
all="python3 perl bash git-version git-init sqlite3 xmllint tar-c tar-t sort find mawk openssl gzip gunzip ls tp_leakcheck tp_cxx"
[ "${QUICK:-0}" = 1 ] && all="tp_leakcheck tp_cxx sort mawk ls"
read -r -a programs <<<"${PROGRAMS:-$all}"
RUNS=${RUNS:-1}
IDLE_WAIT=${IDLE_WAIT:-2}
export IDLE_WAIT
BUILD=${BUILD:-$root/build}

die() {
	echo "memcheck_real.sh: $*" >&2
	exit 1
}
[ -n "${EPOCHREALTIME:-}" ] || die "needs bash >= 5 (EPOCHREALTIME)"
command -v valgrind >/dev/null || die "needs valgrind"
PY=/usr/bin/python3 # Debian's, not whatever python3 is first in PATH
[ -x "$PY" ] || die "needs Debian's python3 at $PY"

RTRACE=${RTRACE:-$BUILD/rtrace}
if [ ! -x "$RTRACE" ] || [ ! -x "$BUILD/tests/programs/tp_leakcheck" ] || [ ! -x "$BUILD/tests/programs/tp_cxx" ]; then
	echo "building rtrace and the test programs in $BUILD ..." >&2
	cmake -S "$root" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$BUILD" -j2 --target rtrace rtrace_preload tp_leakcheck tp_cxx >/dev/null
fi
[ -x "$RTRACE" ] || die "rtrace binary '$RTRACE' is not executable"
[ -f "$(dirname "$RTRACE")/librtrace-preload.so" ] || die "no librtrace-preload.so next to $RTRACE"
TP=$BUILD/tests/programs

rm -rf "$out"
mkdir -p "$out/in" "$out/run"
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 PYTHONHASHSEED=0

# --- inputs: a text file, an XML file, a directory to archive
"$PY" -c '
import random
r = random.Random(15)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
with open("'"$out"'/in/words.txt", "w") as f:
    for i in range(20000):
        f.write("%s %d %s\n" % (r.choice(words), r.randrange(100000), r.choice(words) * r.randrange(1, 4)))
with open("'"$out"'/in/doc.xml", "w") as f:
    f.write("<?xml version=\"1.0\"?>\n<doc>\n")
    for i in range(3000):
        f.write("  <item id=\"%d\" kind=\"%s\">%s &amp; %d</item>\n" % (i, r.choice(words), r.choice(words), i * 7))
    f.write("</doc>\n")
'
mkdir -p "$out/in/tree"
cp -r "$root/src" "$out/in/tree/src"
gzip -9 -c "$out/in/words.txt" >"$out/in/words.txt.gz"
tar cf "$out/in/tree.tar" -C "$out/in" tree

# workload NAME: sets prog_argv; prep runs before every run (fresh state)
workload() {
	prep=:
	case $1 in
	python3) prog_argv=("$PY" -c 'import json, re, collections
d = [{"k": i, "v": str(i) * 3, "l": list(range(i % 7))} for i in range(3000)]
s = json.dumps(d, sort_keys=True)
c = collections.Counter(re.findall(r"\d", s))
print(len(s), sorted(c.items())[:3], len(json.loads(s)))') ;;
	perl) prog_argv=(/usr/bin/perl -e 'my %h; $h{$_} = "v" x ($_ % 13) for 1 .. 20000;
my @k = sort { $a <=> $b } grep { /7/ } keys %h; my $s = join ",", @k[0 .. 9];
print scalar(@k), " $s ", length($h{777}), "\n";') ;;
	bash) prog_argv=(/usr/bin/bash -c 'declare -A a; for i in {1..3000}; do a[k$i]=x$i; done
s=; for i in {1..500}; do s+=${a[k$i]}; done; printf "%s %s %s\n" "${#a[@]}" "${#s}" "${a[k1234]}"') ;;
	git-version) prog_argv=(/usr/bin/git --version) ;;
	git-init)
		prog_argv=(/usr/bin/git init -q "$out/run/repo")
		prep="rm -rf $out/run/repo"
		;;
	sqlite3) prog_argv=(/usr/bin/sqlite3 :memory: 'create table t(a integer primary key, b text);
with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
insert into t select i, printf("row %d", i * 3) from n;
create index tb on t(b);
select count(*), sum(a), max(b) from t where b like "row 1%";') ;;
	xmllint) prog_argv=(/usr/bin/xmllint --xpath 'count(//item[@kind="beta"])' "$out/in/doc.xml") ;;
	tar-c)
		prog_argv=(/usr/bin/tar cf "$out/run/out.tar" -C "$out/in" tree)
		prep="rm -f $out/run/out.tar"
		;;
	tar-t) prog_argv=(/usr/bin/tar tvf "$out/in/tree.tar" --numeric-owner) ;;
	sort) prog_argv=(/usr/bin/sort -k 2n -k 1 "$out/in/words.txt") ;; # field 2 numeric, then the line
	find) prog_argv=(/usr/bin/find "$out/in/tree" -name '*.c' -size +2k) ;;
	mawk) prog_argv=(/usr/bin/mawk '{ n[$1]++; t[$1] = t[$1] substr($3, 1, 2) } END { for (k in n) print k, n[k], length(t[k]) }' "$out/in/words.txt") ;;
	openssl) prog_argv=(/usr/bin/openssl dgst -sha256 "$out/in/words.txt") ;;
	gzip) prog_argv=(/usr/bin/gzip -6 -c "$out/in/words.txt") ;;
	gunzip) prog_argv=(/usr/bin/gzip -d -c "$out/in/words.txt.gz") ;; # /usr/bin/gunzip is a script
	ls) prog_argv=(/usr/bin/ls -la --time-style=+%s "$out/in/tree/src") ;;
	tp_leakcheck) prog_argv=("$TP/tp_leakcheck") ;; # all its structures
	tp_cxx) prog_argv=("$TP/tp_cxx") ;;
	*) die "unknown program '$1' (try --help)" ;;
	esac
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# one config of one program: times it, keeps stdout, stderr and status
declare -A walls status
run_one() { # program config
	local p=$1 c=$2 d=$out/run/$1.$2 t0 t1 rc=0
	workload "$p"
	eval "$prep"
	rm -rf "$d.traces" "$d".vg.*
	case $c in
	plain) cmd=("${prog_argv[@]}") ;;
	memcheck) cmd=(valgrind --leak-check=full --show-leak-kinds=all --log-file="$d.vg.%p" "${prog_argv[@]}") ;;
	rtrace)
		mkdir -p "$d.traces"
		cmd=("$RTRACE" run --show-leak-kinds=all -o "$d.traces" -- "${prog_argv[@]}")
		;;
	esac
	wait_idle
	t0=$EPOCHREALTIME
	(cd "$out/run" && "${cmd[@]}" >"$d.out" 2>"$d.err" </dev/null) || rc=$?
	t1=$EPOCHREALTIME
	walls[$p/$c]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') "
	status[$p/$c]=$rc
}

# figures FILE PREFIX: "in use" and the four kinds as bytes/blocks, one a
# line, from a memcheck log (PREFIX '==[0-9]+==') or rtrace's stderr
# ('rtrace:'); a kind that is not printed is 0/0 when the HEAP SUMMARY is
# there (memcheck prints no LEAK SUMMARY when nothing is left in use)
figures() {
	sed -nE "s/^$2 +(in use at exit|definitely lost|indirectly lost|possibly lost|still reachable): ([0-9,]+) bytes in ([0-9,]+) blocks\$/\1=\2\/\3/p" "$1" |
		awk -F= '{ v[$1] = $2 } END {
			n = split("in use at exit,definitely lost,indirectly lost,possibly lost,still reachable", k, ",")
			for (i = 1; i <= n; i++) print (k[i] in v) ? v[k[i]] : ("in use at exit" in v ? "0/0" : "?")
		}'
}

# --- machine and versions
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?")
echo "== rtrace and memcheck on real programs, $(date '+%Y-%m-%d %H:%M %Z')"
echo "machine: $cpu, $(nproc) cores, Linux $(uname -r); $(valgrind --version); rtrace at git $rev"
echo "load:    $(cpu_busy 1)% CPU busy before the run (load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

for ((r = 1; r <= RUNS; r++)); do
	for p in "${programs[@]}"; do
		for c in plain memcheck rtrace; do
			echo "run $r/$RUNS: $p $c ..." >&2
			run_one "$p" "$c"
		done
	done
done

# same P CONFIG: "yes" or "no" for stdout, then exit status, CONFIG against plain
same() {
	local d=$out/run/$1 a=${status[$1/plain]} b=${status[$1/$2]}
	if cmp -s "$d.plain.out" "$d.$2.out"; then echo yes; else echo no; fi
	if [ "$a" != "$b" ]; then echo "no ($b)"; elif [ "$a" != 0 ]; then echo "yes ($a)"; else echo yes; fi
}

echo "| program | output same rtrace / memcheck | exit same rtrace / memcheck | memcheck def / ind / poss / reach | rtrace def / ind / poss / reach | in use at exit memcheck / rtrace | match | wall s plain / memcheck / rtrace | rtrace/memcheck |"
echo "|---|---|---|---|---|---|---|---|---|"
nexact=0
for p in "${programs[@]}"; do
	d=$out/run/$p
	mapfile -t srt < <(same "$p" rtrace)
	mapfile -t svg < <(same "$p" memcheck)
	logs=("$d".memcheck.vg.*)
	note=
	[ "${#logs[@]}" -gt 1 ] && note=" (memcheck: ${#logs[@]} processes, first read)"
	mapfile -t vg < <(figures "${logs[0]}" '==[0-9]+==')
	mapfile -t rt < <(figures "$d.rtrace.err" 'rtrace:')
	names=(in-use definite indirect possible reachable)
	diff=
	for i in 0 1 2 3 4; do
		[ "${vg[$i]}" = "${rt[$i]}" ] || diff+="${diff:+, }${names[$i]}"
	done
	if [ -z "$diff" ]; then
		match=exact
		nexact=$((nexact + 1))
	else
		match="differ: $diff"
	fi
	w_plain=$(median <<<"${walls[$p/plain]}")
	w_vg=$(median <<<"${walls[$p/memcheck]}")
	w_rt=$(median <<<"${walls[$p/rtrace]}")
	printf '| %s | %s | %s | %s / %s / %s / %s | %s / %s / %s / %s | %s / %s | %s%s | %.2f / %.2f / %.2f | %.3f |\n' \
		"$p" "${srt[0]} / ${svg[0]}" "${srt[1]} / ${svg[1]}" "${vg[1]}" "${vg[2]}" "${vg[3]}" "${vg[4]}" \
		"${rt[1]}" "${rt[2]}" "${rt[3]}" "${rt[4]}" "${vg[0]}" "${rt[0]}" "$match" "$note" \
		"$w_plain" "$w_vg" "$w_rt" "$(awk -v a="$w_rt" -v b="$w_vg" 'BEGIN { printf "%.3f", a / b }')"
done
echo
echo "(bytes/blocks; exact: the four kinds and in use at exit equal; $nexact of ${#programs[@]} exact;"
echo " logs, outputs and traces in $out/run)"
