/* Decompressed copies of separate debug files, by build id.
 *
 * Debian's -dbg and -dbgsym packages install debug files whose DWARF
 * sections are compressed (SHF_COMPRESSED, zlib), and libdw inflates each
 * of them whole whenever it opens the file: 40 ms for libc's, at every
 * run. The resolver keeps a copy with the sections inflated in a cache
 * directory, DIR/<build id>.debug, written once (to a temporary file,
 * renamed into place) and checked at each use: an ELF file with the build
 * id asked for, every section inside the file, none compressed. A copy
 * that fails the check is made again. A cache that cannot be written
 * gives one warning, and the original file is read as before.
 *
 * Files with a .gnu_debugaltlink (dwz) are not copied: the link is a path
 * relative to the original. */
#define _GNU_SOURCE
#include "resolve/resolve_int.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* DIR/<build id in hex>.debug, or with tmp DIR/.<build id>.XXXXXX */
static char *cache_name(const char *dir, const unsigned char *id, size_t len, bool tmp)
{
	char *s = rt_xmalloc(strlen(dir) + 2 * len + sizeof "/..debug.XXXXXX");
	char *p = s + sprintf(s, "%s/%s", dir, tmp ? "." : "");
	for (size_t i = 0; i < len; i++)
		p += sprintf(p, "%02x", id[i]);
	strcpy(p, tmp ? ".XXXXXX" : ".debug");
	return s;
}

static bool host_order(const GElf_Ehdr *eh)
{
	const uint16_t one = 1;
	return eh->e_ident[EI_DATA] == (*(const unsigned char *)&one ? ELFDATA2LSB : ELFDATA2MSB);
}

static bool same_id(Elf *elf, const unsigned char *id, size_t len)
{
	const void *got;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &got);
	return n > 0 && (size_t)n == len && !memcmp(got, id, len);
}

/* The ELF header's tables inside a file of size bytes, read before libelf
 * maps anything. */
static bool header_fits(int fd, uint64_t size)
{
	unsigned char h[sizeof(Elf64_Ehdr)];
	if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG))
		return false;
	uint64_t shoff, shnum, shentsize;
	if (h[EI_CLASS] == ELFCLASS64) {
		const Elf64_Ehdr *e = (const void *)h;
		shoff = e->e_shoff, shnum = e->e_shnum, shentsize = e->e_shentsize;
	} else {
		const Elf32_Ehdr *e = (const void *)h;
		shoff = e->e_shoff, shnum = e->e_shnum, shentsize = e->e_shentsize;
	}
	return shnum && shoff < size && shnum * shentsize <= size - shoff;
}

/* Every section inside the file, none compressed. */
static bool sections_fit(Elf *elf, uint64_t size)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) ||
		    (sh.sh_type != SHT_NOBITS && (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)))
			return false;
	}
	return true;
}

static bool valid_copy(int fd, const unsigned char *id, size_t len)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !header_fits(fd, (uint64_t)st.st_size))
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool ok = elf && elf_kind(elf) == ELF_K_ELF && sections_fit(elf, (uint64_t)st.st_size) &&
		  same_id(elf, id, len);
	elf_end(elf);
	return ok;
}

int rt_resolve_cache_open(const char *dir, const unsigned char *id, size_t len, char **name)
{
	char *path = cache_name(dir, id, len, false);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && valid_copy(fd, id, len)) {
		*name = path;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	free(path);
	return -1;
}

/* A section's compression header: zlib, and the inflated size. */
static bool zlib_section(Elf *elf, Elf_Scn *scn, GElf_Chdr *ch, const unsigned char **data, size_t *n)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);
	size_t hsize = gelf_getclass(elf) == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	if (!raw || !raw->d_buf || raw->d_size < hsize || !gelf_getchdr(scn, ch) ||
	    ch->ch_type != ELFCOMPRESS_ZLIB)
		return false;
	*data = (const unsigned char *)raw->d_buf + hsize;
	*n = raw->d_size - hsize;
	return true;
}

static bool is_section(Elf *elf, size_t shstrndx, const GElf_Shdr *sh, const char *name)
{
	const char *s = elf_strptr(elf, shstrndx, sh->sh_name);
	return s && !strcmp(s, name);
}

/* Whether the debug file open on fd deserves a copy: it has the build id,
 * zlib sections to inflate and nothing else that stands in the way. */
bool rt_resolve_cache_wanted(int fd, const unsigned char *id, size_t len)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t shnum, shstrndx;
	int compressed = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || !host_order(&eh) || eh.e_type == ET_REL ||
	    elf_getshdrnum(elf, &shnum) || shnum != eh.e_shnum || elf_getshdrstrndx(elf, &shstrndx) ||
	    !same_id(elf, id, len))
		compressed = -1;
	for (Elf_Scn *scn = NULL; compressed >= 0 && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		const unsigned char *data;
		size_t n;
		if (!gelf_getshdr(scn, &sh) || is_section(elf, shstrndx, &sh, ".gnu_debugaltlink"))
			compressed = -1;
		else if (sh.sh_flags & SHF_COMPRESSED)
			compressed = zlib_section(elf, scn, &ch, &data, &n) ? compressed + 1 : -1;
	}
	elf_end(elf);
	return compressed > 0;
}

/* A section to inflate: done by two threads. */
typedef struct rt_zjob {
	const unsigned char *src;
	size_t srclen;
	unsigned char *dst;
	size_t dstlen;
	bool ok;
} rt_zjob;

typedef struct rt_zjobs {
	rt_zjob *v;
	size_t n, next; /* next: taken atomically */
} rt_zjobs;

