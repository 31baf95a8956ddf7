/* The /proc/self/maps reader and parser (maps.h). The file is read whole
 * (a line-by-line parse of a file that changes between reads would see
 * mappings twice or not at all), into 1 MiB of fresh pages doubled with
 * mremap as needed: no malloc, no stdio, only system calls that are
 * async-signal-safe. Read with pread from offset 0, so that the reserved
 * descriptor (fdres.h), taken when the program left none free, reads the
 * file afresh each time.
 *
 * The module list is asked of the kernel where it can (PROCMAP_QUERY,
 * Linux 6.11: the executable mappings alone, in maps' line format, ~9 us
 * for a small program where printing and reading the whole file took
 * ~25 us and a 1 MiB buffer; query_modules), else read from the file.
 *
 * The module list (the executable mappings, for MODULE records) is kept
 * from the last read: a forked child has its parent's mappings, so its
 * trace starts from that copy instead of reading the file again (~25 us
 * and 8 system calls of every traced fork: a shell forks before each
 * command). The copy is used only while ld.so has loaded and unloaded
 * the same number of objects as when it was read (dl_iterate_phdr's
 * dlpi_adds and dlpi_subs: dlopen, dlclose, and glibc's own loads of
 * NSS and iconv modules all count); code mapped executable by other
 * means (a JIT's file mapping) shows in the next dlopen's list. */
#define _GNU_SOURCE
#include "maps.h"
#include "fdres.h"
#include "pages.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static rt_fdres maps_res = RT_FDRES_INIT("/proc/self/maps", O_RDONLY);

void rt_maps_reserve(void) { rt_fdres_open(&maps_res); }

char *rt_maps_read(size_t *len, size_t *cap)
{
	size_t n = 0, size = 1 << 20;
	bool fresh = false;
	char *text = rt_pages(size);
	int fd = text ? rt_fdres_get(&maps_res, &fresh) : -1;
	if (fd < 0) {
		int err = errno;
		if (text)
			rt_pages_free(text, size);
		errno = err;
		return NULL;
	}
	ssize_t r;
	while ((r = pread(fd, text + n, size - 1 - n, (off_t)n)) > 0) {
		n += (size_t)r;
		if (size - 1 - n < 4096) {
			char *m = rt_pages_grow(text, size, size * 2);
			if (!m)
				break;
			text = m;
			size *= 2;
		}
	}
	if (fresh)
		close(fd);
	text[n] = '\0';
	*len = n;
	*cap = size;
	return text;
}

static uintptr_t hex(const char **p, const char *end)
{
	uintptr_t v = 0;
	for (; *p < end; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	return p;
}

static const char *skip_field(const char *p, const char *end)
{
	p = skip_spaces(p, end);
	while (p < end && *p != ' ')
		p++;
	return p;
}

static bool parse_line(const char *p, const char *end, rt_maps_line *l)
{
	l->lo = hex(&p, end);
	if (p >= end || *p++ != '-')
		return false;
	l->hi = hex(&p, end);
	if (end - p < 4 || p[0] != ' ')
		return false;
	l->r = p[1] == 'r';
	l->w = p[2] == 'w';
	l->x = p[3] == 'x';
	p = skip_spaces(skip_field(p, end), end); /* perms */
	l->off = hex(&p, end);
	p = skip_spaces(skip_field(skip_field(p, end), end), end); /* dev, inode */
	l->path = p;
	l->path_len = (size_t)(end - p);
	return true;
}

bool rt_maps_next(const char **at, const char *end, rt_maps_line *l)
{
	while (*at < end) {
		const char *line = *at, *eol = line;
		while (eol < end && *eol != '\n' && *eol != '\0')
			eol++;
		*at = eol < end ? eol + 1 : end;
		if (parse_line(line, eol, l))
			return true;
	}
	return false;
}

/* ---- the module list kept for forked children ---- */

enum { SNAP_NONE, SNAP_BUSY, SNAP_READY };

static struct {
	char *text; /* the executable lines of the last read */
	size_t len, cap;
	unsigned long long adds, subs; /* ld.so's counts when it was read */
	pid_t pid;                     /* the process that read it */
} snap;
static _Atomic int snap_state;

static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *n = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		n[0] = info->dlpi_adds;
		n[1] = info->dlpi_subs;
	}
	return 1;
}

