/* Reading suppression files (rtrace/supp.h): Valgrind's blocks and
 * LeakSanitizer's leak:PATTERN lines, told apart by the first line that
 * is not blank or a comment ("{" is Valgrind's).
 *
 * Lines are taken as valgrind's VG_(get_line) takes them: blank lines
 * and lines whose first non-blank character is '#' are skipped, each
 * line is trimmed of blanks at both ends. A block is read as
 * m_errormgr.c's load_one_suppressions_file reads it (blocks of other
 * tools skipped to their "}", memcheck's extra line for Leak, Param and
 * FishyValue, at least one frame line that is not "..."), but where
 * valgrind says "bad suppression" this reader says at which line and
 * column and what it expected. The set owns everything in one arena. */
#include "supp/supp_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FRAME_LINES 500 /* valgrind's VG_DEEPEST_BACKTRACE */

typedef struct rd {
	rt_supp_set *s;
	const char *buf, *p, *end, *name;
	uint64_t lineno;      /* of the line last taken */
	const char *ls, *le;  /* that line, trimmed */
	uint32_t col;         /* 1-based column of ls */
	rt_diag *err;
} rd;

/* The next line that is neither blank nor a comment, trimmed; false at
 * the end of the input. */
static bool next_line(rd *r)
{
	while (r->p < r->end) {
		const char *b = r->p, *nl = memchr(b, '\n', (size_t)(r->end - b));
		const char *e = nl ? nl : r->end, *s = b, *t;
		r->lineno++;
		r->p = nl ? nl + 1 : r->end;
		while (s < e && isspace((unsigned char)*s))
			s++;
		for (t = e; t > s && isspace((unsigned char)t[-1]);)
			t--;
		if (s == t || *s == '#')
			continue;
		r->ls = s;
		r->le = t;
		r->col = (uint32_t)(s - b + 1);
		return true;
	}
	return false;
}

static bool is(const rd *r, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(r->le - r->ls) == n && !memcmp(r->ls, s, n);
}

static bool starts(const rd *r, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(r->le - r->ls) >= n && !memcmp(r->ls, s, n);
}

static int vfail(rd *r, uint64_t line, uint32_t col, const char *fmt, va_list ap)
{
	r->err->file = r->name;
	r->err->line = line;
	r->err->col = col;
	vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
	return -1;
}