static void *inflate_jobs(void *arg)
{
	rt_zjobs *js = arg;
	size_t i;
	while ((i = __atomic_fetch_add(&js->next, 1, __ATOMIC_RELAXED)) < js->n) {
		rt_zjob *j = &js->v[i];
		uLongf got = j->dstlen;
		uLong used = j->srclen;
		j->ok = uncompress2(j->dst, &got, j->src, &used) == Z_OK && got == j->dstlen;
	}
	return NULL;
}

static int zjob_cmp(const void *a, const void *b)
{
	const rt_zjob *x = a, *y = b;
	return x->dstlen > y->dstlen ? -1 : x->dstlen < y->dstlen;
}

/* Inflates the jobs, biggest first, on this thread and one more. */
static bool inflate_all(rt_zjobs *js)
{
	pthread_t th;
	qsort(js->v, js->n, sizeof *js->v, zjob_cmp);
	bool threaded = js->n > 1 && pthread_create(&th, NULL, inflate_jobs, js) == 0;
	inflate_jobs(js);
	if (threaded)
		pthread_join(th, NULL);
	for (size_t i = 0; i < js->n; i++) {
		if (!js->v[i].ok)
			return false;
	}
	return true;
}

/* Copies in's sections to out, in order, each with its bytes (or its
 * compressed bytes queued in js to inflate, the destination allocated). */
static bool copy_sections(Elf *in, Elf *out, rt_zjobs *js, size_t cap)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(in, scn));) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Scn *to = elf_newscn(out);
		Elf_Data *d = to ? elf_newdata(to) : NULL;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (!d || !raw || !gelf_getshdr(scn, &sh))
			return false;
		d->d_type = ELF_T_BYTE;
		d->d_buf = raw->d_buf;
		d->d_size = raw->d_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			rt_zjob j = {NULL, 0, NULL, 0, false};
			if (!zlib_section(in, scn, &ch, &j.src, &j.srclen) || js->n == cap)
				return false;
			j.dstlen = ch.ch_size;
			j.dst = rt_xmalloc(ch.ch_size ? ch.ch_size : 1);
			js->v[js->n++] = j;
			d->d_buf = j.dst;
			d->d_size = ch.ch_size;
			sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
			sh.sh_size = ch.ch_size;
			sh.sh_addralign = ch.ch_addralign;
		}
		d->d_align = sh.sh_addralign ? sh.sh_addralign : 1;
		if (!gelf_update_shdr(to, &sh))
			return false;
	}
	return true;
}

/* Writes the debug file open on src to out with its sections inflated:
 * the same header, program headers and sections (libelf lays them out
 * anew). */
static bool write_copy(int src, int out)
{
	Elf *in = elf_begin(src, ELF_C_READ_MMAP, NULL), *o = elf_begin(out, ELF_C_WRITE, NULL);
	GElf_Ehdr eh;
	size_t nph = 0, nscn = 0;
	rt_zjobs js = {NULL, 0, 0};
	bool ok = in && o && gelf_getehdr(in, &eh) && !elf_getphdrnum(in, &nph) &&
		  !elf_getshdrnum(in, &nscn) && gelf_newehdr(o, gelf_getclass(in)) &&
		  gelf_update_ehdr(o, &eh) && (!nph || gelf_newphdr(o, nph));
	for (size_t i = 0; ok && i < nph; i++) {
		GElf_Phdr ph;
		ok = gelf_getphdr(in, (int)i, &ph) && gelf_update_phdr(o, (int)i, &ph);
	}
	js.v = rt_xmalloc((nscn ? nscn : 1) * sizeof *js.v);
	ok = ok && copy_sections(in, o, &js, nscn) && inflate_all(&js) && gelf_update_ehdr(o, &eh) &&
	     elf_update(o, ELF_C_WRITE) > 0;
	for (size_t i = 0; i < js.n; i++)
		free(js.v[i].dst);
	free(js.v);
	elf_end(o);
	elf_end(in);
	return ok;
}

/* mkdir -p */
static bool make_dirs(const char *dir)
{
	char *p = rt_xstrdup(dir);
	bool ok = true;
	for (char *s = strchr(p + 1, '/'); ok && s; s = strchr(s + 1, '/')) {
		*s = '\0';
		ok = mkdir(p, 0777) == 0 || errno == EEXIST;
		*s = '/';
	}
	ok = ok && (mkdir(p, 0777) == 0 || errno == EEXIST);
	free(p);
	return ok;
}

int rt_resolve_cache_build(rt_resolver *r, int fd, const unsigned char *id, size_t len, char **name)
{
	const char *dir = r->o.cache_dir;
	char *tmp = cache_name(dir, id, len, true), *path = cache_name(dir, id, len, false);
	int out = make_dirs(dir) ? mkostemp(tmp, O_CLOEXEC) : -1;
	int err = errno;
	bool ok = out >= 0 && write_copy(fd, out);
	if (out >= 0 && !ok)
		err = errno ? errno : EIO;
	if (ok && rename(tmp, path)) {
		ok = false;
		err = errno;
	}
	if (!ok) {
		if (out >= 0) {
			unlink(tmp);
			close(out);
		}
		if (!r->cache_warned)
			rt_resolve_warn(r, "cannot write the debug info cache in '%s': %s; reading debug files "
					"without it", dir, strerror(err));
		r->cache_warned = true;
		free(path);
		path = NULL;
		out = -1;
	}
	free(tmp);
	if (out >= 0)
		lseek(out, 0, SEEK_SET);
	*name = path;
	return out;
}
