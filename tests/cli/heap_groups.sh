# rtrace heap's report groups call sites by their allocating frame's
# description, not by the frame: frames at two addresses that read the
# same (one line, two calls) make one group; groups of equal cost come
# in the order of their descriptions (strcmp's: addresses, "[no
# backtrace]", then names), and a group's stacks in site order. The
# whole report of a hand-written text trace, and its --stacks peak list.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

cat > t.txt <<'TRACE'
version=2.0, arch=x86_64, timestamp=2026.11.26 10:00:00, process=/bin/t, pid=1, filter=resolve, origin=test, 
<1> : memory (memory allocation in bytes)
1. malloc(100) = 0x10
	0x1005 f() at a.c:1
	0x2001 main() at m.c:9

2. malloc(200) = 0x20
	0x1001 f() at a.c:1
	0x2002 main() at m.c:10

3. malloc(300) = 0x30
	0x1009 g() at b.c:2
	0x2003 main() at m.c:11

4. malloc(50) = 0x40
	0x1001 f() at a.c:1
	0x2004 main() at m.c:12

5. malloc(300) = 0x50
	0x1007
	0x2005 main() at m.c:13

6. malloc(300) = 0x60
	0x1008
	0x2005 main() at m.c:13

7. malloc(300) = 0x70

TRACE

"$RTRACE" heap -q t.txt > merged.out 2>&1 || bad "rtrace heap"
cat > merged.exp <<'OUT'
PEAK MEMORY CONSUMERS
350B peak consumption from
f (a.c:1)
  200B peak consumption from:
    main (m.c:10)
  100B peak consumption from:
    main (m.c:9)
  50B peak consumption from:
    main (m.c:12)

300B peak consumption from
0x1007
  300B peak consumption from:
    main (m.c:13)

300B peak consumption from
0x1008
  300B peak consumption from:
    main (m.c:13)

300B peak consumption from
[no backtrace]
  300B peak consumption from:

300B peak consumption from
g (b.c:2)
  300B peak consumption from:
    main (m.c:11)


MOST CALLS TO ALLOCATION FUNCTIONS
3 calls to allocation functions with 350B peak consumption from
f (a.c:1)
  1 calls with 200B peak consumption from:
    main (m.c:10)
  1 calls with 100B peak consumption from:
    main (m.c:9)
  1 calls with 50B peak consumption from:
    main (m.c:12)

1 calls to allocation functions with 300B peak consumption from
0x1007
  1 calls with 300B peak consumption from:
    main (m.c:13)

1 calls to allocation functions with 300B peak consumption from
0x1008
  1 calls with 300B peak consumption from:
    main (m.c:13)

1 calls to allocation functions with 300B peak consumption from
[no backtrace]
  1 calls with 300B peak consumption from:

1 calls to allocation functions with 300B peak consumption from
g (b.c:2)
  1 calls with 300B peak consumption from:
    main (m.c:11)


MOST TEMPORARY ALLOCATIONS

MEMORY LEAKS
350B leaked over 3 calls from
f (a.c:1)
  200B leaked over 1 calls from:
    main (m.c:10)
  100B leaked over 1 calls from:
    main (m.c:9)
  50B leaked over 1 calls from:
    main (m.c:12)

300B leaked over 1 calls from
0x1007
  300B leaked over 1 calls from:
    main (m.c:13)

300B leaked over 1 calls from
0x1008
  300B leaked over 1 calls from:
    main (m.c:13)

300B leaked over 1 calls from
[no backtrace]
  300B leaked over 1 calls from:

300B leaked over 1 calls from
g (b.c:2)
  300B leaked over 1 calls from:
    main (m.c:11)


total runtime: unknown (no call times).
calls to allocation functions: 7
temporary memory allocations: 0
peak heap memory consumption: 1.55K (1550 bytes, at call 7)
peak RSS: not recorded
total memory leaked: 1.55K (1550 bytes in 7 blocks)
bytes allocated in total: 1.55K (1550 bytes), 0 frees
OUT
check_same "merged by description" merged.exp merged.out

"$RTRACE" heap -q --stacks t.txt > stacks.all 2>&1 || bad "rtrace heap --stacks"
sed -n '/^PEAK/,/^MOST CALLS/p' stacks.all > stacks.out
cat > stacks.exp <<'OUT'
PEAK MEMORY CONSUMERS
300B peak consumption from
0x1007
  300B peak consumption from:
    main (m.c:13)

300B peak consumption from
0x1008
  300B peak consumption from:
    main (m.c:13)

300B peak consumption from
[no backtrace]
  300B peak consumption from:

300B peak consumption from
g (b.c:2)
  300B peak consumption from:
    main (m.c:11)

200B peak consumption from
f (a.c:1)
  200B peak consumption from:
    main (m.c:10)

100B peak consumption from
f (a.c:1)
  100B peak consumption from:
    main (m.c:9)

50B peak consumption from
f (a.c:1)
  50B peak consumption from:
    main (m.c:12)


MOST CALLS TO ALLOCATION FUNCTIONS
OUT
check_same "one group per stack" stacks.exp stacks.out
finish
