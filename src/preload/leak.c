/* The leak check at exit, with memcheck's definitions (mc_leakcheck.c):
 *
 *  1. every other thread is stopped at a safe point (a signal; a thread
 *     inside an interposer parks when it leaves it) with its registers;
 *  2. glibc and libstdc++ release their own memory (__libc_freeres,
 *     __gnu_cxx::__freeres), as under memcheck;
 *  3. roots: the registers of every thread, every thread's stack from its
 *     stack pointer up (static TLS and the thread descriptor sit at the top
 *     of a thread's stack mapping), and every other readable and writable
 *     mapping except malloc's own heaps, the tracer's memory and devices.
 *     Dynamic TLS and the DTV are heap blocks, found through the thread
 *     descriptor like any other block;
 *  4. marking: a pointer to a block's start from a root (or from a block
 *     reached so) makes it reachable, a pointer inside it possibly lost
 *     unless one of memcheck's heuristics (stdstring, length64, newarray,
 *     multipleinheritance, all on by default) accepts it; what possibly
 *     lost blocks point to is possibly lost at best;
 *  5. blocks not reached are lost: taking them in address order, each one
 *     still unreached leads a clique of the unreached blocks it reaches,
 *     which are indirectly lost; the leaders are definitely lost.
 *
 * Verdicts go into the trace (LEAK and LEAKSUM records). This code runs
 * with the heap table locked and other threads stopped: it allocates
 * nothing (mmap only) and reads root memory with process_vm_readv, so an
 * unmapped or truncated page is skipped instead of faulting. */
#define _GNU_SOURCE
#include "heap.h"
#include "pages.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define WORD sizeof(uintptr_t)
#define ARENA_ALIGN ((uintptr_t)64 << 20) /* glibc's HEAP_MAX_SIZE, 64-bit */
#define MAX_PARKED 16384u
#define STOP_WAIT_NS 2000000000ll
#define VTABLE_MAX_CHECK 20
#if defined(__x86_64__)
#define REDZONE 128u
#define NREGS NGREG
#elif defined(__aarch64__)
#define REDZONE 0u
#define NREGS 32
#else
#define REDZONE 0u
#define NREGS 0
#endif

enum { ST_UNREACHED, ST_INDIRECT, ST_POSSIBLE, ST_REACHABLE };
enum { KIND_DEFINITE = 1, KIND_INDIRECT, KIND_POSSIBLE, KIND_REACHABLE };
enum { H_NONE, H_STDSTRING, H_LENGTH64, H_NEWARRAY, H_MULTIPLE, H_COUNT };

typedef struct park_slot {
	_Atomic int ready;
	int tid;
	uintptr_t sp;
	uintptr_t regs[NREGS + 1];
} park_slot;

/* The exiting thread as the program left it when it called into the
 * tracer (exit's handler, _exit): its stack pointer before the call, and
 * the registers live across a call (the callee-saved ones). The tracer's
 * own frames below that stack pointer are no root: their unwritten slots
 * hold whatever the program's deeper calls left there. */
#if defined(__x86_64__)
#define ENTRY_REGS 6 /* rbx, rbp, r12-r15 */
#else
#define ENTRY_REGS (NREGS + 1)
#endif
typedef struct entry_state {
	uintptr_t sp;
	uintptr_t regs[ENTRY_REGS];
} entry_state;
#define RT_HIDDEN __attribute__((visibility("hidden")))
/* exit's handler, and its C part once the state is saved */
RT_HIDDEN void rt_leak_exit_entry(void *arg);
RT_HIDDEN void rt_leak_exit_at(void *arg, const entry_state *self);
/* _exit's C part */
RT_HIDDEN __attribute__((noreturn)) void rt_leak__exit_at(int status, const entry_state *self);

typedef struct lblk {
	uintptr_t addr;
	uint64_t size, bt, index, indirect;
	uint8_t fn, state, heur;
} lblk;

typedef struct vma {
	uintptr_t lo, hi;
	uint8_t r, w, x, file;
	uint32_t path; /* offset of the path in the maps text, 0: none */
} vma;

typedef struct range {
	uintptr_t lo, hi;
} range;

/* Everything the scan works with; one instance, in the exiting thread. */
typedef struct scan {
	lblk *b;
	uintptr_t *starts;
	size_t n, cap;
	uintptr_t lo, hi; /* span of all blocks */
	uint32_t *stack;
	size_t top;
	char *maps;
	size_t maps_len;
	vma *v;
	size_t nv;
	range *ex;
	size_t nex, cex;
	int clique; /* -1: marking from roots */
	range alloc[4];  /* writable segments of the allocator's module */
	size_t nalloc;
	bool in_alloc;   /* the root range being scanned is one of them */
	uintptr_t self_sp;
	uint8_t buf[65536];
} scan;

