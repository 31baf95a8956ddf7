# The Valgrind XML reader on what the installed valgrind writes, run now
# on the test programs, checked against valgrind's own figures: the
# <error>s and <frame>s xmllint counts, the LEAK SUMMARY and ERROR SUMMARY
# of the same run in text mode; then helgrind and drd, children traced
# into one file, a run killed with SIGKILL, and the streaming mode.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${VGXML_STAT:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
for tool in valgrind xmllint; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
done

val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }   # KEY STATFILE
same() { if [ "$2" = "$3" ]; then ok; else bad "$1: $2 != $3"; fi; }   # NAME GOT WANT

# reads FILE; its error count must be grep's and xmllint's, its frames
# xmllint's; the streaming mode must count the same
read_xml() { # NAME FILE
  if "$VGXML_STAT" "$2" > "$2.stat"; then ok; else bad "$1: does not read: $(grep '^error' "$2.stat")"; fi
  same "$1: errors vs grep" "$(val errors "$2.stat")" "$(grep -c '^<error>' "$2")"
  same "$1: errors vs xmllint" "$(val errors "$2.stat")" "$(xmllint --xpath 'count(//error)' "$2")"
  same "$1: frames vs xmllint" "$(val frames "$2.stat")" "$(xmllint --xpath 'count(//frame)' "$2")"
  "$VGXML_STAT" --drop "$2" > "$2.drop"
  same "$1: streaming counts" "$(grep -E '^(docs|errors|elements|truncated) ' "$2.drop")" \
    "$(grep -E '^(docs|errors|elements|truncated) ' "$2.stat")"
  if grep -q '^warning' "$2.stat"; then bad "$1: $(grep '^warning' "$2.stat")"; else ok; fi
}

# "N errors from M contexts" of a text run's log
summary() { sed -nE 's/.*ERROR SUMMARY: ([0-9,]+) errors from ([0-9,]+) contexts.*/\1 \2/p' "$1" | tr -d ,; }

# --- memcheck: every error kind, leaks of the four kinds
opts=(--leak-check=full --show-leak-kinds=all --track-origins=yes)
valgrind --xml=yes --xml-file=mem.xml "${opts[@]}" --gen-suppressions=all "$P/tp_vgmem" > /dev/null 2>&1
valgrind "${opts[@]}" "$P/tp_vgmem" > /dev/null 2> mem.txt
read_xml memcheck mem.xml
for kind in InvalidRead InvalidWrite InvalidFree MismatchedFree UninitCondition UninitValue \
  SyscallParam Overlap FishyValue InvalidJump ClientCheck InvalidMemPool Leak_DefinitelyLost \
  Leak_IndirectlyLost Leak_PossiblyLost Leak_StillReachable; do
  if grep -qx "kind $kind" mem.xml.stat; then ok; else bad "memcheck: no $kind error"; fi
done
# the loss records add up to the text run's LEAK SUMMARY, kind by kind
for pair in "definitely lost:Leak_DefinitelyLost" "indirectly lost:Leak_IndirectlyLost" \
  "possibly lost:Leak_PossiblyLost" "still reachable:Leak_StillReachable"; do
  text=${pair%%:*} kind=${pair#*:}
  want=$(sed -nE "s/.* $text: ([0-9,]+) bytes in ([0-9,]+) blocks.*/\1 \2/p" mem.txt | tr -d ,)
  got=$(awk -v k="$kind" '$1 == "leak" && $2 == k { b += $5; n += $4 } END { print b + 0, n + 0 }' mem.xml.stat)
  same "memcheck: $text" "$got" "$want"
done
# ERROR SUMMARY: contexts are the errors other than leaks plus the
# definite and possible loss records; errors add the <errorcounts>
read -r n_err n_ctx <<< "$(summary mem.txt)"
leaks_dp=$(grep -cE '^kind Leak_(DefinitelyLost|PossiblyLost)$' mem.xml.stat)
others=$(grep '^kind ' mem.xml.stat | grep -vc '^kind Leak_')
same "memcheck: contexts" "$((others + leaks_dp))" "$n_ctx"
same "memcheck: errors" "$(($(val counted mem.xml.stat) + leaks_dp))" "$n_err"

# with a fatal signal
(valgrind --xml=yes --xml-file=segv.xml "$P/tp_vgmem" segv; true) > /dev/null 2>&1
read_xml "memcheck segv" segv.xml
same "memcheck segv: fatal_signal" "$(xmllint --xpath 'string(//fatal_signal/signame)' segv.xml)" SIGSEGV

# --- helgrind and drd
for tool in helgrind drd; do
  valgrind --tool=$tool --xml=yes --xml-file=$tool.xml "$P/tp_vgrace" > /dev/null 2>&1
  valgrind --tool=$tool "$P/tp_vgrace" > /dev/null 2> $tool.txt
  read_xml $tool $tool.xml
  read -r n_err n_ctx <<< "$(summary $tool.txt)"
  same "$tool: contexts" "$(val errors $tool.xml.stat)" "$n_ctx"
  same "$tool: errors" "$(val counted $tool.xml.stat)" "$n_err"
done
for kind in Race UnlockUnlocked LockOrder; do
  if grep -qx "kind $kind" helgrind.xml.stat; then ok; else bad "helgrind: no $kind error"; fi
done

# --- children traced into one file: the shell's document holds its
# children's; with exec, it is cut where the program's starts
valgrind --trace-children=yes --xml=yes --xml-fd=3 /bin/sh -c "$P/tp_vgrace; $P/tp_vgrace" \
  3>> children.xml > /dev/null 2>&1
"$VGXML_STAT" children.xml > children.stat
same "children: documents" "$(val docs children.stat)" "$(grep -c '<valgrindoutput>' children.xml)"
same "children: not cut" "$(val truncated children.stat)" 0
valgrind --trace-children=yes --xml=yes --xml-fd=3 /bin/sh -c "exec $P/tp_vgrace" \
  3>> exec.xml > /dev/null 2>&1
"$VGXML_STAT" exec.xml > exec.stat
same "exec: documents" "$(val docs exec.stat)" 2
same "exec: cut" "$(val truncated exec.stat)" 1

# --- killed while running: everything complete is kept
valgrind --xml=yes --xml-file=killed.xml /bin/sleep 30 > /dev/null 2>&1 &
vgpid=$!
for _ in $(seq 200); do grep -q RUNNING killed.xml 2> /dev/null && break; sleep 0.1; done
kill -KILL "$vgpid"
wait "$vgpid" 2> /dev/null
if "$VGXML_STAT" killed.xml > killed.stat; then ok; else bad "killed: does not read"; fi
same "killed: cut" "$(val truncated killed.stat)" 1
if grep -q '^warning .*input ends inside <valgrindoutput>' killed.stat; then ok; else bad "killed: no warning"; fi

finish
