# Every postproc option, in short and long form, does what sp-rtrace's did.
. "$(dirname "$0")/lib.sh"
need_fixtures
S="$PP/sample.txt"
C="$PP/context.txt"

calls() { grep -o '^[0-9]*\.' "$1" | tr -d . | tr '\n' ' '; }
expect_calls() { # NAME FILE "1 2 3 "
  local got
  got=$(calls "$2")
  [ "$got" = "$3" ] && ok || bad "$1: calls '$got', expected '$3'"
}
expect_line() { # NAME FILE LINE
  grep -qxF -- "$3" "$2" && ok || bad "$1: no line '$3'"
}

# help documents every option
"$RTRACE" postproc --help > "$TMP/help" && ok || bad "--help exit status"
for opt in -i --input-file -o --output-dir -l --filter-leaks -c --compress -s --sort \
           -C --context -R --resource -b --backtrace-depth --include --exclude \
           --call-address -q --quiet -h --help; do
  grep -q -- "$opt" "$TMP/help" && ok || bad "--help does not mention $opt"
done

# long forms equal short forms; stdin equals -i
"$RTRACE" postproc -lci "$C" > "$TMP/short"
"$RTRACE" postproc --filter-leaks --compress --input-file "$C" > "$TMP/long"
check_same "long options" "$TMP/short" "$TMP/long"
"$RTRACE" postproc -lc < "$C" > "$TMP/stdin"
check_same "stdin input" "$TMP/short" "$TMP/stdin"

# sort orders of the groups (default size-asc, as sp-rtrace 1.6)
sizes() { sed -n 's/^# allocation summary: \([0-9]*\) block(s) with total size \([0-9]*\)$/\1 \2/p' "$1"; }
"$RTRACE" postproc -lc -i "$C" > "$TMP/o"; sizes "$TMP/o" | awk '{print $2}' > "$TMP/s"
sort -n "$TMP/s" | cmp -s - "$TMP/s" && ok || bad "default order is not size ascending"
"$RTRACE" postproc -lc -s size -i "$C" > "$TMP/o"; sizes "$TMP/o" | awk '{print $2}' > "$TMP/s"
sort -rn "$TMP/s" | cmp -s - "$TMP/s" && ok || bad "-s size is not descending"
[ "$(head -1 "$TMP/s")" = 5015 ] && ok || bad "-s size: largest group first"
"$RTRACE" postproc -lc --sort count -i "$C" > "$TMP/o"; sizes "$TMP/o" | awk '{print $1}' > "$TMP/s"
[ "$(tr '\n' ' ' < "$TMP/s")" = "5 5 5 5 3 3 3 " ] && ok || bad "-s count: $(tr '\n' ' ' < "$TMP/s")"
"$RTRACE" postproc -lc -s count-asc -i "$C" > "$TMP/o"; sizes "$TMP/o" | awk '{print $1}' > "$TMP/s"
[ "$(tr '\n' ' ' < "$TMP/s")" = "3 3 3 5 5 5 5 " ] && ok || bad "-s count-asc: $(tr '\n' ' ' < "$TMP/s")"

# -R: resource types by registry mask; a lone survivor is renumbered 1
# and its name hidden from call lines
"$RTRACE" postproc -R 2 -i "$S" > "$TMP/o"
expect_calls "-R 2" "$TMP/o" "2 3 5 6 "
expect_line "-R 2 registry" "$TMP/o" "<1> : address (shared memory attachments)"
grep -q '^<[24]>' "$TMP/o" && bad "-R 2 left other registry entries" || ok
expect_line "-R 2 hides type" "$TMP/o" "5. [14:54:26.319] shmdt(0xb7700000)"
"$RTRACE" postproc --resource 5 -i "$S" > "$TMP/o"
expect_calls "-R 5" "$TMP/o" "1 4 7 "
expect_line "-R 5 keeps types" "$TMP/o" "4. [14:54:26.319] shmctl<control>(0x1088018)"

# -b: backtraces trimmed, header updated, groups merge on the shorter stack
"$RTRACE" postproc -b 2 -i "$C" > "$TMP/o"
head -1 "$TMP/o" | grep -q 'backtrace depth=2, ' && ok || bad "-b 2 header"
awk '/^\t0x/ { n++ } /^$/ { if (n > 2) bad = 1; n = 0 } END { exit bad }' "$TMP/o" && ok || bad "-b 2 left deeper stacks"
"$RTRACE" postproc -lc --backtrace-depth 1 -i "$C" > "$TMP/o"
[ "$(grep -c '^# allocation summary' "$TMP/o")" = 4 ] && ok || bad "-b 1 groups: $(grep -c '^# allocation summary' "$TMP/o")"

# --include / --exclude: index files (decimal, 0x hex, comments)
printf '1\n0x3\n# comment\n\n7\n' > "$TMP/idx"
"$RTRACE" postproc --include "$TMP/idx" -i "$S" > "$TMP/o"
expect_calls "--include" "$TMP/o" "1 3 7 "
"$RTRACE" postproc --exclude "$TMP/idx" -i "$S" > "$TMP/o"
expect_calls "--exclude" "$TMP/o" "2 4 5 6 "
printf '1\nfoo\n' > "$TMP/badidx"
"$RTRACE" postproc --include "$TMP/badidx" -i "$S" > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] && grep -q "badidx:2:1: expected a call index" "$TMP/err" && ok || bad "bad index file: $(cat "$TMP/err")"

# --call-address: module-relative and absolute starts
"$RTRACE" postproc --call-address shmseg_test:0x526+0x30 -i "$S.r" > "$TMP/o"
expect_calls "--call-address relative" "$TMP/o" "1 2 "
"$RTRACE" postproc --call-address shmseg_test:0x8048560+0x10 -i "$S.r" > "$TMP/o"
expect_calls "--call-address absolute" "$TMP/o" "3 "
"$RTRACE" postproc --call-address nosuchmodule:0+1 -i "$S" > "$TMP/o" 2> "$TMP/err"
grep -q "no module in the memory map matches 'nosuchmodule'" "$TMP/err" && ok || bad "--call-address unknown module warning"
expect_calls "--call-address unknown module" "$TMP/o" ""

# -C combined with -l: leaks are matched before contexts are selected
"$RTRACE" postproc -l -C 2 -i "$C" > "$TMP/o"
[ "$(calls "$TMP/o" | wc -w)" = 24 ] && ok || bad "-l -C 2 count"

# -o: a new file named after the process and pid, never overwriting
mkdir "$TMP/outdir"
"$RTRACE" postproc -lc -i "$C" -o "$TMP/outdir" 2> "$TMP/err1"
"$RTRACE" postproc -i "$C" --output-dir "$TMP/outdir" 2> "$TMP/err2"
[ -f "$TMP/outdir/alloc_context_test-17949.rtrace.txt" ] && ok || bad "-o first file name: $(ls "$TMP/outdir")"
[ -f "$TMP/outdir/alloc_context_test-17949-1.rtrace.txt" ] && ok || bad "-o second file name: $(ls "$TMP/outdir")"
check_same "-o first file untouched" "$TMP/short" "$TMP/outdir/alloc_context_test-17949.rtrace.txt"
grep -q "created text trace $TMP/outdir/alloc_context_test-17949.rtrace.txt" "$TMP/err1" && ok || bad "-o path not announced"
finish