/* The executable lines of text[0..len) into the snapshot, under counts
 * taken before the file was read (a load in between makes them stale,
 * which is the safe side). Skipped while another thread writes it. */
static void snap_save(const char *text, size_t len, const unsigned long long n[2])
{
	int ready = SNAP_READY, none = SNAP_NONE;
	if (!atomic_compare_exchange_strong(&snap_state, &ready, SNAP_BUSY) &&
	    !atomic_compare_exchange_strong(&snap_state, &none, SNAP_BUSY))
		return;
	if (snap.text)
		rt_pages_free(snap.text, snap.cap);
	snap.text = rt_pages(len + 1);
	snap.cap = len + 1;
	snap.len = 0;
	rt_maps_line l;
	for (const char *at = text, *line = at; snap.text && rt_maps_next(&at, text + len, &l); line = at) {
		if (!l.x)
			continue;
		memcpy(snap.text + snap.len, line, (size_t)(at - line));
		snap.len += (size_t)(at - line);
	}
	snap.adds = n[0];
	snap.subs = n[1];
	snap.pid = getpid();
	atomic_store(&snap_state, snap.text ? SNAP_READY : SNAP_NONE);
}

/* The snapshot itself, lent (*cap = 0, given back by rt_maps_release),
 * when this is a forked child's first read and ld.so's counts are
 * unchanged; NULL otherwise. Lent, not copied: its pages are the
 * parent's, read without a fault, where a copy was a mapping, its page
 * faults and its unmapping in each of a shell's fork children. It stays
 * busy while lent: a snap_save meanwhile (another thread's dlopen) keeps
 * its own list. */
static char *snap_reuse(const unsigned long long n[2], size_t *len, size_t *cap)
{
	int ready = SNAP_READY;
	if (!atomic_compare_exchange_strong(&snap_state, &ready, SNAP_BUSY))
		return NULL;
	pid_t self = getpid();
	if (snap.pid != self && snap.adds == n[0] && snap.subs == n[1]) {
		*len = snap.len;
		*cap = 0;
		snap.pid = self; /* the child's own from now on */
		return snap.text;
	}
	atomic_store(&snap_state, SNAP_READY);
	return NULL;
}

void rt_maps_release(char *text, size_t cap)
{
	if (text && cap)
		rt_pages_free(text, cap);
	else if (text)
		atomic_store(&snap_state, SNAP_READY);
}

/* ---- the executable mappings asked of the kernel one by one ---- */

/* PROCMAP_QUERY (Linux 6.11, <linux/fs.h>; declared here for older
 * headers): the mapping at or after an address, with a property asked
 * for, its file's name given as /proc/PID/maps would print it. */
struct rt_procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
_Static_assert(sizeof(struct rt_procmap_query) == 104, "struct procmap_query");
#define RT_PROCMAP_QUERY _IOWR('f', 17, struct rt_procmap_query)
enum { PQ_READ = 1, PQ_WRITE = 2, PQ_EXEC = 4, PQ_SHARED = 8, PQ_COVERING_OR_NEXT = 0x10 };

/* Appends "%x" of v (maps' hex: lowercase, at least `width` digits). */
static char *put_hex(char *p, uint64_t v, int width)
{
	char d[16];
	int n = 0;
	do
		d[n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) || n < width);
	while (n)
		*p++ = d[--n];
	return p;
}

/* One line of the maps format for q (parse_line's fields; a newline in
 * the name written as maps writes it, "\012"). */
