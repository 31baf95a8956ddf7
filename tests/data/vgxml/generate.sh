#!/usr/bin/env bash
# Re-creates the Valgrind XML files of this directory that the installed
# valgrind writes (the hand-written protocol 1-3, 5 and 6 ones stay):
#
#   memcheck.xml        tp_vgmem under memcheck: every error kind, leaks of
#                       all four kinds, --gen-suppressions=all, origins, a
#                       user comment, client messages, a named thread
#   memcheck-segv.xml   tp_vgmem segv: ends with <fatal_signal>
#   helgrind.xml        tp_vgrace under helgrind: Race, UnlockUnlocked, LockOrder
#   drd.xml             tp_vgrace under drd: ConflictingAccess, MutexErr
#   killed.xml          valgrind SIGKILLed while its program sleeps: the
#                       document stops after <status> RUNNING
#   cut.xml             memcheck.xml cut in the middle of its 6th <error>
#   children.xml        --trace-children=yes into one --xml-fd: /bin/sh runs
#                       tp_vgrace twice, whose documents sit inside the
#                       shell's, between two of its top-level elements
#   children-exec.xml   the same when the shell execs tp_vgrace: the shell's
#                       document is cut off where the program's begins
#
#   tests/data/vgxml/generate.sh [BUILD_DIR]   (default build/; needs its
#                                               tests/programs built)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
P=$build/tests/programs
for p in tp_vgmem tp_vgrace; do
  [ -x "$P/$p" ] || { echo "generate.sh: $P/$p not built (cmake --build $build --target $p)" >&2; exit 1; }
done
command -v valgrind > /dev/null || { echo "generate.sh: valgrind is not installed" >&2; exit 1; }
cd "$here"

vg() { # OUT TOOL-OPTIONS... -- PROGRAM ARGS...
  local out=$1
  shift
  rm -f "$out"
  (valgrind --xml=yes --xml-file="$out" "$@"; true) > /dev/null 2>&1
}

vg memcheck.xml --leak-check=full --show-leak-kinds=all --track-origins=yes \
  --gen-suppressions=all --xml-user-comment='<run by="generate.sh">tp_vgmem, <b>all kinds</b></run>' \
  "$P/tp_vgmem" 'x<y&z'
vg memcheck-segv.xml "$P/tp_vgmem" segv
vg helgrind.xml --tool=helgrind "$P/tp_vgrace"
vg drd.xml --tool=drd "$P/tp_vgrace"

rm -f killed.xml
valgrind --xml=yes --xml-file=killed.xml /bin/sleep 30 > /dev/null 2>&1 &
vgpid=$!
for _ in $(seq 100); do grep -q RUNNING killed.xml 2> /dev/null && break; sleep 0.1; done
sleep 0.5
kill -KILL "$vgpid"
wait "$vgpid" 2> /dev/null || true

# up to the middle of the 6th error's <what> line
cutline=$(grep -n '<what>' memcheck.xml | sed -n 6p | cut -d: -f1)
head -n "$((cutline - 1))" memcheck.xml > cut.xml
sed -n "${cutline}p" memcheck.xml | head -c 12 >> cut.xml

rm -f children.xml children-exec.xml
valgrind --trace-children=yes --xml=yes --xml-fd=3 /bin/sh -c "$P/tp_vgrace; $P/tp_vgrace" \
  3>> children.xml > /dev/null 2>&1
valgrind --trace-children=yes --xml=yes --xml-fd=3 /bin/sh -c "exec $P/tp_vgrace" \
  3>> children-exec.xml > /dev/null 2>&1
ls -l ./*.xml
