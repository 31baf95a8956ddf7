/* gen_text_trace: writes a synthetic but realistic memory trace in the
 * rtrace text protocol (sp-rtrace's format) to standard output, for
 * benchmarking `rtrace postproc`.
 *
 *   cc -O2 -o bench/out/gen_text_trace bench/gen_text_trace.c
 *   bench/out/gen_text_trace [-n calls] [-b backtraces] [-s seed]
 *                            [-f MIN-MAX] [-m META] > trace.txt
 *
 * -n  allocation calls (default 10000000)
 * -b  distinct backtraces the allocations are spread over (default 50000)
 * -s  seed; the output is a pure function of the options (default 1)
 * -f  frames per backtrace, MIN-MAX (default 6-24); depths are skewed
 *     towards MIN with a tail up to MAX
 * -m  write the expected results (live blocks, leaked size, groups, ...)
 *     as key=value lines to META
 *
 * What it models: a PIE binary at 0x5555... with 14 shared libraries at
 * 0x7fff...; call stacks that share the outer frames (_start,
 * __libc_start_main, main) and branch as they go in; a few hot call sites
 * and a long tail (popularity is skewed); malloc/calloc/realloc per call
 * site with a typical size per site; a size-class allocator that reuses
 * freed addresses LIFO (so addresses are unique among live blocks and come
 * back after a free); about half of the blocks freed at a random later
 * point (mostly soon, some much later, the rest at exit), the other half
 * leaked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- deterministic PRNG: xoshiro256** seeded by splitmix64 --- */

static uint64_t rs[4];

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void seed_rng(uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rs[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rnd(void)
{
	uint64_t r = rotl(rs[1] * 5, 7) * 9, t = rs[1] << 17;
	rs[2] ^= rs[0];
	rs[3] ^= rs[1];
	rs[1] ^= rs[2];
	rs[0] ^= rs[3];
	rs[2] ^= t;
	rs[3] = rotl(rs[3], 45);
	return r;
}

static inline double unif(void) { return (double)(rnd() >> 11) * 0x1.0p-53; }

/* uniform in [0, n) */
static inline uint64_t below(uint64_t n) { return (uint64_t)(((unsigned __int128)rnd() * n) >> 64); }

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "gen_text_trace: out of memory\n");
		exit(1);
	}
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "gen_text_trace: out of memory\n");
		exit(1);
	}
	return p;
}

/* --- buffered output with hand-rolled formatting --- */

static char obuf[1 << 20];
static size_t olen;
static uint64_t obytes;

static void oflush(void)
{
	size_t off = 0;
	while (off < olen) {
		ssize_t w = write(STDOUT_FILENO, obuf + off, olen - off);
		if (w < 0) {
			perror("gen_text_trace: write");
			exit(1);
		}
		off += (size_t)w;
	}
	obytes += olen;
	olen = 0;
}

static inline void oroom(size_t n)
{
	if (olen + n > sizeof obuf)
		oflush();
}

static inline void omem(const char *s, size_t n)
{
	if (n > sizeof obuf) {
		oflush();
		obytes += n;
		if (write(STDOUT_FILENO, s, n) != (ssize_t)n) {
			perror("gen_text_trace: write");
			exit(1);
		}
		return;
	}
	oroom(n);
	memcpy(obuf + olen, s, n);
	olen += n;
}

static inline void ostr(const char *s) { omem(s, strlen(s)); }

/* no room checks: callers reserve */
static inline void put_dec(uint64_t v)
{
	char tmp[24];
	int i = 24;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(obuf + olen, tmp + i, (size_t)(24 - i));
	olen += (size_t)(24 - i);
}

static inline void put_dec2(unsigned v)
{
	obuf[olen++] = (char)('0' + v / 10);
	obuf[olen++] = (char)('0' + v % 10);
}

static int fmt_hex(char *out, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int i = 16;
	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	memcpy(out, tmp + i, (size_t)(16 - i));
	return 16 - i;
}

static inline void put_hex(uint64_t v) { olen += (size_t)fmt_hex(obuf + olen, v); }