static int mode = LEAK_CHECK_FULL;
static uintptr_t alloc_base; /* load address of the module malloc is in */
static pid_t owner;
static _Atomic int ran;
static int park_sig;
static _Atomic int stopping;
static park_slot *parked;
static _Atomic unsigned nparked;
static int park_forever;

__thread rt_heap_tls rt_h __attribute__((tls_model("initial-exec")));

void rt_leak_init(int m)
{
	Dl_info di;
	void *real_malloc = dlsym(RTLD_NEXT, "malloc");
	mode = m;
	owner = getpid();
	if (real_malloc && dladdr(real_malloc, &di))
		alloc_base = (uintptr_t)di.dli_fbase;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* --- stopping the other threads --- */

static void save_regs(park_slot *s, const ucontext_t *uc)
{
#if defined(__x86_64__)
	for (int i = 0; i < NREGS; i++)
		s->regs[i] = (uintptr_t)uc->uc_mcontext.gregs[i];
	s->sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	for (int i = 0; i < 31; i++)
		s->regs[i] = (uintptr_t)uc->uc_mcontext.regs[i];
	s->regs[31] = s->sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
	s->sp = 0;
#endif
}

/* A stopped thread records its registers and waits for the process to
 * end (it is never resumed: everything left of exit is the exiting
 * thread's). */
static void park_here(const ucontext_t *uc)
{
	unsigned k = atomic_fetch_add(&nparked, 1);
	if (k < MAX_PARKED) {
		park_slot *s = &parked[k];
		s->tid = (int)syscall(SYS_gettid);
		save_regs(s, uc);
		atomic_store_explicit(&s->ready, 1, memory_order_release);
	}
	for (;;)
		syscall(SYS_futex, &park_forever, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void on_park_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	if (!atomic_load(&stopping))
		return;
	if (rt_h.depth > 0) { /* inside an interposer: park when it leaves */
		rt_h.park = 1;
		return;
	}
	park_here(ctx);
}

void rt_leak_park_pending(void)
{
	rt_h.park = 0;
	if (atomic_load(&stopping))
		syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), park_sig);
}

/* A real-time signal the program does not use. */
static int pick_signal(void)
{
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		struct sigaction old;
		if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
		    old.sa_handler == SIG_DFL) {
			struct sigaction sa = {.sa_sigaction = on_park_signal,
					       .sa_flags = SA_SIGINFO | SA_RESTART};
			sigfillset(&sa.sa_mask);
			if (sigaction(sig, &sa, NULL) == 0)
				return sig;
		}
	}
	return 0;
}

static bool is_parked(int tid)
{
	unsigned n = atomic_load(&nparked);
	for (unsigned i = 0; i < n && i < MAX_PARKED; i++)
		if (atomic_load_explicit(&parked[i].ready, memory_order_acquire) && parked[i].tid == tid)
			return true;
	return false;
}

/* Thread ids of the process (raw getdents64: opendir would allocate). */
static size_t list_tasks(int *tids, size_t cap)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t n = 0;
	char buf[4096];
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			int tid = 0;
			for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (tid > 0 && n < cap)
				tids[n++] = tid;
		}
	}
	close(fd);
	return n;
}

static bool contains(const int *a, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return true;
	return false;
}

/* Waits until every signalled thread parked or ended, or the time is up
 * (a thread that blocks the signal never parks; its stack is then
 * scanned whole and its registers are unknown). */
