# The leak check and heap errors of `rtrace run`, compared with Valgrind
# memcheck itself on programs with known leak structures and heap errors:
# for the blocks each program allocated itself (loss records whose
# allocation site is in the program, which leaves glibc's own blocks
# out), the per-kind bytes and blocks must agree, loss record by loss
# record; so must the InvalidFree and MismatchedFree errors and their top
# frames. Then the verdicts in the trace, the options and the exit code.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
need_valgrind

# Loss records of a report (memcheck's or rtrace run's, prefixes cut) as
# "kind direct-bytes blocks", for those allocated by the program ($1).
records() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' | awk -v prog="$1" '
    / in loss record / {
      kind = $0; sub(/.* are /, "", kind); sub(/ in loss record.*/, "", kind)
      if ($2 ~ /^\(/) { direct = $2; sub(/^\(/, "", direct) } else direct = $1
      gsub(/,/, "", direct); n = $0; sub(/ blocks are.*/, "", n); sub(/.* in /, "", n)
      want = 1; next
    }
    want && /^   by / { if (index($0, prog)) print kind, direct, n; want = 0 }
    /^$/ { want = 0 }' | sort
}

# Heap errors as "kind function file:line" of the releasing frame, from
# memcheck's report or rtrace run's (resolved as memcheck's is).
errors_of() {
  sed -E 's/^(==[0-9]+== |rtrace: )//' | awk '
    /^Invalid free\(\)/ { k = "InvalidFree"; next }
    /^Mismatched free\(\)/ { k = "MismatchedFree"; next }
    k && /^   by / { sub(/^   by 0x[0-9A-F]+: /, ""); sub(/ \(/, " "); sub(/\)$/, "");
                     n = split($NF, f, "/"); $NF = f[n]; print k, $0; k = "" }'
}

compare_leaks() { # NAME PROGRAM ARGS...
  local name=$1 prog=$2
  shift 2
  valgrind --leak-check=full --show-leak-kinds=all "$prog" "$@" 2> vg.err > vg.out
  rm -f ./*.rtrace
  "$RTRACE" run -o "$TMP" --show-leak-kinds=all -- "$prog" "$@" 2> rt.err > rt.out
  records "$(basename "$prog")" < vg.err > vg.rec
  records "$(basename "$prog")" < rt.err > rt.rec
  if [ -s vg.rec ] && cmp -s vg.rec rt.rec; then ok; else
    bad "$name: loss records differ from memcheck's"; diff vg.rec rt.rec >&2; fi
  awk '{ b[$1] += $2; n[$1] += $3 } END { for (k in b) print k, b[k], n[k] }' vg.rec | sort > vg.kinds
  awk '{ b[$1] += $2; n[$1] += $3 } END { for (k in b) print k, b[k], n[k] }' rt.rec | sort > rt.kinds
  check_same "$name: per-kind bytes and blocks" vg.kinds rt.kinds
  check_same "$name: program output" vg.out rt.out
}

compare_errors() { # NAME PROGRAM ARGS...
  local name=$1 prog=$2
  shift 2
  valgrind "$prog" "$@" 2> vg.err > /dev/null
  "$RTRACE" run -o "$TMP" -- "$prog" "$@" 2> rt.err > /dev/null
  errors_of < vg.err > vg.errs
  errors_of < rt.err > rt.errs
  if [ -s vg.errs ] && cmp -s vg.errs rt.errs; then ok; else
    bad "$name: heap errors differ from memcheck's"; diff vg.errs rt.errs >&2; fi
}

for what in direct list cycle interior globals thread tls realloc all; do
  compare_leaks "leakcheck $what" "$P/tp_leakcheck" $what
done

# The loss records' stacks read as memcheck's (issue 16): resolved after
# the program ended, "fn (file:line)", nothing below main, addresses
# inside the call instruction. Each record's header and its frames in the
# program, "header|address|frame", for the records the program allocated
# itself (libc's dtv is larger under rtrace, whose tracer has TLS of its
# own). Differences left out, and why: the
# record's number (libc's own blocks, such as the thread's dtv, differ in
# size, which moves the program's records in the order); the allocator's
# "at" line (memcheck's is in its own preload, rtrace does not record the
# address of its interposer); and the addresses themselves, since the
# program is loaded at a random base under rtrace and at 0x108000 under
# valgrind: they must differ by one page-aligned constant.
own_frames() { # SOURCE-FILE
  sed -E 's/^(==[0-9]+== |rtrace: )//' | awk -v src="$1" '
    / in loss record / { h = $0; sub(/ in loss record .*/, "", h); first = 1; next }
    h && first && /^   by 0x/ && !index($0, " (" src ":") { h = "" } # allocated by libc
    h && /^   by 0x/ { first = 0 }
    h && /^   by 0x/ && index($0, " (" src ":") { a = $2; sub(/:$/, "", a); t = $0; sub(/: /, "|", t)
                                                  sub(/^   by 0x[0-9A-F]+\|/, "", t); print h "|" a "|" t }
    /^$/ { h = "" }' | sort -t'|' -k1,1 -k3 -s
}
own_frames tp_leakcheck.c < vg.err > vg.own
own_frames tp_leakcheck.c < rt.err > rt.own
cut -d'|' -f1,3 vg.own > vg.text
cut -d'|' -f1,3 rt.own > rt.text
if [ "$(wc -l < vg.text)" -ge 14 ] && cmp -s vg.text rt.text; then ok; else
  bad "loss records' program frames differ from memcheck's"; diff vg.text rt.text >&2; fi
