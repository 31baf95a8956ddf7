#!/usr/bin/env bash
# Speed of `rtrace resolve` next to addr2line (binutils) and eu-addr2line
# (elfutils) on the same unique addresses. See bench/README.md,
# "Resolving".
#
#   bench/resolve.sh             # python3 bench/py_workload.py, RUNS=3
#   bench/resolve.sh --quick     # smaller workload, 1 run
#
# Two workloads (WORKLOADS="python dwarf"), each traced once with rtrace
# run (every allocation and release, with its stack):
#   python  Debian's python3 on bench/py_workload.py with PYTHONMALLOC=malloc:
#           thousands of distinct stacks, mostly in the stripped interpreter
#           (symbols only), libc's through libc6-dbg's debug info
#   dwarf   a generated C program (-O2 -g, PIE) of DWARF_FUNCS functions
#           calling each other at three call sites each and allocating at
#           the leaves: many distinct stacks, all with debug info (the case
#           of resolving one's own program)
# Then, in turns, RUNS times each:
#   rtrace resolve    rtrace resolve on a text trace of the unique
#                     addresses (16 frames a call), three ways:
#                     cold     the cache of debug files emptied before each
#                              run: inflating the compressed debug files
#                              (libc6-dbg's) into it is part of the run
#                     warm     the cache filled by an earlier run
#                     no-cache --no-cache: libdw inflates them every run
#   whole trace       rtrace resolve -i TRACE -o /dev/null (reads the
#                     binary trace, resolves, writes every call), warm
#   rtrace postproc   rtrace postproc -i TRACE > /dev/null: the same without
#                     resolving, to show what resolving itself costs
#   addr2line         addr2line -f -i -C -e MODULE, once per module with
#                     all of that module's unique call sites on stdin
#                     (the batched use, one process per module)
#   eu-addr2line      the same with elfutils' eu-addr2line
# and prints the medians and ratios. The tools' answers are compared
# (innermost function and file:line of each unique address). The cache
# is bench/out/resolve/cache, never the user's.
#
# Environment:
#   RTRACE=path   rtrace binary (default build/rtrace); librtrace-preload.so
#                 next to it traces
#   TRACER=path   the rtrace that traces (default $RTRACE)
#   RUNS=n        measured runs per tool, median reported (3)
#   PY=path       python interpreter (/usr/bin/python3)
#   PY_SCALE=x    bench/py_workload.py scale (1.0; --quick: 0.3)
#   WORKLOADS=... the workloads to run ("python dwarf")
#   DWARF_FUNCS=n functions of the generated program (3000; --quick: 600)
#   IDLE_WAIT=s   wait up to s seconds for an idle CPU before each run (900)
#   TOOLS=...     the tools to time ("cold warm no-cache addr2line
#                 eu-addr2line whole postproc"; eu-addr2line takes minutes
#                 on a big unit)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/out/resolve
quick_or_help "$0" "$@"
RTRACE=${RTRACE:-$root/build/rtrace}
TRACER=${TRACER:-$RTRACE}
if [ -n "${QUICK:-}" ]; then
	RUNS=${RUNS:-1}
	PY_SCALE=${PY_SCALE:-0.3}
	DWARF_FUNCS=${DWARF_FUNCS:-600}
fi
DWARF_FUNCS=${DWARF_FUNCS:-3000}
WORKLOADS=${WORKLOADS:-python dwarf}
RUNS=${RUNS:-3}
PY_SCALE=${PY_SCALE:-1.0}
PY=${PY:-/usr/bin/python3} # Debian's, not a wrapper script on PATH
need_tools "$RTRACE" addr2line eu-addr2line readelf python3 cc
rm -rf "$out" && mkdir -p "$out"

