# Suppressions (--suppressions, --gen-suppressions, -v) against memcheck
# itself, on the same programs with the same files: a hand-written file
# (wildcards, "...", match-leak-kinds, Memcheck:Free, obj:, src:, blocks
# of another tool and of a kind rtrace never reports) and the blocks each
# tool generates. What is left of the report, the LEAK SUMMARY's
# suppressed line, the ERROR SUMMARY's "(suppressed: N from M)", the
# used_suppression lines and the XML's <suppcounts> must be memcheck's;
# the blocks rtrace generates must be memcheck's, byte for byte, and
# valgrind must accept them and hide with them what rtrace hides. Then
# LeakSanitizer files, and malformed files (file:line:column).
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind
cp "$SRCDIR/tests/data/supp/hand.supp" .

# The lines both reports share, prefixes cut: loss records, summaries,
# used suppressions (of the files given: valgrind's default.supp left out).
verdict() {
  sed -E 's/^(==[0-9]+== |--[0-9]+-- |rtrace: )//; s/^HEAP SUMMARY.*/HEAP SUMMARY:/' |
    grep -E 'SUMMARY|suppressed|used_suppression|lost in loss|reachable in loss' |
    grep -v 'default.supp' | sort -u
}
vg() { valgrind -v --leak-check=full --show-leak-kinds=all "$@" 2>&1; }
rt() { "$RTRACE" run -v --show-leak-kinds=all "$@" 2>&1; }

compare() { # NAME "PROGRAM [ARG]" SUPP...
  local name=$1 prog=($2) args=()
  shift 2
  for f in "$@"; do args+=("--suppressions=$f"); done
  vg "${args[@]}" "$P/${prog[@]}" | verdict > "vg.$name"
  rt "${args[@]}" -- "$P/${prog[@]}" | verdict > "rt.$name"
  grep -q 'suppressed: [1-9]' "vg.$name" && check_same "$name: report as memcheck's" "vg.$name" "rt.$name" ||
    bad "$name: memcheck suppressed nothing: $(cat "vg.$name")"
}

compare hand tp_supp hand.supp

# --gen-suppressions=all: the blocks, then fed back to both tools (a C
# program, C++ functions of the program, C++ library code with aliased
# constructors: tp_heaperr's std::string)
for run in tp_supp tp_leaks "tp_heaperr heuristics"; do
  cmd=($run)
  prog=${cmd[0]}
  valgrind --leak-check=full --show-leak-kinds=all --gen-suppressions=all "$P/${cmd[@]}" 2>&1 >/dev/null |
    grep -v '^==' > "vg.gen.$prog"
  "$RTRACE" run --show-leak-kinds=all --gen-suppressions=all -- "$P/${cmd[@]}" 2>&1 >/dev/null |
    grep -v '^rtrace:' > "rt.gen.$prog"
  grep -q '^   fun:' "rt.gen.$prog" && check_same "$prog: generated blocks as memcheck's" "vg.gen.$prog" "rt.gen.$prog" ||
    bad "$prog: no suppression generated"
  awk '/<insert_a_suppression_name_here>/ { print "   gen" ++n; next } { print }' "rt.gen.$prog" > "gen.$prog.supp"
  compare "gen.$prog" "$run" "gen.$prog.supp"
done
grep -q 'fun:_ZN3app10make_cacheEm' gen.tp_supp.supp && grep -q 'fun:_Znwm' gen.tp_supp.supp &&
  grep -q 'fun:_ZdlPvm' gen.tp_supp.supp && ok || bad "C++ frames: linkage names expected: $(cat gen.tp_supp.supp)"
# everything hidden: nothing left to report, every error counted as suppressed
rt --suppressions=gen.tp_supp.supp -- "$P/tp_supp" > all.err
grep -q '^rtrace: ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 8 from 6)$' all.err &&
  ! grep -q 'in loss record\|Mismatched' all.err && ok || bad "all suppressed: $(cat all.err)"
"$RTRACE" run -q --error-exitcode=9 --suppressions=gen.tp_supp.supp -- "$P/tp_supp"
[ $? -eq 0 ] && ok || bad "--error-exitcode with everything suppressed"

# the XML: <suppcounts> as memcheck's, suppressed errors left out of it
valgrind --xml=yes --xml-file=vg.xml --leak-check=full --show-leak-kinds=all --suppressions=hand.supp \
  "$P/tp_supp" 2>/dev/null