paste -d'|' vg.own rt.own | awk -F'|' '{ print $2, $5 }' | while read -r v r; do
  echo $((r - v)); done | sort -u > base.diff
[ "$(wc -l < base.diff)" = 1 ] && [ $(($(cat base.diff) % 4096)) = 0 ] && ok ||
  bad "program frames' addresses are not memcheck's at another load base: $(cat base.diff)"
"$RTRACE" run -o "$TMP" --num-callers=2 -- "$P/tp_leakcheck" list 2>&1 > /dev/null | grep -A3 "loss record 2 of" > rt.nc
valgrind --leak-check=full --num-callers=2 "$P/tp_leakcheck" list 2>&1 > /dev/null | grep -A3 "loss record 2 of" > vg.nc
grep -c "^rtrace:    by " rt.nc | grep -qx 1 && [ "$(grep -c '^==[0-9]*==    by ' vg.nc)" = 1 ] && ok ||
  bad "--num-callers=2: $(cat rt.nc vg.nc)"
"$RTRACE" run -o "$TMP" --show-below-main=yes -- "$P/tp_leakcheck" direct 2>&1 > /dev/null |
  grep -A5 "loss record 1 of" > rt.bm
grep -q "^rtrace:    by 0x[0-9A-F]*: main (tp_leakcheck.c:" rt.bm && [ "$(grep -c '^rtrace:    by ' rt.bm)" -ge 3 ] && ok ||
  bad "--show-below-main=yes: $(cat rt.bm)"
"$RTRACE" run -o "$TMP" --num-callers=0 -- true 2> /dev/null
[ $? = 2 ] && ok || bad "--num-callers=0: status 2"

compare_leaks "heuristics" "$P/tp_heaperr" heuristics
grep -q "stdstring          : 58 bytes in 1 blocks" rt.err && grep -q "newarray           : 20 bytes in 1 blocks" rt.err &&
  grep -q "length64           : 48 bytes in 1 blocks" rt.err && grep -q "multipleinheritance: 32 bytes in 1 blocks" rt.err &&
  ok || bad "heuristics summary: $(grep -A9 'LEAK SUMMARY' rt.err)"
for what in mismatch double interior wild; do
  compare_errors "heap errors: $what" "$P/tp_heaperr" $what
done
[ "$(grep -c MismatchedFree rt.errs 2>/dev/null)" = 0 ] && ok || bad "wild free is no mismatch"

# A block whose only copies are in dead stack, where the check's own
# frames or exit's lie later (below exit's handlers, below main's frame,
# below _exit's caller): lost.
compare_leaks "stale stack below exit's handlers" "$P/tp_stale"
grep -q "^rtrace:    definitely lost: 24 bytes in 1 blocks$" rt.err && ok || bad "stale stack: $(cat rt.err)"
compare_leaks "stale stack below exit's handlers, exit called" "$P/tp_stale" exit
grep -q "^rtrace:    definitely lost: 24 bytes in 1 blocks$" rt.err && ok || bad "stale stack, exit: $(cat rt.err)"
compare_leaks "stale stack below main's frame" "$P/tp_stale" main
grep -q "^rtrace:    definitely lost: 24 bytes in 1 blocks$" rt.err && ok || bad "stale stack below main: $(cat rt.err)"
valgrind --leak-check=full "$P/tp_stale" _exit 2>&1 > /dev/null | sed -nE 's/^==[0-9]+== +definitely lost: //p' > vg.lost
"$RTRACE" run -o "$TMP" -- "$P/tp_stale" _exit 2>&1 > /dev/null | sed -nE 's/^rtrace: +definitely lost: //p' > rt.lost
grep -qx "24 bytes in 1 blocks" rt.lost && ok || bad "stale stack below _exit: $(cat rt.lost)"
check_same "stale stack below _exit: memcheck's verdict" vg.lost rt.lost

