# memcheck's verdicts and words, compared with rtrace run's on programs
# where they once differed (issue 20): tests/programs/tp_verdicts.c and
# tp_mprotect.c.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind

# A report's lines from HEAP SUMMARY on, prefixes and the pid cut, with
# valgrind's "For lists of ... rerun with: -s" and "(suppressed: ...)"
# left out (rtrace has neither).
tail_of() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' | sed -n '/^HEAP SUMMARY/,$p' |
    sed -E -e 's/^HEAP SUMMARY.*/HEAP SUMMARY/' -e '/^For lists of detected/d' \
      -e 's/ \(suppressed: [0-9]+ from [0-9]+\)$//'
}

# Nothing in use at exit: memcheck's line instead of a LEAK SUMMARY, on
# stderr and in --log-file, with --leak-check=full and summary.
for lc in full summary; do
  valgrind --leak-check=$lc "$P/tp_verdicts" freed 2> vg.err
  "$RTRACE" run -o "$TMP" --leak-check=$lc -- "$P/tp_verdicts" freed 2> rt.err
  tail_of < vg.err > vg.tail
  tail_of < rt.err > rt.tail
  if grep -q '^All heap blocks were freed -- no leaks are possible$' rt.tail; then ok; else
    bad "freed ($lc): no 'All heap blocks were freed'"; cat rt.err >&2; fi
  check_same "freed ($lc): report's end as memcheck's" vg.tail rt.tail
  "$RTRACE" run -o "$TMP" --leak-check=$lc --log-file=rt.log -- "$P/tp_verdicts" freed 2> /dev/null
  tail_of < rt.log > rt.tail
  check_same "freed ($lc): --log-file's end as memcheck's" vg.tail rt.tail
done

# Pages of the heap the program made unreadable (mprotect PROT_NONE), and
# a SIGSEGV handler of its own: the check skips them as memcheck does and
# runs to its end (the program's handler is never entered from the check:
# it says "fault caught" once). LEAK SUMMARY as memcheck's.
summary_of() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' | sed -n '/^LEAK SUMMARY:$/,/suppressed:/p'
}
for arg in "" header; do
  valgrind --leak-check=full "$P/tp_mprotect" $arg 2> vg.err > vg.out
  "$RTRACE" run -o "$TMP" -- "$P/tp_mprotect" $arg 2> rt.err > rt.out
  summary_of < vg.err > vg.sum
  summary_of < rt.err > rt.sum
  if [ -s rt.sum ]; then ok; else bad "mprotect $arg: no LEAK SUMMARY"; cat rt.err >&2; fi
  check_same "mprotect $arg: LEAK SUMMARY as memcheck's" vg.sum rt.sum
  check_same "mprotect $arg: program output" vg.out rt.out
done
"$RTRACE" run -o "$TMP" -- "$P/tp_mprotect" 2> rt.err > /dev/null
grep -q '^rtrace:      possibly lost: 200,000 bytes in 1 blocks$' rt.err &&
  grep -q '^rtrace:    still reachable: 201,000 bytes in 2 blocks$' rt.err && ok ||
  bad "mprotect: not possibly lost 200,000 B/1, reachable 201,000 B/2: $(cat rt.err)"

# Fishy arguments (malloc(-1), calloc(0, -1), ...): memcheck's errors,
# its words, the program's frame, its ERROR SUMMARY and its XML; the
# calls return what libc returns without the tracer.
fishy_of() { # "what | first frame in the program"
  sed -E 's/^(==[0-9]+== |rtrace: )//' | awk '
    /^Argument / { what = $0; next }
    what && /^   by .*tp_verdicts.c/ { sub(/^   by 0x[0-9A-F]+: /, ""); print what " | " $0; what = "" }'
}
xml_fishy() { # each FishyValue error: kind, what (newline inside) and what follows
  awk '/<kind>FishyValue<\/kind>/ { n = 3 } n > 0 { print; n-- }' "$1"
}
"$P/tp_verdicts" fishy > native.out
valgrind --xml=yes --xml-file=vg.xml "$P/tp_verdicts" fishy > /dev/null 2>&1
valgrind "$P/tp_verdicts" fishy 2> vg.err > vg.out
"$RTRACE" run -o "$TMP" --xml-file=rt.xml -- "$P/tp_verdicts" fishy 2> rt.err > rt.out
fishy_of < vg.err > vg.fishy
fishy_of < rt.err > rt.fishy
if [ "$(wc -l < vg.fishy)" -eq 9 ]; then ok; else bad "fishy: memcheck's errors: $(cat vg.fishy)"; fi
check_same "fishy: errors and frames as memcheck's" vg.fishy rt.fishy
tail_of < vg.err | grep '^ERROR SUMMARY' > vg.sum
tail_of < rt.err | grep '^ERROR SUMMARY' > rt.sum
check_same "fishy: ERROR SUMMARY as memcheck's" vg.sum rt.sum
check_same "fishy: the calls return what libc returns" native.out rt.out
xml_fishy vg.xml > vg.xfishy
xml_fishy rt.xml > rt.xfishy
if [ -s vg.xfishy ] && cmp -s vg.xfishy rt.xfishy; then ok; else
  bad "fishy: XML FishyValue errors differ from memcheck's"; diff vg.xfishy rt.xfishy >&2; fi
