# What tracing costs a short process (issue 21): a process that ends with
# no block reads no root memory at exit (the leak check has nothing to
# find), and its trace is one chunk after the header; no file size limit
# means no SIGXFSZ holding; a process with
# blocks is still checked in full; rtrace run leaves a short process's
# trace raw.
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
# its file: the header and the first 12 KiB of its chunk, the only part
# of the chunk with disk blocks (the rest comes when a thread writes past it)
[ "$(stat -c %s "$f")" = $((4096 + 12288)) ] && [ "$(($(stat -c %b "$f") * $(stat -c %B "$f")))" -le 16384 ] && ok ||
  bad "/bin/true: trace of $(stat -c %s "$f") bytes, $(stat -c %b "$f") blocks"
"$RTRACE" postproc -i "$f" > pp.out 2>&1 && ok || bad "/bin/true: trace unreadable: $(head -3 pp.out)"

# no write of the tracer holds SIGXFSZ back (4 system calls each) unless
# a file size limit is set
rm -f ./*.rtrace st
strace -f -qq -e trace=rt_sigpending -o st "$RTRACE" run -q -o "$TMP" -- /bin/true > /dev/null 2>&1
! grep -q 'rt_sigpending' st && ok || bad "/bin/true: SIGXFSZ held back without a limit: $(grep -c rt_sigpending st) calls"
rm -f ./*.rtrace st
(ulimit -f 100000; strace -f -qq -e trace=rt_sigpending -o st "$RTRACE" run -q -o "$TMP" -- /bin/true > /dev/null 2>&1)
grep -q 'rt_sigpending' st && ok || bad "/bin/true under ulimit -f: SIGXFSZ not held back"

# a forked child starts its trace from its parent's module list: it reads
# /proc/self/maps only for its own leak check at exit (the parent also
# asks for its executable mappings at its start: PROCMAP_QUERY, or the
# file read before Linux 6.11), and its MODULE records are the parent's
# (-ff: a file per process, so that no call is split into "unfinished"
# and "resumed" halves when the processes run at once)
rm -f ./*.rtrace st st.*
strace -ff -qq -e trace=pread64,ioctl -e signal=none -o st "$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_fork" > /dev/null 2>&1
reads=$(for f in st.*; do grep -cE '^pread64\([0-9]+, "[0-9a-f]+-[0-9a-f]+ |^ioctl\([0-9]+, (PROCMAP_QUERY|_IOC\(_IOC_READ\|_IOC_WRITE, 0x66, 0x11, 0x68\))' "$f"; done |
  grep -v '^0$' | sort -n | awk '{ printf "%s ", $1 }')
set -- $reads
[ $# = 2 ] && [ "$1" = 1 ] && [ "$1" -lt "$2" ] && ok || bad "tp_fork: /proc/self/maps reads per process: $reads"
for f in tp_fork-*.rtrace; do "$RTRACE" postproc -i "$f" | grep '^:' > "$f.modules"; done
set -- tp_fork-*.modules
[ $# = 2 ] && [ -s "$1" ] && cmp -s "$1" "$2" && ok || bad "tp_fork: parent and child modules differ: $(cat "$@" | head -20)"

# code loaded after start, by dlopen and by glibc itself (iconv's gconv
# modules): the child's module list is read again, not taken from its parent
rm -f ./*.rtrace
"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_dlfork" "$PROGRAMS/libtp_plugin.so" > /dev/null 2>&1 || bad "tp_dlfork failed"
child=$(ls tp_dlfork-*.rtrace | sort -t- -k2 -n | tail -n 1) # the later pid: the child
"$RTRACE" postproc -i "$child" | grep '^:' > child.modules
grep -q 'libtp_plugin\.so' child.modules && grep -q 'ISO8859-15\.so' child.modules && ok ||
  bad "tp_dlfork: the child's modules lack the plugin or the gconv module: $(cat child.modules)"

# libunwind sets itself up (a pipe to probe memory) only when a stack
# needs it: tp_leaks's stacks are all read by the cached rules
rm -f ./*.rtrace st
strace -f -qq -e trace=pipe2 -o st "$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_leaks" > /dev/null 2>&1
! grep -q 'pipe2(.*O_NONBLOCK' st && ok || bad "tp_leaks: libunwind was set up: $(cat st)"

# the main thread's stack bounds come without glibc's read of
# /proc/self/maps (pthread_getattr_np) at the first stack
if strace -k -qq -e trace=none true 2> /dev/null; then
  strace -f -k -qq -e trace=openat -o st "$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_leaks" > /dev/null 2>&1
  ! grep -q pthread_getattr_np st && ok || bad "tp_leaks: pthread_getattr_np read /proc/self/maps"
else
  echo "strace -k (stack traces) is not supported here: pthread_getattr_np check skipped" >&2
fi

# the tracer brings into the program only itself and libc: libunwind (the
# fallback unwinder, with Debian's liblzma) is loaded when a stack first
# needs it, and operator new's interposers need no libgcc_s (no cleanups)
lib=$BUILD_DIR/librtrace-preload.so
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] && ok || bad "the tracer needs: $needed"
for l in libunwind libgcc_s libdw libelf libz libbz2 liblzma; do
  ! ldd "$lib" | grep -q "^[[:space:]]*$l\.so" || bad "the tracer loads $l: $(ldd "$lib" | tr '\n' ' ')"
done
ok
# a traced program whose stacks the cached rules read maps no libunwind
# (tp_heapbook: a library constructor allocates before main, a stack that
# ends in ld.so's entry, which has no call-frame information)...
loaded() { # PATTERN PROGRAM [ARGS] -- RUN-OPTIONS: the PATTERN opens by PROGRAM's process
  local pat=$1 prog=$2
  shift 2
  local args=()
  while [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  rm -f ./*.rtrace st
  strace -f -qq -e trace=execve,openat -o st "$RTRACE" run -q -o "$TMP" "$@" -- "$prog" "${args[@]}" > /dev/null 2>&1
  # the program's process: the one that execs it (rtrace's own libraries are its own)
  awk -v prog="$prog" -v pat="$pat" '$2 ~ /^execve/ && index($0, prog) { p[$1] = 1 }
    p[$1] && $2 ~ /^openat/ && $0 ~ pat { n++ } END { print n + 0 }' st
}
[ "$(loaded 'libunwind|libgcc_s|liblzma' "$PROGRAMS/tp_heapbook" ties --)" = 0 ] && ok ||
  bad "tp_heapbook: libunwind or libgcc_s loaded: $(grep -E 'unwind|gcc_s|lzma' st)"
# ...and one that asks for libunwind gets it, with its stacks
[ "$(loaded 'libunwind[.]so' "$PROGRAMS/tp_leaks" -- --unwinder libunwind)" -ge 1 ] && ok ||
  bad "--unwinder libunwind: libunwind not loaded"
"$RTRACE" postproc -i tp_leaks-*.rtrace 2> /dev/null | grep -q '^	0x' && ok || bad "--unwinder libunwind: no stacks"
# operator new's failure is still std::bad_alloc, caught by the program
"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_cxx" > cxx.out 2>&1
grep -q "bad_alloc caught" cxx.out && grep -q "cxx done" cxx.out && ok || bad "tp_cxx: $(cat cxx.out)"

# a fork child's trace begins in memory at its first record: one that
# execs (a shell running a command) leaves no file, whether it recorded
# or not (its blocks are no leaks: memcheck reports none of them), the
# program it execs has its trace, and the report lists every process
# that left one
forkexec() { # MODE: the traces' leaks in use at exit, sorted
  rm -rf fe && mkdir fe
  "$RTRACE" run -o "$TMP/fe" --follow-children -- "$PROGRAMS/tp_forkexec" "$1" > /dev/null 2> fe.err ||
    bad "tp_forkexec $1 failed: $(cat fe.err)"
  for f in fe/*; do "$RTRACE" postproc -i "$f" 2> /dev/null | grep -c '^[0-9]*\. .*malloc' | tr '\n' ' '; done
}
calls=$(forkexec quiet)
[ "$(ls fe | wc -l)" = 2 ] && [ "$calls" = "1 1 " ] && ok || bad "fork+exec, no call: traces $(ls fe), calls $calls"
[ "$(grep -c 'trace written to' fe.err)" = 2 ] && grep -q 'in use at exit: 11 bytes' fe.err &&
  grep -q 'in use at exit: 44 bytes' fe.err && ok || bad "fork+exec, no call: report $(cat fe.err)"
calls=$(forkexec alloc)
[ "$(ls fe | wc -l)" = 2 ] && [ "$calls" = "1 1 " ] && ok || bad "fork+exec, a call: traces $(ls fe), calls $calls"
[ "$(grep -c 'trace written to' fe.err)" = 2 ] && ! grep -q 'in use at exit: 33 bytes' fe.err && ok ||
  bad "fork+exec, a call: the child's blocks reported: $(cat fe.err)"

# a process that never started a thread and ends with no live block has
# nothing to check: no thread list read at exit (/proc/self/task), the
# same all-zero summary; a threaded program still stops its threads
# (the program's process: rtrace run's own threads list their pool)
rm -f ./*.rtrace st
strace -f -qq -e trace=execve,getdents64 -o st "$RTRACE" run -q --compress=no -o "$TMP" -- /bin/true > /dev/null 2>&1
n=$(awk '$2 ~ /^execve\("\/bin\/true"/ { p[$1] = 1 } p[$1] && $2 ~ /^getdents64/ { n++ } END { print n + 0 }' st)
[ "$n" = 0 ] && ok || bad "/bin/true: the exit listed the threads: $(cat st)"
"$RTRACE" postproc -i true-*.rtrace | grep -q '^## leak check (full): 0 blocks checked in ' && ok ||
  bad "/bin/true: no leak check summary: $("$RTRACE" postproc -i true-*.rtrace | grep '^##')"
rm -f ./*.rtrace st
strace -f -qq -e trace=execve,getdents64 -o st "$RTRACE" run -q --compress=no -o "$TMP" -- "$PROGRAMS/tp_threads" > /dev/null 2>&1
n=$(awk '$2 ~ /^execve\(".*tp_threads"/ { p[$1] = 1 } p[$1] && $2 ~ /^getdents64/ { n++ } END { print n + 0 }' st)
[ "$n" -gt 0 ] && ok || bad "tp_threads: the exit did not list the threads"

# a forked child reopens the leak check's reserved descriptors itself: with
# the fd module on, through its dup3 interposer it recorded the tracer's
# own call and took a backtrace in the child of fork, where libunwind's
# lock could be held (the child hung)
rm -rf fk && mkdir fk
timeout -s KILL 60 "$RTRACE" run -q -m memory,fd -o "$TMP/fk" -- "$PROGRAMS/tp_fork" > /dev/null 2> err; rc=$?
[ $rc = 0 ] && [ "$(ls fk | wc -l)" = 2 ] && ok || bad "-m memory,fd tp_fork: status $rc, traces $(ls fk): $(cat err)"
for f in fk/*; do
  "$RTRACE" postproc -i "$f" > fk.txt 2>&1 || bad "$f unreadable: $(head -3 fk.txt)"
  ! grep -q 'dup3' fk.txt && ok || bad "$f: the tracer's own dup3 was recorded"
done

# rtrace run leaves a short process's trace raw (at most the header page
# and one chunk: the tracer gives its file the raw name only when it grows
# past its first chunk), and does nothing to it: no read, compression,
# rewrite, cut nor rename (before, each was packed in place, a pwrite and
# an ftruncate freeing its blocks, then renamed from its raw name); in a
# shell loop none is left under .raw, and the report lists every process.
# strace follows rtrace run's main thread only (the compressor and the
# report), not the traced processes, whose tracers write their own files
rm -rf loop && mkdir loop
# (LeakSanitizer cannot run under ptrace: an ASan build's rtrace aborts)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -qq -e trace=rename,renameat2,unlink,unlinkat,ftruncate,pwrite64 -o st "$RTRACE" run --follow-children -o "$TMP/loop" -- \
  bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done' > /dev/null 2> err || bad "loop failed: $(cat err)"
n=$(ls loop | wc -l)
renamed=$(grep -cE '^(rename|renameat2)\(' st)
short=0
for f in loop/*; do
  [ "$(stat -c %s "$f")" -le $((4096 + 65536)) ] || continue
  short=$((short + 1))
  [ "$(head -c 8 "$f" | od -An -c | tr -d ' ')" = 'RTRACE\0001' ] && ok || bad "loop: short trace $f not left raw"
done
[ "$n" = 11 ] && [ "$short" -ge 10 ] && [ "$renamed" = 0 ] && ok || bad "loop: $n traces, $short short, $renamed renamed: $(grep -E '^rename' st | head -3)"
! grep -E '^(ftruncate|pwrite64|unlink.*/loop/)' st > cut && ok || bad "loop: rtrace run rewrote, cut or removed a trace: $(head -3 cut)"
[ -z "$(ls loop | grep -v '\.rtrace$')" ] && ok || bad "loop: files left: $(ls loop | grep -v '\.rtrace$')"
[ "$(grep -c 'trace written to' err)" = "$n" ] && ok || bad "loop: $n traces, $(grep -c 'trace written to' err) in the report"
for f in loop/*; do
  "$RTRACE" postproc -i "$f" > /dev/null 2>&1 || bad "loop: $f unreadable"
done
ok

# with -q alone the report reads no trace: rtrace run's main thread (the
# compressor and the report) opens none of the loop's short traces, raw
# or renamed (it looks each one up once)
rm -rf loopq && mkdir loopq
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -qq -e trace=openat,access -o st "$RTRACE" run -q --follow-children -o "$TMP/loopq" -- \
  bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done' > /dev/null 2> err || bad "loop -q failed: $(cat err)"
n=$(ls loopq | wc -l)
[ "$(grep -c '^access(".*/loopq/.*\.rtrace", R_OK) = 0' st)" = "$n" ] && ok || bad "loop -q: $n traces, looked up: $(grep -c '^access' st)"
! grep -q '^openat(.*/loopq/' st && ok || bad "loop -q: traces opened: $(grep '^openat(.*/loopq/' st | head -3)"