# The LEAK SUMMARY on stderr is memcheck's, figure for figure (the
# program allocates everything here itself, glibc's blocks aside).
"$RTRACE" run -o "$TMP" -- "$P/tp_leakcheck" direct > /dev/null 2> rt.err
grep -q "^rtrace:    definitely lost: 303 bytes in 3 blocks$" rt.err && ok || bad "LEAK SUMMARY: $(cat rt.err)"
grep -q "^rtrace: 303 bytes in 3 blocks are definitely lost in loss record 1 of 1$" rt.err && ok || bad "loss record: $(cat rt.err)"
grep -q "^rtrace: ERROR SUMMARY: 1 errors from 1 contexts$" rt.err && ok || bad "ERROR SUMMARY: $(cat rt.err)"

# The verdicts are in the trace: the text protocol shows them as comments.
T=$(ls -t ./tp_leakcheck-*.rtrace | head -n 1)
"$RTRACE" postproc -i "$T" > text.txt
grep -qx "## leak check: definitely lost: 303 bytes in 3 blocks" text.txt && ok || bad "summary comment"
[ "$(grep -c '^## leak [0-9]*: definitely lost, 101 bytes by malloc$' text.txt)" = 3 ] && ok ||
  bad "per-block comments: $(grep '^##' text.txt)"
"$RTRACE" postproc -i text.txt > again.txt && check_same "text round trip keeps the comments" text.txt again.txt

# --leak-check=summary: totals only; =no: nothing; the program's status
"$RTRACE" run -o "$TMP" --leak-check=summary -- "$P/tp_leakcheck" list > /dev/null 2> rt.err
grep -q "definitely lost: 48 bytes in 1 blocks" rt.err && grep -q "indirectly lost: 196 bytes in 4 blocks" rt.err &&
  ! grep -q "in loss record" rt.err && grep -q "ERROR SUMMARY: 0 errors" rt.err && ok || bad "summary mode: $(cat rt.err)"
"$RTRACE" run -o "$TMP" --leak-check=no -- "$P/tp_leakcheck" list > /dev/null 2> rt.err
! grep -q "LEAK SUMMARY" rt.err && ok || bad "--leak-check=no still checks"
# --show-leak-kinds / --errors-for-leak-kinds / --error-exitcode
"$RTRACE" run -o "$TMP" --show-leak-kinds=indirect --errors-for-leak-kinds=indirect --error-exitcode=9 \
  -- "$P/tp_leakcheck" list > /dev/null 2> rt.err
rc=$?
[ $rc = 9 ] && ok || bad "--error-exitcode with indirect leaks: status $rc"
grep -q "196 bytes in 4 blocks are indirectly lost" rt.err && ! grep -q "are definitely lost" rt.err && ok ||
  bad "--show-leak-kinds=indirect: $(cat rt.err)"
"$RTRACE" run -o "$TMP" --errors-for-leak-kinds=none --error-exitcode=9 -- "$P/tp_leakcheck" list > /dev/null 2>&1
[ $? = 0 ] && ok || bad "no leak kind counts: the program's status"
"$RTRACE" run -q -o "$TMP" --error-exitcode=9 -- "$P/tp_heaperr" mismatch > /dev/null 2>&1
[ $? = 9 ] && ok || bad "--error-exitcode with mismatched frees (and -q)"
"$RTRACE" run -o "$TMP" --show-leak-kinds=bogus -- true 2> /dev/null
[ $? = 2 ] && ok || bad "bad leak kinds: status 2"

