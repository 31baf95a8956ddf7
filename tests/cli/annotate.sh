# rtrace annotate next to callgrind_annotate 3.19, byte for byte: fresh
# Callgrind and Cachegrind profiles of tests/programs/tp_cgwork (written by
# tests/data/callgrind/gen.sh: default, uncompressed, instructions, jumps,
# cache simulation, threads, dumps) and the hand-written profiles of
# tests/data/callgrind, with many option sets, source annotation included.
#
# callgrind_annotate orders ties (callers and callees of equal cost, the
# annotated files) by Perl's hash order, which changes from run to run. The
# reference is therefore a copy of it whose sorts break ties by name
# (callgrind_annotate_ties.sh: five lines); the unchanged tool must print
# the same lines in its own order. Where the two tools read a file differently on purpose
# (several parts, CRLF, pprof's calls=0, hex costs), rtrace's numbers are
# checked against the format's rules instead.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
D=$SRCDIR/tests/data/callgrind
for tool in valgrind callgrind_annotate perl; do
  command -v $tool > /dev/null || { echo "annotate.sh needs $tool" >&2; exit 1; }
done
CA=$(command -v callgrind_annotate)
"$CA" --version 2>&1 | grep -q '^callgrind_annotate-3\.19\.' ||
  { echo "annotate.sh: $CA is not version 3.19: $("$CA" --version 2>&1)" >&2; exit 1; }

REF=$TMP/callgrind_annotate.ties
bash "$(dirname "$0")/callgrind_annotate_ties.sh" "$REF" "$CA" || exit 1

# same NAME DIR ARGS...: in DIR, `rtrace annotate ARGS` prints what the
# reference prints, and the same lines as callgrind_annotate itself
same() {
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && perl "$REF" "$@" > "$TMP/ref.out" 2> "$TMP/ref.err")
  if ! grep -q 'PROGRAM TOTALS' "$TMP/ref.out"; then
    bad "$name: callgrind_annotate printed no report: $(head -3 "$TMP/ref.err")"
    return
  fi
  (cd "$dir" && "$RTRACE" annotate "$@" > "$TMP/rt.out" 2> "$TMP/rt.err") ||
    bad "$name: rtrace annotate failed: $(head -3 "$TMP/rt.err")"
  check_same "$name" "$TMP/ref.out" "$TMP/rt.out"
  # (the first user-annotated file shares its line with the label)
  local label='s/^User annotated:   /                  /'
  (cd "$dir" && "$CA" "$@" 2> /dev/null) | sed "$label" | sort > "$TMP/orig.sorted"
  sed "$label" "$TMP/rt.out" | sort | cmp -s - "$TMP/orig.sorted" && ok ||
    bad "$name: not the lines of callgrind_annotate itself"
}

