# SARIF 2.1.0 for code scanning: `rtrace run --sarif-file` and `rtrace
# convert --to sarif` from traces and from Valgrind XML of memcheck,
# helgrind and drd. Each log holds one result per error and loss record
# (as many as the XML of the same findings has <error>s, with the same
# kinds as ruleIds), each located where the text report's stack first
# names the user's source (file:line equal); the fingerprints are the
# same across runs (ASLR moves every address) and across a copy of the
# program with its lines moved and its directory changed; Microsoft's
# validator (sarif-multitool, GitHub's ingestion rules too) finds no
# error and no warning but those the input makes unavoidable.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
D=$SRCDIR/tests/data
cd "$TMP" || exit 1

# The validator's own program (the npm wrapper passes its arguments
# through a shell, which would split "Gh;Sarif"). Missing is a failure:
# scripts/setup.sh installs it.
mt_bin() {
	local w dir
	w=$(command -v sarif-multitool) || return 1
	dir=$(dirname "$(readlink -f "$w")")
	node -p "require('$dir')" 2> /dev/null
}
MT=$(mt_bin)
if [ -z "$MT" ] || [ ! -x "$MT" ]; then
	echo "FAIL: sarif-multitool is not installed (scripts/setup.sh installs it)" >&2
	exit 1
fi
export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1

# validate NAME FILE [SARIF2017]: queues FILE for the validator, run once
# on all (it starts slowly); validate_all: no error, no warning but
# SARIF2005 (the driver's informationUri: rtrace has no web page to name)
# and, for the files queued with it, SARIF2017 (a location without a
# region: a frame without source)
strict=() lenient=()
validate() {
	if [ -n "${3:-}" ]; then lenient+=("$2"); else strict+=("$2"); fi
}
validate_all() {
	local rc allowed=$1
	shift
	"$MT" validate --rule-kind "Gh;Sarif" "$@" > "$TMP/mt.out" 2>&1
	rc=$?
	grep -E ': (error|warning) ' "$TMP/mt.out" | grep -v ' warning SARIF2005: ' |
		grep -vE " warning ($allowed): " > "$TMP/mt.bad"
	if [ $rc -eq 0 ] && ! [ -s "$TMP/mt.bad" ] && grep -q "Done. $# files scanned" "$TMP/mt.out" &&
		grep -q 'Analysis completed successfully' "$TMP/mt.out"; then ok
	else bad "the validator says (rc $rc)"; head -5 "$TMP/mt.bad" "$TMP/mt.out" >&2; fi
}

# check_py NAME SCRIPT ARGS...: a python3 check that prints what is wrong
check_py() {
	local name=$1
	shift
	if python3 "$@" > "$TMP/py.out" 2>&1; then ok; else bad "$name"; head -20 "$TMP/py.out" >&2; fi
}

# The results against the XML of the same findings (count, ruleIds in
# order) and the text report (message, file:line of the first frame with
# source past the allocator's).
cat > match.py << 'EOF'
import json, re, sys, xml.etree.ElementTree as ET
sarif, xmlf, text = sys.argv[1:4]
res = json.load(open(sarif))["runs"][0]["results"]
errs = []
for doc in ET.parse(xmlf).getroot().iter("valgrindoutput"):
    tool = doc.findtext("protocoltool")
    errs += [tool + "/" + e.findtext("kind") for e in doc.findall("error")]
ids = [r["ruleId"] for r in res]
if ids != errs:
    sys.exit("ruleIds %s, the XML's kinds %s" % (ids, errs))
blocks, cur = [], []
for line in open(text):
    line = line.rstrip("\n")
    if not line.startswith("rtrace: "):
        continue
    line = line[8:]
    if line.strip() == "":
        if cur: blocks.append(cur)
        cur = []
    elif cur or re.search(r"lost in loss record|^Invalid|^Mismatched", line):
        cur.append(line)
want = []
for b in blocks:
    found = [re.search(r"\(([^ ()]+:\d+)\)$", l) for l in b[1:]]
    loc = next((m.group(1) for m in found if m), None)
    want.append((b[0], loc))
got = []
for r in res:
    pl = r["locations"][0]["physicalLocation"]
    got.append((r["message"]["text"], pl["artifactLocation"]["uri"].rsplit("/", 1)[-1] + ":" + str(pl["region"]["startLine"])))
if got != want:
    sys.exit("results %s\ntext report %s" % (got, want))