# a double free (glibc would abort) is reported and dropped, as memcheck
# does: the program goes on, and the error is in the trace
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" -- "$P/tp_heaperr" double > rt.out 2> rt.err
[ $? = 0 ] && [ "$(cat rt.out)" = "heaperr double" ] && ok || bad "double free: the program goes on"
"$RTRACE" postproc -i ./tp_heaperr-*.rtrace > text.txt
grep -q "^## error InvalidFree: free(0x[0-9a-f]*) at call [0-9]*: 0 bytes inside a block of size 10 free'd$" text.txt &&
  ok || bad "double free in the trace: $(grep '^##' text.txt)"

# A fatal signal (the default action kills): the check runs before the
# signal kills, with memcheck's verdicts, and the program dies by it as
# it would untraced.
for how in segv abort term default; do
  compare_leaks "fatal signal ($how)" "$P/tp_fatal" $how
  grep -q "^rtrace:    definitely lost: 111 bytes in 1 blocks$" rt.err && grep -q "^rtrace: ERROR SUMMARY: " rt.err &&
    ok || bad "fatal signal ($how): $(cat rt.err)"
done
grep -qx "default read back" rt.out && ok || bad "the program reads back the default it set: $(cat rt.out)"
for how in segv:SEGV abort:ABRT term:TERM default:TERM corrupt:ABRT; do
  "$P/tp_fatal" "${how%%:*}" > /dev/null 2>&1
  want=$?
  { "$RTRACE" run -q -o "$TMP" -- "$P/tp_fatal" "${how%%:*}"; } > /dev/null 2>&1
  got=$?
  [ $got = $want ] && [ "$(kill -l $got)" = "${how##*:}" ] && ok || bad "fatal signal ${how%%:*}: status $got, untraced $want"
done
# glibc's free aborting on a corrupted heap (SIGABRT inside the tracer's
# free, where memcheck would go on): checked all the same
"$RTRACE" run -o "$TMP" -- "$P/tp_fatal" corrupt > /dev/null 2> rt.err
grep -q "^rtrace:    definitely lost: 111 bytes in 1 blocks$" rt.err && ok || bad "abort inside free: $(cat rt.err)"
# its own handler, or the signal ignored: the program's, no check there
"$RTRACE" run -o "$TMP" -- "$P/tp_fatal" handled > /dev/null 2> rt.err
[ $? = 3 ] && ok || bad "the program's own handler did not run"

# a signal sent from outside (to rtrace run, which forwards it); with
# threads allocating and freeing, it comes inside malloc or free, and the
# check waits until they return
killed() { # NAME WANT-SUMMARY ARGS...: tp_fatal ARGS, killed by SIGTERM once ready
  local name=$1 want=$2 rpid rc
  shift 2
  rm -f ./*.rtrace ready.out
  timeout 120 "$RTRACE" run -o "$TMP" -- "$P/tp_fatal" "$@" > ready.out 2> rt.err &
  rpid=$!
  for _ in $(seq 300); do grep -q ready ready.out 2>/dev/null && break; sleep 0.1; done
  sleep 0.2
  kill -TERM "$(pgrep -P $rpid)"
  wait $rpid
  rc=$?
  [ $rc = 143 ] && ok || bad "$name: status $rc"
  grep -q "$want" rt.err && grep -q "^rtrace: ERROR SUMMARY: " rt.err && ! grep -q "no leak check" rt.err &&
    ok || bad "$name: $(cat rt.err)"
}
valgrind --leak-check=full "$P/tp_fatal" wait > ready.out 2> vg.err &
vpid=$!
for _ in $(seq 300); do grep -q ready ready.out 2>/dev/null && break; sleep 0.1; done
kill -TERM $vpid
wait $vpid
killed "SIGTERM from outside" "^rtrace:    definitely lost: 111 bytes in 1 blocks$" wait
records tp_fatal < vg.err > vg.rec
records tp_fatal < rt.err > rt.rec
if [ -s vg.rec ]; then check_same "SIGTERM from outside: memcheck's loss records" vg.rec rt.rec; else bad "SIGTERM from outside: no loss records from memcheck"; fi
for i in 1 2 3; do
  killed "SIGTERM inside malloc ($i)" "^rtrace: LEAK SUMMARY:$" threads
done

# threads busy allocating when the program exits are stopped, not waited for
rm -f ./*.rtrace
"$RTRACE" run -o "$TMP" -- "$P/tp_threads" > /dev/null 2> rt.err
grep -q "LEAK SUMMARY" rt.err && ok || bad "tp_threads: $(cat rt.err)"
finish