# commify N: N with its digits grouped by three, as both tools print it
commify() { echo "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'; }

# has NAME FILE TEXT: FILE holds the line TEXT
has() { grep -qxF -- "$3" "$2" && ok || bad "$1: no line '$3' in $(basename "$2")"; }

# --- profiles Valgrind writes ---
VG=$TMP/vg
FULL=1 CACHEGRIND_OPTS=--cache-sim=yes bash "$D/gen.sh" "$VG" "$PROGRAMS/tp_cgwork" ||
  { echo "annotate.sh: gen.sh failed" >&2; exit 1; }
SOURCES=$SRCDIR/tests/programs
# (Valgrind reuses the thread numbers of finished threads: 2 or 3 files)
threads=$(cd "$VG" && echo vg-threads.cg-*)
for f in vg-default.cg vg-nocompress.cg vg-instr.cg vg-jumps.cg vg-cache.cg $threads vg-dump.cg \
  vg-dump.cg.1 vg-cachegrind.out; do
  same "$f" "$VG" "$f"
  same "$f --inclusive=yes" "$VG" "$f" --inclusive=yes
  same "$f --tree=both" "$VG" "$f" --tree=both
done
P=$VG/vg-default.cg
same "--tree=caller --inclusive=yes" "$VG" "$P" --tree=caller --inclusive=yes
same "--tree=calling --threshold=100" "$VG" "$P" --tree=calling --threshold=100
same "--threshold=50" "$VG" "$P" --threshold=50
same "--threshold=0.5%" "$VG" "$P" --threshold=0.5%
same "--auto=no" "$VG" "$P" --auto=no
same "--context=2" "$VG" "$P" --context=2
same "--context=0 --show-percs=no" "$VG" "$P" --context=0 --show-percs=no
same "user file, --auto=no" "$SOURCES" "$P" --auto=no tp_cgwork.h
same "-I and user files" "$VG" "$P" -I="$SOURCES" --include=/nonexistent/ tp_cgwork_util.c tp_cgwork.h
# run where the sources are: callgrind_annotate strips the directory from
# fl= names (not from cfi= ones)
same "in the source tree" "$SRCDIR/tests" "$P" --tree=both
same "in the source tree, --inclusive=yes" "$SRCDIR/tests" "$VG/vg-jumps.cg" --inclusive=yes
C=$VG/vg-cache.cg
same "--sort=D1mr,Ir" "$VG" "$C" --sort=D1mr,Ir
same "--show=Dw,Ir --sort=Dw" "$VG" "$C" --show=Dw,Ir --sort=Dw
same "--sort=Ir:90,Dr:50" "$VG" "$C" --sort=Ir:90,Dr:50 --tree=both
same "--sort=Bc:20% --inclusive=yes" "$VG" "$C" --sort=Bc:20% --inclusive=yes
same "cachegrind --show=D1mr,DLmr" "$VG" "$VG/vg-cachegrind.out" --show=D1mr,DLmr --sort=DLmr

# positions: instr bb line: callgrind_annotate cannot read it ("too many
# event counts"); rtrace's totals are the file's
"$RTRACE" annotate "$VG/vg-bb.cg" > "$TMP/bb.out" 2> "$TMP/bb.err" && ok || bad "bb: $(cat "$TMP/bb.err")"
total=$(sed -n 's/^totals: //p' "$VG/vg-bb.cg")
has "bb totals" "$TMP/bb.out" "$(commify "$total") (100.0%)  PROGRAM TOTALS"

# --- hand-written profiles, one rule of the format each ---
for f in spec_simple.cg spec_extended.cg spec_compressed.cg subpositions.cg events.cg fewer_costs.cg summary_short.cg comments.cg inline.cg jumps.cg revision321.cg \
  totals_bad.cg xdebug.cg xdebug2.cg; do
  same "$f" "$D" "$f"
  same "$f --tree=both --inclusive=yes" "$D" "$f" --tree=both --inclusive=yes
done

# name mappings defined up front (spec_predefined.cg) change nothing: the
# profile reads as spec_compressed.cg does (callgrind_annotate makes empty
# functions of the fn= lines that only define a mapping)
mkdir -p "$TMP/pre" && cp "$D/spec_compressed.cg" "$TMP/pre/spec_predefined.cg"
for opts in "" "--threshold=100 --tree=both --inclusive=yes"; do
  (cd "$TMP/pre" && perl "$REF" $opts spec_predefined.cg > "$TMP/pre.out" 2> /dev/null)
  (cd "$D" && "$RTRACE" annotate $opts spec_predefined.cg > "$TMP/pre.rt" 2>&1) || bad "spec_predefined: rtrace failed"
  check_same "spec_predefined.cg $opts" "$TMP/pre.out" "$TMP/pre.rt"
done

# CRLF: callgrind_annotate keeps the \r in names; rtrace prints what it
# prints for the same file with LF line ends
mkdir -p "$TMP/lf" && tr -d '\r' < "$D/crlf.cg" > "$TMP/lf/crlf.cg"
(cd "$TMP/lf" && perl "$REF" crlf.cg > "$TMP/lf.out" 2> /dev/null)
(cd "$D" && "$RTRACE" annotate crlf.cg > "$TMP/crlf.out" 2>&1) && ok || bad "crlf: rtrace failed"
check_same "crlf.cg as its LF twin" "$TMP/lf.out" "$TMP/crlf.out"

# several parts: their totals add up (callgrind_annotate takes the last
# part's summary: and prints 7 for a program of 37)
"$RTRACE" annotate "$D/multipart.cg" > "$TMP/mp.out" 2>&1 && ok || bad "multipart: rtrace failed"
has "multipart totals" "$TMP/mp.out" "37 (100.0%)  PROGRAM TOTALS"
has "multipart main" "$TMP/mp.out" "30 (81.08%)  a.c:main"
has "multipart target" "$TMP/mp.out" "Profiled target:  ./prog arg (PID 4242, part 1, thread 1)"
# pprof writes calls=0 for every call: as callgrind_annotate, the cost of
# a call counted 0 times is the caller's own
same "pprof.cg" "$D" pprof.cg --tree=both
# hex costs (Number := HexNumber | Digit+): callgrind_annotate gives up
"$RTRACE" annotate "$D/hex.cg" > "$TMP/hex.out" 2>&1 && ok || bad "hex: rtrace failed"
has "hex totals" "$TMP/hex.out" "288 (100.0%) 10 (100.0%)  PROGRAM TOTALS"

# --- source annotation: newer sources, lines past the end, line 0, files
# without information, files not found, a last line "0" without newline ---
S=$TMP/src
mkdir -p "$S"
printf 'int a;\nint b;\nint c;\n' > "$S/new.c"
printf 'h1\nh2\n' > "$S/past.h"
printf 'x\n0' > "$S/zero.c"
printf 'other\n' > "$S/other.c"
cat > "$S/src.cg" << 'EOF'
events: Ir
fl=new.c
fn=f
0 3
2 5
9 1
fl=past.h
fn=g
1 2
7 4
fl=zero.c
fn=z
2 6
fl=gone.c
fn=h
3 1
EOF
touch -d '2000-01-01' "$S/src.cg" "$S/past.h" "$S/zero.c" "$S/other.c"
same "source annotation" "$S" src.cg other.c
same "source annotation, --context=0" "$S" src.cg --context=0 --tree=both
grep -q "is more recent than input file 'src.cg'" "$TMP/rt.out" && ok || bad "no warning for the newer source"
grep -qF '<bogus line 7>' "$TMP/rt.out" && ok || bad "no bogus line"

# --- truncated and bad input ---
mkdir -p "$TMP/cut" "$TMP/cutnl"
# Cut two thirds in, after the last cost line there and inside the line
# that follows it, with a byte no line parses with: the complete lines end
# with a cost line, since what callgrind_annotate makes of position lines
# that no cost follows differs on purpose (rtrace-annotate.1, DIFFERENCES).
perl -0777 -ne '
  BEGIN { ($nl, $cut) = splice(@ARGV, 0, 2) }
  my $n = int(length($_) * 2 / 3);
  my $head = substr($_, 0, $n);
  $head =~ /\A(.*\n(?:[-+*]|\d)[^\n]*\n)/s or die "no cost line\n";
  my $m = length($1);
  my $next = index($_, "\n", $m) - $m;
  open(my $c, ">", $nl) or die;
  print $c $1;
  open($c, ">", $cut) or die;
  print $c $1, substr($_, $m, $next > 1 ? int($next / 2) : 0), "\001";
' "$TMP/cutnl/p.cg" "$TMP/cut/p.cg" < "$P" || bad "truncated: no cut"
(cd "$TMP/cutnl" && perl "$REF" --auto=no p.cg > "$TMP/cutnl.out" 2> /dev/null)
(cd "$TMP/cut" && "$RTRACE" annotate --auto=no p.cg > "$TMP/cut.out" 2> "$TMP/cut.err") && ok ||
  bad "truncated: exit status $?"
# (sorted: cut anywhere, two functions may tie, which callgrind_annotate
# orders by Perl's hash order in its function table)
sort "$TMP/cutnl.out" > "$TMP/cutnl.sorted"
sort "$TMP/cut.out" > "$TMP/cut.sorted"
check_same "truncated: what was complete" "$TMP/cutnl.sorted" "$TMP/cut.sorted"
grep -q '^rtrace: warning: p\.cg:[0-9]*:1: the input ends inside this line (truncated?)' "$TMP/cut.err" && ok ||
  bad "truncated: no warning: $(cat "$TMP/cut.err")"

printf 'events: Ir\nfl=a.c\nfn=f\n1 5\n2 x\n' > "$TMP/bad.cg"
"$RTRACE" annotate "$TMP/bad.cg" > "$TMP/bad.out" 2> "$TMP/bad.err"
[ $? = 1 ] && ok || bad "bad input: exit status not 1"
grep -qxF "rtrace: error: $TMP/bad.cg:5:3: expected a cost (a number), found 'x'" "$TMP/bad.err" && ok ||
  bad "bad input: message: $(cat "$TMP/bad.err")"
has "bad input: what was read is reported" "$TMP/bad.out" "5 (100.0%)  a.c:f"

"$RTRACE" annotate "$TMP/none.cg" > /dev/null 2>&1
[ $? = 1 ] && ok || bad "missing profile: exit status not 1"
for opts in --sort=Nope --show=Ir,Nope --threshold=101 --threshold=x --tree=up --auto=maybe --context=-1 --bogus; do
  "$RTRACE" annotate $opts "$P" > "$TMP/opt.out" 2> "$TMP/opt.err"
  [ $? = 2 ] && [ ! -s "$TMP/opt.out" ] && grep -q '^rtrace: error: ' "$TMP/opt.err" && ok ||
    bad "$opts: not a usage error: $(cat "$TMP/opt.err")"
done
"$RTRACE" annotate "$P" nosuch.c > /dev/null 2>&1
[ $? = 2 ] && ok || bad "missing source file: exit status not 2"
# no profile named: the first callgrind.out* here, as callgrind_annotate finds it
mkdir -p "$TMP/find" && cp "$D/spec_simple.cg" "$TMP/find/callgrind.out.2" && cp "$D/inline.cg" "$TMP/find/callgrind.out.10"
(cd "$TMP/find" && perl "$REF" > "$TMP/find.ref" 2> /dev/null && "$RTRACE" annotate > "$TMP/find.out")
check_same "no profile named" "$TMP/find.ref" "$TMP/find.out"
finish
