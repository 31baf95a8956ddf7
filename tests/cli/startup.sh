# What tracing costs a short process (issue 21): a process that ends with
# no block reads no root memory at exit (the leak check has nothing to
# find), and its trace is one chunk after the header; a process with
# blocks is still checked in full.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
command -v strace > /dev/null || { echo "strace is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
cd "$TMP" || exit 1

# the calls reading another process's memory, made by the traced program
vm_reads() { # PROGRAM ARGS...
  rm -f ./*.rtrace st.*
  strace -f -qq -e trace=process_vm_readv -o st "$RTRACE" run -q --compress=no -o "$TMP" -- "$@" > /dev/null 2>&1
  grep -c "process_vm_readv" st
}

n=$(vm_reads /bin/true)
[ "$n" = 0 ] && ok || bad "/bin/true: the leak check read root memory $n times"
f=$(ls true-*.rtrace)
[ "$(stat -c %s "$f")" = $((4096 + 65536)) ] && ok || bad "/bin/true: trace of $(stat -c %s "$f") bytes"
"$RTRACE" postproc -i "$f" > pp.out 2>&1 && ok || bad "/bin/true: trace unreadable: $(head -3 pp.out)"

# a program that leaks: the roots are read, the verdicts are memcheck's
n=$(vm_reads "$PROGRAMS/tp_leaks")
[ "$n" -gt 0 ] && ok || bad "tp_leaks: no root memory read"
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_leaks" > /dev/null 2> err
grep -q "definitely lost: [1-9]" err && ok || bad "tp_leaks: no leak found: $(cat err)"

finish
