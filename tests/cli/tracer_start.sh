# The tracer's own start inside each traced process (issue 21): fewer
# system calls than before for the same trace. The fatal-signal handlers
# go in with one rt_sigaction per signal (they took a read and a write),
# an inherited SIG_IGN staying as it was; the PROCESS record's command
# line comes from the arguments in memory, not /proc/self/cmdline (in a
# fork child too); the MODULE records come from PROCMAP_QUERY, the
# executable mappings alone, not from the whole /proc/self/maps (where
# the kernel has the query: Linux 6.11), and list what the file lists;
# the tracer's variables written at start share a few pages.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${BUILD_DIR:?}"
command -v strace > /dev/null || { echo "strace is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
cd "$TMP" || exit 1
lib=$BUILD_DIR/librtrace-preload.so
# the environment rtrace run gives the tracer (src/format/run_env.h)
traced() { # DIR PROGRAM ARGS...
  local dir=$1
  shift
  env LD_PRELOAD="$lib" RTRACE_DIR="$dir" RTRACE_MANIFEST= RTRACE_DEPTH=32 RTRACE_FLAGS="${FLAGS:-}" \
    RTRACE_TOGGLE_SIGNAL=0 RTRACE_LEAK_CHECK=full RTRACE_MODULES=memory "$@"
}
strace_traced() { # OUT DIR PROGRAM ARGS...: strace -f of the traced program into OUT
  local out=$1 dir=$2
  shift 2
  strace -f -qq -o "$out" -E LD_PRELOAD="$lib" -E RTRACE_DIR="$dir" -E RTRACE_DEPTH=32 -E RTRACE_FLAGS="${FLAGS:-}" \
    -E RTRACE_TOGGLE_SIGNAL=0 -E RTRACE_LEAK_CHECK=full -E RTRACE_MODULES=memory "$@"
}

# one rt_sigaction per signal whose default kills (54 on Linux x86_64;
# there were two each)
mkdir t1
strace_traced st "$TMP/t1" /bin/true > /dev/null 2>&1 || bad "/bin/true failed under strace"
n=$(grep -c '^[0-9]* *rt_sigaction(' st)
[ "$n" -gt 0 ] && [ "$n" -le 64 ] && ok || bad "/bin/true: $n rt_sigaction calls at start"
"$RTRACE" postproc -i t1/true-*.rtrace > pp.out 2>&1 && ok || bad "/bin/true: trace unreadable: $(head -3 pp.out)"

# a signal ignored across exec stays ignored (the handler goes in, the
# old disposition comes back, SIG_IGN is put back), a default one still
# kills and runs the leak check (tests/cli/leakcheck.sh has the rest)
mkdir t2
out=$(bash -c 'trap "" HUP; exec "$@"' - env LD_PRELOAD="$lib" RTRACE_DIR="$TMP/t2" RTRACE_LEAK_CHECK=full \
  sh -c 'kill -HUP $$; echo alive' 2>&1)
[ "$out" = alive ] && ok || bad "an ignored SIGHUP killed the traced shell: '$out'"
mkdir t2b
traced "$TMP/t2b" sh -c 'kill -TERM $$; echo alive' > term.out 2>&1
rc=$?
[ $rc = 143 ] && ! grep -q alive term.out && ok || bad "SIGTERM: status $rc, $(cat term.out)"
"$RTRACE" postproc -i t2b/*.rtrace | grep -q '^## leak check' && ok ||
  bad "SIGTERM: no leak check in the trace"

# the command line from memory: no /proc/self/cmdline, the same
# arguments (spaces kept), in a fork child that records too (followed
# into the program it execs: FLAGS=c; "many": past what a fork child's
# trace keeps in memory, which its exec drops)
mkdir t3
FLAGS=c strace_traced st "$TMP/t3" "$PROGRAMS/tp_forkexec" many > /dev/null 2>&1 || bad "tp_forkexec failed"
! grep -q 'cmdline' st && ok || bad "/proc/self/cmdline read: $(grep cmdline st | head -3)"
[ "$(ls t3 | wc -l)" = 3 ] && ok || bad "tp_forkexec many: traces $(ls t3)"
for f in t3/*; do
  "$RTRACE" convert -t xml --no-resolve "$f" 2> /dev/null | sed -n 's/^ *<arg>\(.*\)<\/arg>$/\1/p' | tr '\n' ' '
  echo
done | sort > args
[ "$(cat args)" = "$(printf 'exec \nmany \nmany \n')" ] && ok || bad "tp_forkexec: arguments $(cat args)"
rm -rf t3 && mkdir t3
traced "$TMP/t3" /bin/echo "a b" c > /dev/null 2>&1
"$RTRACE" convert -t xml --no-resolve t3/echo-*.rtrace 2> /dev/null | grep '<arg>' > args
[ "$(tr -d ' \n' < args)" = "<arg>ab</arg><arg>c</arg>" ] && grep -q '<arg>a b</arg>' args && ok ||
  bad "echo 'a b' c: arguments $(cat args)"

# the modules: the executable mappings /proc/self/maps lists (cat prints
# its own), from PROCMAP_QUERY where the kernel has it, without reading
# the file at start (/bin/true reads it at exit neither: nothing live)
mkdir t4
traced "$TMP/t4" cat /proc/self/maps > maps.out 2> err || bad "cat failed: $(cat err)"
"$RTRACE" postproc -i t4/cat-*.rtrace | sed -n 's/^: \(.*\) => 0x\([0-9a-f]*\)-0x\([0-9a-f]*\)$/\2-\3 \1/p' |
  grep -v ' \[vsyscall\]$' | sort > mods # x86's page, no mapping: the file alone lists it
awk '$2 ~ /x/ && $6 != "" && $6 != "[vsyscall]" { print $1, $6 }' maps.out | sort > want
[ -s want ] && cmp -s mods want && ok || bad "cat's modules are not its executable mappings: $(diff mods want)"
rm -rf t4 && mkdir t4
strace_traced st "$TMP/t4" /bin/true > /dev/null 2>&1
kernel=$(uname -r | awk -F. '{ printf "%d", $1 * 1000 + $2 }')
if [ "$kernel" -ge 6011 ]; then
  grep -qE 'ioctl\([0-9]+, (PROCMAP_QUERY|_IOC\(_IOC_READ\|_IOC_WRITE, 0x66, 0x11, 0x68\)).* = 0' st &&
    ! grep -qE 'pread64\([0-9]+, "[0-9a-f]+-[0-9a-f]+ ' st && ok || bad "/bin/true read /proc/self/maps whole"
else
  echo "no PROCMAP_QUERY (Linux before 6.11): the file is read, not checked" >&2
fi
"$RTRACE" postproc -i t4/true-*.rtrace | grep -q '^: .*libc\.so' && ok || bad "/bin/true: no libc module"

# the tracer's own variables that every process writes at start share a
# few pages, its large tables (unwinder, leak check, modules) after them:
# the resident part of its zero-filled data (the anonymous mapping right
# after the library's) in a program that allocates nothing was 64 kB
mkdir t5
traced "$TMP/t5" "$PROGRAMS/tp_smaps" > smaps.out 2> err || bad "tp_smaps failed: $(cat err)"
rss=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { lib = index($0, "librtrace-preload.so") > 0; after = prev && !lib; prev = lib; next }
  after && /^Rss:/ { print $2; exit }' smaps.out)
[ -n "$rss" ] && [ "$rss" -le 40 ] && ok || bad "the tracer's zero-filled data: ${rss:-?} kB resident at start"

# the tracer's descriptors go high with one probe each: a number it holds
# already is skipped without an fcntl (and its close) for it
mkdir t7
strace_traced st7 "$TMP/t7" /bin/true > /dev/null 2>&1 || bad "/bin/true failed under strace"
n=$(grep -c 'F_DUPFD_CLOEXEC' st7)
[ "$n" -gt 0 ] && [ "$n" -le 3 ] && ok || bad "/bin/true: $n descriptor probes for 3 descriptors: $(grep F_DUPFD st7)"

# a fork costs each process a page fault per page it writes after it (a
# copy while the other one has it): in a shell's loop the tracer's own
# writes at each command (its live-block table, its variables) made the
# parent's turn 22 faults where the untraced program takes 7, and the
# child's life 35-37 where it takes 12. Blocks close in memory now have
# their table slots close together, and the variables a fork child
# writes share a page or two: 11-13 and 29-31 (medians of 30 turns).
mkdir t6
"$PROGRAMS/tp_forkpages" > fp.plain 2> err || bad "tp_forkpages failed: $(cat err)"
traced "$TMP/t6" "$PROGRAMS/tp_forkpages" > fp.traced 2> err || bad "tp_forkpages traced failed: $(cat err)"
read -r _ pc _ pp < fp.plain
read -r _ tc _ tp < fp.traced
[ -n "$pp" ] && [ -n "$tp" ] && [ $((tp - pp)) -le 10 ] && [ $((tc - pc)) -le 22 ] && ok ||
  bad "page faults a fork costs: plain $(cat fp.plain), traced $(cat fp.traced)"

finish
