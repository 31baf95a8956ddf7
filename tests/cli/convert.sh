# rtrace convert and postproc on Valgrind XML: real memcheck XML of a
# program with known leaks read into a text trace (the leak figures must
# add up to memcheck's own), the same through postproc and through a pipe,
# round trip XML -> XML, cut-off and malformed input, binary trace -> XML
# -> text, and the command line.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1
command -v valgrind > /dev/null || { echo "valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }

valgrind -q --leak-check=full --show-leak-kinds=all --xml=yes --xml-file=vg.xml \
  "$P/tp_leakcheck" > /dev/null 2>&1
[ -s vg.xml ] && ok || bad "valgrind wrote no XML"

# memcheck's per-kind totals from its own XML: "Leak_Kind bytes blocks",
# bytes being the direct bytes (leakedbytes minus the indirect ones)
vg_totals() {
  awk '/<kind>Leak_/ { k = $0; sub(/.*<kind>/, "", k); sub(/<.*/, "", k) }
       /<text>.* direct, / { d = $0; sub(/.*\(/, "", d); sub(/ direct.*/, "", d); gsub(/,/, "", d); direct = d }
       /<leakedbytes>/ { b = $0; gsub(/[^0-9]/, "", b); if (direct == "") direct = b }
       /<leakedblocks>/ { n = $0; gsub(/[^0-9]/, "", n); bytes[k] += direct; blocks[k] += n; direct = "" }
       END { for (k in bytes) print k, bytes[k], blocks[k] }' "$1" | sort
}
# the same from the text trace's "## leak check: KIND: B bytes in N blocks"
rt_totals() {
  awk -F': ' '/^## leak check: (definitely|indirectly|possibly|still)/ {
      split($3, f, " "); if (f[4] == 0) next
      k = $2; sub(/definitely lost/, "Leak_DefinitelyLost", k); sub(/indirectly lost/, "Leak_IndirectlyLost", k)
      sub(/possibly lost/, "Leak_PossiblyLost", k); sub(/still reachable/, "Leak_StillReachable", k)
      print k, f[1], f[4] }' "$1" | sort
}

"$RTRACE" convert --to text vg.xml > vg.txt 2> conv.err && ok || { bad "convert --to text"; cat conv.err >&2; }
vg_totals vg.xml > want.totals
rt_totals vg.txt > got.totals
[ -s want.totals ] && ok || bad "no loss records in memcheck's XML"
check_same "leak totals of the text trace = memcheck's" want.totals got.totals
[ "$(grep -c '<kind>Leak_' vg.xml)" = "$(grep -c '^## leak -' vg.txt)" ] && ok ||
  bad "one leak verdict per loss record"
grep -q '^version=2.0, process=.*tp_leakcheck, pid=[0-9]*, origin=valgrind memcheck' vg.txt && ok ||
  bad "header from the XML's run: $(head -n 1 vg.txt)"

"$RTRACE" postproc -i vg.xml > pp.txt 2>&1 && ok || bad "postproc reads Valgrind XML"
check_same "postproc = convert --to text" vg.txt pp.txt
cat vg.xml | "$RTRACE" convert --to text - > pipe.txt && ok || bad "convert from a pipe"
check_same "pipe = file" vg.txt pipe.txt
"$RTRACE" postproc < vg.xml > pipe2.txt && ok || bad "postproc from a pipe"
check_same "postproc pipe = file" vg.txt pipe2.txt

# XML -> XML: Valgrind's own file written back unchanged
"$RTRACE" convert -o back.xml vg.xml && ok || bad "convert -o back.xml"
check_same "XML round trip is byte-identical" vg.xml back.xml

# a file cut in the middle of an error: the complete ones are kept
errs=$(grep -c '<error>' vg.xml)
cut=$(grep -n '<error>' vg.xml | sed -n 3p | cut -d: -f1)
head -n $((cut + 5)) vg.xml > cut.xml
"$RTRACE" convert --to xml -o cut-out.xml cut.xml 2> cut.err && ok || bad "a cut-off file is normal input"
grep -q 'cut.xml:[0-9]*:[0-9]*: .*input ends' cut.err && ok || { bad "warning names where the input ended"; cat cut.err >&2; }
[ "$(grep -c '<error>' cut-out.xml)" = 2 ] && ok || bad "the 2 complete errors of $errs are kept"
xmllint --noout cut-out.xml 2> /dev/null && ok || bad "output of a cut-off file is well-formed"

# malformed: an error with position, the partial result, exit 1
kline=$(awk -v from="$cut" 'NR > from && /<kind>/ { print NR; exit }' vg.xml)
sed "${kline}s/<kind>/<kind<>/" vg.xml > bad.xml
"$RTRACE" convert --to text bad.xml > bad.txt 2> bad.err
[ $? = 1 ] && ok || bad "malformed XML exits 1"
grep -q "bad.xml:$kline:[0-9]*: " bad.err && ok || { bad "error with file:line:col"; cat bad.err >&2; }
grep -q 'partial' bad.err && ok || bad "the output is said to be partial"
[ "$(grep -c '^## leak -' bad.txt)" -ge 0 ] && [ -s bad.txt ] && ok || bad "partial output written"

# rtrace's own trace -> XML -> text: the leak figures survive
rm -f ./*.rtrace
"$RTRACE" run -q --show-leak-kinds=all -- "$P/tp_leakcheck" > /dev/null 2>&1
trace=$(ls ./tp_leakcheck-*.rtrace)
"$RTRACE" convert --show-leak-kinds=all -o rt.xml "$trace" && ok || bad "binary trace -> XML"
xmllint --noout rt.xml && ok || bad "rtrace's XML is well-formed"
"$RTRACE" convert --to text rt.xml > rt-back.txt && ok || bad "rtrace's XML -> text"
"$RTRACE" postproc -i "$trace" | grep '^## leak check: [dips]' > want.sum
grep '^## leak check: [dips]' rt-back.txt > got.sum
check_same "leak summary through XML" want.sum got.sum

# heap errors' own stacks are resolved, not only the calls' (without
# --trace-frees the release stack is no call's)
"$RTRACE" run -q --xml-file=heaperr.xml -- "$P/tp_heaperr" double > /dev/null 2>&1
awk '/<kind>InvalidFree/ { e = 1 } e && /<\/stack>/ { exit } e' heaperr.xml > first-stack.xml
grep -q '<fn>main</fn>' first-stack.xml && grep -q '<file>tp_heaperr.cpp</file>' first-stack.xml && ok ||
  bad "the release stack of an InvalidFree is resolved"

# command line
"$RTRACE" convert --to yaml vg.xml > /dev/null 2> usage.err; [ $? = 2 ] && ok || bad "bad --to exits 2"
grep -q "expected text, xml, callgrind or sarif" usage.err && ok || bad "bad --to message"
"$RTRACE" convert > /dev/null 2>&1; [ $? = 2 ] && ok || bad "no input exits 2"
# a prolog with a BOM, comments, a DOCTYPE (literals and an internal
# subset holding '>' and ']') before <valgrindoutput>: still Valgrind XML
"$RTRACE" convert --to text vg.xml > plain.txt 2> /dev/null
{ head -n 1 vg.xml; echo '<!-- written by valgrind -->'
  echo '<!DOCTYPE valgrindoutput SYSTEM "v>1.dtd" [ <!ELEMENT x (#PCDATA)> <!NOTATION n SYSTEM "a]>b"> ]>'
  tail -n +2 vg.xml; } > doctype.xml
{ printf '\357\273\277<!DOCTYPE valgrindoutput>\n'; tail -n +2 vg.xml; } > bom.xml
for f in doctype.xml bom.xml; do
  "$RTRACE" convert --to text "$f" > dt.txt 2> dt.err
  [ $? = 0 ] && [ ! -s dt.err ] && cmp -s plain.txt dt.txt && ok || bad "$f not read as Valgrind XML: $(head -c 300 dt.err)"
  "$RTRACE" postproc -i "$f" > /dev/null 2> dt.err
  [ $? = 0 ] && [ ! -s dt.err ] && ok || bad "postproc $f: $(head -c 300 dt.err)"
done

"$RTRACE" convert missing.xml > /dev/null 2>&1; [ $? = 1 ] && ok || bad "missing input exits 1"
"$RTRACE" convert --help | grep -q 'usage: rtrace convert' && ok || bad "convert --help"
"$RTRACE" convert -o out.xml "$trace" && head -c 21 out.xml | grep -q '<?xml version="1.0"?>' && ok ||
  bad "-o NAME.xml selects xml"
finish