# a program that leaks: the roots are read, the verdicts are memcheck's
n=$(vm_reads "$PROGRAMS/tp_leaks")
[ "$n" -gt 0 ] && ok || bad "tp_leaks: no root memory read"
"$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_leaks" > /dev/null 2> err
grep -q "definitely lost: [1-9]" err && ok || bad "tp_leaks: no leak found: $(cat err)"

# the first segment of the trace is mapped without readahead: the first
# write fault reads in one page, not the header and the whole first chunk
# (the kernel's VmFlags "rr" in smaps: madvise MADV_RANDOM)
rm -rf rr && mkdir rr
"$RTRACE" run -q -o "$TMP/rr" -- cat /proc/self/smaps > smaps.out 2> err || bad "cat smaps failed: $(cat err)"
flags=$(awk '/\/rr\/cat-[0-9]+\.rtrace/ { f = 1 } f && /^VmFlags/ { print; exit }' smaps.out)
case "$flags" in
*" rr"*) ok ;;
*) bad "the trace's first segment is mapped with readahead: '$flags'" ;;
esac

# rtrace run's page-populating thread makes its inotify instance only
# once the program has run a while (src/cli/run_prefault.c: closing one
# waits for an SRCU grace period, 5-23 ms): a program that ends at once
# leaves none made (one try in ten is enough: a busy machine may slow
# the program past the delay), one that runs longer still gets it
strace_init() { # inotify instances made by rtrace run -- "$@"
  rm -rf ino && mkdir ino
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f --seccomp-bpf -qq -e trace=inotify_init1 -o st "$RTRACE" run -q -o "$TMP/ino" -- "$@" > /dev/null 2>&1
  grep -c 'inotify_init1(' st
}
if strace -f --seccomp-bpf -qq -e trace=none true 2> /dev/null; then
  none=0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    [ "$(strace_init /bin/true)" = 0 ] && { none=1; break; }
  done
  [ "$none" = 1 ] && ok || bad "rtrace run -- /bin/true made an inotify instance in each of 10 runs"
  [ "$(strace_init sleep 0.3)" = 1 ] && ok || bad "rtrace run -- sleep 0.3: no inotify instance made"
  # the thread follows only the traces the compressor hands it (longer
  # than one chunk): a loop of short processes gets no watch, neither on
  # the manifest nor on a trace (--compress=no: the manifest's and one a
  # trace, 11 traces: bash and 10 /bin/true, whose fork children exec
  # before they need a file; a trace that ends before the thread looks
  # gets none, which a slow build such as the sanitized one sees)
  watches() { # inotify watches made by rtrace run "$@"
    rm -rf ino && mkdir ino
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f --seccomp-bpf -qq -e trace=inotify_add_watch -o st "$RTRACE" run -q --follow-children "$@" -o "$TMP/ino" -- \
      bash -c 'sleep 0.1; for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done' > /dev/null 2>&1
    grep -c 'inotify_add_watch(.* = [0-9]' st
  }
  # (none, or a few on a busy machine: a process that runs a second is
  # compressed and followed whatever its size; bash's own, say)
  w=$(watches)
  [ "$w" -le 3 ] && ok || bad "a loop of short processes: $w inotify watches made"
  w=$(watches --compress=no)
  [ "$w" -ge 7 ] && ok || bad "a loop of short processes, --compress=no: $w watches made"
