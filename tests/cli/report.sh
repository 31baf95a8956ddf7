# rtrace report in a real browser: Debian's chromium, headless, loads the
# report of tp_report (phases over time, each leak kind, a wild free,
# descriptors, a stream and a mapping left open) with no console error;
# the DOM it builds holds the functions, the figures of rtrace heap and
# of rtrace run's own report, the loss records, errors and resources,
# the source lines around a leak's frame, a drawn flame graph and chart;
# a range in the link filters the call sites; with JavaScript off the
# tables are all there. Then several traces of one run (a selector), a
# diff of two runs (growth per call site), Valgrind XML (findings, no
# charts), bad command lines. Nothing in the page refers to the network.
# Without chromium (an optional consumer) the page's own checks run and
# 77 says the browser was not there.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
cd "$TMP" || exit 1
P=$PROGRAMS

"$RTRACE" run --leak-check=full --show-leak-kinds=all -m memory,fd,file,mmap -o "$TMP" -- "$P/tp_report" 2> run.err ||
  bad "rtrace run tp_report"
tr=$(ls "$TMP"/tp_report-*.rtrace)
"$RTRACE" heap --no-resolve "$tr" > heap.out 2>&1 || bad "rtrace heap"
"$RTRACE" report -o r.html "$tr" 2> report.err && ok || bad "rtrace report: $(cat report.err)"

# self-contained: no external script, style, font, image or frame
grep -qiE '<(script|img|iframe)[^>]* src=|<link |@import|url\(' r.html && bad "the page loads something" || ok
[ "$(grep -c 'id="rt-data"' r.html)" = 1 ] && ok || bad "no embedded data"

summary() { sed -nE "s/^$1: [^(]*\(([0-9]+) bytes.*/\1/p;t;s/^$1: ([0-9]+).*/\1/p" heap.out | head -1; }
calls=$(summary 'calls to allocation functions')
temp=$(summary 'temporary memory allocations')
peak=$(summary 'peak heap memory consumption')
leaked=$(summary 'total memory leaked')
run_line() { sed -nE "s/^rtrace: +$1: (.*)/\1/p" run.err | head -1; }
errsum=$(run_line 'ERROR SUMMARY' | sed 's/ (suppressed.*//')
records=$(sed -nE 's/.* in loss record [0-9]+ of ([0-9]+)$/\1/p' run.err | head -1)

# dom URL FILE [chromium options]: the DOM after the page ran, console to FILE.err
dom() {
  local url=$1 out=$2
  shift 2
  timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 "$@" \
    --dump-dom "$url" > "$out" 2> "$out.err" || bad "chromium on $url"
}
# no_console FILE: no console message nor uncaught error, the collector empty, the script done
no_console() {
  grep -E 'CONSOLE|Uncaught' "$1.err" && bad "$1: console messages" || ok
  grep -q 'id="js-errors"></div>' "$1" && ok || bad "$1: errors collected: $(grep -o 'id="js-errors">[^<]*' "$1")"
  grep -q 'data-ready="1"' "$1" && ok || bad "$1: the script did not finish"
}
td() { grep -oE "id=\"$1\">[^<]*" "$2" | sed 's/.*">//'; }
# row FUNC FILE: the call site row of FUNC (<tr data-site> ... </tr>), on one line
row() {
  perl -0ne 'while (/(<tr data-site="\d+"[^>]*><td><details><summary>\Q'"$1"'\E .*?<\/tr>)/sg) { $r = $1; $r =~ s/\n/ /g; print "$r\n" }' "$2"
}

if ! command -v chromium > /dev/null; then
  finish || exit 1
  echo "chromium is not installed (scripts/setup.sh installs it): the page not loaded"
  exit 77
fi

dom "file://$TMP/r.html" d.html
no_console d.html
for f in report_phase_one report_phase_two report_lose_tree report_keep report_wild_free report_open_files main; do
  grep -q "$f" d.html && ok || bad "function $f not in the DOM"
done
[ "$(td calls-0 d.html)" = "$calls" ] && ok || bad "calls '$(td calls-0 d.html)', rtrace heap '$calls'"
[ "$(td temporary-0 d.html)" = "$temp" ] && ok || bad "temporary '$(td temporary-0 d.html)', rtrace heap '$temp'"
td peak-0 d.html | grep -q "^$peak bytes" && ok || bad "peak '$(td peak-0 d.html)', rtrace heap '$peak'"
td leaked-0 d.html | grep -q "^$leaked bytes" && ok || bad "leaked '$(td leaked-0 d.html)', rtrace heap '$leaked'"
[ "$(td error-summary-0 d.html)" = "$errsum" ] && ok || bad "ERROR SUMMARY '$(td error-summary-0 d.html)', rtrace run '$errsum'"
for kind in 'definitely lost' 'indirectly lost' 'possibly lost' 'still reachable'; do
  want=$(run_line "$kind")
  grep -q "<td>$kind</td><td>$want</td>" d.html && ok || bad "$kind: rtrace run '$want' not in the summary"
done
[ "$(grep -c '<tr data-leak' d.html)" = "$records" ] && ok || bad "$(grep -c '<tr data-leak' d.html) leak rows, $records loss records"
grep -q '<td>InvalidFree</td>' d.html && ok || bad "no InvalidFree row"
[ "$(grep -o '<td>/etc/hostname</td>' d.html | wc -l)" = 2 ] && ok || bad "descriptors with their paths"
grep -q '<td>fp</td>' d.html && grep -q '<td>mmap</td>' d.html && ok || bad "stream and mapping rows"
for tab in fd fp mmap; do # a tab per resource type with calls; none for dir, which had none
  grep -q "<a href=\"#res-$tab\">" d.html && ok || bad "no tab for $tab"
