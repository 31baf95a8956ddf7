# rtrace heap -j N and convert -j N: the frames of a compressed trace
# decoded on worker threads (src/lib/binary/bin_zpar.c) give every view
# and export byte for byte what one thread gives, with the same warnings,
# errors and exit status, on whole, cut and corrupt traces of one thread
# (tp_churn) and of eight (tp_threads).
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
cd "$TMP" || exit 1

"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_churn" 200000 > /dev/null 2> run.err || bad "rtrace run tp_churn"
"$RTRACE" run -q -o "$TMP" -- "$PROGRAMS/tp_threads" > /dev/null 2>> run.err || bad "rtrace run tp_threads"
churn=$(ls "$TMP"/tp_churn-*.rtrace 2>/dev/null | head -1)
threads=$(ls "$TMP"/tp_threads-*.rtrace 2>/dev/null | head -1)
[ -n "$churn" ] && [ -n "$threads" ] || { bad "no traces written"; finish; exit; }
head -c 7 "$churn" | od -An -c | grep -q 'R   T   R   A   C   E' && ok || bad "a binary trace"
[ "$(head -c 8 "$churn" | tail -c 1 | od -An -tu1 | tr -d ' ')" = 2 ] && ok || bad "compressed (version 2)"

# every view of rtrace heap, and convert --to callgrind: "NAME ARGS..."
views=(
	"report heap --no-resolve"
	"resolved heap"
	"stacks heap --no-resolve --stacks -n 20"
	"allocations heap --no-resolve --collapsed=allocations"
	"temporary heap --no-resolve --collapsed=temporary"
	"bytes heap --no-resolve --collapsed=bytes"
	"peak heap --no-resolve --collapsed=peak"
	"leaked heap --no-resolve --collapsed=leaked"
	"massif heap --no-resolve --massif"
	"series heap --no-resolve --series"
	"histogram heap --no-resolve --histogram=exact"
	"filtered heap --no-resolve --calls=1000-150000"
	"heaptrack heap --no-resolve --heaptrack=OUT"
	"callgrind convert --no-resolve --to callgrind -o OUT"
)
# out J TRACE NAME ARGS...: the view's output, stderr and status into files
out() {
	local j=$1 trace=$2 name=$3 sub=$4
	shift 4
	local args=("$@") f=$name.$j
	args=("${args[@]/OUT/$f.file}")
	: > "$f.file"
	"$RTRACE" "$sub" -j "$j" "${args[@]}" "$trace" > "$f.out" 2> "$f.err"
	echo "status $?" >> "$f.err"
	sed -i "s|$TMP/||g" "$f.err" # the same name either way; no paths in what is compared
}
# same TRACE LABEL: each view with -j 1 against -j 2 and -j 4
same() {
	local trace=$1 label=$2 v name
	for v in "${views[@]}"; do
		read -r -a a <<< "$v"
		name=${a[0]}
		out 1 "$trace" "$name" "${a[@]:1}"
		for j in 2 4; do
			out "$j" "$trace" "$name" "${a[@]:1}"
			cmp -s "$name.1.out" "$name.$j.out" && cmp -s "$name.1.file" "$name.$j.file" &&
				cmp -s "$name.1.err" "$name.$j.err" && ok ||
				bad "$label, $name: -j $j differs from -j 1 ($(diff "$name.1.err" "$name.$j.err" | head -3))"
		done
	done
}
same "$churn" "tp_churn"
[ -s report.1.out ] && grep -q '^calls to allocation functions: 20' report.1.out && ok || bad "tp_churn's report"
same "$threads" "tp_threads"
grep -q '^calls to allocation functions: 16' report.1.out && ok || bad "tp_threads' report"

# cut at a third and at two thirds: warned about, the same partial profiles
size=$(stat -c %s "$threads")
for part in 1 2; do
	head -c $((size * part / 3)) "$threads" > cut$part.rtrace
	same cut$part.rtrace "tp_threads cut at $part/3"
	grep -q 'truncated compressed trace' report.1.err && ok || bad "cut at $part/3 warns"
done
# a byte of a frame in the middle turned: an error, the same prefix
size=$(stat -c %s "$churn")
cp "$churn" bad.rtrace
printf '\377\377\377\377' | dd of=bad.rtrace bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
same bad.rtrace "tp_churn corrupt"
grep -q 'status 1' report.1.err && grep -q 'byte offset' report.1.err && ok || bad "the corrupt trace is an error: $(cat report.1.err)"

"$RTRACE" heap -j 0 "$churn" > /dev/null 2> j0.err
[ $? = 2 ] && grep -q "invalid --threads '0'" j0.err && ok || bad "-j 0: a usage error"
finish