static void wait_parked(const int *sent, size_t nsent, uint64_t deadline_us)
{
	pid_t pid = getpid();
	while (now_us() < deadline_us) {
		bool all = true;
		for (size_t i = 0; i < nsent && all; i++)
			if (!is_parked(sent[i]) && syscall(SYS_tgkill, pid, sent[i], 0) == 0)
				all = false;
		if (all)
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static void stop_threads(void)
{
	static int sent[MAX_PARKED], now[MAX_PARKED];
	parked = rt_pages(MAX_PARKED * sizeof *parked);
	if (!parked || !(park_sig = pick_signal()))
		return;
	atomic_store(&stopping, 1);
	pid_t pid = getpid(), self = (pid_t)syscall(SYS_gettid);
	size_t nsent = 0;
	uint64_t deadline = now_us() + STOP_WAIT_NS / 1000;
	/* threads may start threads until they are stopped: look again */
	for (int round = 0; round < 8; round++) {
		size_t n = list_tasks(now, MAX_PARKED), added = 0;
		for (size_t i = 0; i < n && nsent < MAX_PARKED; i++) {
			if (now[i] == self || contains(sent, nsent, now[i]))
				continue;
			if (syscall(SYS_tgkill, pid, now[i], park_sig) == 0) {
				sent[nsent++] = now[i];
				added++;
			}
		}
		if (!added)
			break;
		wait_parked(sent, nsent, deadline);
	}
}

/* --- the blocks --- */

static void add_block(void *ctx, const rt_heap_ent *e)
{
	scan *s = ctx;
	if (s->n == s->cap)
		return;
	s->b[s->n++] = (lblk){e->addr, e->meta & RT_HEAP_SIZE_MASK, e->bt, e->index, 0,
			      (uint8_t)(e->meta >> 56), ST_UNREACHED, H_NONE};
}

/* LSD radix sort of (address, position) pairs, 16 bits a pass. */
static void sort_pairs(uint64_t (*a)[2], uint64_t (*t)[2], size_t n)
{
	static size_t count[65536];
	for (int shift = 0; shift < 64; shift += 16) {
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[(a[i][0] >> shift) & 0xffff]++;
		if (count[(a[0][0] >> shift) & 0xffff] == n)
			continue; /* every key has this digit */
		for (size_t i = 0, sum = 0; i < 65536; i++) {
			size_t c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			size_t d = (a[i][0] >> shift) & 0xffff;
			t[count[d]][0] = a[i][0];
			t[count[d]++][1] = a[i][1];
		}
		memcpy(a, t, n * sizeof *a);
	}
}

/* Copies the table into address order. */
static bool collect_blocks(scan *s)
{
	s->cap = rt_heap_count();
	s->b = rt_pages(s->cap * sizeof *s->b);
	lblk *sorted = rt_pages(s->cap * sizeof *sorted);
	uint64_t(*pairs)[2] = rt_pages(s->cap * sizeof *pairs);
	uint64_t(*tmp)[2] = rt_pages(s->cap * sizeof *tmp);
	s->starts = rt_pages(s->cap * sizeof *s->starts);
	s->stack = rt_pages((2 * s->cap + 16) * sizeof *s->stack);
	if (!s->b || !sorted || !pairs || !tmp || !s->starts || !s->stack)
		return false;
	rt_heap_each(add_block, s);
	for (size_t i = 0; i < s->n; i++) {
		pairs[i][0] = s->b[i].addr;
		pairs[i][1] = i;
	}
	if (s->n)
		sort_pairs(pairs, tmp, s->n);
	s->lo = UINTPTR_MAX;
	s->hi = 0;
	for (size_t i = 0; i < s->n; i++) {
		sorted[i] = s->b[pairs[i][1]];
		s->starts[i] = sorted[i].addr;
		uintptr_t end = sorted[i].addr + (sorted[i].size ? sorted[i].size : 1);
		s->lo = sorted[i].addr < s->lo ? sorted[i].addr : s->lo;
		s->hi = end > s->hi ? end : s->hi;
	}
	munmap(s->b, s->cap * sizeof *s->b);
	munmap(pairs, s->cap * sizeof *pairs);
	munmap(tmp, s->cap * sizeof *tmp);
	s->b = sorted;
	return true;
}

/* The block v points into (a zero-sized block: only at its start). */
static long find_block(const scan *s, uintptr_t v)
{
	if (v < s->lo || v >= s->hi)
		return -1;
	size_t l = 0, r = s->n;
	while (l < r) {
		size_t m = (l + r) / 2;
		if (s->starts[m] <= v)
			l = m + 1;
		else
			r = m;
	}
	if (l == 0)
		return -1;
	const lblk *b = &s->b[l - 1];
	if (v - b->addr < b->size || v == b->addr)
		return (long)(l - 1);
	return -1;
}

/* --- the mappings --- */

static uintptr_t hex(const char **p)
{
	uintptr_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* /proc/self/maps, whole, into memory of our own. */
static bool read_maps(scan *s)
{
	size_t cap = 1 << 20;
	s->maps = rt_pages(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (!s->maps || fd < 0)
		return false;
	ssize_t r;
	while ((r = read(fd, s->maps + s->maps_len, cap - 1 - s->maps_len)) > 0) {
		s->maps_len += (size_t)r;
		if (cap - 1 - s->maps_len < 4096) {
			char *m = mremap(s->maps, cap, cap * 2, MREMAP_MAYMOVE);
			if (m == MAP_FAILED)
				break;
			s->maps = m;
			cap *= 2;
		}
	}
	close(fd);
	s->maps[s->maps_len] = '\0';
	return true;
}

static void parse_vma(scan *s, char *line)
{
	const char *p = line;
	vma v = {0};
	v.lo = hex(&p);
	if (*p++ != '-')
		return;
	v.hi = hex(&p);
	if (p[0] != ' ' || !p[1] || !p[2] || !p[3])
		return;
	v.r = p[1] == 'r';
	v.w = p[2] == 'w';
	v.x = p[3] == 'x';
	/* offset, dev, inode */
	for (int f = 0; f < 4 && *p; f++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	v.file = *p == '/';
	v.path = *p ? (uint32_t)(p - s->maps) : 0;
	s->v[s->nv++] = v;
}

static bool parse_maps(scan *s)
{
	size_t lines = 0;
	for (size_t i = 0; i < s->maps_len; i++)
		lines += s->maps[i] == '\n';
	s->v = rt_pages((lines + 1) * sizeof *s->v);
	if (!s->v)
		return false;
	for (char *line = s->maps; line < s->maps + s->maps_len;) {
		char *nl = memchr(line, '\n', (size_t)(s->maps + s->maps_len - line));
		if (nl)
			*nl = '\0';
		parse_vma(s, line);
		line = nl ? nl + 1 : s->maps + s->maps_len;
	}
	return true;
}

static const vma *vma_of(const scan *s, uintptr_t a)
{
	size_t l = 0, r = s->nv;
	while (l < r) {
		size_t m = (l + r) / 2;
		if (s->v[m].hi <= a)
			l = m + 1;
		else
			r = m;
	}
	return l < s->nv && s->v[l].lo <= a ? &s->v[l] : NULL;
}

static const char *path_of(const scan *s, const vma *v) { return v->path ? s->maps + v->path : ""; }

/* Reads memory that may be gone: false instead of a fault. */
static bool safe_read(void *dst, uintptr_t src, size_t n)
{
	struct iovec l = {dst, n}, r = {(void *)src, n};
	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n;
}

/* --- memcheck's heuristics for interior pointers --- */

/* A vtable: in a readable file mapping, with two function pointers into
 * executable file mappings among its first entries and nothing else. */
static bool is_vtable(const scan *s, uintptr_t a)
{
	const vma *v = vma_of(s, a);
	if (!v || !v->file || !v->r)
		return false;
	uintptr_t w[VTABLE_MAX_CHECK];
	size_t n = (v->hi - a) / WORD;
	n = n > VTABLE_MAX_CHECK ? VTABLE_MAX_CHECK : n;
	if (!safe_read(w, a, n * WORD))
		return false;
	int fns = 0;
	for (size_t i = 0; i < n; i++) {
		if (!w[i])
			continue;
		const vma *f = vma_of(s, w[i]);
		if (!f || !f->file || !f->x)
			return false;
		if (++fns == 2)
			return true;
	}
	return false;
}

static int heuristic(const scan *s, const lblk *b, uintptr_t p)
{
	const uintptr_t *w = (const uintptr_t *)b->addr;
	if (p == b->addr + 3 * WORD && b->size >= 3 * WORD && 3 * WORD + w[1] + 1 == b->size &&
	    w[0] <= w[1])
		return H_STDSTRING;
	if (p == b->addr + 8 && b->size >= 8 && w[0] > 0 && b->size - 8 == w[0])
		return H_LENGTH64;
	if (p == b->addr + WORD && b->size >= WORD && w[0] > 0 && (b->size - WORD) % w[0] == 0)
		return H_NEWARRAY;
	if (p % WORD == 0 && p + WORD <= b->addr + b->size && b->size >= WORD) {
		uintptr_t inner = *(const uintptr_t *)p, first = w[0];
		if (inner % WORD == 0 && inner >= 4096 && first % WORD == 0 && first >= 4096 &&
		    is_vtable(s, inner) && is_vtable(s, first))
			return H_MULTIPLE;
	}
	return H_NONE;
}

/* --- marking --- */

static void push(scan *s, long i) { s->stack[s->top++] = (uint32_t)i; }

/* A word from a root or from a block being scanned (prior_definite: that
 * block is reachable, not just possibly). */
static void mark_word(scan *s, uintptr_t v, bool prior_definite)
{
	long i = find_block(s, v);
	if (i < 0)
		return;
	lblk *b = &s->b[i];
	if (s->clique >= 0) {
		if (b->state == ST_UNREACHED && i != s->clique) {
			push(s, i);
			s->b[s->clique].indirect += b->size + b->indirect;
			b->state = ST_INDIRECT;
		}
		return;
	}
	if (b->state == ST_REACHABLE) {
		if (b->heur && v == b->addr)
			b->heur = H_NONE;
		return;
	}
	bool via_start = v == b->addr;
	if (!via_start) {
		b->heur = (uint8_t)heuristic(s, b, v);
		via_start = b->heur != H_NONE;
	}
	if (via_start && prior_definite) {
		b->state = ST_REACHABLE;
		push(s, i);
	} else if (b->state == ST_UNREACHED) {
		b->state = ST_POSSIBLE;
		push(s, i);
	}
}

/* glibc's arena state (main_arena, in libc's data) points at the chunk
 * after the last block (the top chunk), which lies inside the block's
 * last bytes: malloc's bookkeeping, not the program's pointer (under
 * memcheck, glibc's malloc is not even used). */
static bool is_next_chunk(const scan *s, uintptr_t v)
{
	long i = find_block(s, v);
	if (i < 0 || v == s->b[i].addr || s->b[i].addr % 16)
		return false;
	size_t hdr = ((const size_t *)s->b[i].addr)[-1] & ~(size_t)7;
	return v == s->b[i].addr - 16 + hdr;
}

static void scan_words(scan *s, const uintptr_t *w, size_t n, bool prior_definite)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] >= s->lo && w[i] < s->hi && !(s->in_alloc && is_next_chunk(s, w[i])))
			mark_word(s, w[i], prior_definite);
}

static void drain(scan *s)
{
	while (s->top) {
		const lblk *b = &s->b[s->stack[--s->top]];
		bool definite = b->state != ST_POSSIBLE;
		uintptr_t from = (b->addr + WORD - 1) & ~(WORD - 1);
		uintptr_t to = (b->addr + b->size) & ~(WORD - 1);
		if (to > from)
			scan_words(s, (const uintptr_t *)from, (to - from) / WORD, definite);
	}
}

/* A root range, read through a buffer page by page where a read fails. */
static void scan_root(scan *s, uintptr_t lo, uintptr_t hi)
{
	s->in_alloc = false;
	for (size_t k = 0; k < s->nalloc; k++)
		s->in_alloc |= lo < s->alloc[k].hi && hi > s->alloc[k].lo;
	lo = (lo + WORD - 1) & ~(WORD - 1);
	hi &= ~(WORD - 1);
	while (lo < hi) {
		size_t n = hi - lo > sizeof s->buf ? sizeof s->buf : hi - lo;
		if (safe_read(s->buf, lo, n)) {
			scan_words(s, (const uintptr_t *)s->buf, n / WORD, true);
			drain(s);
			lo += n;
			continue;
		}
		uintptr_t page_end = (lo | 4095) + 1;
		n = page_end - lo < n ? page_end - lo : n;
		if (safe_read(s->buf, lo, n)) {
			scan_words(s, (const uintptr_t *)s->buf, n / WORD, true);
			drain(s);
		}
		lo += n;
	}
}

/* --- what is not a root --- */

static void exclude(scan *s, uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo)
		return;
	if (s->nex == s->cex) {
		size_t cap = s->cex ? s->cex * 2 : 4096;
		range *r = rt_pages(cap * sizeof *r);
		if (!r)
			return;
		if (s->ex) {
			memcpy(r, s->ex, s->nex * sizeof *r);
			munmap(s->ex, s->cex * sizeof *r);
		}
		s->ex = r;
		s->cex = cap;
	}
	s->ex[s->nex++] = (range){lo, hi};
}

/* Blocks glibc served with mmap of their own: the chunk header says so
 * (IS_MMAPPED, and the alignment offset in prev_size). Checked against
 * the mappings, so that another allocator's headers exclude nothing. */
static void exclude_mmapped_chunks(scan *s)
{
	for (size_t i = 0; i < s->n; i++) {
		uintptr_t a = s->b[i].addr;
		if (a % 16 || a < 4096)
			continue;
		size_t hdr = ((const size_t *)a)[-1], prev = ((const size_t *)a)[-2];
		if (!(hdr & 2) || (hdr & 1) || prev >= ((size_t)1 << 20))
			continue;
		uintptr_t lo = a - 16 - prev, hi = a - 16 + (hdr & ~(size_t)7);
		const vma *v = vma_of(s, lo);
		if (lo % 4096 == 0 && hi % 4096 == 0 && v && !v->file && v->hi >= hi && hi > a)
			exclude(s, lo, hi);
	}
}

/* glibc's non-main arenas: 64 MiB aligned heaps starting with a heap_info
 * (ar_ptr, prev, size, mprotect_size). */
static void exclude_arenas(scan *s, const vma *v)
{
	for (uintptr_t a = (v->lo + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1); a + 4096 <= v->hi; a += ARENA_ALIGN) {
		const uintptr_t *h = (const uintptr_t *)a;
		bool first = h[0] >= a && h[0] < a + 4096;
		bool later = h[1] && h[1] % ARENA_ALIGN == 0;
		if ((first || later) && h[2] >= 4096 && h[2] <= h[3] && h[3] <= ARENA_ALIGN)
			exclude(s, a, a + h[3]);
	}
}

static int find_allocator(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	scan *s = ctx;
	if (info->dlpi_addr != alloc_base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && s->nalloc < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			/* the bss past the file's pages is an anonymous mapping */
			s->alloc[s->nalloc++] = (range){lo & ~(uintptr_t)4095,
							(lo + ph->p_memsz + 4095) & ~(uintptr_t)4095};
		}
	}
	return 1;
}