# their suppressions: kind, skaux ("malloc(size)"), the program's frames
valgrind --xml=yes --xml-file=vgs.xml --gen-suppressions=all "$P/tp_verdicts" fishy > /dev/null 2>&1
"$RTRACE" run -o "$TMP" --xml-file=rts.xml --gen-suppressions=all -- "$P/tp_verdicts" fishy > /dev/null 2>&1
supps() { # those inside the <error>s (memcheck repeats each after its error)
  awk '/^<error>/ { e = 1 } /^<\/error>/ { e = 0 } e' "$1" |
    grep -E '<skind>Memcheck:FishyValue|<skaux>|<fun>(fishy|main)</fun>'
}
supps vgs.xml > vg.supps
supps rts.xml > rt.supps
if [ -s vg.supps ] && cmp -s vg.supps rt.supps; then ok; else
  bad "fishy: XML suppressions differ from memcheck's"; diff vg.supps rt.supps >&2; fi
# in text mode, and each tool's blocks fed to the other: the same errors
# hidden (but posix_memalign's, whose stack memcheck takes inside its
# own posix_memalign: rtrace-run.1, differences)
valgrind -q --gen-suppressions=all --log-file=vgt.log "$P/tp_verdicts" fishy > /dev/null 2>&1
"$RTRACE" -q --gen-suppressions=all --log-file=rtt.log "$P/tp_verdicts" fishy > /dev/null 2>&1
grep -v '^==' vgt.log > vg.supp
grep -v '^==' rtt.log > rt.supp
grep -v '^   fun:posix_memalign$' vg.supp > vg.supp.cmp
check_same "fishy: generated suppressions as memcheck's" vg.supp.cmp rt.supp
for s in vg rt; do
  valgrind --suppressions=$s.supp --log-file=$s.vg.log "$P/tp_verdicts" fishy > /dev/null 2>&1
  "$RTRACE" --suppressions=$s.supp --log-file=$s.rt.log "$P/tp_verdicts" fishy > /dev/null 2>&1
done
sum_line() { sed -nE 's/^==[0-9]+== (ERROR SUMMARY: .*)/\1/p' "$1"; }
all="ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 9 from 9)"
for f in vg.vg rt.rt vg.rt; do
  [ "$(sum_line $f.log)" = "$all" ] && ok || bad "fishy: suppressions $f: $(sum_line $f.log)"
done
# (memalign's block hides posix_memalign's error in rtrace, not in memcheck)
[ "$(sum_line rt.vg.log)" = "ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 8 from 8)" ] && ok ||
  bad "fishy: rtrace's suppressions in memcheck: $(sum_line rt.vg.log)"

# Pointers that died with their frame keep nothing reachable: the issue's
# program (three blocks realloc'd to 5 bytes), LEAK SUMMARY as memcheck's.
valgrind --leak-check=full "$P/tp_verdicts" stale 2> vg.err > /dev/null
"$RTRACE" run -o "$TMP" -- "$P/tp_verdicts" stale 2> rt.err > /dev/null
summary_of < vg.err > vg.sum
summary_of < rt.err > rt.sum
grep -q '^   definitely lost: 15 bytes in 3 blocks$' vg.sum && ok || bad "stale: memcheck's: $(cat vg.sum)"
check_same "stale: LEAK SUMMARY as memcheck's" vg.sum rt.sum

finish
