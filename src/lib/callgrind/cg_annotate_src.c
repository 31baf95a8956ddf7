/* callgrind_annotate's annotated sources: each file of the printed
 * functions (--auto=yes) and each file named on the command line, its
 * lines with costs and the calls made there, with `context` lines around
 * them. The file is read the way callgrind_annotate's Perl loop reads it,
 * including where it stops at the end of the file. */
#define _GNU_SOURCE /* qsort_r */
#include "callgrind/cg_ann.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CG_ANN_ATS "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n"
#define CG_ANN_WARNING "@@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@ WARNING @@\n"

typedef struct src_file {
	char *buf;
	size_t len, pos;
	int64_t nr; /* lines read: Perl's $. */
} src_file;

/* Reads one line as Perl's <FH> does: with its newline, if any. */
static bool src_next(src_file *f, const char **s, size_t *n)
{
	if (f->pos >= f->len)
		return false;
	*s = f->buf + f->pos;
	const char *nl = memchr(*s, '\n', f->len - f->pos);
	*n = nl ? (size_t)(nl - *s) + 1 : f->len - f->pos;
	f->pos += *n;
	f->nr++;
	return true;
}

/* Only regular files are read: a profile naming /dev/zero must not make
 * the report read forever (directories read empty, as in Perl). */
static bool src_load(src_file *f, int fd)
{
	size_t cap = 1 << 16;
	struct stat st;
	memset(f, 0, sizeof *f);
	f->buf = rt_xmalloc(cap);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return true;
	for (;;) {
		if (f->len == cap)
			f->buf = rt_xrealloc(f->buf, cap *= 2);
		ssize_t r = read(fd, f->buf + f->len, cap - f->len);
		if (r <= 0)
			return true; /* a directory reads as empty, as in Perl */
		f->len += (size_t)r;
	}
}

typedef struct src_ctx {
	cg_ann *a;
	uint32_t *w;
	cg_ann_cc printed; /* costs of the annotated lines */
	const uint32_t *lines; /* listed line indices of the file, by line */
	size_t nlines;
} src_ctx;

static void dashes_line(cg_ann *a, int64_t n)
{
	char buf[96];
	snprintf(buf, sizeof buf, "-- line %lld ----------------------------------------\n", (long long)n);
	rt_out_str(&a->out, buf);
}

static int pline_qcmp(const void *x, const void *y, void *ctx)
{
	const cg_ann *a = ctx;
	const cg_ann_pline *p = &a->plines[*(const uint32_t *)x], *q = &a->plines[*(const uint32_t *)y];
	int c = cg_ann_cmp_cc(a, &a->pairs[p->pair].cc, &a->pairs[q->pair].cc);
	return c ? c : cg_ann_name_cmp(a, p->callee, q->callee);
}

/* The calls made on a line by the first function that called there. */
static void print_calls(src_ctx *c, uint32_t file, uint64_t line)
{
	cg_ann *a = c->a;
	const cg_ann_line *l = cg_ann_line_find(a, file, line);
	if (!l || l->func == CG_NONE)
		return;
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t i = l->plines; i != CG_NONE; i = a->plines[i].next)
		RT_PUSH(v, n, cap, i);
	if (n > 1)
		qsort_r(v, n, sizeof *v, pline_qcmp, a);
	for (size_t i = 0; i < n; i++) {
		const cg_ann_pline *pl = &a->plines[v[i]];
		cg_ann_print_cc(a, &pl->cc, c->w);
		rt_out_str(&a->out, " => ");
		cg_ann_name_print(a, pl->callee);
		rt_out_str(&a->out, " (");
		cg_ann_commify(&a->out, pl->count);
		rt_out_str(&a->out, "x)\n");
	}
	free(v);
}

/* The ranges of lines to show: each listed line with `context` lines
 * around it, overlapping ranges merged. */
static size_t line_ranges(const cg_ann *a, const src_ctx *c, size_t first, int64_t *pairs)
{
	int64_t ctx = a->o->context;
	size_t np = 0;
	for (size_t i = first; i < c->nlines; i++) {
		pairs[np++] = (int64_t)a->lines[c->lines[i]].line - ctx;
		while (i + 1 < c->nlines &&
		       (int64_t)a->lines[c->lines[i]].line + 2 * ctx >= (int64_t)a->lines[c->lines[i + 1]].line)
			i++;
		pairs[np++] = (int64_t)a->lines[c->lines[i]].line + ctx;
	}
	if (!np) {
		pairs[np++] = 1; /* Perl: $pairs[0] = 1 on an empty list, then no high */
		pairs[np++] = 0;
	}
	if (pairs[0] < 1)
		pairs[0] = 1;
	return np;
}