static int exclude_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	scan *s = ctx;
	Dl_info self;
	if (!dladdr((void *)exclude_module, &self) || (uintptr_t)self.dli_fbase != info->dlpi_addr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
			uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
			exclude(s, lo & ~(uintptr_t)4095, (lo + ph->p_memsz + 4095) & ~(uintptr_t)4095);
		}
	}
	return 1;
}

/* The part of a thread's stack below its stack pointer is dead. */
static void exclude_below(scan *s, uintptr_t sp)
{
	const vma *v = sp ? vma_of(s, sp) : NULL;
	if (v)
		exclude(s, v->lo, sp - REDZONE > v->lo ? sp - REDZONE : v->lo);
}

static void exclude_cb(void *ctx, uintptr_t lo, uintptr_t hi) { exclude(ctx, lo, hi); }

static void exclude_own(scan *s)
{
	size_t n = s->cap ? s->cap : 1;
	exclude(s, (uintptr_t)s, (uintptr_t)s + sizeof *s);
	exclude(s, (uintptr_t)s->b, (uintptr_t)s->b + n * sizeof *s->b);
	exclude(s, (uintptr_t)s->starts, (uintptr_t)s->starts + n * sizeof *s->starts);
	exclude(s, (uintptr_t)s->stack, (uintptr_t)s->stack + (2 * n + 16) * sizeof *s->stack);
	exclude(s, (uintptr_t)s->v, (uintptr_t)s->v + (s->nv + 1) * sizeof *s->v);
	exclude(s, (uintptr_t)s->maps, (uintptr_t)s->maps + s->maps_len + 1);
	exclude(s, (uintptr_t)parked, (uintptr_t)parked + MAX_PARKED * sizeof *parked);
	dl_iterate_phdr(exclude_module, s);
	if (alloc_base)
		dl_iterate_phdr(find_allocator, s);
	rt_heap_each_map(exclude_cb, s);
	/* at a call the red zone below the caller's stack pointer is dead */
	const vma *self = vma_of(s, s->self_sp);
	if (self)
		exclude(s, self->lo, s->self_sp);
	for (unsigned i = 0; parked && i < atomic_load(&nparked) && i < MAX_PARKED; i++)
		if (atomic_load(&parked[i].ready))
			exclude_below(s, parked[i].sp);
}