done
grep -q '<a href="#res-dir">' d.html && bad "a tab for dir, which had no call" || ok
grep -A3 'class="src"' d.html | grep -q 'n-&gt;child = malloc(32);' && ok || bad "source lines around report_lose_tree's frame"

# the flame graph and the chart, drawn; a range of the first 20 ms
# (phase one allocates at once, phase two 50 ms later) keeps phase one's
# allocations (40) and hides phase two's site
dom "file://$TMP/r.html#flame" f.html
no_console f.html
grep -qE '<text[^>]*>report_phase_two</text>' f.html && ok || bad "flame graph: no report_phase_two frame"
dom "file://$TMP/r.html#time" t.html
no_console t.html
grep -q '<path d="M' t.html && ok || bad "memory over time: no path"
width=$(grep -o '"b":{"w":[0-9]*' r.html | grep -o '[0-9]*$')
dom "file://$TMP/r.html#sites&range=0-$((20000 / width))" s.html
no_console s.html
row report_phase_one s.html | grep -q 'data-k="0" data-v="40"' && ok || bad "range: phase one's 40 allocations"
row report_phase_two s.html | grep -q '^<tr data-site="[0-9]*" class="off"' && ok || bad "range: phase two's site not hidden"

# JavaScript off: the same tables, rendered by the server (headless
# chromium's --dump-dom needs scripts on: the page without its script is
# what a browser without JavaScript runs)
perl -0pe 's#<script>/\*.*?</script>##s' r.html > nojs.html
grep -q '<script>' nojs.html && bad "the script not removed" || ok
dom "file://$TMP/nojs.html" nojs.dom
grep -q 'data-ready="0"' nojs.dom && ok || bad "the script ran with JavaScript off"
[ "$(grep -c '<tr data-leak' nojs.dom)" = "$records" ] && ok || bad "no JS: leak rows"
row report_phase_two nojs.dom | grep -q 'data-k="0" data-v="300">300<' &&
  ok || bad "no JS: the call site of phase two with its 300 allocations"
grep -q '<td>InvalidFree</td>' nojs.dom && ok || bad "no JS: error rows"

# a screenshot: the page as it looks
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,700 \
  --screenshot="$TMP/shot.png" "file://$TMP/r.html#time" > /dev/null 2>&1
[ -s shot.png ] && ok || bad "no screenshot"

# several traces of one run: one page, a selector
"$RTRACE" run --follow-children -o "$TMP/fork" -- "$P/tp_fork" > /dev/null 2>&1
"$RTRACE" report -o fork.html "$TMP"/fork/*.rtrace 2> /dev/null && ok || bad "report of several traces"
dom "file://$TMP/fork.html" fork.dom
no_console fork.dom
n=$(ls "$TMP"/fork/*.rtrace | wc -l)
[ "$n" -ge 2 ] && [ "$(grep -o '<option value="[0-9]*"' fork.dom | wc -l)" = "$n" ] && ok || bad "selector of $n traces"

# diff: the same site allocating 2000 more
"$RTRACE" run -o "$TMP/a" -- "$P/tp_churn" 1000 > /dev/null 2>&1
"$RTRACE" run -o "$TMP/b" -- "$P/tp_churn" 3000 > /dev/null 2>&1
"$RTRACE" report --diff -o diff.html "$TMP"/a/*.rtrace "$TMP"/b/*.rtrace 2> /dev/null && ok || bad "report --diff"
dom "file://$TMP/diff.html#diff" diff.dom
no_console diff.dom
perl -0ne 'print "$1\n" while /(<tr><td><details><summary>main<\/summary>.*?<\/tr>)/sg' diff.dom | tr '\n' ' ' |
  grep -q 'data-v="1000">1000</td><td class="n" data-v="3000">3000</td><td class="n grow" data-v="2000">+2000<' &&
  ok || bad "diff: main's allocations 1000 -> 3000, +2000"

# Valgrind XML: the findings, charts saying there is no data over time
xml="$SRCDIR/tests/data/vgxml/memcheck.xml"
"$RTRACE" report -o vg.html "$xml" 2> /dev/null && ok || bad "report of Valgrind XML"
dom "file://$TMP/vg.html#time" vg.dom
no_console vg.dom
[ "$(grep -c '<tr data-leak' vg.dom)" = "$(grep -c '<kind>Leak_' "$xml")" ] && ok || bad "Valgrind XML: leak rows"
errs=$(( $(grep -c '<kind>' "$xml") - $(grep -c '<kind>Leak_' "$xml") ))
[ "$(grep -oE '<tr><td>[A-Za-z]+</td><td><details>' vg.dom | wc -l)" = "$errs" ] && ok || bad "Valgrind XML: $errs error rows"
grep -q 'no data over time in this input' vg.dom && ok || bad "Valgrind XML: the chart says it has no data"

# bad command lines
for args in "--diff $tr" "--buckets=1 $tr" "--context=x $tr" ""; do
  "$RTRACE" report -o x.html $args > /dev/null 2>&1
  [ $? -eq 2 ] && ok || bad "'$args': not a usage error"
done
"$RTRACE" report -o x.html "$TMP/none.rtrace" > /dev/null 2>&1
[ $? -eq 1 ] && ok || bad "a missing input: not exit 1"
finish