/* Prints the ranges of the file; returns the index of the first listed
 * line it did not reach (those past its end). */
static size_t print_ranges(src_ctx *c, src_file *f, uint32_t file, size_t first)
{
	cg_ann *a = c->a;
	int64_t *pairs = rt_xmalloc((2 * c->nlines + 2) * sizeof *pairs);
	size_t np = line_ranges(a, c, first, pairs), next = first;
	cg_ann_cc none = {NULL, 0};
	for (size_t k = 0; k < np; k += 2) {
		int64_t low = pairs[k], high = pairs[k + 1];
		const char *s;
		size_t n;
		while (f->nr < low - 1 && src_next(f, &s, &n))
			;
		if (low != 1)
			dashes_line(a, low);
		bool truthy = false;
		while (f->nr < high) {
			truthy = src_next(f, &s, &n) && !(n == 1 && s[0] == '0');
			if (!truthy)
				break;
			if (next < c->nlines && f->nr == (int64_t)a->lines[c->lines[next]].line) {
				const cg_ann_cc *cc = &a->lines[c->lines[next++]].cc;
				cg_ann_print_cc(a, cc, c->w);
				cg_ann_cc_add(a, &c->printed, cc->v, cc->given);
			} else {
				cg_ann_print_cc(a, &none, c->w);
			}
			rt_out_ch(&a->out, ' ');
			rt_out_mem(&a->out, s, n);
			print_calls(c, file, (uint64_t)f->nr);
		}
		if (!truthy)
			break;
		dashes_line(a, high);
	}
	free(pairs);
	return next;
}

static void warn_past_end(cg_ann *a, bool newer, const char *name)
{
	rt_out *o = &a->out;
	rt_out_str(o, CG_ANN_ATS CG_ANN_WARNING CG_ANN_ATS "@@\n@@ Information recorded about lines past the end of '");
	rt_out_str(o, name);
	rt_out_str(o, "'.\n@@\n@@ Probable cause and solution:\n");
	size_t l = strlen(name);
	if (newer) {
		rt_out_str(o, "@@ cause:    '");
		rt_out_str(o, name);
		rt_out_str(o, "' has changed since information was gathered.\n"
			      "@@           If so, a warning will have already been issued about this.\n"
			      "@@ solution: Recompile program and rerun under \"valgrind --cachesim=yes\" to \n"
			      "@@           gather new information.\n");
	} else if (l >= 2 && !strcmp(name + l - 2, ".h")) {
		rt_out_str(o, "@@ cause:    bug in the Valgrind's debug info reader that screws up with .h\n"
			      "@@           files sometimes\n"
			      "@@ solution: none, sorry\n");
	} else {
		rt_out_str(o, "@@ cause:    not sure, sorry\n");
	}
	rt_out_str(o, "@@\n" CG_ANN_ATS);
}

static void warn_newer(cg_ann *a, const char *name)
{
	rt_out *o = &a->out;
	rt_out_str(o, CG_ANN_ATS CG_ANN_WARNING CG_ANN_ATS "@ Source file '");
	rt_out_str(o, name);
	rt_out_str(o, "' is more recent than input file '");
	rt_out_str(o, a->o->input);
	rt_out_str(o, "'.\n@ Annotations may not be correct.\n" CG_ANN_ATS "\n");
}

static bool newer_than_input(const cg_ann *a, int fd)
{
	struct stat s, in;
	if (fstat(fd, &s))
		return false;
	long long im = a->o->input && !stat(a->o->input, &in) ? (long long)in.st_mtime : 0;
	return (long long)s.st_mtime > im;
}