static char *put_line(char *p, const struct rt_procmap_query *q, const char *name)
{
	p = put_hex(p, q->vma_start, 1);
	*p++ = '-';
	p = put_hex(p, q->vma_end, 1);
	*p++ = ' ';
	*p++ = q->vma_flags & PQ_READ ? 'r' : '-';
	*p++ = q->vma_flags & PQ_WRITE ? 'w' : '-';
	*p++ = q->vma_flags & PQ_EXEC ? 'x' : '-';
	*p++ = q->vma_flags & PQ_SHARED ? 's' : 'p';
	*p++ = ' ';
	p = put_hex(p, q->vma_offset, 8);
	*p++ = ' ';
	p = put_hex(p, q->dev_major, 2);
	*p++ = ':';
	p = put_hex(p, q->dev_minor, 2);
	memcpy(p, " 0 ", 3); /* the inode: no reader of these lines needs it */
	p += 3;
	for (const char *c = name; q->vma_name_size && *c; c++) {
		if (*c == '\n') {
			memcpy(p, "\\012", 4);
			p += 4;
		} else {
			*p++ = *c;
		}
	}
	*p++ = '\n';
	return p;
}

/* PROCMAP_QUERY on fd for the mapping at addr (flags: PQ_*), its name
 * into name (cap bytes): the ioctl's result. */
static int ask(int fd, uint64_t addr, uint64_t flags, char *name, size_t cap, struct rt_procmap_query *q)
{
	*q = (struct rt_procmap_query){.size = sizeof *q, .query_flags = flags, .query_addr = addr,
				       .vma_name_size = (uint32_t)cap, .vma_name_addr = (uintptr_t)name};
	return ioctl(fd, RT_PROCMAP_QUERY, q);
}

/* The name /proc/self/maps gives the file mapped at addr, into out (cap
 * bytes), asked of the kernel (PROCMAP_QUERY) on the reserved
 * descriptor: false without one or without the query (before Linux
 * 6.11), or for a mapping of no file. */
bool rt_maps_file_at(uintptr_t addr, char *out, size_t cap)
{
	int fd = rt_fdres_held(&maps_res);
	if (fd < 0 || cap < 2)
		return false;
	struct rt_procmap_query q;
	int err = errno;
	bool ok = ask(fd, addr, 0, out, cap, &q) == 0 && q.vma_name_size > 1 && out[0] == '/';
	errno = err;
	return ok;
}

/* The executable mappings as maps lines, asked one at a time: ~1.5 us a
 * mapping against ~25 us for the kernel to print every mapping of a
 * small program into /proc/self/maps (and the 1 MiB buffer it is read
 * into), where only the handful of executable ones make MODULE records.
 * What the file prints besides the mappings (x86's [vsyscall] page, no
 * mapping of the process's) is not listed. NULL (nothing allocated)
 * when the kernel has no such query (before Linux 6.11). */
static char *query_modules(size_t *len, size_t *cap)
{
	bool fresh = false;
	int fd = rt_fdres_held(&maps_res); /* no open when the reserved one is there */
	if (fd < 0 && (fd = rt_fdres_get(&maps_res, &fresh)) < 0)
		return NULL;
	char name[4096 + 1]; /* on the stack: dlopens in two threads read at once */
	size_t size = 1 << 16, n = 0;
	char *text = rt_pages(size);
	for (uint64_t addr = 0; text;) {
		struct rt_procmap_query q;
		if (ask(fd, addr, PQ_EXEC | PQ_COVERING_OR_NEXT, name, sizeof name - 1, &q)) {
			if (errno != ENOENT) { /* no such query: the file is read */
				rt_pages_free(text, size);
				text = NULL;
			}
			break;
		}
		name[q.vma_name_size ? q.vma_name_size - 1 : 0] = '\0';
		if (size - n < 4 * sizeof name + 128) {
			char *m = rt_pages_grow(text, size, size * 2);
			if (!m) {
				rt_pages_free(text, size);
				text = NULL;
				break;
			}
			text = m;
			size *= 2;
		}
		n = (size_t)(put_line(text + n, &q, name) - text);
		addr = q.vma_end;
	}
	if (fresh)
		close(fd);
	if (text) {
		text[n] = '\0';
		*len = n;
		*cap = size;
	}
	return text;
}

char *rt_maps_read_modules(size_t *len, size_t *cap)
{
	unsigned long long n[2] = {0, 0};
	dl_iterate_phdr(count_objects, n);
	char *text = snap_reuse(n, len, cap);
	if (text)
		return text;
	int err = errno;
	text = query_modules(len, cap);
	errno = err;
	if (!text)
		text = rt_maps_read(len, cap);
	if (text)
		snap_save(text, *len, n);
	return text;
}
