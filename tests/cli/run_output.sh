# rtrace run's output places and what it says about the run as a whole:
# -o creates its directory (0700) or refuses to run the program when it
# cannot write there; --xml-file is written as the traces are (a new 0600
# file renamed over the name, a symlink replaced, not followed) and a
# failed write fails the run; a program that execs another one without
# --follow-children is named once, after the run, from the manifest.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

# -o DIR missing: created with its parents, itself 0700, traces in it
"$RTRACE" run -q -o out/a/b -- "$P/tp_leaks" > /dev/null 2>&1
[ $? -eq 7 ] && ok || bad "-o missing dir: program's status expected"
[ "$(stat -c %a out/a/b 2> /dev/null)" = 700 ] && ok || bad "-o missing dir: not created 0700"
ls out/a/b/tp_leaks-*.rtrace > /dev/null 2>&1 && ok || bad "-o missing dir: no trace in it"

# -o that cannot be written: nothing is run, exit 2, whatever
# --error-exitcode (a file stands for any unwritable place, even to root)
touch afile
for d in afile afile/sub; do
  rm -f ran
  "$RTRACE" run -o "$d" --error-exitcode=9 -- sh -c 'touch ran; exit 0' > /dev/null 2> err
  rc=$?
  [ $rc -eq 2 ] && ok || bad "-o $d: exit $rc, expected 2"
  [ ! -e ran ] && ok || bad "-o $d: the program ran"
  grep -q "output directory '$d'.*nothing was run" err && ok || bad "-o $d: message: $(cat err)"
done
if [ "$(id -u)" != 0 ]; then
  mkdir ro && chmod 555 ro
  "$RTRACE" run -o ro -- true 2> /dev/null
  [ $? -eq 2 ] && ok || bad "-o read-only dir: expected 2"
fi

# --xml-file through a symlink: the link is replaced, its target kept
echo keep > target
ln -s target link
(umask 022 && "$RTRACE" run -q --xml-file=link -- "$P/tp_leaks") > /dev/null 2>&1
[ "$(cat target)" = keep ] && ok || bad "--xml-file followed the symlink"
[ ! -L link ] && grep -q "<protocolversion>" link && ok || bad "--xml-file: no XML file in place of the link"
[ "$(stat -c %a link)" = 600 ] && ok || bad "--xml-file mode $(stat -c %a link), expected 600"
[ -z "$(ls link.* 2> /dev/null)" ] && ok || bad "--xml-file left a temporary file"

# a failed --xml-file write fails the run: 1 (or N of --error-exitcode)
"$RTRACE" run -q --xml-file=nodir/x.xml -- true 2> err
rc=$?
[ $rc -eq 1 ] && ok || bad "failed --xml-file: exit $rc, expected 1"
grep -q "cannot write the XML file 'nodir/x.xml'" err && ok || bad "failed --xml-file: message: $(cat err)"
"$RTRACE" run -q --xml-file=nodir/x.xml --error-exitcode=5 -- true 2> /dev/null
rc=$?
[ $rc -eq 5 ] && ok || bad "failed --xml-file with --error-exitcode=5: exit $rc"

# a program exec'd without --follow-children: named once, after the run
untraced() { grep -c "exec'd .*which was not traced.*--follow-children" "$1"; }
"$RTRACE" run -- env "$P/tp_leaks" > /dev/null 2> err
[ "$(untraced err)" = 1 ] && grep -q "^rtrace: env exec'd $P/tp_leaks, which" err && ok ||
  bad "env: untraced program not named: $(tail -3 err)"
printf '#!/bin/sh\nexec tp_leaks "$@"\n' > shim && chmod +x shim
PATH=$P:$PATH "$RTRACE" run -- ./shim > /dev/null 2> err
grep -q "^rtrace: ./shim exec'd $P/tp_leaks, which" err && ok || bad "shim: $(tail -3 err)"
"$RTRACE" run --follow-children -- env "$P/tp_leaks" > /dev/null 2> err
[ "$(untraced err)" = 0 ] && ok || bad "--follow-children: untraced program named"
"$RTRACE" run -q -- env "$P/tp_leaks" > /dev/null 2> err
[ ! -s err ] && ok || bad "-q: $(cat err)"
# an exec that fails names nothing; the program itself saw nothing
"$RTRACE" run -- sh -c 'exec ./none; true' > /dev/null 2> err
[ "$(untraced err)" = 0 ] && ok || bad "failed exec named: $(tail -2 err)"
"$RTRACE" run -- env "$P/tp_env" > traced.out 2> /dev/null
env "$P/tp_env" > plain.out 2> /dev/null
cmp -s plain.out traced.out && ok || bad "exec'd program's output differs"

finish