/* One opened source file with its listed lines. */
static void annotate_file(src_ctx *c, int fd, uint32_t file, const char *name)
{
	cg_ann *a = c->a;
	bool newer = newer_than_input(a, fd);
	if (newer)
		warn_newer(a, name);
	cg_ann_widths_init(a, c->w);
	for (size_t i = 0; i < c->nlines; i++)
		cg_ann_widths_add(a, c->w, &a->lines[c->lines[i]].cc);
	cg_ann_print_events(a, c->w);
	rt_out_str(&a->out, "\n\n");
	bool has0 = c->nlines && a->lines[c->lines[0]].line == 0;
	src_file f;
	src_load(&f, fd);
	size_t next = print_ranges(c, &f, file, has0 ? 1 : 0);
	free(f.buf);
	if (next < c->nlines) {
		for (size_t i = next; i < c->nlines; i++) {
			char buf[48];
			cg_ann_print_cc(a, &a->lines[c->lines[i]].cc, c->w);
			snprintf(buf, sizeof buf, " <bogus line %llu>\n",
				 (unsigned long long)a->lines[c->lines[i]].line);
			rt_out_str(&a->out, buf);
		}
		rt_out_ch(&a->out, '\n');
		warn_past_end(a, newer, a->files.strs[file]);
	}
	rt_out_ch(&a->out, '\n');
	if (has0) {
		cg_ann_print_cc(a, &a->lines[c->lines[0]].cc, c->w);
		rt_out_str(&a->out, " <counts for unidentified lines in ");
		rt_out_str(&a->out, a->files.strs[file]);
		rt_out_str(&a->out, ">\n\n");
	}
}

/* Opens name in the include dirs ("" first) as callgrind_annotate
 * tries them; *shown: how its header names the file. */
static int open_source(cg_ann *a, const char *name, char **shown)
{
	const cg_annotate_opts *o = a->o;
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		*shown = rt_xstrdup(name);
		return fd;
	}
	for (uint32_t i = 0; i < o->ninclude; i++) {
		size_t l = strlen(o->include_dirs[i]);
		if (l && o->include_dirs[i][l - 1] == '/')
			l--;
		size_t n = l + 1 + strlen(name) + 1;
		char *path = rt_xmalloc(n);
		snprintf(path, n, "%.*s/%s", (int)l, o->include_dirs[i], name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd >= 0) {
			n = l + 4 + strlen(name) + 1;
			*shown = rt_xmalloc(n);
			snprintf(*shown, n, "%.*s/ + %s", (int)l, o->include_dirs[i], name);
			return fd;
		}
	}
	return -1;
}

static int file_qcmp(const void *x, const void *y, void *ctx)
{
	const rt_strtab *t = ctx;
	return strcmp(t->strs[*(const uint32_t *)x], t->strs[*(const uint32_t *)y]);
}

static int line_qcmp(const void *x, const void *y, void *ctx)
{
	const cg_ann *a = ctx;
	const cg_ann_line *l = &a->lines[*(const uint32_t *)x], *m = &a->lines[*(const uint32_t *)y];
	if (l->file != m->file)
		return l->file < m->file ? -1 : 1;
	return (l->line > m->line) - (l->line < m->line);
}

/* The files to annotate, sorted by name: the user's, and with --auto the
 * printed functions' files but "???". *user gets a flag per file id. */
static uint32_t *files_to_annotate(cg_ann *a, const uint32_t *tfiles, size_t ntfiles, size_t *n,
				   uint8_t **user)
{
	const cg_annotate_opts *o = a->o;
	uint32_t *ids = rt_xmalloc((o->nuser + ntfiles + 1) * sizeof *ids);
	for (uint32_t i = 0; i < o->nuser; i++)
		ids[i] = rt_strtab_intern(&a->files, o->user_files[i], strlen(o->user_files[i]));
	*user = rt_xcalloc(a->files.n + 1, 1);
	uint8_t *seen = rt_xcalloc(a->files.n + 1, 1);
	size_t k = 0;
	for (uint32_t i = 0; i < o->nuser; i++) {
		(*user)[ids[i]] = 1;
		if (!seen[ids[i]]++)
			ids[k++] = ids[i];
	}
	for (size_t i = 0; !o->no_auto && i < ntfiles; i++)
		if (!seen[tfiles[i]]++ && strcmp(a->files.strs[tfiles[i]], "???"))
			ids[k++] = tfiles[i];
	free(seen);
	qsort_r(ids, k, sizeof *ids, file_qcmp, &a->files);
	*n = k;
	return ids;
}

/* The files that had code (fl=, fi=, fe=): callgrind_annotate has line
 * information for those, even if empty. */