if len(res) == 0:
    sys.exit("no results")
EOF

# run_case NAME PROGRAM ARGS...: run with --sarif-file, --xml-file and the
# text report; the results match both
run_case() {
	local name=$1
	shift
	"$RTRACE" run --sarif-file="$name-%p.sarif" --source-root="$SRCDIR" --xml-file="$name.xml" \
		--num-callers=50 -- "$@" > /dev/null 2> "$name.txt"
	local s
	s=$(ls "$name"-*.sarif 2> /dev/null | head -1)
	[ -f "$s" ] && ok || { bad "$name: no SARIF file"; return; }
	mv "$s" "$name.sarif"
	check_py "$name: results = the XML's errors, located as the text report says" match.py \
		"$name.sarif" "$name.xml" "$name.txt"
	validate "$name" "$name.sarif"
}

run_case leaks "$P/tp_leaks"
run_case mismatch "$P/tp_heaperr" mismatch
run_case double "$P/tp_heaperr" double

# relative URIs under the source root, with originalUriBaseIds
check_py "URIs relative to --source-root" - leaks.sarif "$SRCDIR" << 'EOF'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
base = run["originalUriBaseIds"]["SRCROOT"]["uri"]
if base != "file://" + sys.argv[2].rstrip("/") + "/":
    sys.exit("SRCROOT " + base)
for r in run["results"]:
    a = r["locations"][0]["physicalLocation"]["artifactLocation"]
    if a != {"uri": "tests/programs/tp_leaks.c", "uriBaseId": "SRCROOT"}:
        sys.exit("artifact %s" % a)
    if r["ruleIndex"] != [x["id"] for x in run["tool"]["driver"]["rules"]].index(r["ruleId"]):
        sys.exit("ruleIndex")
EOF
# the mismatched frees: six results, six identities
check_py "distinct fingerprints" - mismatch.sarif << 'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["runs"][0]["results"]
fp = [r["partialFingerprints"]["rtrace/stack/v1"] for r in res]
if len(set(fp)) != len(fp) or len(fp) != 6:
    sys.exit("fingerprints %s" % fp)
EOF

# the same findings in a second run: other addresses (ASLR), same identities
cat > fps.py << 'EOF'
import json, sys
def fps(f):
    return [(r["ruleId"], r["partialFingerprints"]["rtrace/stack/v1"]) for r in json.load(open(f))["runs"][0]["results"]]
a, b = fps(sys.argv[1]), fps(sys.argv[2])
if a != b or not a:
    sys.exit("%s\n%s" % (a, b))
EOF
"$RTRACE" run -q --sarif-file=leaks2.sarif --source-root="$SRCDIR" --xml-file=leaks2.xml -- "$P/tp_leaks" > /dev/null 2>&1
if [ "$(grep -m1 '<ip>0x[1-9A-F]' leaks.xml)" != "$(grep -m1 '<ip>0x[1-9A-F]' leaks2.xml)" ]; then ok
else bad "the two runs have the same addresses: ASLR is off, the check proves nothing"; fi
check_py "fingerprints stable across runs" fps.py leaks.sarif leaks2.sarif

# a copy of the program elsewhere, its lines moved down by three
mkdir -p a b
cp "$SRCDIR/tests/programs/tp_leaks.c" a/
{ printf '/* moved */\n\n\n'; cat "$SRCDIR/tests/programs/tp_leaks.c"; } > b/tp_leaks.c
for d in a b; do
	(cd $d && cc -g -O0 -o tp_leaks tp_leaks.c) || bad "cannot compile the copy in $d"
	"$RTRACE" run -q --sarif-file=$d.sarif --source-root=$d -- $d/tp_leaks > /dev/null 2>&1
done
check_py "fingerprints stable across moved lines and directories" fps.py a.sarif b.sarif
check_py "lines follow the source" - a.sarif b.sarif << 'EOF'
import json, sys
def lines(f):
    return [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in json.load(open(f))["runs"][0]["results"]]
a, b = lines(sys.argv[1]), lines(sys.argv[2])
if not a or [x + 3 for x in a] != b:
    sys.exit("%s %s" % (a, b))
EOF

