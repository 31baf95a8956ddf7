# rtrace run's pool of trace files made ahead (src/cli/run_pool.c,
# src/preload/pool.c, issue 21): under rtrace run a traced process takes
# its trace file from the pool with a rename, and creates none (no open
# with O_CREAT in the output directory, no fallocate of its first part);
# every process of a fork+exec loop still has a trace of its own,
# complete, in the report; a name taken goes on to the next; a process
# killed with SIGKILL leaves a readable trace; without a pool (none to
# take, or rtrace run killed) a process creates its file itself; the pool
# is gone once rtrace run is. The pool's files are in the output
# directory (.rtrace-pool-PID-N), made with no name and then linked. On tmpfs there is no pool (files are cheap
# there): the test runs on a disk filesystem, the temporary directory or
# else the build directory.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
command -v strace > /dev/null || { echo "strace is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
tmpfs() { case $(stat -f -c %T "$1") in tmpfs | ramfs) return 0 ;; esac; return 1; }
if tmpfs "$TMP"; then
  first=$TMP
  TMP=$(mktemp -d "${BUILD_DIR:?}/trace_pool.XXXXXX") || exit 1
  trap 'rm -rf "$first" "$TMP"' EXIT
  tmpfs "$TMP" && { echo "no disk filesystem for the traces (the temporary and build directories are tmpfs)" >&2; exit 77; }
fi
cd "$TMP" || exit 1
# (LeakSanitizer cannot run under ptrace: an ASan build's rtrace aborts)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

readable() { # FILE...: each trace reads without a warning (complete)
  for f in "$@"; do
    "$RTRACE" postproc -i "$f" > pp.out 2> pp.err && [ ! -s pp.err ] || { bad "$f: $(head -3 pp.err)"; continue; }
    ok
  done
}

# --- a shell loop: 6 traces (bash, 5 /bin/true: bash's fork children
# exec before their trace needs a file); the first process may start
# before the pool has its files (rtrace run
# makes them meanwhile): bash's own trace is left out of the count; and
# before each /bin/true bash waits (with builtins: no process) until the
# pool is full again, so that a busy machine that holds rtrace run's
# thread back makes no process create its own file ---
mkdir loop
full='full() { local end=$((SECONDS + 20)); while ((SECONDS < end)); do f=($0/.rtrace-pool-*-[0-7]); [ ${#f[@]} = 8 ] && return; done; }'
strace -f -qq -e trace=execve,open,openat,creat,renameat2,fallocate,linkat -o st "$RTRACE" run --follow-children -o "$TMP/loop" -- \
  bash -c "$full"'; for i in 1 2 3 4 5; do full; /bin/true; done' "$TMP/loop" > /dev/null 2> err || bad "loop failed: $(cat err)"
main=$(awk '$2 ~ /^execve\(/ && $2 ~ /bash"/ { print $1; exit }' st)
n=$(ls loop | grep -vc "^bash-$main\.")
[ "$n" = 5 ] && [ "$(ls loop | grep -c '^true-')" = 5 ] && ok || bad "loop: traces $(ls loop | tr '\n' ' ')"
created=$(grep -E "(open|openat|creat)\(.*\"$TMP/loop/[^\"]*\".*O_CREAT" st | grep -v "\"$TMP/loop/bash-$main\.")
[ -z "$created" ] && ok || bad "loop: a traced process created its file: $(echo "$created" | head -3)"
# (a trace a process did not create, named by a rename from the pool:
# strace may print a call in two parts when another runs meanwhile)
taken=0
for f in $(ls loop | grep -v "^bash-$main\."); do
  grep -qE "renameat2\(AT_FDCWD, \"$TMP/loop/\.rtrace-pool-[0-9]+-[0-9]+\", AT_FDCWD, \"$TMP/loop/$f\"" st && taken=$((taken + 1))
done
[ "$taken" = "$n" ] && ok || bad "loop: $n traces, $taken taken from the pool"
# rtrace run makes each file with no name (O_TMPFILE: the directory is not
# locked while the filesystem looks for an inode) and links it as a slot
grep -qE 'openat\([0-9]+, "\.", [^)]*O_TMPFILE' st &&
  grep -qE "linkat\(AT_FDCWD, \"/proc/self/fd/[0-9]+\", [0-9]+, \"\.rtrace-pool-[0-9]+-[0-7]\", AT_SYMLINK_FOLLOW\) = 0" st && ok ||
  bad "loop: the pool's files: $(grep -E 'O_TMPFILE|linkat' st | head -3)"
# the tracer reserves the first part of its first chunk (4096 + 12288)
# only when its file has no blocks there: the pool's have them
! grep -vE "^$main " st | grep -qE 'fallocate\([0-9]+, 0, 4096, 12288' && ok ||
  bad "loop: a tracer reserved its first part: $(grep -vE "^$main " st | grep -c 'fallocate([0-9]*, 0, 4096')"
