# Valgrind XML written by rtrace (rtrace run --xml-file, rtrace convert
# --to xml), compared with memcheck's own XML for the same programs: the
# same error kinds and the same loss records (kind, leaked bytes and
# blocks, the program's own top frame) for what the program allocated
# itself; validity against docs/valgrind-xml-4.rng (memcheck's XML too);
# a real consumer, Debian's Test::Valgrind XML parser, must read ours and
# report what it reports for memcheck's, valgrind-codequality's rules
# (GitLab) give the same issues, Jenkins' Valgrind plugin's rules hold; memcheck's XML read and written
# back is the same bytes; a trace without leak verdicts says no more than
# it knows; odd bytes in the command line still give well-formed XML.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
RNG=$SRCDIR/docs/valgrind-xml-4.rng
cd "$TMP" || exit 1
for tool in valgrind xmllint perl python3; do
  command -v $tool > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
done
perl -MTest::Valgrind::Parser::XML::Twig -e 1 2> /dev/null ||
  { echo "Test::Valgrind is not installed (libtest-valgrind-perl; scripts/setup.sh installs it)" >&2; exit 1; }

# Test::Valgrind's XML parser (what Test::Valgrind runs on memcheck's
# output) driven on a file: one line per report, "kind leakedbytes
# leakedblocks fn:file:line" of the frame that called the allocator, for
# the reports where that frame is in program $2 (glibc's own blocks
# differ between the two). A frame without a function is named by
# addr2line from its address (tp_heaperr is no PIE: the addresses are
# the program's), which checks the address itself.
cat > reports.pl <<'EOF'
use strict;
use warnings;
use Test::Valgrind::Parser::XML::Twig;
use Test::Valgrind::Tool::memcheck;

package Session;
sub new { bless { reports => [] }, shift }
sub report { push @{ $_[0]{reports} }, $_[1] }
sub report_class { 'Test::Valgrind::Tool::memcheck::Report' }

