# The tracer's unwinder: `rtrace run --unwinder check` reads every stack
# with the cached rules and with libunwind in the same process and counts
# the differences. Programs with deep and varying recursion, frame-pointer
# and alloca frames, signal handlers (on the thread's stack and on an
# alternate stack), longjmp, threads, fork, dlopen/dlclose and C++.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

check() { # NAME EXPECT_ALL_CACHED RUN-OPTIONS... -- PROGRAM ARGS...
  local name=$1 all_cached=$2
  shift 2
  rm -f ./*.rtrace
  "$RTRACE" run -q -o "$TMP" --unwinder check "$@" > run.out 2> run.err
  local rc=$? line
  [ $rc -eq 0 ] || { bad "$name: exit status $rc: $(head -c 300 run.err)"; return; }
  line=$(grep "unwinder check:" run.err | head -n 1)
  case $line in
  *" 0 stacks"* | "") bad "$name: no stacks checked: $(head -c 300 run.err)" ;;
  *", 0 differ"*) ok ;;
  *) bad "$name: $line"; grep "^rtrace: " run.err | head -6 >&2 ;;
  esac
  if [ "$all_cached" = yes ]; then
    case $line in *"(0 left to libunwind"*) ok ;; *) bad "$name: not all stacks by the cached rules: $line" ;; esac
  elif [ "$all_cached" != no ]; then # at most that many left to libunwind
    local left=${line##*(}
    [ "${left%% *}" -le "$all_cached" ] && ok || bad "$name: more than $all_cached stacks left to libunwind: $line"
  fi
  # one line per process (fork: the child reports too)
  [ "$(grep -c "unwinder check:" run.err)" -eq "$(ls ./*.rtrace | wc -l)" ] && ok ||
    bad "$name: reports $(grep -c "unwinder check:" run.err), traces $(ls ./*.rtrace | wc -l)"
}

check "tp_unwind" yes -- "$P/tp_unwind" 1500
check "tp_unwind, depth 5" yes -b 5 -- "$P/tp_unwind" 500
check "tp_unwind, depth 256" yes -b 256 -- "$P/tp_unwind" 500
check "tp_unwind, frees too" yes --trace-frees -- "$P/tp_unwind" 500
check "8 threads" yes -- "$P/tp_threads"
check "fork" yes -- "$P/tp_fork"
check "dlopen, dlclose" yes -- "$P/tp_dlopen" "$P/libtp_plugin.so"
# libstdc++'s constructor allocates (its exception pool) before the
# tracer's constructor runs, called from ld.so's entry code, which has no
# unwind information: that one stack is libunwind's
check "C++" 1 -- "$P/tp_cxx"
if [ -x /usr/bin/python3 ]; then
  check "python3" no -- /usr/bin/python3 -c 'import json, re; print(len(json.dumps([{"k": i} for i in range(20000)])), len(re.findall("a+", "ab" * 5000)))'
fi

# the depth limit holds, the innermost frames are the ones kept
"$RTRACE" run -q -o "$TMP" -b 5 -- "$P/tp_unwind" 200 > /dev/null 2>&1
T=$(ls -t ./tp_unwind-*.rtrace | head -n 1)
"$RTRACE" postproc -i "$T" > all.txt || bad "postproc"
awk '/^[0-9]+\. / { n = 0 } /^\t0x/ { if (++n > max) max = n } END { print max }' all.txt > max.txt
[ "$(cat max.txt)" = 5 ] && ok || bad "depth 5: stacks of $(cat max.txt) frames"

# both unwinders give the same stacks to postproc (same addresses: no ASLR)
for u in cached libunwind; do
  rm -f ./*.rtrace
  setarch "$(uname -m)" -R "$RTRACE" run -q -o "$TMP" --unwinder $u --no-timestamps -- "$P/tp_leaks" > /dev/null 2>&1
  # (without the header and the heap addresses, which differ: the cached
  # rules' reader allocates)
  "$RTRACE" postproc -lc -i ./tp_leaks-*.rtrace | grep -v -e '^version=' -e '^## ' |
    sed 's/ = 0x[0-9a-f]*$//' > $u.txt
done
check_same "tp_leaks leaks by stack, cached vs libunwind" libunwind.txt cached.txt

"$RTRACE" run --unwinder fast -- true 2> err; [ $? -eq 2 ] && grep -q "invalid unwinder 'fast'" err && ok ||
  bad "bad --unwinder: $(cat err)"
finish