readable loop/*
[ "$(grep -c 'trace written to' err)" = "$(ls loop | wc -l)" ] && ! grep -q 'trace of process .* lost\|error:' err && ok ||
  bad "loop: report $(grep -c 'trace written to' err) of $(ls loop | wc -l): $(grep -m3 'lost:\|error:' err)"
[ -z "$(ls -A loop | grep -v '\.rtrace$')" ] && ok || bad "loop: left in the output directory: $(ls -A loop | grep -v '\.rtrace$')"

# --- the same process, three programs: the first two names are taken
# (uncompressed: the name is the file's own, not a name looked up first) ---
mkdir same
strace -f -qq -e trace=renameat2 -o st "$RTRACE" run -q --follow-children --compress=no -o "$TMP/same" -- \
  bash -c "$full"'; full; exec bash -c ": b; exec /bin/true"' "$TMP/same" > /dev/null 2>&1
pid=$(ls same | sed -n 's/^true-\([0-9]*\)\.rtrace$/\1/p')
[ -n "$pid" ] && [ -f "same/bash-$pid.rtrace" ] && [ -f "same/bash-$pid-1.rtrace" ] && [ "$(ls same | wc -l)" = 3 ] && ok ||
  bad "one process, three programs: $(ls same | tr '\n' ' ')"
grep -q "rtrace-pool-.*\"$TMP/same/bash-$pid\.rtrace\", RENAME_NOREPLACE) = -1 EEXIST" st &&
  grep -q "rtrace-pool-.*\"$TMP/same/bash-$pid-1\.rtrace\", RENAME_NOREPLACE) = 0" st &&
  grep -q "rtrace-pool-.*\"$TMP/same/true-$pid\.rtrace\", RENAME_NOREPLACE) = 0" st && ok ||
  bad "one process, three programs: $(grep rtrace-pool st | head -5)"
readable same/*

# --- a process killed with SIGKILL: its trace is under its name, readable ---
mkdir kill
"$RTRACE" run -q --follow-children -o "$TMP/kill" -- \
  sh -c "sleep 30 & echo \$! > $TMP/killed; sleep 0.5; kill -9 \$!; wait" > /dev/null 2>&1
k=$(cat killed)
[ -f "kill/sleep-$k.rtrace" ] && ok || bad "SIGKILL: no trace of sleep $k: $(ls kill | tr '\n' ' ')"
"$RTRACE" postproc -i "kill/sleep-$k.rtrace" 2> /dev/null | grep -q '^[0-9]*\. .*malloc' && ok ||
  bad "SIGKILL: sleep's trace holds no call"

# --- no file in the pool (its thread behind, or gone): the tracer tries
# at most RT_POOL_TRIES slots and creates its own. The tracer alone, with
# a pool named where no file is ---
mkdir gone
strace -f -qq -e trace=renameat2,openat -o st env LD_PRELOAD="$BUILD_DIR/librtrace-preload.so" \
  RTRACE_DIR="$TMP/gone" RTRACE_POOL=.rtrace-pool-0- RTRACE_MODULES=memory /bin/true > /dev/null 2> err ||
  bad "no pool file: failed: $(cat err)"
t=$(ls gone | grep '^true-')
[ -n "$t" ] && [ ! -s err ] && ok || bad "no pool file: /bin/true's trace: $(ls gone | tr '\n' ' ') $(cat err)"
readable "gone/$t"
tries=$(grep -E "renameat2\(AT_FDCWD, \"$TMP/gone/\.rtrace-pool-0-[0-7]\", AT_FDCWD, \"$TMP/gone/true-" st | grep -c ENOENT)
[ "$tries" = 4 ] && grep -qE "openat\(AT_FDCWD, \"$TMP/gone/true-.*O_CREAT" st && ok ||
  bad "no pool file: $tries slots tried, then: $(grep "$TMP/gone/true-" st | head -3)"

# --- rtrace run killed: the processes left trace on, from what is left
# of the pool and then by themselves, their traces under their names ---
mkdir dead
("$RTRACE" run -q --follow-children -o "$TMP/dead" -- sh -c "kill -9 \$PPID; sleep 0.2
  for i in 1 2 3 4 5 6 7 8 9 10 11 12; do /bin/true; done; echo > $TMP/dead.done"; :) > /dev/null 2>&1
for i in $(seq 100); do [ -f dead.done ] && break; sleep 0.1; done
n=$(ls dead | grep -c '^true-.*\.rtrace$')
[ "$n" = 12 ] && ok || bad "rtrace run killed: $n traces of /bin/true: $(ls dead | tr '\n' ' ')"
readable dead/true-*
rm -rf dead/.rtrace-pool-* # left by rtrace run killed

# --- without --follow-children (a program, its fork children), no pool ---
mkdir one
strace -f -qq -e trace=mkdir -o st "$RTRACE" run -q -o "$TMP/one" -- "$PROGRAMS/tp_fork" > /dev/null 2>&1
! grep -q 'rtrace-pool' st && [ "$(ls one | wc -l)" = 2 ] && ok || bad "no --follow-children: $(grep mkdir st) $(ls -A one)"

# --- one CPU (taskset): no pool, whose thread would take the program's CPU ---
if command -v taskset > /dev/null; then
  mkdir cpu1
  strace -f -qq -e trace=openat,linkat -o st taskset -c 0 "$RTRACE" run -q --follow-children -o "$TMP/cpu1" -- \
    bash -c '/bin/true; /bin/true' > /dev/null 2>&1
  ! grep -qE 'O_TMPFILE|rtrace-pool' st && [ "$(ls -A cpu1 | wc -l)" = 3 ] && ok ||
    bad "one CPU: $(grep -E 'O_TMPFILE|rtrace-pool' st | head -2) $(ls -A cpu1)"
fi

# --- on tmpfs, no pool: the processes create their files ---
if [ -d /dev/shm ] && tmpfs /dev/shm && shm=$(mktemp -d /dev/shm/trace_pool.XXXXXX); then
  strace -f -qq -e trace=mkdir -o st "$RTRACE" run -q --follow-children -o "$shm" -- bash -c '/bin/true; /bin/true' > /dev/null 2>&1
  ! grep -q 'rtrace-pool' st && [ "$(ls "$shm" | wc -l)" -ge 3 ] && ok || bad "tmpfs: $(grep mkdir st) $(ls -A "$shm")"
  rm -rf "$shm"
fi

finish