bench_one() { # NAME COMMAND...: trace COMMAND, then time the tools
local name=$1
shift
local workload=("$@")
rm -rf "$out/trace" "$out/modules" && mkdir -p "$out/trace" "$out/modules"
printf '\n== %s: %s\n' "$name" "${workload[*]}"
# PYTHONMALLOC=malloc: every Python object comes from malloc, from
# thousands of distinct stacks (pymalloc would hide them in its arenas)
PYTHONMALLOC=malloc "$TRACER" run -q -o "$out/trace" -- "${workload[@]}" > /dev/null
trace=$(ls -S "$out"/trace/*.rtrace | head -n 1)
"$RTRACE" postproc -i "$trace" > "$out/plain.txt"

# One file per module with the link-time address of each unique call site
# (return address - 1), and the runtime addresses in the same order.
python3 - "$out/plain.txt" "$out/modules" << 'EOF'
import os, subprocess, sys
text, outdir = sys.argv[1], sys.argv[2]
maps, addrs = [], set()
for line in open(text, errors="replace"):
    if line.startswith(": ") and " => 0x" in line:
        mod, rng = line[2:].rstrip("\n").rsplit(" => ", 1)
        lo, hi = (int(x, 16) for x in rng.split("-"))
        maps.append((lo, hi, mod))
    elif line.startswith("\t0x"):
        addrs.add(int(line.split()[0], 16))
def exec_page(mod):  # link-time address of the executable segment's page
    ph = subprocess.run(["readelf", "-lW", mod], capture_output=True, text=True).stdout
    for l in ph.splitlines():
        f = l.split()
        if f and f[0] == "LOAD" and " R E " in l:
            return int(f[2], 16) & ~0xfff, "EXEC" in subprocess.run(
                ["readelf", "-hW", mod], capture_output=True, text=True).stdout.split("Type:")[1][:20]
    return None, False
per = {}
for a in sorted(addrs):
    hits = [m for m in maps if m[0] <= a - 1 < m[1]]
    if len(hits) == 1 and os.path.isfile(hits[0][2]):
        per.setdefault(hits[0][2], []).append(a)
n = 0
for i, (mod, lst) in enumerate(sorted(per.items())):
    page, is_exec = exec_page(mod)
    if page is None:
        continue
    lo = [m for m in maps if m[2] == mod][0][0]
    with open(f"{outdir}/{i}.addrs", "w") as f, open(f"{outdir}/{i}.runtime", "w") as g:
        for a in lst:
            f.write("0x%x\n" % ((a - 1) if is_exec else (a - 1 - lo + page)))
            g.write("0x%x\n" % a)
    open(f"{outdir}/{i}.module", "w").write(mod)
    n += len(lst)
print(f"{len(addrs)} unique addresses, {n} in {len(per)} readable modules")
# the same unique addresses as a text trace of their own, 16 frames a call:
# what rtrace resolve does then is resolving, not reading a long trace
with open(f"{outdir}/../unique.txt", "w") as f:
    f.write("version=2.0, arch=x86_64, process=unique, pid=1, \n<1> : memory (memory)\n")
    for lo, hi, mod in maps:
        f.write(f": {mod} => 0x{lo:x}-0x{hi:x}\n")
    lst = sorted(addrs)
    for i in range(0, len(lst), 16):
        f.write(f"{i // 16 + 1}. malloc(1) = 0x{i + 1:x}\n")
        f.write("".join(f"\t0x{a:x}\n" for a in lst[i:i + 16]) + "\n")
EOF

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
export RTRACE_CACHE_DIR=$out/cache
run_rtrace() { "$RTRACE" resolve -q "$@" -i "$out/unique.txt" -o "$out/resolved.txt"; }
run_cold() { run_rtrace; } # the cache is emptied before the clock starts
run_warm() { run_rtrace; }
run_no_cache() { run_rtrace --no-cache; }
run_whole() { "$RTRACE" resolve -q -i "$trace" -o /dev/null; }
run_postproc() { "$RTRACE" postproc -i "$trace" > /dev/null; }
mods=() # the modules' paths and file name stems, read once: no process
for m in "$out"/modules/*.module; do # but the tools' in the timed part
	mods+=("$(cat "$m")" "${m%.module}")
done
run_tool() { # TOOL: every module batched, answers in out/modules/N.TOOL
	for ((i = 0; i < ${#mods[@]}; i += 2)); do
		# eu-addr2line exits 1 when an address has no answer
		"$1" -a -f -i -C -e "${mods[i]}" < "${mods[i + 1]}.addrs" > "${mods[i + 1]}.$1" || true
	done
}
declare -A times
read -r -a tools <<< "${TOOLS:-cold warm no-cache addr2line eu-addr2line whole postproc}"
run() { case $1 in cold | warm | no-cache | whole | postproc) "run_${1//-/_}" ;; *) run_tool "$1" ;; esac; }
for t in "${tools[@]}"; do # warm-up: page cache, debug files
	run "$t"
done
for ((r = 0; r < RUNS; r++)); do
	for t in "${tools[@]}"; do
		wait_idle
		[ "$t" = cold ] && rm -rf "$RTRACE_CACHE_DIR"
		start=$EPOCHREALTIME # bash's clock: no process around the tool's
		run "$t"
		end=$EPOCHREALTIME
		times[$t]+="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') "
	done
done

# agreement: the innermost function and file:line of each address
python3 - "$out/resolved.txt" "$out/modules" << 'EOF'
import glob, os, re, sys
ours = {}
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("\t0x"):
        a, _, text = line[1:].rstrip("\n").partition(" ")
        ours[int(a, 16)] = text
def expected(path, mod):
    res, cur = [], None
    lines = open(path, errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        if re.fullmatch(r"0x[0-9a-f]+", lines[i]):
            fn, loc = lines[i + 1], lines[i + 2]
            fn = re.sub(r" inlined at .*", "", fn).split("@")[0]
            loc = re.sub(r" \(discriminator \d+\)$", "", loc)
            loc = re.sub(r"(:\d+):\d+$", r"\1", loc)
            if fn == "??":
                res.append(None)
            else:
                name = fn if "(" in fn else fn + "()"
                res.append(name + (" from " + mod if loc.startswith("??") else " at " + loc))
            i += 3
            while i < len(lines) and lines[i] and not re.fullmatch(r"0x[0-9a-f]+", lines[i]):
                i += 2
        else:
            i += 1
    return res
for tool in ("addr2line", "eu-addr2line"):
    same = total = 0
    for m in glob.glob(sys.argv[2] + "/*.module"):
        base = m[:-len(".module")]
        if not os.path.exists(base + "." + tool):
            continue
        mod = open(m).read()
        rt = [int(x, 16) for x in open(base + ".runtime").read().split()]
        for a, want in zip(rt, expected(base + "." + tool, mod)):
            if want is None:
                continue
            total += 1
            same += ours.get(a) == want
    if total:
        print(f"agreement with {tool}: {same}/{total} addresses ({100.0 * same / total:.1f}%)")
EOF

declare -A label=(
	[cold]="rtrace resolve, cold cache" [warm]="rtrace resolve, warm cache"
	[no-cache]="rtrace resolve --no-cache" [addr2line]="addr2line -f -i -C, per module"
	[eu-addr2line]="eu-addr2line -f -i -C, per module" [whole]="rtrace resolve (whole trace, warm)"
	[postproc]="rtrace postproc (whole trace)")
declare -A med
printf '\n%-36s %10s   %s\n' tool "median s" runs
for t in "${tools[@]}"; do
	med[$t]=$(echo "${times[$t]}" | tr ' ' '\n' | grep . | median)
	printf '%-36s %10.3f   %s\n' "${label[$t]}" "${med[$t]}" "${times[$t]}"
done
echo
for ref in addr2line eu-addr2line; do
	for t in cold warm no-cache; do
		[ -n "${med[$ref]:-}" ] && [ -n "${med[$t]:-}" ] || continue
		awk -v a="${med[$ref]}" -v r="${med[$t]}" -v l="$ref / rtrace resolve ($t)" \
			'BEGIN { printf "%-44s %6.1fx\n", l ":", a / r }'
	done
done
if [ -n "${med[whole]:-}" ] && [ -n "${med[postproc]:-}" ]; then
	awk -v w="${med[whole]}" -v p="${med[postproc]}" 'BEGIN {
		printf "whole trace: resolve - postproc = %.3f s (resolving, minus writing the same text)\n", w - p }'
fi
}

# The program of the dwarf workload (deterministic): DWARF_FUNCS functions,
# each calling three others at three call sites, allocating at the leaves.
gen_callgraph() {
	python3 - "$DWARF_FUNCS" > "$out/callgraph.c" << 'EOF'
import random, sys
n = int(sys.argv[1])
rng = random.Random(3)
print("/* generated by bench/resolve.sh: do not edit */")
print("#include <stdlib.h>")
print("void *volatile sink;")
for i in range(n):
    print(f"void f{i}(unsigned d, unsigned x);")
for i in range(n):
    a, b, c = (rng.randrange(n) for _ in range(3))
    print(f"""__attribute__((noinline)) void f{i}(unsigned d, unsigned x)
{{
	if (!d) {{
		sink = malloc(8 + x % 64);
		free(sink);
		return;
	}}
	x = x * 2654435761u + {i}u;
	switch (x % 3) {{
	case 0: f{a}(d - 1, x); break;
	case 1: f{b}(d - 1, x ^ 1); break;
	default: f{c}(d - 1, x + 7); break;
	}}
	sink = (void *)(unsigned long)x;
}}""")
print("int main(int argc, char **argv)\n{")
print("\tunsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 100000;")
print("\tfor (unsigned s = 0; s < n; s++)\n\t\tf0(10, s);\n\treturn 0;\n}")
EOF
	cc -O2 -g -fPIE -pie -o "$out/callgraph" "$out/callgraph.c"
}

for w in $WORKLOADS; do
	case $w in
	# PYTHONMALLOC=malloc: every Python object comes from malloc, from
	# thousands of distinct stacks (pymalloc would hide them in its arenas)
	python) PYTHONMALLOC=malloc bench_one python "$PY" "$here/py_workload.py" "$PY_SCALE" ;;
	dwarf) gen_callgraph && bench_one dwarf "$out/callgraph" "$((DWARF_FUNCS * 20))" ;;
	*) echo "resolve.sh: unknown workload '$w' (python, dwarf)" >&2 && exit 2 ;;
	esac
done