package main;
my ($file, $prog) = @ARGV;
my $sess = Session->new;
my $parser = Test::Valgrind::Parser::XML::Twig->new;
$parser->start($sess);
open my $fh, '<', $file or die "$file: $!";
$parser->parse($sess, $fh);
$parser->finish($sess);
for my $r (@{ $sess->{reports} }) {
  my $d = $r->data;
  my $top = $d->{stack}[1];
  next unless $top && defined $top->[1] && $top->[1] eq $prog;
  my ($fn, $file, $line) = @{$top}[2, 4, 5];
  if (!defined $fn) {
    my @l = `addr2line -C -f -e '$prog' $top->[0]`;
    chomp @l;
    $fn = $l[0];
    ($file, $line) = $l[1] =~ m{([^/]*):(\d+)};
  }
  my $at = join ':', map { $_ // '?' } $fn, $file, $line;
  print join(' ', $r->kind, $d->{leakedbytes} // '-', $d->{leakedblocks} // '-', $at), "\n";
}
EOF
reports() { perl reports.pl "$1" "$2" | sort; }

# Qt Creator's reader (src/plugins/valgrind/xmlprotocol/parser.cpp), its
# rules: protocol 4 only, <protocoltool> memcheck before any error, no
# kind it does not know (one aborts the whole parse), <unique> and <ip>
# in hex, <status><state> RUNNING or FINISHED, <errorcounts> and
# <suppcounts> there. Prints what breaks them, nothing when none does.
cat > qtrules.pl <<'EOF'
use strict;
use warnings;
use XML::Twig;
my %kinds = map { $_ => 1 } qw(InvalidFree MismatchedFree InvalidRead InvalidWrite InvalidJump
  Overlap InvalidMemPool UninitCondition UninitValue SyscallParam ClientCheck Leak_DefinitelyLost
  Leak_PossiblyLost Leak_StillReachable Leak_IndirectlyLost);
my (@bad, $tool, %seen);
my $t = XML::Twig->new(twig_handlers => {
  protocolversion => sub { push @bad, "protocolversion " . $_->text unless $_->text eq '4' },
  protocoltool => sub { $tool = $_->text; push @bad, "protocoltool $tool" unless $tool =~ /^(memcheck|helgrind)$/ },
  error => sub { push @bad, "error before protocoltool" unless $tool },
  kind => sub { push @bad, "kind " . $_->text unless $kinds{ $_->text } },
  unique => sub { push @bad, "unique " . $_->text unless $_->text =~ /^0x[0-9a-f]+$/i },
  ip => sub { push @bad, "ip " . $_->text unless $_->text =~ /^0x[0-9a-f]+$/i },
  state => sub { push @bad, "state " . $_->text unless $_->text =~ /^(RUNNING|FINISHED)$/ },
  errorcounts => sub { $seen{errorcounts} = 1 },
  suppcounts => sub { $seen{suppcounts} = 1 },
});
$t->parsefile($ARGV[0]);
push @bad, "no $_" for grep { !$seen{$_} } qw(errorcounts suppcounts);
print "$_\n" for @bad;
EOF
qt_reads() { # NAME FILE: Qt Creator's rules hold
  perl qtrules.pl "$2" > qt.err 2>&1
  [ ! -s qt.err ] && ok || bad "$1: Qt Creator's rules: $(head -3 qt.err | tr '\n' ' ')"
}

valid() { # NAME FILE
  if xmllint --noout --relaxng "$RNG" "$2" 2> valid.err; then ok; else bad "$1: not valid"; head -5 valid.err >&2; fi
}

# valgrind-codequality (PyPI; GitLab's Code Quality JSON from Valgrind XML),
# what its _convert reads, replicated (version 1.3.1, its default options
# -b and -r set to the test programs' sources): per <error> its <unique>,
# <kind> and <xwhat><text> or <what>; its first <stack>, skipped when
# absent or empty, else a list of frames (one lone <frame> makes xmltodict
# give it a dict, and the tool fails); each frame's <ip> until the first
# frame with <dir> and <file>, whose <line> must be a number, and whose dir
# holds the base dir: there dir/file must be readable, and its line's code
# makes the fingerprint, md5("valgrind-KIND-PATH-CODE"), first one kept.
# Prints "bad ..." where the tool would fail, then "kind path line md5".
cat > codequality.py <<'EOF'
import hashlib, os, sys
import xml.etree.ElementTree as ET
xml, base = sys.argv[1:]
root = ET.parse(xml).getroot()
out, seen = [], set()
for e in root.findall('error') if root.tag == 'valgrindoutput' else []:
    u, kind = e.findtext('unique'), e.findtext('kind')
    xw = e.find('xwhat')
    if u is None or kind is None or (xw.findtext('text') if xw is not None else e.findtext('what')) is None:
        print('bad', u, 'no unique, kind, xwhat/text or what'); continue
    stacks = e.findall('stack')
    frames = stacks[0].findall('frame') if stacks else []
    if len(frames) == 1:
        print('bad', u, 'one frame'); continue
    path, line = '', -1
    for f in frames:
        if f.find('ip') is None:
            print('bad', u, 'a frame without ip')
        if f.find('dir') is not None and f.find('file') is not None:
            if not (f.findtext('line') or '').isdigit():
                print('bad', u, 'dir and file without a line'); break
            line = int(f.findtext('line'))
            if base in f.findtext('dir'):
                path = os.path.join(f.findtext('dir'), f.findtext('file')); break
    if not path:
        continue
    with open(path, encoding='utf-8', errors='backslashreplace') as s:
        lines = s.readlines()
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ''
    fp = 'valgrind-' + kind + '-' + path + '-' + code
    if fp not in seen:
        seen.add(fp)
        out.append(' '.join([kind, os.path.relpath(path, base), str(line), hashlib.md5(fp.encode()).hexdigest()]))
print('\n'.join(sorted(out)))
EOF
codequality() { # NAME: rt.xml gives valgrind-codequality memcheck's issues
  python3 codequality.py vg.xml "$SRCDIR/tests/programs" > vg.cq
  python3 codequality.py rt.xml "$SRCDIR/tests/programs" > rt.cq
  ! grep -q '^bad' rt.cq && ok || bad "$1: valgrind-codequality fails on rtrace's XML: $(grep '^bad' rt.cq | head -3)"
  grep -q . vg.cq && cmp -s vg.cq rt.cq && ok || { bad "$1: valgrind-codequality's issues differ from memcheck's"; diff vg.cq rt.cq >&2; }
}

# Jenkins' Valgrind plugin (ValgrindSaxParser), its rules: a DOCTYPE is
# refused and the parse error ignored (an empty report); the process counts
# only with /valgrindoutput/args/argv/exe; an error whose <kind> is not in
# its list (memcheck's and helgrind's of protocol 4) is dropped; leaked
# bytes and blocks are Java ints. Prints what breaks them.
cat > jenkins.py <<'EOF'
import sys
import xml.etree.ElementTree as ET
kinds = set('''InvalidRead InvalidWrite Leak_DefinitelyLost Leak_PossiblyLost Leak_StillReachable
  Leak_IndirectlyLost UninitCondition UninitValue Overlap SyscallParam InvalidFree MismatchedFree
  Race UnlockUnlocked UnlockForeign UnlockBogus PthAPIerror LockOrder Misc'''.split())
text = open(sys.argv[1], encoding='utf-8').read()
if '<!DOCTYPE' in text:
    print('a DOCTYPE')
root = ET.fromstring(text)
if root.tag != 'valgrindoutput' or not root.findtext('args/argv/exe'):
    print('no /valgrindoutput/args/argv/exe')
for e in root.findall('error'):
    if e.findtext('kind') not in kinds:
        print('kind', e.findtext('kind'))
    for n in ('leakedbytes', 'leakedblocks'):
        v = e.findtext('xwhat/' + n)
        if v is not None and not (v.isdigit() and int(v) < 2**31):
            print(n, v)
EOF
jenkins_reads() { # NAME FILE: the Jenkins plugin's rules hold
  python3 jenkins.py "$2" > jk.err 2>&1
  [ ! -s jk.err ] && ok || bad "$1: the Jenkins plugin's rules: $(head -3 jk.err | tr '\n' ' ')"
}

compare() { # NAME PROGRAM ARGS...
  local name=$1 prog=$2
  shift 2
  valgrind --leak-check=full --show-leak-kinds=all --xml=yes --xml-file=vg.xml "$prog" "$@" > /dev/null 2>&1
  "$RTRACE" run -o "$TMP" --show-leak-kinds=all --xml-file=rt.xml -- "$prog" "$@" > /dev/null 2> rt.err
  [ -s rt.xml ] && ok || { bad "$name: rtrace run wrote no XML"; cat rt.err >&2; return; }
  valid "$name: memcheck's XML" vg.xml
  valid "$name: rtrace's XML" rt.xml
  qt_reads "$name" rt.xml
  jenkins_reads "$name" rt.xml
  reports vg.xml "$prog" > vg.rep
  reports rt.xml "$prog" > rt.rep
  if [ -s vg.rep ] && cmp -s vg.rep rt.rep; then ok; else
    bad "$name: Test::Valgrind's reports differ from memcheck's"; diff vg.rep rt.rep >&2; fi
  codequality "$name"
}

for what in direct list cycle interior globals thread realloc all; do
  compare "leaks $what" "$P/tp_leakcheck" $what
done
for what in mismatch double interior wild heuristics; do
  compare "heap errors $what" "$P/tp_heaperr" $what
done

# the trace of the last run, converted: the same document as run wrote
# (found by the pid run's document names: a file written through a
# shared mapping gets its mtime late, so the newest is not the last)
T=./tp_heaperr-$(sed -n 's|.*<pid>\([0-9]*\)</pid>.*|\1|p' rt.xml | head -n 1).rtrace
"$RTRACE" convert --to xml --show-leak-kinds=all -o conv.xml "$T" 2> conv.err && ok ||
  { bad "convert --to xml"; cat conv.err >&2; }
# (the final <status>'s <time> aside: run's can be one clock tick (4 ms)
# short of convert's when the program's last call falls in a later tick)
sed '/<time>/d' rt.xml > rt.notime.xml
sed '/<time>/d' conv.xml > conv.notime.xml
check_same "convert --to xml = run --xml-file" rt.notime.xml conv.notime.xml

# --num-callers=3: memcheck cuts its XML stacks at 3 frames, the
# allocator's included; so does run --xml-file (it wrote them whole).
# One line per error with a frame in the program, "kind frames-per-stack".
cat > frames.pl <<'EOF'
use strict;
use warnings;
use XML::Twig;
my ($file, $prog) = @ARGV;
my @out;
XML::Twig->new(twig_handlers => { error => sub {
  my @st = $_->children('stack');
  return unless grep { $_->first_child_text('obj') eq $prog } map { $_->children('frame') } @st;
  push @out, join(' ', $_->first_child_text('kind'), map { scalar $_->children('frame') } @st);
}})->parsefile($file);
print "$_\n" for sort @out;
EOF
for prog in "tp_leakcheck all" "tp_heaperr mismatch"; do
  valgrind --leak-check=full --show-leak-kinds=all --num-callers=3 --xml=yes --xml-file=vg.xml $P/$prog > /dev/null 2>&1
  "$RTRACE" run -o "$TMP" --show-leak-kinds=all --num-callers=3 --xml-file=rt.xml -- $P/$prog > /dev/null 2>&1
  perl frames.pl vg.xml "$P/${prog% *}" > vg.fr
  perl frames.pl rt.xml "$P/${prog% *}" > rt.fr
  [ -s vg.fr ] && cmp -s vg.fr rt.fr && ok || { bad "--num-callers=3 $prog: frames per stack differ from memcheck's"; diff vg.fr rt.fr >&2; }
done
# and --show-below-main=yes keeps the frames below main there too
"$RTRACE" run -o "$TMP" --show-below-main=yes --xml-file=rt.xml -- "$P/tp_leakcheck" direct > /dev/null 2>&1
grep -q '<fn>__libc_start_call_main</fn>' rt.xml && ok || bad "--show-below-main=yes: no frame below main in the XML"

# memcheck's XML (with suppressions, two tools' kinds) read and written back
valgrind --leak-check=full --show-leak-kinds=all --gen-suppressions=all --xml=yes --xml-file=vg.xml \
  "$P/tp_heaperr" mismatch > /dev/null 2>&1
"$RTRACE" convert --to xml -o back.xml vg.xml 2> conv.err && ok || { bad "convert XML to XML"; cat conv.err >&2; }
check_same "memcheck's XML written back byte for byte" vg.xml back.xml

# --gen-suppressions=all: memcheck's suppression in each error
"$RTRACE" run -o "$TMP" --gen-suppressions=all --xml-file=rt.xml -- "$P/tp_leakcheck" direct > /dev/null 2>&1
valid "suppressions" rt.xml
grep -q '<skaux>match-leak-kinds: definite</skaux>' rt.xml && grep -q '   fun:malloc$' rt.xml && ok ||
  bad "suppressions: $(grep -A12 '<suppression>' rt.xml | head -20)"

# a text trace has no leak verdicts: its blocks are only "still allocated"
cat > plain.txt <<'EOF'
version=2.0, arch=x86_64, timestamp=2011.6.16 15:49:48, process=/usr/bin/app, pid=42, 
<1> : memory (memory allocation in bytes)
1. [15:49:48.501] malloc(16) = 0x1000
	0x400123 leak() at /src/app.c:12
	0x400456 main() at /src/app.c:30

2. [15:49:48.502] malloc(32) = 0x2000
	0x400123 leak() at /src/app.c:12
	0x400456 main() at /src/app.c:30

3. [15:49:48.503] free(0x2000)
EOF
"$RTRACE" convert --to xml --no-resolve -o plain.xml plain.txt 2> conv.err && ok || { bad "text to XML"; cat conv.err >&2; }
valid "text trace" plain.xml
grep -q '<text>16 bytes in 1 blocks are still allocated at the end of the trace (reachability not checked) in loss record 1 of 1</text>' plain.xml &&
  grep -q '<kind>Leak_PossiblyLost</kind>' plain.xml && ! grep -q 'definitely' plain.xml && ok ||
  bad "no-verdict loss record: $(grep -A3 '<xwhat>' plain.xml)"

# the fd module (run with no descriptor inherited but 0-2): without a
# descriptor error the document stays protocol 4, which every reader
# takes, with memcheck's findings; with one it is protocol 5 (FdBadClose
# and its path, in run's XML as in convert's of the same trace), and
# --xml-protocol=4 leaves it out (saying so) for the readers of 4
bare() { bash -c 'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; exec "$@"' bare "$@"; }
valgrind --leak-check=full --track-fds=yes --xml=yes --xml-file=vg.xml "$P/tp_xmlfd" clean > /dev/null 2>&1
reports vg.xml "$P/tp_xmlfd" > vg.rep
bare "$RTRACE" run -m memory,fd -o "$TMP" --xml-file=fd4.xml -- "$P/tp_xmlfd" clean > /dev/null 2>&1
grep -q '<protocolversion>4</protocolversion>' fd4.xml && ok || bad "-m fd, no descriptor error: $(grep protocolversion fd4.xml)"
valid "-m fd, no descriptor error" fd4.xml
qt_reads "-m fd, no descriptor error" fd4.xml
reports fd4.xml "$P/tp_xmlfd" > rt.rep
[ -s vg.rep ] && cmp -s vg.rep rt.rep && ok || { bad "-m fd: Test::Valgrind's reports differ from memcheck's"; diff vg.rep rt.rep >&2; }
rm -f ./tp_xmlfd-*.rtrace
bare "$RTRACE" run -m memory,fd -o "$TMP" --xml-file=fd5.xml -- "$P/tp_xmlfd" double > /dev/null 2>&1
grep -q '<protocolversion>5</protocolversion>' fd5.xml && grep -q '<kind>FdBadClose</kind>' fd5.xml &&
  grep -q '<path>/etc/passwd</path>' fd5.xml && ok || bad "double close: $(grep -A4 '<kind>Fd' fd5.xml)"
T=$(ls ./tp_xmlfd-*.rtrace)
"$RTRACE" convert --to xml -o fdconv.xml "$T" 2> conv.err && ok || { bad "convert -m fd"; cat conv.err >&2; }
check_same "double close: convert --to xml = run --xml-file" fd5.xml fdconv.xml
bare "$RTRACE" run -m memory,fd -o "$TMP" --xml-protocol=4 --xml-file=fd54.xml -- "$P/tp_xmlfd" double > /dev/null 2> fd54.err
"$RTRACE" convert --to xml --xml-protocol=4 -o fdconv4.xml "$T" 2> conv4.err
for f in fd54 fdconv4; do
  valid "--xml-protocol=4 ($f)" $f.xml
  qt_reads "--xml-protocol=4 ($f)" $f.xml
  ! grep -q '<kind>Fd' $f.xml && ok || bad "--xml-protocol=4 ($f): a descriptor error written"
  reports $f.xml "$P/tp_xmlfd" > rt.rep
  cmp -s vg.rep rt.rep && ok || { bad "--xml-protocol=4 ($f): Test::Valgrind's reports"; diff vg.rep rt.rep >&2; }
done
for f in fd54.err conv4.err; do
  grep -q 'warning: 1 descriptor error left out of the XML: protocol 4' $f && ok || bad "--xml-protocol=4: said nothing: $(cat $f)"
done
bare "$RTRACE" run -m memory,fd -o "$TMP" --xml-protocol=5 --xml-file=fd45.xml -- "$P/tp_xmlfd" clean > /dev/null 2>&1
grep -q '<protocolversion>5</protocolversion>' fd45.xml && ok || bad "--xml-protocol=5: $(grep protocolversion fd45.xml)"
"$RTRACE" run --xml-protocol=4 -- true > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "--xml-protocol without --xml-file taken"
"$RTRACE" convert --xml-protocol=3 fd5.xml > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "--xml-protocol=3 taken"

# --leak-check=no or summary with --xml-file: memcheck's XML holds the
# full leak check's loss records all the same (valgrind 3.19), not every
# live block; its report on stderr keeps to the option
for m in no summary; do
  for prog in "tp_leakcheck globals" "tp_xmlfd clean"; do
    valgrind --leak-check=$m --xml=yes --xml-file=vg.xml $P/$prog > /dev/null 2>&1
    "$RTRACE" run --leak-check=$m -o "$TMP" --xml-file=rt.xml -- $P/$prog > /dev/null 2> rt.err
    reports vg.xml "$P/${prog% *}" > vg.rep
    reports rt.xml "$P/${prog% *}" > rt.rep
    cmp -s vg.rep rt.rep && ok || { bad "--leak-check=$m $prog: Test::Valgrind's reports differ from memcheck's"; diff vg.rep rt.rep >&2; }
    ! grep -q 'in loss record' rt.err && ok || bad "--leak-check=$m $prog: loss records on stderr"
  done
done

# bytes XML cannot carry, in an argument, still give well-formed XML
"$RTRACE" run -o "$TMP" --xml-file=odd.xml -- "$P/tp_heaperr" wild $'a<&>\x01\xff\xfe"b' > /dev/null 2>&1
valid "odd bytes in the arguments" odd.xml
grep -qF '<arg>a&lt;&amp;&gt;\x01\xff\xfe"b</arg>' odd.xml && ok || bad "escaped argument: $(grep '<arg>' odd.xml)"
finish