else
  echo "strace --seccomp-bpf is not supported here: inotify check skipped" >&2
fi

# the report resolves a trace only when it prints a stack: ls's (blocks
# still reachable, not shown) leaves its executable unopened by rtrace
# run; a program with a loss record to show has its module opened
strace -f -qq -e trace=openat -o st.res "$RTRACE" run -o "$TMP" -- ls / > /dev/null 2> res.err
! grep -q 'bin/ls"' st.res && grep -q 'still reachable: [1-9]' res.err && grep -q 'ERROR SUMMARY: 0 errors' res.err && ok ||
  bad "ls's report resolved its trace: $(grep 'bin/ls"' st.res | head -2)"
strace -f -qq -e trace=openat -o st.res "$RTRACE" run -o "$TMP" -- "$PROGRAMS/tp_leaks" > /dev/null 2> res.err
grep -q 'tp_leaks"' st.res && grep -q '   by 0x[0-9A-F]*: main (tp_leaks.c:' res.err && ok ||
  bad "tp_leaks's report: stacks not resolved: $(grep -m3 '  by ' res.err)"

# rtrace run's manifest goes to /dev/shm when it can be made there, and is
# removed at the end: in /tmp on a disk, giving its reserved blocks back
# was the largest part of rtrace run's own end
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  rm -f ./*.rtrace st
  strace -f -qq -e trace=openat,unlink -o st "$RTRACE" run -q -o "$TMP" -- /bin/true > /dev/null 2>&1
  m=$(sed -n 's/.*unlink("\([^"]*rtrace-run-[^"]*\)").*/\1/p' st)
  case $m in /dev/shm/rtrace-run-*) [ ! -e "$m" ] && ok || bad "the manifest $m was left" ;;
  *) bad "rtrace run's manifest: '$m', not in /dev/shm" ;; esac
else
  echo "no writable /dev/shm: the manifest's place is not checked" >&2
fi

# rtrace itself links no C++ runtime: libstdc++ (with libm and libgcc_s)
# was ~0.4 ms of every command's start; the resolver loads it at its
# first C++ name (cli.resolve checks the demangled names)
needed=$(readelf -d "$RTRACE" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case $needed in *libstdc++*) bad "rtrace needs libstdc++ at start: $needed" ;; *) ok ;; esac

finish
