# rtrace run -m: the fd, file, mmap and shm modules record what a program
# leaks with the arguments that name it, bad closes, exec's close-on-exec
# releases; the program sees the same descriptors, output, errno and exit
# status as without the tracer; the descriptors left open are valgrind
# --track-fds=yes's.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS
cd "$TMP" || exit 1

"$RTRACE" run --list-modules > list
for m in memory fd file mmap shm; do grep -q "^$m " list && ok || bad "--list-modules lacks $m: $(cat list)"; done
grep -q "types: fd (file descriptor)" list && ok || bad "fd type not listed"
"$RTRACE" run -m fd,nosuch -- true 2> err; [ $? -eq 2 ] && grep -q "unknown module 'nosuch'" err && ok || bad "unknown module: $(cat err)"

# the program does not notice the tracer (its fd numbers are in its output)
"$P/tp_fds" > plain.out 2>&1; prc=$?
"$RTRACE" run -q -m fd,file,mmap,shm -o "$TMP" -- "$P/tp_fds" > traced.out 2>&1; trc=$?
[ $prc -eq 3 ] && [ $trc -eq 3 ] && ok || bad "exit status $trc traced, $prc plain"
check_same "output (fd numbers, errno) differs under rtrace" plain.out traced.out
"$RTRACE" run -q -o "$TMP" -- "$P/tp_fds" > traced.out 2>&1
check_same "output differs under rtrace (memory)" plain.out traced.out

# memory with the others: what libc allocates and frees inside fopen and
# fclose is recorded after the stream's own call (each thread's calls in
# index order), so the trace reads without a warning
mkdir all
"$RTRACE" run -q -m memory,fd,file,mmap -o all -- "$P/tp_fds" > /dev/null 2>&1
"$RTRACE" postproc -i all/tp_fds-*.rtrace > all.txt 2> all.err
[ ! -s all.err ] && ok || bad "trace of memory and file modules: $(head -3 all.err)"
grep -qE '^[0-9]+\. .*fclose<fp>' all.txt && grep -qE '^[0-9]+\. .*free<memory>\(' all.txt && ok ||
  bad "fclose and free recorded together"

# the leaked sets, with their arguments
t=$(ls tp_fds-*.rtrace | head -1)
"$RTRACE" postproc -l -i "$t" > leaks.txt
leaked() { grep -E '^[0-9]+\. ' leaks.txt | sed -E 's/^[0-9]+\. \[[^]]*\] //; s/= 0x[0-9a-f]{6,}$/= PTR/'; }
leaked | sort > got
num() { sed -n "s/^fds .*$1=\([0-9]*\).*/\1/p" plain.out; }
hex() { printf %x "$1"; }
kept=$(num kept) pw=$(sed -n 's/^fds .*pipe=[0-9]*,\([0-9]*\).*/\1/p' plain.out) sock=$(num socket)
sfd=$(sed -n 's/^streams fileno=\([0-9]*\),.*/\1/p' plain.out) dfd=$(sed -n 's/^streams .*dirfd=\([0-9]*\)/\1/p' plain.out)
# the descriptors under the leaked streams are descriptors too (valgrind's)
cat > want.unsorted <<EOT
open<fd>(1) = 0x$(hex "$kept")
pipe<fd>(1) = 0x$(hex "$pw")
socket<fd>(1) = 0x$(hex "$sock")
fopen<fd>(1) = 0x$(hex "$sfd")
opendir<fd>(1) = 0x$(hex "$dfd")
fopen<fp>(1) = PTR
opendir<dir>(1) = PTR
munmap<mmap>(4096) = PTR
munmap<mmap>(8192) = PTR
EOT
sort want.unsorted > want
check_same "leaked set" want got
grep -A2 '^1\. .*open<fd>' leaks.txt | grep -q '\$path = /etc/hostname' && ok || bad "open's path argument: $(head -20 leaks.txt)"
grep -A3 'socket<fd>' leaks.txt | grep -q '\$domain = AF_INET' && ok || bad "socket's domain argument"
grep -A2 'opendir<dir>' leaks.txt | grep -q '\$path = /etc' && ok || bad "opendir's path argument"
grep -q '^# Resource - fd (file descriptor):$' leaks.txt && grep -A1 '^# Resource - fd' leaks.txt | grep -q '^# 5 block(s) leaked' && ok || bad "fd leak totals"
grep -A1 '^# Resource - segment' leaks.txt | grep -q '^# 0 block(s)' && ok || bad "shm segment reported leaked"
"$RTRACE" postproc -i "$t" > all.txt
grep -q 'shmctl<control>(0x[0-9a-f]*)' all.txt && grep -q 'shmdt<segment>' all.txt && ok || bad "shm removal not as sp-rtrace recorded it"
grep -A1 'close<fd>(0x63)' all.txt | grep -q 'error = EBADF' && ok || bad "bad close not recorded"
grep -q '^<1> : fd (file descriptor)$' all.txt && ok || bad "fd registry line"
"$RTRACE" postproc -lc -i "$t" > compressed.txt
grep -q '^# Resource - fp (file pointer):' compressed.txt && ok || bad "compress per resource"