# convert: the binary trace gives what the run wrote
tr=$(ls tp_leaks-*.rtrace | head -1)
"$RTRACE" convert --to sarif --source-root "$SRCDIR" "$tr" -o conv.sarif 2> /dev/null && ok || bad "convert --to sarif failed"
check_py "convert of the trace = run --sarif-file" fps.py leaks.sarif conv.sarif
"$RTRACE" convert -o byname.sarif "$tr" 2> /dev/null && grep -q '"version": "2.1.0"' byname.sarif && ok ||
	bad "convert -o X.sarif does not write SARIF"

# convert from Valgrind XML of every tool: a result per <error>, its kind
# as ruleId; frames without source (valgrind's argument checks of malloc)
# make SARIF2017 unavoidable for those inputs
for f in vgxml/memcheck.xml vgxml/helgrind.xml vgxml/drd.xml vgxml_write/helgrind-locks.xml \
	vgxml_write/drd-locks.xml vgxml_write/memcheck-double-free.xml \
	vgxml_write/memcheck-leaks-suppressions.xml vgxml_write/memcheck-varinfo-fishy.xml; do
	n=$(basename "$f" .xml)
	"$RTRACE" convert -q --to sarif "$D/$f" -o "$n.sarif" && ok || bad "convert $f"
	check_py "$f: one result per error, ruleIds the kinds" - "$n.sarif" "$D/$f" << 'EOF'
import json, sys, xml.etree.ElementTree as ET
res = json.load(open(sys.argv[1]))["runs"][0]["results"]
doc = ET.parse(sys.argv[2]).getroot()
tool = doc.findtext("protocoltool") or doc.findtext("tool") or "memcheck"
kinds = [tool + "/" + e.findtext("kind") for e in doc.findall("error")]
if [r["ruleId"] for r in res] != kinds:
    sys.exit("%s\n%s" % ([r["ruleId"] for r in res], kinds))
if any(not r["locations"] for r in res):
    sys.exit("a result without a location")
EOF
	validate "$f" "$n.sarif" SARIF2017
done
# protocols 1 and 6 (the older and the newer quirks), stacks of valgrind's
# frames alone: every result still has a location
for f in vgxml/proto1.xml vgxml/proto6.xml; do
	n=$(basename "$f" .xml)
	"$RTRACE" convert -q --to sarif "$D/$f" -o "$n.sarif" && ok || bad "convert $f"
	[ "$(grep -c '"ruleId"' "$n.sarif")" = "$(grep -c '<error>' "$D/$f")" ] && ok || bad "$f: results"
	grep -q '"locations": \[\]' "$n.sarif" && bad "$f: a result without a location" || ok
	validate "$f" "$n.sarif" SARIF2017
done
check_py "double free located in the user's code, with its other stacks" - memcheck-double-free.sarif << 'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]["results"][0]
pl = r["locations"][0]["physicalLocation"]
if not pl["artifactLocation"]["uri"].endswith("/tp_heaperr.cpp") or pl["region"]["startLine"] != 78:
    sys.exit("location %s" % pl)
if len(r["codeFlows"]) != 3 or len(r["relatedLocations"]) != 2:
    sys.exit("flows %d related %d" % (len(r["codeFlows"]), len(r["relatedLocations"])))
tf = r["codeFlows"][0]["threadFlows"][0]["locations"]
if tf[0]["location"]["message"]["text"] != "main (tp_heaperr.cpp:78)" or tf[-1]["location"]["logicalLocations"][0]["fullyQualifiedName"] != "free":
    sys.exit("flow %s" % tf)
EOF

# the file is written as --xml-file's: 0600, a symlink replaced, not followed
ln -s victim link.sarif
: > victim
"$RTRACE" run -q --sarif-file=link.sarif -- "$P/tp_leaks" > /dev/null 2>&1
[ ! -s victim ] && [ -f link.sarif ] && [ ! -L link.sarif ] && ok || bad "--sarif-file followed a symlink"
[ "$(stat -c %a link.sarif)" = 600 ] && ok || bad "--sarif-file mode $(stat -c %a link.sarif)"
# an unwritable file fails the run
"$RTRACE" run -q --sarif-file=nodir/x.sarif -- "$P/tp_leaks" > /dev/null 2> err.txt
rc=$?
[ $rc -ne 0 ] && grep -q "cannot write the SARIF file" err.txt && ok || bad "unwritable --sarif-file: status $rc"
"$RTRACE" run --source-root=. -- true > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "--source-root without --sarif-file accepted"

validate_all NONE "${strict[@]}"
validate_all SARIF2017 "${lenient[@]}"
finish
