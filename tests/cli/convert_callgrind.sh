# rtrace convert --to callgrind: allocation profiles of traces that
# callgrind_annotate (Valgrind 3.19) reads with totals equal to the
# trace's own (allocation calls and bytes counted in the text trace, leaks
# as rtrace run's leak check summed them), inclusive costs along the
# stacks, and the same report from rtrace annotate; Valgrind XML leak
# reports and sp-rtrace text traces as input; Callgrind profiles read and
# written back with the same function table; options, pipes, errors.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
need_fixtures
D=$SRCDIR/tests/data/callgrind
command -v callgrind_annotate > /dev/null || { echo "needs callgrind_annotate" >&2; exit 1; }
REF=$TMP/callgrind_annotate.ties
bash "$(dirname "$0")/callgrind_annotate_ties.sh" "$REF" || exit 1
cd "$TMP" || exit 1

# totals FILE: callgrind_annotate's PROGRAM TOTALS, numbers only
totals() {
  callgrind_annotate --auto=no "$1" | grep 'PROGRAM TOTALS' |
    sed 's/([^)]*)//g; s/PROGRAM TOTALS.*//; s/,//g' | tr -s ' ' | sed 's/^ //; s/ $//'
}
# fn_row FILE FUNCTION [OPTIONS]: the function table's numbers for it
fn_row() {
  local f=$1 fn=$2
  shift 2
  callgrind_annotate --auto=no --threshold=100 "$@" "$f" | grep ":$fn \[" | head -1 |
    sed 's/([^)]*)//g; s/ [^ ]*:[^ ]* \[.*//; s/,//g' | tr -s ' ' | sed 's/^ //; s/ $//'
}
has() { if grep -qE -- "$3" "$2"; then ok; else bad "$1: no /$3/ in $2"; fi; }

