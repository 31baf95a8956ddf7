# rtrace resolve and rtrace postproc -r on traces of the resolver's test
# programs (PIE at -O0 and -O2 with inlining, a shared library, plugins
# dlopen'ed and dlclose'd at the same addresses, C++): every frame in the
# programs' modules reads as `addr2line -f -i -C` has its call site, and
# frames in system libraries as `eu-addr2line` has them. Then separate
# debug info (build id under --debug-dir, .gnu_debuglink), --root, a
# module deleted after the run, and traces that are already resolved.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resolve_lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
S=$SRCDIR/tests/programs
TRACER=${TRACER:-$RTRACE} # the rtrace that traces (default: the one tested)
cd "$TMP" || exit 1
for tool in addr2line objcopy strip readelf; do
  command -v $tool > /dev/null || { echo "resolve.sh needs $tool (binutils)" >&2; exit 1; }
done

trace() { # OUT PROGRAM ARGS...: the trace of the process, in OUT
  local out=$1
  shift
  rm -rf tr && mkdir tr
  "$TRACER" run -q -o tr -- "$@" > run.out 2> run.err || bad "run $*: $(cat run.err)"
  mv tr/*.rtrace "$out"
}
res() { # IN OUT [OPTIONS...]: rtrace resolve, warnings in OUT.err
  local in=$1 out=$2
  shift 2
  "$RTRACE" resolve "$@" -i "$in" -o "$out" 2> "$out.err" && ok || bad "resolve $in: $(cat "$out.err")"
}
# the line of SOURCE holding MARK: where the frame of a call must point
line_of() { grep -n -F -- "$2" "$S/$1" | head -n 1 | cut -d: -f1; }
# has NAME FILE REGEX: a frame line of FILE matches the extended REGEX
has() { grep -qE -- $'^\t0x[0-9a-f]+ '"$3"'$' "$2" && ok || bad "$1: no frame /$3/ in $2"; }
# in_call NAME FILE CALL REGEX: the group of CALL's record has a frame /REGEX/
in_call() {
  awk -v RS= -v c="$3" 'index($0, c)' "$2" | grep -qE -- $'^\t0x[0-9a-f]+ '"$4"'$' && ok ||
    bad "$1: the call $3 has no frame /$4/"
}
no_warnings() { [ ! -s "$1.err" ] && ok || bad "$1: unexpected warnings: $(cat "$1.err")"; }

PLUGS=("$P/libtp_resplug_a.so" "$P/libtp_resplug_b.so" "$P/libtp_resplug_a.so")
L_INNER=$(line_of tp_resolve.c "res_inner: malloc")
L_FILL=$(line_of tp_reslib.c "reslib_fill: malloc")
L_A=$(line_of tp_resplug_a.c "plug_a_work: malloc")
L_B=$(line_of tp_resplug_b.c "plug_b_work: calloc")
for opt in O0 O2; do
  trace $opt.rtrace "$P/tp_resolve_$opt" "${PLUGS[@]}"
  res $opt.rtrace $opt.txt
  no_warnings $opt.txt
  check_frames "tp_resolve_$opt" $opt.txt "^$P/" addr2line
  [ "$CHECKED" -ge 8 ] && ok || bad "$opt: only $CHECKED frames in the programs' modules"
  if command -v eu-addr2line > /dev/null; then
    check_frames "tp_resolve_$opt system libraries" $opt.txt "^/(usr/)?lib" eu-addr2line
  fi
  has "$opt inlined helper" $opt.txt "res_inner\(\) at .*/tests/programs/tp_resolve\.c:$L_INNER"
  has "$opt shared library" $opt.txt "reslib_fill\(\) at .*/tests/programs/tp_reslib\.c:$L_FILL"
  has "$opt executable, no debug info for _start" $opt.txt "_start\(\) from $P/tp_resolve_$opt"
  # plugin a (calls 2 and 4) and b (call 3) were loaded at the same place
  in_call "$opt first plugin" $opt.txt "malloc(42)" "plug_a_work\(\) at .*/tp_resplug_a\.c:$L_A"
  in_call "$opt second plugin" $opt.txt "calloc(45)" "plug_b_work\(\) at .*/tp_resplug_b\.c:$L_B"
  in_call "$opt first plugin again" $opt.txt "malloc(44)" "plug_a_work\(\) at .*/tp_resplug_a\.c:$L_A"
  grep -q '^version=.*, filter=resolve, ' $opt.txt && ok || bad "$opt: header filter=resolve: $(head -n 1 $opt.txt)"
done

# the same trace as text (no file offsets, no load times): modules are
# placed by their executable segment, and everything but the plugins that
# shared addresses resolves as from the binary trace
"$RTRACE" postproc -i O2.rtrace > O2.plain.txt
res O2.plain.txt O2.fromtext.txt
check_frames "text input" O2.fromtext.txt "^$P/" addr2line
diff <(grep -vE 'plug_|^[0-9]+\. ' O2.txt) <(grep -vE 'plug_|^[0-9]+\. ' O2.fromtext.txt) > /dev/null &&
  ok || bad "text input resolves as the binary trace"
# resolving again changes nothing
"$RTRACE" resolve -i O2.txt > O2.again.txt 2> O2.again.err && cmp -s O2.txt O2.again.txt && ok ||
  bad "resolving a resolved trace: $(diff O2.txt O2.again.txt | head -5)"

# postproc -r: the command people type first, short options combined
"$RTRACE" postproc -lcr -i O2.rtrace > lcr.txt 2> lcr.err && ok || bad "postproc -lcr: $(cat lcr.err)"
"$RTRACE" postproc --resolve -l -c -i O2.rtrace > lcr2.txt 2> /dev/null
cmp -s lcr.txt lcr2.txt && ok || bad "postproc --resolve -l -c = -lcr"
grep -q '^version=.*, filter=leaks|compress|resolve, ' lcr.txt && ok || bad "postproc -lcr header: $(head -n 1 lcr.txt)"
has "postproc -lcr" lcr.txt "res_inner\(\) at .*/tests/programs/tp_resolve\.c:$L_INNER"
grep -q '^# allocation summary: ' lcr.txt && ok || bad "postproc -lcr groups"
[ "$(grep -cP '^\t0x[0-9a-f]+$' lcr.txt)" = 0 ] && ok || bad "postproc -lcr left frames bare"
grep -P '^\t0x' lcr.txt | sort -u > lcr.frames
grep -P '^\t0x' O2.txt | sort -u > o2.frames
[ -z "$(comm -23 lcr.frames o2.frames)" ] && ok || bad "postproc -r and resolve disagree"
"$RTRACE" postproc -lc -i O2.rtrace | grep -q 'res_inner' && bad "postproc without -r resolved" || ok

# C++: demangled names, as addr2line -C prints them
trace cxx.rtrace "$P/tp_resolve_cxx"
res cxx.rtrace cxx.txt
check_frames "tp_resolve_cxx" cxx.txt "^$P/" addr2line
has "template member" cxx.txt "resolve_test::Pool<long>::make\(unsigned long\) at .*/tp_resolve_cxx\.cpp:$(line_of tp_resolve_cxx.cpp "Pool::make: new")"
has "static member" cxx.txt "resolve_test::Widget::create\(int\) at .*/tp_resolve_cxx\.cpp:$(line_of tp_resolve_cxx.cpp "Widget::create: new")"
has "anonymous namespace" cxx.txt "\(anonymous namespace\)::make_text\(char const\*\)( \[clone [^]]*\])? at .*/tp_resolve_cxx\.cpp:$(line_of tp_resolve_cxx.cpp "make_text: new")"
has "C main" cxx.txt "main\(\) at .*/tp_resolve_cxx\.cpp:[0-9]+"

# older line tables (DWARF 2 to 4: include directories and file entries
# of their own format), which the resolver decodes itself as the newer
if command -v cc > /dev/null; then
  for v in 2 4; do
    cc -O2 -gdwarf-$v -fPIE -pie -o dwarf$v "$S/tp_resolve.c" -L"$P" -ltp_reslib -Wl,-rpath,"$P" -ldl ||
      { bad "cc -gdwarf-$v"; continue; }
    trace dwarf$v.rtrace ./dwarf$v
    res dwarf$v.rtrace dwarf$v.txt
    check_frames "DWARF $v" dwarf$v.txt "^$TMP/dwarf$v\$" addr2line
    has "DWARF $v inlined helper" dwarf$v.txt "res_inner\(\) at .*/tests/programs/tp_resolve\.c:$L_INNER"
  done
fi

# a stripped executable whose debug info is found by build id in --debug-dir
cp "$P/tp_resolve_O2" stripped
id=$(readelf -n stripped | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ -n "$id" ] && ok || bad "no build id in tp_resolve_O2"
mkdir -p "dbg/.build-id/${id:0:2}"
objcopy --only-keep-debug stripped "dbg/.build-id/${id:0:2}/${id:2}.debug"
strip --strip-all stripped
trace stripped.rtrace ./stripped
res stripped.rtrace nodebug.txt
grep -q 'res_inner' nodebug.txt && bad "stripped: resolved without its debug info" || ok
has "stripped, no debug info" nodebug.txt "from $TMP/stripped"
res stripped.rtrace debug.txt --debug-dir "$TMP/nowhere" --debug-dir "$TMP/dbg"
has "stripped, --debug-dir" debug.txt "res_inner\(\) at .*/tests/programs/tp_resolve\.c:$L_INNER"
sed "s|$TMP/stripped|$P/tp_resolve_O2|" debug.txt > debug.orig.txt
check_frames "stripped, --debug-dir" debug.orig.txt "^$P/tp_resolve_O2\$" addr2line
"$RTRACE" postproc -r --debug-dir "$TMP/dbg" -i stripped.rtrace | grep -q 'res_inner() at ' && ok ||
  bad "postproc -r --debug-dir"

# .gnu_debuglink: the debug file next to the module
cp "$P/tp_resolve_O2" linked
objcopy --only-keep-debug linked linked.debug
strip --strip-all --remove-section=.note.gnu.build-id linked
objcopy --add-gnu-debuglink=linked.debug linked
trace linked.rtrace ./linked
res linked.rtrace linked.txt
has "gnu_debuglink" linked.txt "res_inner\(\) at .*/tests/programs/tp_resolve\.c:$L_INNER"

# a module deleted after the run: one warning, its addresses stay bare,
# and a second run that can read it (--root) resolves them
mkdir -p app
cp "$P/libtp_resplug_a.so" app/gone.so
trace gone.rtrace "$P/tp_resolve_O2" "$TMP/app/gone.so" "$TMP/app/gone.so"
mkdir -p "root$TMP/app"
mv app/gone.so "root$TMP/app/gone.so"
res gone.rtrace gone.txt
[ "$(grep -c "warning: .*$TMP/app/gone.so" gone.txt.err)" = 1 ] && [ "$(wc -l < gone.txt.err)" = 1 ] && ok ||
  bad "deleted module: one warning: $(cat gone.txt.err)"
awk -v RS= '/malloc\(42\)/' gone.txt | grep -qP '^\t0x[0-9a-f]+$' && ok || bad "deleted module: bare frames"
has "deleted module, the rest resolves" gone.txt "res_inner\(\) at .*/tp_resolve\.c:$L_INNER"
res gone.txt rooted.txt --root "$TMP/root/"
in_call "--root" rooted.txt "malloc(42)" "plug_a_work\(\) at .*/tp_resplug_a\.c:$L_A"
grep -q "warning" rooted.txt.err && bad "--root: $(cat rooted.txt.err)" || ok

# traces from elsewhere: sp-rtrace's fixtures (i686, modules absent here)
need_fixtures
"$RTRACE" resolve -i "$PP/sample.txt.r" > r.txt 2> r.err
cmp -s r.txt "$PP/sample.txt.r." && [ ! -s r.err ] && ok || bad "resolved fixture changed: $(diff r.txt "$PP/sample.txt.r." | head -5)"
"$RTRACE" resolve -i "$PP/sample.txt" > u.txt 2> u.err && ok || bad "unresolved fixture: exit status"
[ "$(grep -c 'warning: cannot open module' u.err)" = 2 ] && ok || bad "fixture: one warning per module used: $(cat u.err)"
diff <(tail -n +2 u.txt) <(tail -n +2 "$PP/sample.txt..") > /dev/null && ok || bad "fixture: frames left as they were"
head -n 1 u.txt | grep -q ', filter=resolve, ' && ok || bad "fixture: header filter"

# the command line
"$RTRACE" resolve --root "$TMP/none" -i O2.rtrace > /dev/null 2> e.err
[ $? = 2 ] && grep -q "invalid --root" e.err && ok || bad "--root of a missing directory: $(cat e.err)"
"$RTRACE" postproc --debug-dir dbg -i O2.rtrace > /dev/null 2> e.err
[ $? = 2 ] && grep -q "add -r" e.err && ok || bad "--debug-dir without -r: $(cat e.err)"
"$RTRACE" resolve -i "$TMP/missing" > /dev/null 2> e.err
[ $? = 1 ] && ok || bad "missing input: exit status 1"
"$RTRACE" resolve --help | grep -q -- '--debug-dir DIR' && ok || bad "resolve --help"
"$RTRACE" --help | grep -q '^  resolve ' && ok || bad "rtrace --help lists resolve"
"$RTRACE" resolve < O2.rtrace | cmp -s - O2.txt && ok || bad "binary trace on standard input"
finish