static uint8_t *files_with_info(const cg_ann *a)
{
	uint8_t *has = rt_xcalloc(a->files.n + 1, 1);
	for (size_t c = 0; c < a->p->ncodes; c++)
		has[a->fstrip[a->p->codes[c].file]] = 1;
	return has;
}

static void print_unfound(cg_ann *a, const uint32_t *ids, size_t n)
{
	if (!n)
		return;
	rt_out_str(&a->out, CG_ANN_FANCY "The following files chosen for auto-annotation could not be found:\n" CG_ANN_FANCY);
	for (size_t i = 0; i < n; i++) {
		rt_out_str(&a->out, "  ");
		rt_out_str(&a->out, a->files.strs[ids[i]]);
		rt_out_ch(&a->out, '\n');
	}
	rt_out_ch(&a->out, '\n');
}

/* The last table: the costs of the annotated lines, against the program
 * totals (where those are 0 or smaller, against themselves). */
static void print_annotated_total(cg_ann *a, cg_ann_cc *printed)
{
	cg_ann_cc s = {cg_pool_alloc(&a->pool, a->W), a->summary.given};
	for (uint32_t i = 0; i < a->summary.given; i++) {
		uint64_t pv = i < printed->given ? printed->v[i] : 0;
		s.v[i] = a->summary.v[i] == 0 || pv > a->summary.v[i] ? pv : a->summary.v[i];
	}
	cg_ann_cc saved = a->summary;
	a->summary = s;
	uint32_t *w = rt_xmalloc(a->ncols * sizeof *w);
	cg_ann_widths_init(a, w);
	cg_ann_widths_add(a, w, printed);
	rt_out_str(&a->out, CG_ANN_FANCY);
	cg_ann_print_events(a, w);
	rt_out_str(&a->out, "\n" CG_ANN_FANCY);
	cg_ann_print_cc(a, printed, w);
	rt_out_str(&a->out, " events annotated\n\n");
	a->summary = saved;
	free(w);
}

void cg_ann_sources(cg_ann *a, const uint32_t *tfiles, size_t ntfiles)
{
	uint8_t *user;
	size_t nfiles, nunfound = 0, nl = 0;
	uint32_t *files = files_to_annotate(a, tfiles, ntfiles, &nfiles, &user);
	uint32_t *unfound = rt_xmalloc((nfiles + 1) * sizeof *unfound);
	uint8_t *info = files_with_info(a);
	uint32_t *lines = rt_xmalloc((a->nlines + 1) * sizeof *lines);
	for (size_t i = 0; i < a->nlines; i++)
		if (a->lines[i].listed)
			lines[nl++] = (uint32_t)i;
	qsort_r(lines, nl, sizeof *lines, line_qcmp, a);
	src_ctx c = {a, rt_xmalloc(a->ncols * sizeof(uint32_t)), {NULL, 0}, NULL, 0};
	bool did = false;
	for (size_t i = 0; i < nfiles; i++) {
		uint32_t f = files[i];
		char *shown;
		int fd = open_source(a, a->files.strs[f], &shown);
		if (fd < 0) {
			unfound[nunfound++] = f;
			continue;
		}
		rt_out_str(&a->out, user[f] ? CG_ANN_FANCY "-- User-annotated source: " : CG_ANN_FANCY "-- Auto-annotated source: ");
		rt_out_str(&a->out, shown);
		rt_out_str(&a->out, "\n" CG_ANN_FANCY);
		free(shown);
		if (f >= a->files.n || !info[f]) {
			rt_out_str(&a->out, "  No information has been collected for ");
			rt_out_str(&a->out, a->files.strs[f]);
			rt_out_str(&a->out, "\n\n");
		} else {
			size_t lo = 0;
			while (lo < nl && a->lines[lines[lo]].file < f)
				lo++;
			c.lines = lines + lo;
			for (c.nlines = 0; lo + c.nlines < nl && a->lines[lines[lo + c.nlines]].file == f;)
				c.nlines++;
			annotate_file(&c, fd, f, a->files.strs[f]);
			did = true;
		}
		close(fd);
	}
	print_unfound(a, unfound, nunfound);
	if (did)
		print_annotated_total(a, &c.printed);
	free(c.w);
	free(lines);
	free(info);
	free(unfound);
	free(files);
	free(user);
}