static inline void put_lit(const char *s, size_t n)
{
	memcpy(obuf + olen, s, n);
	olen += n;
}
#define PUT(s) put_lit(s, sizeof s - 1)

/* "[HH:MM:SS.mmm] " from microseconds since midnight */
static inline void put_ts(uint64_t us)
{
	uint64_t ms = us / 1000, s = ms / 1000;
	obuf[olen++] = '[';
	put_dec2((unsigned)(s / 3600 % 24));
	obuf[olen++] = ':';
	put_dec2((unsigned)(s / 60 % 60));
	obuf[olen++] = ':';
	put_dec2((unsigned)(s % 60));
	obuf[olen++] = '.';
	unsigned f = (unsigned)(ms % 1000);
	obuf[olen++] = (char)('0' + f / 100);
	put_dec2(f % 100);
	PUT("] ");
}

/* --- the simulated process --- */

typedef struct module {
	const char *path;
	uint64_t from, to;
} module;

/* Layout of a PIE process on x86_64 (ASLR off): binary at 0x555555554000,
 * libraries below ld.so near 0x7ffff7fc... */
static const module modules[] = {
	{"/usr/bin/bench", 0x555555554000ULL, 0x5555555e9000ULL},
	{"/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7ffff7a00000ULL, 0x7ffff7c1a000ULL},
	{"/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0.7400.6", 0x7ffff7d80000ULL, 0x7ffff7eb2000ULL},
	{"/usr/lib/x86_64-linux-gnu/libgobject-2.0.so.0.7400.6", 0x7ffff7d20000ULL, 0x7ffff7d7a000ULL},
	{"/usr/lib/x86_64-linux-gnu/libgio-2.0.so.0.7400.6", 0x7ffff7600000ULL, 0x7ffff77ce000ULL},
	{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", 0x7ffff7200000ULL, 0x7ffff7434000ULL},
	{"/usr/lib/x86_64-linux-gnu/libm.so.6", 0x7ffff7c38000ULL, 0x7ffff7d19000ULL},
	{"/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", 0x7ffff7fa0000ULL, 0x7ffff7fbb000ULL},
	{"/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 0x7ffff7f80000ULL, 0x7ffff7f9c000ULL},
	{"/usr/lib/x86_64-linux-gnu/libssl.so.3", 0x7ffff7ee0000ULL, 0x7ffff7f7c000ULL},
	{"/usr/lib/x86_64-linux-gnu/libcrypto.so.3", 0x7ffff6c00000ULL, 0x7ffff707e000ULL},
	{"/usr/lib/x86_64-linux-gnu/libdbus-1.so.3.32.4", 0x7ffff7eb8000ULL, 0x7ffff7ede000ULL},
	{"/usr/lib/x86_64-linux-gnu/libexpat.so.1.8.10", 0x7ffff7800000ULL, 0x7ffff782b000ULL},
	{"/usr/lib/x86_64-linux-gnu/libpcre2-8.so.0.11.2", 0x7ffff7500000ULL, 0x7ffff7591000ULL},
	{"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0x7ffff7fc3000ULL, 0x7ffff7ff0000ULL},
};
#define NMOD (sizeof modules / sizeof *modules)
enum { M_BIN = 0, M_LIBC = 1, M_GLIB = 2, M_GOBJECT = 3, M_GIO = 4, M_STDCXX = 5 };

/* Call sites (return addresses) per module: frames are drawn from these,
 * so the same address shows up in many stacks, as helpers do. */
#define SITES_PER_MODULE 8192
static uint64_t sites[NMOD][SITES_PER_MODULE];

static void make_sites(void)
{
	for (size_t m = 0; m < NMOD; m++) {
		uint64_t span = modules[m].to - modules[m].from;
		/* code is in the first ~70% of a mapping; skip the ELF header */
		for (int i = 0; i < SITES_PER_MODULE; i++)
			sites[m][i] = modules[m].from + 0x1000 + below(span * 7 / 10 - 0x1000);
	}
}

/* The module a frame at `level` (0 = outermost below main) belongs to:
 * application code near main, libraries (event loop, toolkits, C++
 * runtime) further in. */
static size_t module_for(uint64_t node, int level, int inner_levels)
{
	uint64_t h = mix64(node ^ 0x5bd1e995ULL) % 100;
	if (level < 2)
		return h < 85 ? M_BIN : M_GLIB;
	if (level + 1 == inner_levels) /* the allocator's caller */
		return h < 40 ? M_BIN : h < 60 ? M_GLIB : h < 75 ? M_STDCXX : h < 82 ? M_GOBJECT : h < 88 ? M_GIO
			: 6 + h % (NMOD - 7);
	return h < 50 ? M_BIN : h < 65 ? M_GLIB : h < 75 ? M_GIO : h < 82 ? M_GOBJECT : h < 88 ? M_STDCXX
		: 6 + h % (NMOD - 7);
}

typedef struct site {
	uint32_t frames_off; /* into bt_text */
	uint32_t frames_len;
	uint16_t depth;
	uint8_t fn; /* 0 malloc, 1 calloc, 2 realloc */
	uint32_t base_size;
} site;

static const char *const fn_name[] = {"malloc", "calloc", "realloc"};

static uint64_t gen_size(void)
{
	double u = unif();
	if (u < 0.55)
		return 1 + below(64);
	if (u < 0.80)
		return 65 + below(448);
	if (u < 0.97)
		return 513 + below(3584);
	/* some larger blocks, up to 1 MiB (the big ones are mmapped) */
	return 4097 + below((uint64_t)1 << (12 + below(9)));
}

/* Builds b distinct backtraces; their frame lines are pre-rendered. */
static site *make_backtraces(uint32_t nb, int fmin, int fmax, char **text, uint64_t *frames_total)
{
	site *s = xmalloc(nb * sizeof *s);
	size_t cap = (size_t)nb * 16 * 10 + 4096, len = 0;
	char *buf = xmalloc(cap);
	/* dedup table of frame sequences, by hash then full compare */
	size_t nslots = 1;
	while (nslots < (size_t)nb * 2)
		nslots <<= 1;
	uint32_t *slots = calloc(nslots, sizeof *slots);
	uint64_t *hashes = xmalloc(nb * sizeof *hashes);
	if (!slots) {
		fprintf(stderr, "gen_text_trace: out of memory\n");
		exit(1);
	}
	/* fixed outer frames: _start -> __libc_start_main_impl ->
	 * __libc_start_call_main -> main */
	const uint64_t outer[3] = {
		0x7ffff7a29d90ULL, /* __libc_start_call_main+128 (innermost of the 3) */
		0x7ffff7a29e40ULL, /* __libc_start_main_impl+128 */
		0x555555559a25ULL, /* _start+37 */
	};
	uint64_t main_sites[12];
	for (int i = 0; i < 12; i++)
		main_sites[i] = 0x55555555a000ULL + 0x40 + (uint64_t)i * 0x37 + below(0x30);
	uint64_t fr[64];
	*frames_total = 0;
	for (uint32_t b = 0; b < nb; b++) {
		int depth;
		uint64_t h;
		for (int attempt = 0;; attempt++) {
			/* depth skewed to fmin: fmin + (span) * u^6, a tail to fmax */
			double u = unif();
			double u2 = u * u, u6 = u2 * u2 * u2;
			depth = fmin + (int)((fmax - fmin + 1) * u6);
			if (depth > fmax)
				depth = fmax;
			if (attempt > 20 && depth < fmax)
				depth++; /* short stacks used up: go deeper */
			/* Frames are listed innermost first. fr[0] is the allocator's
			 * caller; the outermost frames are _start,
			 * __libc_start_main_impl, __libc_start_call_main and main's
			 * call site; the levels between branch out more the deeper
			 * they are. Stacks shorter than 6 frames look like stacks
			 * cut by a backtrace depth limit: the innermost frames. */
			int nouter = depth >= 6 ? 4 : 0;
			int nmid = depth - 1 - nouter;
			uint64_t node = below(12); /* which call in main */
			for (int i = 0; i < nouter; i++) {
				int pos = depth - 1 - i; /* i = 0: the outermost frame */
				fr[pos] = i < 3 ? outer[2 - i] : main_sites[node];
			}
			node = mix64(node + 1);
			for (int lvl = 0; lvl < nmid; lvl++) {
				uint64_t fan = lvl == 0 ? 8 : lvl == 1 ? 16 : 24;
				node = mix64(node * 31 + 1 + below(fan));
				size_t m = module_for(node, lvl, nmid + 1);
				fr[depth - 1 - nouter - lvl] = sites[m][mix64(node ^ 0xabcdefULL) % SITES_PER_MODULE];
			}
			node = mix64(node * 31 + 1 + below(1u << 20));
			fr[0] = sites[module_for(node, nmid, nmid + 1)][mix64(node ^ 0xabcdefULL) % SITES_PER_MODULE];
			if (attempt > 100000) {
				fprintf(stderr, "gen_text_trace: cannot make %u distinct backtraces of %d-%d frames\n",
					nb, fmin, fmax);
				exit(2);
			}
			h = 0x84222325ULL + (uint64_t)depth;
			for (int i = 0; i < depth; i++)
				h = mix64(h ^ fr[i]);
			size_t i = h & (nslots - 1);
			int dup = 0;
			for (; slots[i]; i = (i + 1) & (nslots - 1)) {
				const site *o = &s[slots[i] - 1];
				if (hashes[slots[i] - 1] == h && o->depth == depth) {
					dup = 1;
					break;
				}
			}
			if (dup)
				continue; /* same 64-bit hash and depth: treat as the same stack */
			slots[i] = b + 1;
			break;
		}
		hashes[b] = h;
		s[b].depth = (uint16_t)depth;
		s[b].frames_off = (uint32_t)len;
		if (len + (size_t)depth * 20 > cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		for (int i = 0; i < depth; i++) {
			buf[len++] = '\t';
			buf[len++] = '0';
			buf[len++] = 'x';
			len += (size_t)fmt_hex(buf + len, fr[i]);
			buf[len++] = '\n';
		}
		s[b].frames_len = (uint32_t)(len - s[b].frames_off);
		*frames_total += (uint64_t)depth;
		uint64_t f = below(100);
		s[b].fn = f < 75 ? 0 : f < 90 ? 1 : 2;
		s[b].base_size = (uint32_t)(gen_size() & 0xffffffff);
	}
	free(slots);
	free(hashes);
	*text = buf;
	return s;
}

/* --- allocator model: size classes with LIFO free lists --- */

#define SMALL_MAX 131072u /* glibc's default mmap threshold */
#define NSMALL (SMALL_MAX / 16 + 1)
#define NBINS (NSMALL + 512)

typedef struct bin {
	uint64_t *a;
	uint32_t n, cap;
} bin;

static bin bins[NBINS];
static uint64_t heap_top = 0x5555555f0000ULL + 0x10; /* brk heap after the binary */
static uint64_t mmap_top = 0x7fffe0000000ULL;         /* mmaps grow down below the libs */

static uint32_t bin_of(uint64_t size)
{
	if (size + 8 < SMALL_MAX) {
		uint64_t cap = (size + 8 + 15) & ~15ULL;
		return (uint32_t)(cap < 32 ? 2 : cap / 16);
	}
	uint64_t pages = (size + 16 + 4095) / 4096;
	return pages >= 512 ? NBINS - 1 : (uint32_t)(NSMALL + pages);
}

static uint64_t bin_bytes(uint32_t b)
{
	if (b < NSMALL)
		return (uint64_t)b * 16;
	if (b == NBINS - 1)
		return 0; /* not used: sizes stay below 2 MiB */
	return (uint64_t)(b - NSMALL) * 4096;
}

static uint64_t block_alloc(uint32_t b)
{
	bin *x = &bins[b];
	if (x->n)
		return x->a[--x->n];
	uint64_t bytes = bin_bytes(b);
	if (b < NSMALL) {
		uint64_t p = heap_top;
		heap_top += bytes;
		return p;
	}
	mmap_top -= bytes;
	return mmap_top + 16;
}

static void block_free(uint32_t b, uint64_t addr)
{
	bin *x = &bins[b];
	if (x->n == x->cap) {
		x->cap = x->cap ? x->cap * 2 : 16;
		x->a = xrealloc(x->a, x->cap * sizeof *x->a);
	}
	x->a[x->n++] = addr;
}

/* --- pending frees: a min-heap on the record number they are due at --- */

typedef struct pend {
	uint64_t due, addr;
	uint32_t bin;
} pend;

static pend *heap;
static size_t nheap, cheap;

static void heap_push(pend p)
{
	if (nheap == cheap) {
		cheap = cheap ? cheap * 2 : 4096;
		heap = xrealloc(heap, cheap * sizeof *heap);
	}
	size_t i = nheap++;
	while (i) {
		size_t up = (i - 1) / 2;
		if (heap[up].due <= p.due)
			break;
		heap[i] = heap[up];
		i = up;
	}
	heap[i] = p;
}

static pend heap_pop(void)
{
	pend top = heap[0], last = heap[--nheap];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= nheap)
			break;
		if (c + 1 < nheap && heap[c + 1].due < heap[c].due)
			c++;
		if (heap[c].due >= last.due)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (nheap)
		heap[i] = last;
	return top;
}

/* how many records later a block is freed: most die young, some live
 * long, a few outlive the trace and are freed at exit */
/* natural log for x in (0, 1], without libm (the bench builds with plain
 * `cc -O2`): x = m * 2^e, ln m by the atanh series; error < 1e-7 */
static double ln01(double x)
{
	uint64_t bits;
	memcpy(&bits, &x, sizeof bits);
	int e = (int)((bits >> 52) & 0x7ff) - 1022;
	bits = (bits & ~(0x7ffULL << 52)) | (1022ULL << 52); /* m in [0.5, 1) */
	double m;
	memcpy(&m, &bits, sizeof m);
	double s = (m - 1) / (m + 1), s2 = s * s;
	double series = s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11 + s2 / 13))))));
	return e * 0.69314718055994530942 + 2 * series;
}

