# Valgrind XML written by rtrace (rtrace run --xml-file, rtrace convert
# --to xml), compared with memcheck's own XML for the same programs: the
# same error kinds and the same loss records (kind, leaked bytes and
# blocks, the program's own top frame) for what the program allocated
# itself; validity against docs/valgrind-xml-4.rng (memcheck's XML too);
# a real consumer, Debian's Test::Valgrind XML parser, must read ours and
# report what it reports for memcheck's; memcheck's XML read and written
# back is the same bytes; a trace without leak verdicts says no more than
# it knows; odd bytes in the command line still give well-formed XML.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}" "${SRCDIR:?}"
P=$PROGRAMS
RNG=$SRCDIR/docs/valgrind-xml-4.rng
cd "$TMP" || exit 1
for tool in valgrind xmllint perl; do
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

valid() { # NAME FILE
  if xmllint --noout --relaxng "$RNG" "$2" 2> valid.err; then ok; else bad "$1: not valid"; head -5 valid.err >&2; fi
}

compare() { # NAME PROGRAM ARGS...
  local name=$1 prog=$2
  shift 2
  valgrind --leak-check=full --show-leak-kinds=all --xml=yes --xml-file=vg.xml "$prog" "$@" > /dev/null 2>&1
  "$RTRACE" run -o "$TMP" --show-leak-kinds=all --xml-file=rt.xml -- "$prog" "$@" > /dev/null 2> rt.err
  [ -s rt.xml ] && ok || { bad "$name: rtrace run wrote no XML"; cat rt.err >&2; return; }
  valid "$name: memcheck's XML" vg.xml
  valid "$name: rtrace's XML" rt.xml
  reports vg.xml "$prog" > vg.rep
  reports rt.xml "$prog" > rt.rep
  if [ -s vg.rep ] && cmp -s vg.rep rt.rep; then ok; else
    bad "$name: Test::Valgrind's reports differ from memcheck's"; diff vg.rep rt.rep >&2; fi
}

for what in direct list cycle interior globals thread realloc all; do
  compare "leaks $what" "$P/tp_leakcheck" $what
done
for what in mismatch double interior wild heuristics; do
  compare "heap errors $what" "$P/tp_heaperr" $what
done

# the trace of the last run, converted: the same document as run wrote
T=$(ls -t ./tp_heaperr-*.rtrace | head -n 1)
"$RTRACE" convert --to xml --show-leak-kinds=all -o conv.xml "$T" 2> conv.err && ok ||
  { bad "convert --to xml"; cat conv.err >&2; }
check_same "convert --to xml = run --xml-file" rt.xml conv.xml

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

# bytes XML cannot carry, in an argument, still give well-formed XML
"$RTRACE" run -o "$TMP" --xml-file=odd.xml -- "$P/tp_heaperr" wild $'a<&>\x01\xff\xfe"b' > /dev/null 2>&1
valid "odd bytes in the arguments" odd.xml
grep -qF '<arg>a&lt;&amp;&gt;\x01\xff\xfe"b</arg>' odd.xml && ok || bad "escaped argument: $(grep '<arg>' odd.xml)"
finish