static bool is_root_vma(const scan *s, const vma *v)
{
	const char *p = path_of(s, v);
	if (!v->r || !v->w || !strcmp(p, "[heap]") || !strcmp(p, "[vvar]") ||
	    !strcmp(p, "[vsyscall]") || !strcmp(p, "[vdso]"))
		return false;
	if (!strncmp(p, "/dev/", 5) && strcmp(p, "/dev/zero") && strncmp(p, "/dev/shm/", 9))
		return false;
	const char *trace = rt_trace_path();
	return !(trace[0] && !strcmp(p, trace));
}

static void sort_ranges(range *r, size_t n)
{
	for (size_t i = 1; i < n; i++) { /* few and nearly sorted: insertion */
		range x = r[i];
		size_t j = i;
		for (; j > 0 && r[j - 1].lo > x.lo; j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
}

/* --- roots --- */

static void scan_regs(scan *s, const uintptr_t *regs, size_t n)
{
	scan_words(s, regs, n, true);
	drain(s);
}

/* Each root mapping minus the excluded ranges (sorted). */
static void scan_vmas(scan *s)
{
	for (size_t i = 0; i < s->nv; i++) {
		const vma *v = &s->v[i];
		if (!is_root_vma(s, v))
			continue;
		uintptr_t at = v->lo;
		for (size_t k = 0; k < s->nex && at < v->hi; k++) {
			const range *x = &s->ex[k];
			if (x->hi <= at || x->lo >= v->hi)
				continue;
			if (x->lo > at)
				scan_root(s, at, x->lo);
			at = x->hi > at ? x->hi : at;
		}
		if (at < v->hi)
			scan_root(s, at, v->hi);
	}
}

static void scan_roots(scan *s, const entry_state *self)
{
	exclude_mmapped_chunks(s);
	for (size_t i = 0; i < s->nv; i++) {
		const vma *v = &s->v[i];
		if (v->r && v->w && !v->file && v->hi - v->lo >= 4096)
			exclude_arenas(s, v);
	}
	exclude_own(s);
	sort_ranges(s->ex, s->nex);
	scan_vmas(s);
	scan_regs(s, self->regs, ENTRY_REGS);
	for (unsigned i = 0; i < atomic_load(&nparked) && i < MAX_PARKED; i++)
		if (atomic_load(&parked[i].ready))
			scan_regs(s, parked[i].regs, NREGS);
}

/* Lost blocks in address order: each one still unreached leads the
 * clique of the unreached blocks it reaches (indirectly lost). */
static void find_cliques(scan *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->b[i].state != ST_UNREACHED)
			continue;
		s->clique = (int)i;
		push(s, (long)i);
		drain(s);
	}
	s->clique = -1;
}