# --- a leaking program under rtrace run --leak-check=full ---
mkdir run
"$RTRACE" run -o run --leak-check=full -- "$PROGRAMS/tp_leaks" > /dev/null 2> run.err
trace=$(ls run/*.rtrace)
"$RTRACE" convert --to callgrind -o leaks.cg "$trace" 2> conv.err && ok || bad "convert exits 0: $(cat conv.err)"
"$RTRACE" postproc -i "$trace" > trace.txt
allocs=$(grep -cE '^[0-9]+\. .* = 0x' trace.txt)
bytes=$(grep -E '^[0-9]+\. .* = 0x' trace.txt | sed 's/.*(\([0-9]*\)) = .*/\1/' | paste -sd+ | bc)
lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' run.err | tr -d ,)
ilost=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' run.err | tr -d ,)
lbytes=$((${lost% *} + ${ilost% *}))
lblocks=$((${lost#* } + ${ilost#* }))
[ "$allocs" -gt 1000 ] && [ "$lbytes" -gt 0 ] && ok || bad "the trace has allocations and leaks ($allocs, $lbytes)"
# temporary allocations and the peak: rtrace heap's (callgrind_heap.sh)
"$RTRACE" heap -q --no-resolve "$trace" > heap.out
temp=$(sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p' heap.out)
peak=$(sed -n 's/^peak heap memory consumption: .*(\([0-9]*\) bytes.*/\1/p' heap.out)
all="$allocs $bytes $lblocks $lbytes $temp $peak"
[ "$(totals leaks.cg)" = "$all" ] && ok || bad "PROGRAM TOTALS '$(totals leaks.cg)' = trace's '$all'"
has "summary line" leaks.cg "^summary: $all\$"
has "totals line" leaks.cg "^totals: $all\$"
has "events" leaks.cg '^events: Allocs Bytes Leaks LeakedBytes Temporary PeakBytes$'
has "long names" leaks.cg '^event: Leaks : leaked blocks \(definitely and indirectly lost\)$'
has "cmd" leaks.cg "^cmd: .*/tp_leaks\$"
has "compressed names" leaks.cg '^fn=\([0-9]+\) main$'
has "relative lines" leaks.cg '^\+[0-9]+ [0-9]'

# self cost at the allocation sites: leak_a allocates 3 x 100 bytes, all
# leaked; tp_leaks.c's lines, with the program's source
la=$(grep -n 'leak_a' "$SRCDIR/tests/programs/tp_leaks.c" | head -1 | cut -d: -f1)
LEAKEV=--show=Allocs,Bytes,Leaks,LeakedBytes
[ "$(fn_row leaks.cg leak_a $LEAKEV)" = "3 300 3 300" ] && ok || bad "leak_a self '$(fn_row leaks.cg leak_a $LEAKEV)'"
[ "$(fn_row leaks.cg leak_a --inclusive=yes $LEAKEV)" = "3 300 3 300" ] && ok || bad "leak_a inclusive"
# main's inclusive cost: everything it allocated, itself or through callees
main_self=$(fn_row leaks.cg main)
main_incl=$(fn_row leaks.cg main --inclusive=yes)
[ "${main_incl%% *}" -gt "${main_self%% *}" ] && [ "${main_incl%% *}" -le "$allocs" ] && ok ||
  bad "main inclusive '$main_incl' > self '$main_self'"
# and it calls leak_a with leak_a's cost
callgrind_annotate --auto=no --tree=calling --threshold=100 --show-percs=no $LEAKEV leaks.cg > tree.txt
has "main calls leak_a" tree.txt '^ *3 +300 +3 +300 +> +.*:leak_a \(3x\)'

# rtrace annotate prints what callgrind_annotate prints for the profile
for opts in "" "--inclusive=yes --tree=both"; do
  # shellcheck disable=SC2086
  perl "$REF" --auto=no $opts leaks.cg > ref.out
  # shellcheck disable=SC2086
  "$RTRACE" annotate --auto=no $opts leaks.cg > rt.out
  check_same "rtrace annotate = callgrind_annotate ($opts)" ref.out rt.out
done

# --dump-instr, --compress-strings=no, --compress-pos=no: the same totals
"$RTRACE" convert --to callgrind --dump-instr=yes -o instr.cg "$trace"
has "instr positions" instr.cg '^positions: instr line$'
has "instr addresses" instr.cg '^0x[0-9a-f]+ [0-9]+ [0-9]'
[ "$(totals instr.cg)" = "$(totals leaks.cg)" ] && ok || bad "--dump-instr totals"
"$RTRACE" convert --to callgrind --compress-strings=no --compress-pos=no -o plain.cg "$trace"
grep -qE '^(c?fn|c?ob|fl|cfi)=\(' plain.cg && bad "--compress-strings=no still compresses" || ok
grep -qE '^[-+*]' plain.cg && bad "--compress-pos=no still relative" || ok
[ "$(totals plain.cg)" = "$(totals leaks.cg)" ] && ok || bad "uncompressed totals"
perl "$REF" --auto=no --inclusive=yes plain.cg | sed 1,3d > a.out
perl "$REF" --auto=no --inclusive=yes leaks.cg | sed 1,3d > b.out
check_same "compressed and uncompressed give the same report" a.out b.out

# the format told by the output's name; input from a pipe
"$RTRACE" convert -o callgrind.out.42 "$trace" && head -1 callgrind.out.42 | grep -q '^# callgrind format' &&
  ok || bad "callgrind.out.* writes callgrind"
cat "$trace" | "$RTRACE" convert --to callgrind - > piped.cg
check_same "pipe input" leaks.cg piped.cg

# a text trace (sp-rtrace's shared memory sample): per resource type
"$RTRACE" convert --to callgrind -o shm.cg "$PP/sample.txt..r"
has "per-type events" shm.cg '^events: SegmentAllocs SegmentSize SegmentUnfreed SegmentUnfreedSize AddressAllocs AddressSize AddressUnfreed AddressUnfreedSize$'
[ "$(totals shm.cg)" = "1 1024 0 0 2 2048 0 0" ] && ok || bad "sample.txt totals '$(totals shm.cg)'"
"$RTRACE" convert --to callgrind -o lk.cg "$PP/sample.txt.lc.r" 2> /dev/null ||
  "$RTRACE" convert --to callgrind -o lk.cg "$PP/sample.txt..r"
has "unfreed events" lk.cg '^events: .*Unfreed'

# a Valgrind XML leak report: memcheck's loss records as Leaks
X=$SRCDIR/tests/data/vgxml/memcheck.xml
"$RTRACE" convert --to callgrind -o vg.cg "$X"
has "leak events" vg.cg '^events: Leaks LeakedBytes$'
# (a definitely lost record's leakedbytes include the bytes lost with it,
# which the indirectly lost records count again)
xn=$(xmllint --xpath "sum(//error[kind='Leak_DefinitelyLost' or kind='Leak_IndirectlyLost']/xwhat/leakedblocks)" "$X")
xb=$(xmllint --xpath "sum(//error[kind='Leak_DefinitelyLost' or kind='Leak_IndirectlyLost']/xwhat/leakedbytes)" "$X")
with=$(xmllint --xpath "//error[kind='Leak_DefinitelyLost']/xwhat/text/text()" "$X" |
  sed -n 's/.*direct, \([0-9,]*\) indirect.*/\1/p' | tr -d , | paste -sd+ | bc)
xb=$((xb - ${with:-0}))
[ "$xn" -gt 0 ] && ok || bad "memcheck.xml has lost blocks"
[ "$(totals vg.cg)" = "$xn $xb" ] && ok || bad "memcheck leaks '$(totals vg.cg)' = '$xn $xb'"
grep -q 'vg_replace_malloc\|vgpreload' vg.cg && bad "Valgrind's allocator frames kept" || ok

# Callgrind profiles back to Callgrind: the same function table
for f in vg-default.cg vg-instr.cg vg-jumps.cg vg-nocompress.cg vg-cachegrind.out multipart.cg inline.cg; do
  "$RTRACE" convert -o "$f.out" "$D/$f" 2> rt.err || bad "$f: convert failed: $(cat rt.err)"
  head -1 "$f.out" | grep -q '^# callgrind format' && ok || bad "$f: profile in, profile out"
  for opts in "--auto=no" "--auto=no --inclusive=yes"; do
    # shellcheck disable=SC2086
    perl "$REF" $opts "$D/$f" 2> /dev/null | sed 1,3d > ref.out
    # shellcheck disable=SC2086
    perl "$REF" $opts "$f.out" 2> /dev/null | sed 1,3d > rt.out
    check_same "$f written back ($opts)" ref.out rt.out
  done
done

# every function's object as each reader reads cob=: a program, a shared
# library it links and two plugins it dlopens, whose callers have no self
# cost (gprof2dot keeps the last cob= until a self-cost line, so it gave
# main's callee run_plugin the library's object, _dlerror_run ld.so's)
OBJ=$(dirname "$0")/callgrind_objects.awk
mkdir mods
"$RTRACE" run -o mods -- "$PROGRAMS/tp_resolve_O0" "$PROGRAMS/libtp_resplug_a.so" \
  "$PROGRAMS/libtp_resplug_b.so" > /dev/null 2>&1
"$RTRACE" convert --to callgrind -o mods.cg mods/*.rtrace
awk -v list=1 -f "$OBJ" mods.cg > defined.txt
for fo in "run_plugin tp_resolve_O0" "reslib_make libtp_reslib.so" "plug_a_work libtp_resplug_a.so" \
  "plug_b_work libtp_resplug_b.so"; do
  has "${fo% *}'s object" defined.txt "^${fo% *} /.*/${fo#* }\$"
done
for rule in last self spec; do
  awk -v rule=$rule -f "$OBJ" mods.cg > objs.txt
  [ -s objs.txt ] && bad "callees' objects read with cob= rule '$rule': $(head -5 objs.txt)" || ok
done
# and in the profiles Callgrind wrote, written back
for f in vg-default.cg vg-instr.cg multipart.cg inline.cg; do
  awk -v rule=last -f "$OBJ" "$f.out" > objs.txt
  [ -s objs.txt ] && bad "$f written back: callees' objects: $(head -5 objs.txt)" || ok
done

# errors: a profile converts to callgrind only; a cut-off profile is
# written as far as it was read, and said so
"$RTRACE" convert --to text "$D/vg-default.cg" > /dev/null 2> err.txt
[ $? = 1 ] && grep -q 'converts to callgrind only' err.txt && ok || bad "profile --to text: $(cat err.txt)"
head -c 3000 "$D/vg-default.cg" | sed '$d' > cut.cg
echo "garbage= here" >> cut.cg
"$RTRACE" convert -o cut.out cut.cg 2> err.txt
[ $? = 1 ] && grep -q 'cut.cg:[0-9]*:[0-9]*: ' err.txt && grep -q 'output is partial' err.txt && ok ||
  bad "bad profile: $(cat err.txt)"
grep -q '^fn=' cut.out && ok || bad "the part read before the error is written"

# 100k events (an 890 KB events: line) read in linear time: the
# duplicate check and the event lookup are hashed (it took 27 s)
awk 'BEGIN { printf "events:"; for (i = 0; i < 100000; i++) printf " E%d", i
  print ""; print "fl=a.c"; print "fn=main"; print "1 1 2 3" }' > many.cg
start=$(date +%s)
timeout 60 "$RTRACE" convert -o many.out many.cg 2> err.txt
rc=$?
took=$(( $(date +%s) - start ))
[ $rc = 0 ] && [ "$took" -le 15 ] && [ "$(grep "^events:" many.out)" = "$(head -n 1 many.cg)" ] && ok || bad "100k events: exit $rc in ${took}s: $(head -c 300 err.txt)"

# costs adding up past 2^64-1: an error where they do, not totals wrapped
printf 'events: Ir Dr\nfl=a.c\nfn=main\n1 18446744073709551615 1\n2 1 1\n' > ovf.cg
"$RTRACE" annotate ovf.cg > /dev/null 2> err.txt
[ $? = 1 ] && grep -q "ovf.cg:5:3: the costs of event 'Ir' add up past 2^64-1" err.txt && ok || bad "cost sum overflow: $(cat err.txt)"
printf 'events: Ir\nfl=a.c\nfn=main\n1 1\ncfn=f\ncalls=18446744073709551615 1\n1 5\ncalls=1 1\n1 5\n' > ovf2.cg
"$RTRACE" convert -o ovf2.out ovf2.cg 2> err.txt
[ $? = 1 ] && grep -q "ovf2.cg:9:1: the inclusive costs or the count of this call add up past 2^64-1" err.txt && ok ||
  bad "call count overflow: $(cat err.txt)"

# a trace whose sizes add up past 2^64-1: its sums held at 2^64-1, with a
# warning, rather than wrapped round to small numbers
printf 'version=2.0, arch=x86_64, process=/bin/x, pid=1\n<1> : memory (memory)\n1. malloc(9223372036854775808) = 0x1000\n\t0x401000\n2. malloc(9223372036854775808) = 0x2000\n\t0x401000\n\n' > big.txt
"$RTRACE" convert -o callgrind.out.big big.txt 2> err.txt
[ $? = 0 ] && grep -q '^totals: 2 18446744073709551615 2 18446744073709551615 ' callgrind.out.big &&
  grep -q 'big.txt: costs add up past 2^64-1' err.txt && ok || bad "trace sums past 2^64-1: $(cat err.txt; grep totals callgrind.out.big)"

# three such allocations, at two sites: totals: (the cost lines' sum)
# is held where summary: is, not wrapped round
printf 'version=2.0, arch=x86_64, process=/bin/x, pid=1\n<1> : memory (memory)\n1. malloc(9223372036854775808) = 0x1000\n\t0x401000\n2. malloc(9223372036854775808) = 0x2000\n\t0x401000\n3. malloc(9223372036854775808) = 0x3000\n\t0x402000\n\n' > big3.txt
"$RTRACE" convert -o callgrind.out.big3 big3.txt 2> err.txt
[ $? = 0 ] && grep -q '^summary: 3 18446744073709551615 3 18446744073709551615 ' callgrind.out.big3 &&
  [ "$(sed -n 's/^summary://p' callgrind.out.big3)" = "$(sed -n 's/^totals://p' callgrind.out.big3)" ] && ok ||
  bad "totals past 2^64-1: $(grep -E '^(summary|totals):' callgrind.out.big3)"

# a trace with only releases: a valid profile with zero totals, which
# callgrind_annotate reads, not an empty file
printf 'version=2.0, arch=x86_64, process=/bin/x, pid=1\n<1> : memory (memory)\n1. free(0x1000)\n\t0x401000\n\n' > frees.txt
"$RTRACE" convert -o callgrind.out.frees frees.txt 2> err.txt
[ $? = 0 ] && grep -q '^events: Allocs Bytes Unfreed UnfreedBytes Temporary PeakBytes$' callgrind.out.frees &&
  grep -q '^totals: 0 0 0 0 0 0$' callgrind.out.frees && ok || bad "only frees: $(cat err.txt; cat callgrind.out.frees)"
callgrind_annotate callgrind.out.frees > ann.ref 2> err.txt && grep -q 'PROGRAM TOTALS' ann.ref && ok ||
  bad "callgrind_annotate on the frees-only profile: $(cat err.txt)"
"$RTRACE" annotate callgrind.out.frees > ann.out && cmp -s ann.ref ann.out && ok || bad "rtrace annotate on the frees-only profile"

# a threaded program's binary trace: its stacks are numbered as the
# threads' chunks are read, not by their first calls. Resolved where they
# are, the profile still takes them by first call, as a resolved copy of
# each would be numbered: the same file as from the trace in the text
# protocol (numbered by first call), but for the leak verdicts' events
mkdir thr
"$RTRACE" run -q -o thr --leak-check=full -- "$PROGRAMS/tp_threads" > /dev/null 2>&1
tt=$(ls thr/*.rtrace)
"$RTRACE" postproc -i "$tt" > thr.txt
"$RTRACE" convert --to callgrind -o thr_bin.cg "$tt" && "$RTRACE" convert --to callgrind -o thr_txt.cg thr.txt &&
  [ "$(grep -c '^fn=' thr_bin.cg)" -gt 10 ] &&
  diff <(grep -v '^event' thr_bin.cg) <(grep -v '^event' thr_txt.cg) > thr.diff && ok ||
  bad "threaded trace: binary and text give other profiles: $(head -5 thr.diff)"

"$RTRACE" convert --to callgrind --dump-instr=maybe "$trace" > /dev/null 2> err.txt
[ $? = 2 ] && grep -q 'expected yes or no' err.txt && ok || bad "bad --dump-instr value"
finish
