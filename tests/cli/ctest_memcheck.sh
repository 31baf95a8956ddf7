# rtrace in valgrind's place for the tools that drive valgrind: the
# --log-file report (memcheck's "==PID== " lines, %p, %q{VAR}, %%, one
# file per process), valgrind's options (-q, --tool, --leak-check=yes,
# --show-reachable, --trace-children) and valgrind's command line without
# a subcommand, compared with valgrind itself; then CTest's memcheck
# (`ctest -T memcheck`, MEMORYCHECK_TYPE=Valgrind) on a small project
# (tests/data/ctest-memcheck) run once with valgrind and once with rtrace
# as MEMORYCHECK_COMMAND: the defects CTest finds, their kinds and counts
# per test, must be the same. Skipped (77) when valgrind is not installed.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
command -v valgrind > /dev/null || { echo "valgrind is not installed: skipped"; exit 77; }

# The lines of a log that CTest's valgrind parser counts as defects (its
# regular expressions, cmCTestMemCheckHandler.cxx), prefixes cut.
ctest_lines() {
  sed -nE 's/^==[0-9]+== //p' "$1" | grep -E 'Invalid free\(\) / delete / delete\[\]|Mismatched free\(\) / delete / delete \[\]|are (definitely|possibly) lost in loss record|are still reachable in loss record|^[0-9,]+ \([0-9,]+ direct'
}
# The single file a pattern made, or nothing.
only_file() { set -- $1; [ $# -eq 1 ] && [ -f "$1" ] && echo "$1"; }

# memcheck's log and rtrace's, CTest's options (-q: errors only)
VGOPTS="-q --tool=memcheck --leak-check=yes --show-reachable=yes --num-callers=50"
for prog in "tp_leaks" "tp_heaperr mismatch" "tp_heaperr wild" "tp_heaperr heuristics"; do
  name=${prog// /_}
  mkdir "$name" && cd "$name" || exit 1
  valgrind $VGOPTS --log-file=vg.%p.log $P/$prog > /dev/null 2>&1
  "$RTRACE" $VGOPTS --log-file=rt.%p.log $P/$prog > /dev/null 2> err
  vg=$(only_file "vg.*.log") rt=$(only_file "rt.*.log")
  [ -n "$rt" ] && ok || bad "$name: no single rt.%p.log: $(ls) $(cat err)"
  [ -n "$vg" ] && [ -n "$rt" ] || { cd ..; continue; }
  [ -s err ] && bad "$name: -q --log-file printed on stderr: $(head -3 err)" || ok
  pid=${rt#rt.}; pid=${pid%.log}
  # every line "==PID== ", PID the traced process's, as %p named the file
  grep -qv "^==$pid== " "$rt" && bad "$name: lines without ==$pid==: $(grep -v "^==$pid== " "$rt" | head -2)" || ok
  ctest_lines "$vg" > vg.lines
  ctest_lines "$rt" > rt.lines
  [ -s vg.lines ] && ok || bad "$name: memcheck found nothing (test broken)"
  check_same "$name: the lines CTest parses, as memcheck's" vg.lines rt.lines
  # -q: errors only, no summaries, as memcheck -q
  grep -qE 'HEAP SUMMARY|LEAK SUMMARY|ERROR SUMMARY' "$rt" && bad "$name: -q log has summaries" || ok
  cd ..
done

# without -q: memcheck's HEAP SUMMARY and LEAK SUMMARY lines too
valgrind --leak-check=full --log-file=vg.full.log $P/tp_leaks > /dev/null 2>&1
"$RTRACE" --leak-check=full --log-file=rt.full.log $P/tp_leaks > /dev/null 2>&1
summaries() {
  sed -nE 's/^==[0-9]+== //p' "$1" | awk '/^HEAP SUMMARY:$/ { n = 3 } /^LEAK SUMMARY:$/ { n = 6 } n > 0 { print; n-- }'
}
summaries vg.full.log > vg.sum
summaries rt.full.log > rt.sum
[ "$(wc -l < rt.sum)" -eq 9 ] && ok || bad "HEAP and LEAK SUMMARY not in the log: $(head -3 rt.full.log)"
check_same "HEAP SUMMARY and LEAK SUMMARY as memcheck's" vg.sum rt.sum
ctest_lines vg.full.log > vg.lines
ctest_lines rt.full.log > rt.lines
check_same "loss records without -q" vg.lines rt.lines

# %q{VAR}, %% and %p; one file per process with --trace-children=yes
mkdir logs
LOGDIR=$TMP/logs "$RTRACE" run -q --log-file=%q{LOGDIR}/a%%b.%p.log $P/tp_leaks > /dev/null 2>&1
[ -n "$(only_file "logs/a%b.[0-9]*.log")" ] && ok || bad "%q{LOGDIR}, %% and %p: $(ls logs)"
mkdir fork && cd fork || exit 1
valgrind -q --trace-children=yes --leak-check=full --log-file=vg.%p.log $P/tp_fork > /dev/null 2>&1
"$RTRACE" -q --trace-children=yes --leak-check=full --log-file=rt.%p.log $P/tp_fork > /dev/null 2>&1
[ "$(ls rt.*.log | wc -l)" -eq 2 ] && [ "$(ls vg.*.log | wc -l)" -eq 2 ] && ok ||
  bad "fork: one log per process: $(ls)"
for f in rt.*.log; do
  pid=${f#rt.}; pid=${pid%.log}
  grep -qv "^==$pid== " "$f" && bad "fork: $f has another process's lines" || ok
done
cat vg.*.log > vg.all; cat rt.*.log > rt.all
ctest_lines vg.all | sort > vg.lines
ctest_lines rt.all | sort > rt.lines
check_same "fork: the loss records of both processes" vg.lines rt.lines
# one file for both without %p: the reports one after the other
"$RTRACE" -q --leak-check=full --log-file=one.log $P/tp_fork > /dev/null 2>&1
[ "$(sed -nE 's/^==([0-9]+)== .*/\1/p' one.log | sort -u | wc -l)" -eq 2 ] && ok || bad "fork: one.log lacks a process"
ctest_lines one.log | sort > one.lines
check_same "fork: both reports in one file" vg.lines one.lines
cd ..

# valgrind's options
"$RTRACE" --tool=callgrind $P/tp_leaks > out 2> err
rc=$?
[ $rc -eq 2 ] && grep -q -- '--tool=callgrind is not supported' err && ok || bad "--tool=callgrind: rc $rc, $(cat err)"
"$RTRACE" run --tool=memcheck --leak-check=yes $P/tp_leaks > /dev/null 2> err
grep -q "definitely lost in loss record 3 of 3" err && ok || bad "--leak-check=yes is not full"
"$RTRACE" --show-reachable=no --log-file=r.log $P/tp_heaperr heuristics > /dev/null 2>&1
grep -q "still reachable in loss record" r.log && bad "--show-reachable=no shows reachable blocks" || ok
"$RTRACE" --trace-children=no -q --log-file=c.log $P/tp_spawn execvp $P/tp_leaks > /dev/null 2>&1
grep -q "in loss record" c.log && bad "--trace-children=no traced the exec'd program" || ok
"$RTRACE" --trace-children=yes -q --log-file=d.log $P/tp_spawn execvp $P/tp_leaks > /dev/null 2>&1
[ "$(grep -c "definitely lost in loss record" d.log)" -eq 3 ] && ok || bad "--trace-children=yes: $(cat d.log)"
"$RTRACE" --trace-children=maybe $P/tp_leaks > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--trace-children=maybe accepted"
"$RTRACE" --log-file= $P/tp_leaks > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--log-file= accepted"
"$RTRACE" --log-file=/nonexistent/dir/x.log --error-exitcode=9 $P/tp_leaks > /dev/null 2> err
rc=$?
[ $rc -eq 9 ] && grep -q "cannot write the log file" err && ok || bad "unwritable --log-file: rc $rc, $(cat err)"
"$RTRACE" --nonsense $P/tp_leaks > /dev/null 2> err
[ $? -eq 2 ] && grep -q "unknown option '--nonsense'" err && ok || bad "unknown leading option: $(cat err)"

# CTest: the same project, valgrind then rtrace as MEMORYCHECK_COMMAND
# (defaults for everything else: CTest's own valgrind options)
memcheck() { # NAME COMMAND [CMAKE-ARGS...]
  cmake -S "$SRCDIR/tests/data/ctest-memcheck" -B "$1" -DMEMORYCHECK_COMMAND="$2" \
        -DMEMORYCHECK_TYPE=Valgrind "${@:3}" > "$1.cmake" 2>&1 &&
    cmake --build "$1" > "$1.build" 2>&1 || { bad "$1: the project did not build: $(tail -5 "$1.cmake" "$1.build")"; return; }
  (cd "$1" && ctest -T memcheck > ../"$1.out" 2>&1)
  sed -n '/^Memory checking results:/,$p' "$1.out" > "$1.results"
  # per test: its name and its defects, "type count", from DynamicAnalysis.xml
  sed -nE 's/.*<Name>(.*)<\/Name>.*/test \1/p; s/.*<Defect type="([^"]*)">([0-9]+)<.*/\1 \2/p' \
      "$1"/Testing/*/DynamicAnalysis.xml > "$1.defects"
}
memcheck vg "$(command -v valgrind)"
memcheck rt "$RTRACE"
printf '%s\n' "Memory checking results:" "FIM - 1" "Mismatched deallocation - 1" "Memory Leak - 1" > want.results
printf '%s\n' "test leak" "Memory Leak 1" "test invalid_free" "FIM 1" "test mismatch" "Mismatched deallocation 1" > want.defects
check_same "ctest -T memcheck with valgrind (test broken)" want.results vg.results
check_same "ctest -T memcheck: the results with rtrace, as with valgrind" vg.results rt.results
check_same "DynamicAnalysis.xml with valgrind (test broken)" want.defects vg.defects
check_same "DynamicAnalysis.xml: the defects per test with rtrace, as with valgrind" vg.defects rt.defects
# MEMORYCHECK_SUPPRESSIONS_FILE: CTest adds --suppressions=FILE, and the
# file hides the leak from both
SUPP=-DMEMORYCHECK_SUPPRESSIONS_FILE=$SRCDIR/tests/data/ctest-memcheck/leak.supp
memcheck vgs "$(command -v valgrind)" "$SUPP"
memcheck rts "$RTRACE" "$SUPP"
grep -q -e "--suppressions=$SRCDIR" rts/Testing/Temporary/LastDynamicAnalysis_*.log &&
  ok || bad "ctest did not pass --suppressions (test broken)"
grep -v '^Memory Leak' want.results > want-supp.results
grep -v '^test leak$\|^Memory Leak' want.defects > want-supp.defects
check_same "ctest -T memcheck, suppressed, with valgrind (test broken)" want-supp.results vgs.results
check_same "ctest -T memcheck, suppressed: the results with rtrace, as with valgrind" vgs.results rts.results
sed -i '/^test leak$/d' vgs.defects rts.defects
check_same "DynamicAnalysis.xml, suppressed, with valgrind (test broken)" want-supp.defects vgs.defects
check_same "DynamicAnalysis.xml, suppressed: the defects per test with rtrace, as with valgrind" vgs.defects rts.defects
finish