/* --- results --- */

static int kind_of(const lblk *b)
{
	static const int kinds[] = {[ST_UNREACHED] = KIND_DEFINITE, [ST_INDIRECT] = KIND_INDIRECT,
				    [ST_POSSIBLE] = KIND_POSSIBLE, [ST_REACHABLE] = KIND_REACHABLE};
	return kinds[b->state];
}

static void write_leak(const lblk *b)
{
	uint8_t *p = rt_reserve(1 + 7 * 10 + 2);
	if (!p)
		return;
	*p++ = REC_LEAK;
	p = rt_put_varint(p, b->index);
	p = rt_put_varint(p, b->addr);
	p = rt_put_varint(p, b->size);
	*p++ = (uint8_t)kind_of(b);
	*p++ = b->state == ST_REACHABLE ? b->heur : 0;
	p = rt_put_varint(p, b->fn);
	p = rt_put_varint(p, b->bt);
	p = rt_put_varint(p, b->state == ST_UNREACHED ? b->indirect : 0);
	rt_commit(p);
}

/* LEAKSUM: the totals per kind and per heuristic, and the check's cost. */
static void write_summary(const scan *s, uint64_t us)
{
	uint64_t bytes[5] = {0}, blocks[5] = {0}, hbytes[H_COUNT] = {0}, hblocks[H_COUNT] = {0};
	for (size_t i = 0; i < s->n; i++) {
		const lblk *b = &s->b[i];
		if (!b->fn)
			continue;
		int k = kind_of(b);
		bytes[k] += b->size;
		blocks[k]++;
		if (k == KIND_REACHABLE && b->heur) {
			hbytes[b->heur] += b->size;
			hblocks[b->heur]++;
		}
	}
	uint8_t *p = rt_reserve(2 + 18 * 10);
	if (!p)
		return;
	*p++ = REC_LEAKSUM;
	*p++ = (uint8_t)mode;
	for (int k = KIND_DEFINITE; k <= KIND_REACHABLE; k++) {
		p = rt_put_varint(p, bytes[k]);
		p = rt_put_varint(p, blocks[k]);
	}
	for (int h = H_STDSTRING; h < H_COUNT; h++) {
		p = rt_put_varint(p, hbytes[h]);
		p = rt_put_varint(p, hblocks[h]);
	}
	p = rt_put_varint(p, s->n);
	p = rt_put_varint(p, us);
	rt_commit(p);
}