/* An error at column col of the line last taken. */
static int fail(rd *r, uint32_t col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rd *r, uint32_t col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(r, r->lineno, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* An error at the end of the input: its last line and column. */
static int fail_eof(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_eof(rd *r, const char *fmt, ...)
{
	uint64_t line = 1;
	const char *last = r->buf;
	for (const char *p = r->buf; p < r->end; p++)
		if (*p == '\n') {
			line++;
			last = p + 1;
		}
	va_list ap;
	va_start(ap, fmt);
	vfail(r, line, (uint32_t)(r->end - last + 1), fmt, ap);
	va_end(ap);
	return -1;
}

/* The line last taken, for "found '...'" (cut at 60 bytes). */
#define FOUND(r) (int)((r)->le - (r)->ls > 60 ? 60 : (r)->le - (r)->ls), (r)->ls

static const char *copy(rd *r, const char *s, const char *e)
{
	return rt_arena_strndup(&r->s->arena, s, (size_t)(e - s));
}

/* valgrind's tool_name_present: name among the comma separated tools. */
static bool tool_present(const char *tools, const char *end, const char *name)
{
	size_t n = strlen(name);
	for (const char *t = tools; t < end;) {
		const char *c = memchr(t, ',', (size_t)(end - t));
		const char *e = c ? c : end;
		if ((size_t)(e - t) == n && !memcmp(t, name, n))
			return true;
		t = c ? c + 1 : end;
	}
	return false;
}

/* memcheck's suppression kinds (mc_errors.c, MC_(is_recognised_suppression)). */
static bool memcheck_kind(const char *k)
{
	static const char *const kinds[] = {
		"Param", "User", "CoreMem", "Addr1", "Addr2", "Addr4", "Addr8", "Addr16", "Addr32",
		"Jump", "Free", "Leak", "Overlap", "Mempool", "Cond", "Value0", "Value1", "Value2",
		"Value4", "Value8", "Value16", "Value32", "FishyValue", "ReallocZero",
	};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(k, kinds[i]))
			return true;
	return false;
}

/* "definite,possible", "all" or "none" (valgrind's VG_(parse_enum_set)). */
static bool leak_kinds(const char *s, const char *e, unsigned *set)
{
	static const char *const names[] = {"", "definite", "indirect", "possible", "reachable"};
	size_t n = (size_t)(e - s);
	*set = 0;
	if ((n == 3 && !memcmp(s, "all", 3)) || (n == 4 && !memcmp(s, "none", 4))) {
		*set = n == 3 ? 0x1eu : 0;
		return true;
	}
	while (s < e) {
		const char *c = memchr(s, ',', (size_t)(e - s)), *w = c ? c : e;
		unsigned k = 1;
		while (k <= 4 && (strlen(names[k]) != (size_t)(w - s) || memcmp(s, names[k], (size_t)(w - s))))
			k++;
		if (k > 4)
			return false;
		*set |= 1u << k;
		s = c ? c + 1 : e;
		if (c && s == e)
			return false;
	}
	return *set != 0;
}

/* A frame line: "fun:", "obj:", "src:FILE[:LINE]" or "...". */
static bool parse_loc(rd *r, supp_loc *l)
{
	*l = (supp_loc){LOC_DOTS, NULL, 0};
	if (is(r, "..."))
		return true;
	static const char *const pre[] = {"fun:", "obj:", "src:"};
	int t = 0;
	while (t < 3 && !starts(r, pre[t]))
		t++;
	if (t == 3)
		return false;
	const char *s = r->ls + 4, *e = r->le, *c = t == LOC_SRC ? memchr(s, ':', (size_t)(e - s)) : NULL;
	l->ty = (uint8_t)t;
	if (c) { /* src:FILE:LINE */
		uint64_t v = 0;
		for (const char *d = c + 1; d < e; d++) {
			if (!isdigit((unsigned char)*d) || v > UINT32_MAX / 10)
				return false;
			v = v * 10 + (uint64_t)(*d - '0');
		}
		if (!v || v > UINT32_MAX)
			return false;
		l->line = (uint32_t)v;
		e = c;
	}
	l->name = copy(r, s, e);
	return true;
}

static void push(rd *r, const supp *su)
{
	RT_PUSH(r->s->v, r->s->n, r->s->cap, *su);
}

/* The frame lines up to the closing "}"; have_line: the line last taken
 * is the first of them (a Leak block without match-leak-kinds). */
static int read_frames(rd *r, supp *su, bool have_line, uint64_t open)
{
	supp_loc v[MAX_FRAME_LINES];
	uint32_t n = 0, real = 0;
	for (;; have_line = false) {
		if (!have_line && !next_line(r))
			return fail_eof(r, "expected '}' closing the suppression opened at line %" PRIu64
					   ", found end of file", open);
		if (is(r, "}"))
			break;
		if (n == MAX_FRAME_LINES)
			return fail(r, r->col, "expected '}': a suppression has at most %d frame lines",
				    MAX_FRAME_LINES);
		if (!parse_loc(r, &v[n]))
			return fail(r, r->col, "expected a frame line (fun:NAME, obj:NAME, src:FILE[:LINE] or ...), "
					       "found '%.*s'", FOUND(r));
		real += v[n++].ty != LOC_DOTS;
	}
	if (!n)
		return fail(r, r->col, "expected a frame line (fun:, obj:, src: or ...) before '}'");
	if (!real)
		return fail(r, r->col, "expected a fun:, obj: or src: frame line besides '...'");
	su->locs = rt_arena_alloc(&r->s->arena, n * sizeof *v);
	memcpy(su->locs, v, n * sizeof *v);
	su->nlocs = n;
	push(r, su);
	return 0;
}

/* The rest of a block of another tool: skipped to its "}". */
static int skip_block(rd *r, uint64_t open)
{
	while (next_line(r))
		if (is(r, "}"))
			return 0;
	return fail_eof(r, "expected '}' closing the suppression opened at line %" PRIu64 ", found end of file", open);
}

/* memcheck's line after the kind: Param's parameter, FishyValue's
 * function, Leak's optional match-leak-kinds. *have_line: the line taken
 * is a frame line. */
static int read_extra(rd *r, supp *su, bool *have_line)
{
	bool needs = !strcmp(su->kind, "Param") || !strcmp(su->kind, "FishyValue");
	*have_line = false;
	su->leak_kinds = 0x1eu;
	if (!needs && strcmp(su->kind, "Leak"))
		return 0;
	if (!next_line(r))
		return fail_eof(r, "expected %s, found end of file",
				needs ? "the suppression's extra line" : "match-leak-kinds: or a frame line");
	if (needs) {
		if (is(r, "}"))
			return fail(r, r->col, "expected Memcheck:%s's extra line, found '}'", su->kind);
		su->extra = copy(r, r->ls, r->le);
		return 0;
	}
	if (!starts(r, "match-leak-kinds:")) {
		*have_line = true;
		return 0;
	}
	const char *s = r->ls + 17;
	while (s < r->le && isspace((unsigned char)*s))
		s++;
	if (!leak_kinds(s, r->le, &su->leak_kinds))
		return fail(r, r->col + (uint32_t)(s - r->ls),
			    "expected leak kinds (definite, indirect, possible, reachable separated by ',', "
			    "or all or none), found '%.*s'", (int)(r->le - s > 60 ? 60 : r->le - s), s);
	return 0;
}

/* One block, its "{" taken. */
static int read_block(rd *r)
{
	uint64_t open = r->lineno;
	supp su = {0};
	if (!next_line(r))
		return fail_eof(r, "expected the suppression's name, found end of file");
	if (is(r, "}"))
		return fail(r, r->col, "expected the suppression's name, found '}'");
	su.name = copy(r, r->ls, r->le);
	su.line = (uint32_t)r->lineno;
	su.file = r->name;
	if (!next_line(r))
		return fail_eof(r, "expected 'Tool:Kind' (such as Memcheck:Leak), found end of file");
	const char *colon = memchr(r->ls, ':', (size_t)(r->le - r->ls));
	if (is(r, "}") || !colon)
		return fail(r, r->col, "expected 'Tool:Kind' (such as Memcheck:Leak), found '%.*s'", FOUND(r));
	if (!tool_present(r->ls, colon, "Memcheck"))
		return skip_block(r, open);
	su.kind = copy(r, colon + 1, r->le);
	if (!memcheck_kind(su.kind))
		return fail(r, r->col + (uint32_t)(colon + 1 - r->ls),
			    "expected a memcheck suppression kind (Leak, Free, Param, Cond, Value1-32, Addr1-32, "
			    "Jump, Overlap, User, ...), found '%s'", su.kind);
	bool have_line;
	if (read_extra(r, &su, &have_line))
		return -1;
	return read_frames(r, &su, have_line, open);
}

static int read_valgrind(rd *r)
{
	do {
		if (!is(r, "{"))
			return fail(r, r->col, "expected '{' starting a suppression, or end of file, found '%.*s'",
				    FOUND(r));
		if (read_block(r))
			return -1;
	} while (next_line(r));
	return 0;
}

/* leak:PATTERN lines; LeakSanitizer refuses other types in its file. */
static int read_lsan(rd *r)
{
	do {
		if (!starts(r, "leak:"))
			return fail(r, r->col, "expected '{' (a Valgrind suppression) or 'leak:PATTERN' "
					       "(LeakSanitizer), found '%.*s'", FOUND(r));
		supp su = {0};
		su.name = copy(r, r->ls + 5, r->le);
		su.file = r->name;
		su.line = (uint32_t)r->lineno;
		su.kind = "Leak";
		su.lsan = true;
		su.leak_kinds = 0x1eu;
		push(r, &su);
	} while (next_line(r));
	return 0;
}

int rt_supp_read_mem(rt_supp_set *s, const char *buf, size_t len, const char *name, rt_diag *err)
{
	rd r = {s, buf, buf, buf + len, NULL, 0, NULL, NULL, 0, err};
	r.name = rt_arena_strndup(&s->arena, name ? name : "<input>", strlen(name ? name : "<input>"));
	if (!next_line(&r))
		return 0;
	return is(&r, "{") ? read_valgrind(&r) : read_lsan(&r);
}

int rt_supp_read_file(rt_supp_set *s, const char *path, rt_diag *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf = rt_xmalloc(cap);
	ssize_t got = fd < 0 ? -1 : 0;
	while (fd >= 0 && (got = read(fd, buf + len, cap - len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		if ((len += (size_t)got) == cap)
			buf = rt_xrealloc(buf, cap *= 2);
	}
	int rc;
	if (got < 0) {
		*err = (rt_diag){path, 0, 0, {0}};
		snprintf(err->msg, sizeof err->msg, "cannot read the suppressions: %s", strerror(errno));
		rc = -1;
	} else {
		rc = rt_supp_read_mem(s, buf, len, path, err);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

rt_supp_set *rt_supp_new(void)
{
	rt_supp_set *s = rt_xcalloc(1, sizeof *s);
	rt_arena_init(&s->arena);
	return s;
}

void rt_supp_free(rt_supp_set *s)
{
	if (!s)
		return;
	free(s->v);
	rt_arena_free(&s->arena);
	free(s);
}

size_t rt_supp_count(const rt_supp_set *s) { return s->n; }

void rt_supp_get(const rt_supp_set *s, size_t i, rt_supp_info *out)
{
	const supp *su = &s->v[i];
	*out = (rt_supp_info){su->name, su->file, su->line, su->kind, su->lsan};
}