static uint64_t free_delay(void)
{
	double u = unif();
	double mean = u < 0.70 ? 40 : u < 0.95 ? 5000 : 2000000;
	double e = unif();
	uint64_t d = 1 + (uint64_t)(-mean * ln01(1.0 - e));
	return d;
}

static void usage(void)
{
	fputs("usage: gen_text_trace [-n calls] [-b backtraces] [-s seed] [-f MIN-MAX] [-m META]\n", stderr);
	exit(2);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end) {
		fprintf(stderr, "gen_text_trace: invalid %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t ncalls = 10000000, nbt = 50000, seed = 1;
	int fmin = 6, fmax = 24;
	const char *meta = NULL;
	int c;
	while ((c = getopt(argc, argv, "n:b:s:f:m:h")) != -1) {
		switch (c) {
		case 'n': ncalls = parse_u64(optarg, "call count"); break;
		case 'b': nbt = parse_u64(optarg, "backtrace count"); break;
		case 's': seed = parse_u64(optarg, "seed"); break;
		case 'f':
			if (sscanf(optarg, "%d-%d", &fmin, &fmax) != 2 || fmin < 1 || fmax < fmin || fmax > 60) {
				fprintf(stderr, "gen_text_trace: invalid frame range '%s' (MIN-MAX, 1..60)\n", optarg);
				exit(2);
			}
			break;
		case 'm': meta = optarg; break;
		default: usage();
		}
	}
	if (optind < argc || nbt == 0 || nbt > 10000000 || ncalls == 0)
		usage();
	seed_rng(seed);
	make_sites();
	char *bt_text;
	uint64_t frames_total;
	site *sites_ = make_backtraces((uint32_t)nbt, fmin, fmax, &bt_text, &frames_total);

	ostr("version=2.0, arch=x86_64, timestamp=2026.11.23 10:00:00, process=/usr/bin/bench, "
	     "pid=4242, backtrace depth=32, origin=rtrace 0.1.0, \n");
	ostr("<1> : memory (memory allocation in bytes)\n");
	for (size_t m = 0; m < NMOD; m++) {
		oroom(200);
		PUT(": ");
		put_lit(modules[m].path, strlen(modules[m].path));
		PUT(" => 0x");
		put_hex(modules[m].from);
		PUT("-0x");
		put_hex(modules[m].to);
		PUT("\n");
	}

	uint8_t *leaked_bt = calloc(nbt, 1), *used_bt = calloc(nbt, 1);
	if (!leaked_bt || !used_bt) {
		fprintf(stderr, "gen_text_trace: out of memory\n");
		exit(1);
	}
	uint64_t rec = 0, allocs = 0, frees = 0, exit_frees = 0, leaked = 0, leaked_size = 0;
	uint64_t frames_written = 0, live = 0, peak_live = 0, alloc_size = 0;
	uint64_t ts = 10ULL * 3600 * 1000000; /* 10:00:00.000 */
	/* call site popularity: index ~ nbt * u^3, a few very hot sites */
	while (allocs < ncalls || nheap) {
		ts += 40 + below(400);
		rec++;
		if (nheap && (heap[0].due <= rec || allocs == ncalls)) {
			if (allocs == ncalls)
				exit_frees++;
			pend p = heap_pop();
			block_free(p.bin, p.addr);
			oroom(64);
			put_dec(rec);
			PUT(". ");
			put_ts(ts);
			PUT("free(0x");
			put_hex(p.addr);
			PUT(")\n\n");
			frees++;
			live--;
			continue;
		}
		double u = unif();
		uint32_t b = (uint32_t)((double)nbt * u * u * u);
		if (b >= nbt)
			b = (uint32_t)nbt - 1;
		const site *s = &sites_[b];
		used_bt[b] = 1;
		uint64_t size = below(100) < 60 ? s->base_size : gen_size();
		if (s->fn == 1 && size > 64 && below(2)) /* calloc(n, small) */
			size = size & ~7ULL;
		if (size == 0)
			size = 8;
		uint32_t bin = bin_of(size);
		uint64_t addr = block_alloc(bin);
		oroom(96);
		put_dec(rec);
		PUT(". ");
		put_ts(ts);
		put_lit(fn_name[s->fn], strlen(fn_name[s->fn]));
		obuf[olen++] = '(';
		put_dec(size);
		PUT(") = 0x");
		put_hex(addr);
		obuf[olen++] = '\n';
		omem(bt_text + s->frames_off, s->frames_len);
		oroom(1);
		obuf[olen++] = '\n';
		frames_written += s->depth;
		allocs++;
		alloc_size += size;
		live++;
		if (live > peak_live)
			peak_live = live;
		if (rnd() & 1) {
			heap_push((pend){rec + free_delay(), addr, bin});
		} else {
			leaked++;
			leaked_size += size;
			leaked_bt[b] = 1;
		}
	}
	oflush();

	uint64_t nleaked_bt = 0, nused_bt = 0;
	for (uint64_t i = 0; i < nbt; i++) {
		nleaked_bt += leaked_bt[i];
		nused_bt += used_bt[i];
	}
	FILE *mf = meta ? fopen(meta, "w") : stderr;
	if (!mf) {
		perror(meta);
		return 1;
	}
	fprintf(mf,
		"calls=%llu\nbacktraces=%llu\nseed=%llu\nframes=%d-%d\n"
		"records=%llu\nallocs=%llu\nfrees=%llu\nexit_frees=%llu\n"
		"alloc_bytes=%llu\nleaked_blocks=%llu\nleaked_bytes=%llu\n"
		"backtraces_used=%llu\nbacktraces_leaked=%llu\n"
		"mean_depth_per_backtrace=%.2f\nmean_frames_per_alloc=%.2f\n"
		"peak_live_blocks=%llu\nfile_bytes=%llu\n",
		(unsigned long long)ncalls, (unsigned long long)nbt, (unsigned long long)seed, fmin, fmax,
		(unsigned long long)rec, (unsigned long long)allocs, (unsigned long long)frees,
		(unsigned long long)exit_frees, (unsigned long long)alloc_size,
		(unsigned long long)leaked, (unsigned long long)leaked_size,
		(unsigned long long)nused_bt, (unsigned long long)nleaked_bt,
		(double)frames_total / (double)nbt, (double)frames_written / (double)(allocs ? allocs : 1),
		(unsigned long long)peak_live, (unsigned long long)obytes);
	if (meta)
		fclose(mf);
	return 0;
}