static void message(const char *text)
{
	uint8_t *p = rt_reserve(1 + 10 + strlen(text));
	if (!p)
		return;
	*p++ = REC_MESSAGE;
	p = rt_put_str(p, text, strlen(text));
	rt_commit(p);
}

static void (*libc_freeres)(void);
static void (*cxx_freeres)(void);

/* Like memcheck, let libstdc++ and glibc give back their own memory
 * first, so that their internals are not reported. Only on exit: after
 * _exit they would flush stdio buffers the program meant to drop. */
static void run_freeres(void)
{
	rt_heap_quiet = 1;
	if (cxx_freeres)
		cxx_freeres();
	if (libc_freeres)
		libc_freeres();
	rt_heap_quiet = 0;
}

/* libstdc++'s __freeres, if libstdc++ is loaded: looked up in it alone,
 * since a failed dlsym leaves an error buffer for libc to free later. */
static int find_cxx_freeres(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	(void)ctx;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "/libstdc++.so"))
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (h) /* not closed: the process is ending, and dlclose does work */
		cxx_freeres = (void (*)(void))dlsym(h, "_ZN9__gnu_cxx9__freeresEv");
	return 1;
}

/* The whole check, in the exiting thread. Other threads stay stopped: the
 * process ends right after. */
static void check_now(bool freeres, const entry_state *self)
{
	uint64_t t0 = now_us();
	stop_threads();
	if (freeres)
		run_freeres();
	rt_t.busy = 1;
	rt_heap_lock_all();
	scan *s = rt_pages(sizeof *s);
	if (!s || !collect_blocks(s) || !read_maps(s) || !parse_maps(s)) {
		rt_heap_unlock_all();
		message("leak check: out of memory, no verdicts");
		return;
	}
	s->clique = -1;
	s->self_sp = self->sp;
	scan_roots(s, self);
	find_cliques(s);
	if (park_sig == 0)
		message("leak check: no free real-time signal to stop other threads with");
	if (mode == LEAK_CHECK_FULL)
		for (size_t i = 0; i < s->n; i++)
			if (s->b[i].fn) /* internal blocks are no verdict of the program's */
				write_leak(&s->b[i]);
	write_summary(s, now_us() - t0);
	/* what is left of exit may still allocate and free (the tracer's
	 * own report, stdio): the table must be usable again */
	rt_heap_unlock_all();
}