# rtrace run's report: the bad close, the descriptors open at exit
rm -f ./*.rtrace
"$RTRACE" run -m fd -o "$TMP" -- "$P/tp_fds" > /dev/null 2> report
grep -q "rtrace: File descriptor 99 was never opened" report && ok || bad "bad close not reported: $(cat report)"
grep -q "rtrace: FILE DESCRIPTORS: 8 open (3 std) at exit." report && ok || bad "FILE DESCRIPTORS line: $(grep DESCR report)"
grep -q "rtrace: Open file descriptor $kept: /etc/hostname" report && ok || bad "open descriptor line"
"$RTRACE" run -q -m fd --error-exitcode=9 -o "$TMP" -- "$P/tp_fds" > /dev/null 2>&1; [ $? -eq 9 ] && ok || bad "--error-exitcode on fd errors"

# exec: the close-on-exec descriptor is released by the exec, the other not
rm -f ./*.rtrace
"$RTRACE" run -q -m fd -o "$TMP" -- "$P/tp_fds" exec /bin/true > out
t=$(ls tp_fds-*.rtrace | head -1)
"$RTRACE" postproc -l -i "$t" | grep -E '^[0-9]+\. ' > exec.txt
in=$(sed -n 's/.*inherited=\([0-9]*\).*/\1/p' out)
[ "$(wc -l < exec.txt)" = 1 ] && grep -q "open(1) = 0x$(printf %x "$in")" exec.txt && ok || bad "exec: $(cat exec.txt)"
"$RTRACE" postproc -i "$t" | grep -q '\] execve(0x' && ok || bad "exec release not recorded"

# the trace file's descriptor: the program closing it gets EBADF and the
# tracing goes on; close_range over it keeps it
rm -f ./*.rtrace
"$P/tp_fds" closeall > plain2.out 2>&1
"$RTRACE" run -q -m fd -o "$TMP" -- "$P/tp_fds" closeall > traced2.out 2> err
check_same "closeall: output differs under rtrace" plain2.out traced2.out
[ ! -s err ] && ok || bad "closeall: tracer complained: $(cat err)"
"$RTRACE" postproc -l -i "$(ls tp_fds-*.rtrace | head -1)" | grep -q '\$path = /etc/hostname' && ok || bad "closeall: the open after it was not traced"
# the program closing the trace file's descriptor behind the tracer's back
# (the raw close system call, which no interposer sees): the tracer
# reopens the trace by path and says so once; the trace stays readable and
# holds the open made after it
rm -f ./*.rtrace
"$P/tp_fds" rawclose > plain3.out 2>&1; prc=$?
"$RTRACE" run -q -m fd -o "$TMP" -- "$P/tp_fds" rawclose > traced3.out 2> err3; trc=$?
[ $prc -eq 5 ] && [ $trc -eq $prc ] && ok || bad "rawclose: exit status $trc traced, $prc plain"
check_same "rawclose: output differs under rtrace" plain3.out traced3.out
[ "$(wc -l < err3)" = 1 ] && [ "$(grep -c "^rtrace: the program closed the trace file's descriptor [0-9]*; the trace goes on through descriptor [0-9]*\$" err3)" = 1 ] &&
  ok || bad "rawclose: not one message about the reopened trace: $(cat err3)"
t=$(ls tp_fds-*.rtrace | head -1)
"$RTRACE" postproc -l -i "$t" > raw.txt 2> raw.err; rrc=$?
[ $rrc -eq 0 ] && [ ! -s raw.err ] && ok || bad "rawclose: trace reads with status $rrc: $(head -3 raw.err)"
fd=$(sed -n 's/^rawclose open=\([0-9]*\)$/\1/p' plain3.out)
[ -n "$fd" ] && grep -A1 -E "^[0-9]+\. .*\] open(<fd>)?\(1\) = 0x$(hex "$fd")\$" raw.txt | grep -qE '^\s+\$path = /etc/hostname$' &&
  ok || bad "rawclose: the open after the raw closes is not in the trace: $(grep -A2 -E '^[0-9]+\. ' raw.txt)"
if command -v valgrind > /dev/null; then
  # descriptors open at exit: rtrace's are valgrind's, those under the
  # leaked streams included (cli.descriptors compares the lines)
  valgrind --track-fds=yes "$P/tp_fds" > /dev/null 2> vg.txt
  awk '/Open (file descriptor|AF_[A-Z0-9]* socket) [0-9]+:/ {n=$0; sub(/.*(descriptor|socket) /, "", n); sub(/:.*/, "", n); getline nx; if (nx !~ /inherited/) print n}' vg.txt | sort -n > vg.fds
  "$RTRACE" run -m fd -o "$TMP" -- "$P/tp_fds" > /dev/null 2> rt.txt
  sed -n -E 's/^rtrace: Open (file descriptor|AF_[A-Z0-9]* socket) ([0-9]+):.*/\2/p' rt.txt | sort -n > rt.all
  check_same "descriptors open at exit differ from valgrind --track-fds=yes" vg.fds rt.all