"$RTRACE" run -q --show-leak-kinds=all --suppressions=hand.supp --xml-file=rt.xml -- "$P/tp_supp"
suppcounts() { sed -n '/<suppcounts>/,/<\/suppcounts>/p' "$1" | grep -v 'default.supp'; }
errkinds() { grep -o '<kind>[A-Za-z_]*</kind>' "$1" | sort | uniq -c; }
suppcounts vg.xml > vg.sc
suppcounts rt.xml > rt.sc
grep -q '<name>mismatch</name>' rt.sc && check_same "XML suppcounts" vg.sc rt.sc || bad "XML suppcounts: $(cat rt.sc)"
errkinds vg.xml > vg.kinds
errkinds rt.xml > rt.kinds
check_same "XML errors left" vg.kinds rt.kinds
"$RTRACE" run -q --gen-suppressions=all --xml-file=gen.xml -- "$P/tp_supp"
grep -q '<sframe> <fun>_ZN3app10make_cacheEm</fun> </sframe>' gen.xml && ! grep -q '<sframe> <obj>' gen.xml && ok ||
  bad "XML suppressions of C++ frames: $(grep -A3 '<sframe>' gen.xml | head)"

# convert: the trace of a run written as XML with the same suppressions
"$RTRACE" run -q -o tr --show-leak-kinds=all -- "$P/tp_supp"
"$RTRACE" convert -q --show-leak-kinds=all --suppressions=hand.supp -o conv.xml tr/tp_supp-*.rtrace
suppcounts conv.xml > conv.sc
errkinds conv.xml > conv.kinds
check_same "convert: suppcounts" vg.sc conv.sc
check_same "convert: errors left" vg.kinds conv.kinds

# LeakSanitizer files: leak:PATTERN on function (demangled), file, module
cat > lsan.supp <<'LSAN'
# LeakSanitizer
leak:app::make_array<int>
leak:^c_alloc$
LSAN
rt --suppressions=lsan.supp -- "$P/tp_supp" > lsan.err
grep -q 'suppressed: 172 bytes in 3 blocks$' lsan.err &&
  grep -q '^rtrace: used_suppression: *1 app::make_array<int> lsan.supp:2 suppressed: 40 bytes in 1 blocks$' lsan.err &&
  grep -q '^rtrace: used_suppression: *2 ^c_alloc\$ lsan.supp:3 suppressed: 132 bytes in 2 blocks$' lsan.err &&
  ok || bad "LeakSanitizer functions: $(cat lsan.err)"
printf 'leak:tp_supp.cpp\n' > lsan_file.supp
printf '  leak:*/tp_supp$\n' > lsan_module.supp
for f in lsan_file lsan_module; do
  rt --suppressions=$f.supp -- "$P/tp_supp" > $f.err
  grep -q 'suppressed: 276 bytes in 8 blocks$' $f.err && ok || bad "$f: $(cat $f.err)"
done

# valgrind's own default.supp is read (and suppresses nothing here)
for d in /usr/libexec/valgrind /usr/lib/x86_64-linux-gnu/valgrind /usr/lib/valgrind; do
  [ -f $d/default.supp ] || continue
  "$RTRACE" run -q --suppressions=$d/default.supp --error-exitcode=3 -- "$P/tp_leaks" >/dev/null
  [ $? -eq 3 ] && ok || bad "$d/default.supp"
  break
done

# malformed files: file:line:column and what was expected; nothing is run
malformed() { # CONTENT MESSAGE
  printf "$1" > bad.supp
  "$RTRACE" run --suppressions=bad.supp -- touch ran > bad.err 2>&1
  local rc=$?
  [ $rc -eq 2 ] && [ ! -e ran ] && grep -qF "rtrace: error: bad.supp:$2" bad.err && ok ||
    bad "malformed '$1' (status $rc): $(cat bad.err)"
}
malformed '{\n  x\n  Memcheck:Leak\n  fun:a\n' "5:1: expected '}' closing the suppression opened at line 1, found end of file"
malformed '# c\n{\n  x\n  Memcheck:Leak\n  match-leak-kinds: definit\n  fun:a\n}\n' "5:21: expected leak kinds"
malformed '{\n  x\n  Memcheck:Lek\n  fun:a\n}\n' "3:12: expected a memcheck suppression kind"
malformed '{\n  x\n  Memcheck:Free\n  fn:a\n}\n' "4:3: expected a frame line (fun:NAME, obj:NAME, src:FILE[:LINE] or ...), found 'fn:a'"
malformed '{\n  x\n  Memcheck:Free\n  ...\n}\n' "5:1: expected a fun:, obj: or src: frame line besides '...'"
malformed '{\n  x\n  Memcheck:Free\n}\n' "4:1: expected a frame line (fun:, obj:, src: or ...) before '}'"
malformed '{\n  x\n  Leak\n' "3:3: expected 'Tool:Kind'"
malformed 'leak:a\nrace:b\n' "2:1: expected '{' (a Valgrind suppression) or 'leak:PATTERN'"
malformed '{\n  x\n  Memcheck:Free\n  fun:a\n}\n}\n' "6:1: expected '{' starting a suppression"
"$RTRACE" run --suppressions=missing.supp -- touch ran > miss.err 2>&1
[ $? -eq 2 ] && [ ! -e ran ] && grep -q 'missing.supp: cannot read the suppressions' miss.err && ok ||
  bad "missing file: $(cat miss.err)"
finish