/* Called by exit after every destructor (through rt_leak_exit_entry). */
__attribute__((used)) void rt_leak_exit_at(void *arg, const entry_state *self)
{
	(void)arg;
	if (atomic_exchange(&ran, 1))
		return;
	check_now(true, self);
	rt_finish();
}

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

bool rt_leak_defer(void)
{
	if (mode == LEAK_CHECK_NO || !rt_active || getpid() != owner)
		return false;
	libc_freeres = (void (*)(void))dlsym(RTLD_DEFAULT, "__libc_freeres");
	dl_iterate_phdr(find_cxx_freeres, NULL);
	/* registered while exit runs the handlers: glibc runs it after the
	 * handler running now (the destructors), i.e. after every destructor */
	return __cxa_atexit(rt_leak_exit_entry, NULL, NULL) == 0;
}

void rt_leak_fork_child(void)
{
	owner = getpid();
	atomic_store(&ran, 0);
}

/* _exit skips the exit handlers: the check runs here, without freeres. */
__attribute__((used)) void rt_leak__exit_at(int status, const entry_state *self)
{
	if (mode != LEAK_CHECK_NO && rt_active && !rt_t.busy && getpid() == owner &&
	    !atomic_exchange(&ran, 1)) {
		check_now(false, self);
		rt_finish();
	}
	for (;;)
		syscall(SYS_exit_group, status);
}

#if defined(__x86_64__)
/* The entries save the callee-saved registers and the caller's stack
 * pointer before any C code of the tracer can change them, and pass them
 * (on the stack, below the caller's) as an entry_state. */
#define ENTRY_SAVE                                                             \
	"	.cfi_startproc\n"                                              \
	"	endbr64\n"                                                     \
	"	pushq %r15\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r14\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r13\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %r12\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %rbp\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	pushq %rbx\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	leaq 56(%rsp), %rax\n"                                          \
	"	pushq %rax\n	.cfi_adjust_cfa_offset 8\n"                     \
	"	movq %rsp, %rsi\n"
__asm__(".text\n"
	"	.p2align 4\n"
	"	.hidden rt_leak_exit_entry\n"
	"	.globl rt_leak_exit_entry\n"
	"	.type rt_leak_exit_entry, @function\n"
	"rt_leak_exit_entry:\n" ENTRY_SAVE
	"	call rt_leak_exit_at\n"
	"	addq $8, %rsp\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %rbx\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %rbp\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r12\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r13\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r14\n	.cfi_adjust_cfa_offset -8\n"
	"	popq %r15\n	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size rt_leak_exit_entry, .-rt_leak_exit_entry\n"
	"	.p2align 4\n"
	"	.globl _exit\n"
	"	.type _exit, @function\n"
	"	.globl _Exit\n"
	"	.type _Exit, @function\n"
	"_exit:\n"
	"_Exit:\n" ENTRY_SAVE
	"	call rt_leak__exit_at\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	"	.size _exit, .-_exit\n"
	"	.size _Exit, .-_Exit\n");
#else
/* Elsewhere: the registers getcontext saves (the unsaved ones zero) and
 * the entry's frame address, which leaves this frame to the scan. */
static void capture(entry_state *self, uintptr_t frame)
{
	ucontext_t uc;
	park_slot me;
	memset(&uc, 0, sizeof uc);
	getcontext(&uc);
	memset(&me, 0, sizeof me);
	save_regs(&me, &uc);
	memcpy(self->regs, me.regs, sizeof self->regs);
	self->sp = frame;
}

void rt_leak_exit_entry(void *arg)
{
	entry_state self;
	capture(&self, (uintptr_t)__builtin_frame_address(0));
	rt_leak_exit_at(arg, &self);
}

static __attribute__((noreturn)) void exit_now(int status)
{
	entry_state self;
	capture(&self, (uintptr_t)__builtin_frame_address(0));
	rt_leak__exit_at(status, &self);
}

RT_EXPORT void _exit(int status) { exit_now(status); }
RT_EXPORT void _Exit(int status) { exit_now(status); }
#endif