fi
# Valgrind XML protocol 5: the bad close and the descriptors left open as
# FdBadClose and FdNotClosed errors, read back by rtrace's own reader; an
# allocation profile with the descriptors' events
mkdir xml
"$RTRACE" run -q -m memory,fd,file --xml-file=fds.xml -o xml -- "$P/tp_fds" > /dev/null 2>&1
xmllint --noout fds.xml && ok || bad "fds.xml is not well-formed"
grep -q '<protocolversion>5</protocolversion>' fds.xml && ok || bad "protocol 5 for descriptors"
"$RTRACE" convert --to text fds.xml > fds.txt 2> fds.err && ok || bad "fds.xml reads back: $(cat fds.err)"
[ "$(grep -c '^## error FdNotClosed' fds.txt)" = 5 ] && ok || bad "five FdNotClosed: $(grep '^## error' fds.txt)"
[ "$(grep -c '^## error FdBadClose' fds.txt)" = 1 ] && ok || bad "one FdBadClose"
grep -q '<fd>99</fd>' fds.xml && grep -q 'File descriptor 99 was never opened' fds.xml && ok || bad "bad close of 99"
grep -q "<what>Open file descriptor $kept: /etc/hostname</what>" fds.xml && grep -q '<path>/etc/hostname</path>' fds.xml &&
  ok || bad "the open file's path"
[ "$(grep -c '<pair>' fds.xml)" = 6 ] && ok || bad "errorcounts: the six descriptor errors"
"$RTRACE" convert --to callgrind -o fds.cg xml/tp_fds-*.rtrace
grep -q '^events: .*FdAllocs FdUnfreed' fds.cg && ok || bad "descriptor events: $(grep '^events' fds.cg)"
unf=$(callgrind_annotate --auto=no --show=FdUnfreed fds.cg | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p')
[ "$unf" = 5 ] && ok || bad "FdUnfreed total '$unf' = the 5 open descriptors"
# more mappings live at once than the mmap module's table holds: their
# unmaps are still releases, nothing leaks
mkdir maps
"$RTRACE" run -q -m mmap -o maps -- "$P/tp_fds" manymaps > maps.out 2>&1
grep -q 'manymaps unmapped=5000' maps.out && ok || bad "manymaps: $(cat maps.out)"
n=$("$RTRACE" postproc -l -i maps/tp_fds-*.rtrace | grep -cE '^[0-9]+\. .*mmap(<mmap>)?\(')
[ "$n" = 0 ] && ok || bad "manymaps: $n mappings reported leaked"
finish
