/* Unit tests of the Valgrind XML reader (rt_vgxml_read_mem / _fd): the
 * model it builds, real files of tests/data/vgxml compared with an
 * independent naive reading of the same bytes, and the input real life
 * brings: cut-off files, several documents in one file, protocol 1-3
 * quirks, malformed input, entities. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "test_util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrace/vgxml.h"
#include "model/trace_int.h"

/* ---- helpers ---- */

typedef struct seen {
	int nwarn;
	rt_diag warn[16];
	int drop;      /* on_element: 1 drop everything, 0 keep */
	size_t calls;  /* on_element calls */
	size_t maxnodes; /* most nodes seen in a callback */
} seen;

static void on_warn(void *ctx, const rt_diag *d)
{
	seen *s = ctx;
	if (s->nwarn < 16)
		s->warn[s->nwarn] = *d;
	s->nwarn++;
}

static bool on_element(void *ctx, rt_trace *t, uint32_t node)
{
	seen *s = ctx;
	s->calls++;
	assert_true(node < rt_vgxml_node_count(t));
	const rt_vgxml_node *n = rt_vgxml_node_at(t, node);
	assert_int_equal(rt_vgxml_node_at(t, n->parent)->parent, RT_NONE); /* a root's child */
	if (rt_vgxml_node_count(t) > s->maxnodes)
		s->maxnodes = rt_vgxml_node_count(t);
	return !s->drop;
}

/* Callbacks that see warnings, without on_element. */
static seen watch(void)
{
	seen s = {0};
	s.drop = -1;
	return s;
}

static int rd_opts(rt_trace *t, const char *xml, size_t len, seen *s, rt_vgxml_stats *st,
		   rt_diag *err)
{
	rt_vgxml_read_opts o = {s && s->drop >= 0 ? on_element : NULL, on_warn, s};
	return rt_vgxml_read_mem(t, xml, len, "mem.xml", &o, st, err);
}

/* Reads xml that must read without error. */
static rt_trace *rd(const char *xml, seen *s, rt_vgxml_stats *st)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	seen local = watch();
	if (rd_opts(t, xml, strlen(xml), s ? s : &local, st, &err) != 0)
		fail_msg("read failed: %" PRIu64 ":%u: %s", err.line, err.col, err.msg);
	return t;
}

/* Expects an error at line:col whose message contains `what`. */
static void expect_error_n(const char *xml, size_t len, uint64_t line, uint32_t col,
			   const char *what)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	seen s = watch();
	int rc = rd_opts(t, xml, len, &s, NULL, &err);
	rt_trace_free(t);
	if (rc != -1)
		fail_msg("read returned %d; expected an error at %" PRIu64 ":%u", rc, line, col);
	assert_string_equal(err.file, "mem.xml");
	if (err.line != line || err.col != col || !strstr(err.msg, what))
		fail_msg("error at %" PRIu64 ":%u (%s); expected at %" PRIu64 ":%u with '%s'",
			 err.line, err.col, err.msg, line, col, what);
}

static void expect_error(const char *xml, uint64_t line, uint32_t col, const char *what)
{
	expect_error_n(xml, strlen(xml), line, col, what);
}

static uint32_t root(const rt_trace *t, size_t i)
{
	assert_true(i < rt_vgxml_doc_count(t));
	return rt_vgxml_doc_root(t, i);
}

/* The n-th child (0-based) named name. */
static uint32_t nth(const rt_trace *t, uint32_t node, const char *name, int n)
{
	uint32_t c = RT_NONE;
	for (int k = 0; k <= n; k++) {
		c = rt_vgxml_find(t, node, name, c);
		if (c == RT_NONE)
			fail_msg("no <%s> #%d under <%s>", name, n, rt_vgxml_name(t, node));
	}
	return c;
}

static size_t count_children(const rt_trace *t, uint32_t node)
{
	size_t n = 0;
	for (uint32_t c = rt_vgxml_node_at(t, node)->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next)
		n++;
	return n;
}

static const char *text_of(const rt_trace *t, uint32_t node, const char *name)
{
	const char *s = rt_vgxml_child_text(t, node, name);
	if (!s)
		fail_msg("<%s> has no <%s> with text", rt_vgxml_name(t, node), name);
	return s;
}

static const char *str(const rt_trace *t, uint32_t id)
{
	return id == RT_NONE ? "(none)" : rt_trace_str(t, id);
}

static char *data_path(const char *name)
{
	const char *dir = getenv("VGXML_DATA");
	if (!dir)
		fail_msg("VGXML_DATA is not set (tests/CMakeLists.txt sets it)");
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Reads data file name with rt_vgxml_read_fd. */
static int read_file(rt_trace *t, const char *name, seen *s, rt_vgxml_stats *st, rt_diag *err)
{
	char *path = data_path(name);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("cannot open %s", path);
	rt_vgxml_read_opts o = {s->drop >= 0 ? on_element : NULL, on_warn, s};
	int rc = rt_vgxml_read_fd(t, fd, name, &o, st, err);
	close(fd);
	free(path);
	return rc;
}

/* Reads data file name, which must read without error. */
static rt_trace *read_data(const char *name, seen *s, rt_vgxml_stats *st)
{
	rt_trace *t = rt_trace_new();
	rt_diag err;
	*s = watch();
	if (read_file(t, name, s, st, &err))
		fail_msg("%s: %" PRIu64 ":%u: %s", name, err.line, err.col, err.msg);
	return t;
}

/* The first top-level <error> whose <child> has this text, or RT_NONE. */
static uint32_t error_with(const rt_trace *t, uint32_t root, const char *child, const char *text)
{
	for (uint32_t e = rt_vgxml_find(t, root, "error", RT_NONE); e != RT_NONE;
	     e = rt_vgxml_find(t, root, "error", e)) {
		const char *x = rt_vgxml_child_text(t, e, child);
		if (x && !strcmp(x, text))
			return e;
	}
	return RT_NONE;
}

/* ---- a naive reading of Valgrind's layout, to compare with ----
 *
 * Tags without attributes, leaves as <name>text</name>: good enough for
 * what Valgrind writes, and independent of the reader. */

typedef struct ref_leaf {
	char name[40];
	char *text; /* unescaped, "" when blank */
	int stack;  /* inside the stack-th <stack> (1-based), else 0 */
} ref_leaf;

typedef struct ref {
	ref_leaf *leaves;
	size_t n, cap;
	size_t stacks, errors;
} ref;

static char *unescape(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;
	bool blank = true;
	for (size_t i = 0; i < n;) {
		static const struct {
			const char *ent;
			char c;
		} ents[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
		size_t k = 0;
		for (; k < 5; k++)
			if (!strncmp(s + i, ents[k].ent, strlen(ents[k].ent)))
				break;
		char c = k < 5 ? ents[k].c : s[i];
		i += k < 5 ? strlen(ents[k].ent) : 1;
		blank &= c == ' ' || c == '\n';
		*o++ = c;
	}
	*o = '\0';
	if (blank)
		out[0] = '\0';
	return out;
}

static void ref_read(ref *r, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *text = NULL;
	char open[40] = "";
	int depth = 0, top_error = 0, in_stack = 0;
	memset(r, 0, sizeof *r);
	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		if (!strncmp(p, "<?", 2) || !strncmp(p, "<![CDATA[", 9)) {
			p = strstr(p, !strncmp(p, "<?", 2) ? "?>" : "]]>");
			text = NULL;
			continue;
		}
		const char *q = strchr(p, '>');
		bool close = p[1] == '/';
		char name[40];
		snprintf(name, sizeof name, "%.*s", (int)(q - p - 1 - close), p + 1 + close);
		if (!close && !strcmp(name, "usercomment")) {
			p = strstr(p, "</usercomment>") + strlen("</usercomment>");
			text = NULL;
			continue;
		}
		if (close && text && !strcmp(name, open)) {
			if (r->n == r->cap) {
				r->cap = r->cap ? 2 * r->cap : 256;
				r->leaves = realloc(r->leaves, r->cap * sizeof *r->leaves);
			}
			ref_leaf *l = &r->leaves[r->n++];
			snprintf(l->name, sizeof l->name, "%s", name);
			l->text = unescape(text, (size_t)(p - text));
			l->stack = in_stack;
		}
		if (!close) {
			depth++;
			if (depth == 2 && !strcmp(name, "error"))
				top_error++;
			if (!strcmp(name, "stack"))
				in_stack = (int)++r->stacks;
			snprintf(open, sizeof open, "%s", name);
			text = q + 1;
		} else {
			depth--;
			if (!strcmp(name, "stack"))
				in_stack = 0;
			text = NULL;
		}
		p = q + 1;
	}
	r->errors = (size_t)top_error;
}

static void ref_free(ref *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->leaves[i].text);
	free(r->leaves);
}

typedef struct walk {
	const rt_trace *t;
	const ref *r;
	size_t i; /* next reference leaf */
	size_t frames, chains;
} walk;

static const ref_leaf *walk_next(walk *w, const char *name)
{
	if (w->i >= w->r->n)
		fail_msg("the reader has <%s> after the reference's last leaf", name);
	const ref_leaf *l = &w->r->leaves[w->i++];
	if (strcmp(l->name, name))
		fail_msg("leaf %zu: reader <%s>, reference <%s>", w->i - 1, name, l->name);
	return l;
}

/* The reference's fields of one <frame> against one location of a chain. */
static void walk_frame(walk *w, const rt_frame *f, const rt_frame_info *info, uint32_t k)
{
	const ref_leaf *l = walk_next(w, "ip");
	assert_int_equal(strtoull(l->text, NULL, 16), f->addr);
	w->frames++;
	const char *obj = NULL, *fn = NULL, *dir = NULL, *file = NULL, *line = NULL;
	while (w->i < w->r->n && strcmp(w->r->leaves[w->i].name, "ip") &&
	       w->r->leaves[w->i].stack == l->stack) {
		const ref_leaf *x = &w->r->leaves[w->i++];
		const char **slot = !strcmp(x->name, "obj") ? &obj : !strcmp(x->name, "fn") ? &fn
				    : !strcmp(x->name, "dir") ? &dir : !strcmp(x->name, "file") ? &file
				    : &line;
		*slot = x->text;
	}
	if (!info) {
		assert_null(obj);
		assert_null(fn);
		assert_null(file);
		return;
	}
	assert_string_equal(str(w->t, info->module), obj ? obj : "(none)");
	const rt_srcloc *loc = &info->locs[k];
	assert_string_equal(str(w->t, loc->fn), fn ? fn : "(none)");
	char path[4096] = "(none)";
	if (file)
		snprintf(path, sizeof path, "%s%s%s", dir && *dir ? dir : "", dir && *dir ? "/" : "",
			 file);
	assert_string_equal(str(w->t, loc->file), path);
	assert_int_equal(loc->line, line ? strtoul(line, NULL, 10) : 0);
}

static void walk_stack(walk *w, uint32_t bt)
{
	const rt_frame *f = rt_trace_bt_frames(w->t, bt);
	for (uint32_t i = 0; i < rt_trace_bt_len(w->t, bt); i++) {
		rt_frame_info info;
		bool has = rt_trace_frame_info(w->t, &f[i], &info);
		for (uint32_t k = 0; k < (has ? info.n : 1); k++)
			walk_frame(w, &f[i], has ? &info : NULL, k);
		w->chains += has && info.n > 1;
	}
}

static void walk_node(walk *w, uint32_t id)
{
	const rt_vgxml_node *n = rt_vgxml_node_at(w->t, id);
	const char *name = rt_vgxml_name(w->t, id);
	if (n->bt != RT_NONE) {
		assert_string_equal(name, "stack");
		assert_int_equal(n->child, RT_NONE);
		walk_stack(w, n->bt);
		return;
	}
	if (!strcmp(name, "usercomment") || !strcmp(name, "rawtext"))
		return;
	if (n->child == RT_NONE) {
		const ref_leaf *l = walk_next(w, name);
		const char *text = n->text == RT_NONE ? "" : rt_trace_str(w->t, n->text);
		if (strspn(text, " \n") == strlen(text))
			text = "";
		if (strcmp(text, l->text))
			fail_msg("<%s> (leaf %zu): reader \"%s\", reference \"%s\"", name, w->i - 1,
				 text, l->text);
		return;
	}
	for (uint32_t c = n->child; c != RT_NONE; c = rt_vgxml_node_at(w->t, c)->next)
		walk_node(w, c);
}

/* Reads a complete data file both ways (fd, keeping everything) and
 * compares every leaf and frame with the naive reading. Returns the
 * trace; *chains gets the inline chains seen. */
static rt_trace *check_file(const char *name, rt_vgxml_stats *st, size_t *chains)
{
	size_t len;
	char *path = data_path(name);
	char *buf = test_slurp(NULL, path, &len);
	free(path);
	ref r;
	ref_read(&r, buf, len);
	seen s;
	rt_trace *t = read_data(name, &s, st);
	walk w = {t, &r, 0, 0, 0};
	for (size_t d = 0; d < rt_vgxml_doc_count(t); d++)
		walk_node(&w, rt_vgxml_doc_root(t, d));
	assert_int_equal(w.i, r.n);
	assert_int_equal(st->errors, r.errors);
	assert_int_equal(st->bytes, len);
	assert_false(st->truncated);
	if (chains)
		*chains = w.chains;
	ref_free(&r);
	free(buf);
	return t;
}

/* ---- real files ---- */

static void file_memcheck(void **state)
{
	(void)state;
	rt_vgxml_stats st;
	size_t chains;
	rt_trace *t = check_file("memcheck.xml", &st, &chains);
	assert_int_equal(st.docs, 1);
	assert_true(chains >= 1); /* read_past() inlined into invalid_access() */
	uint32_t r = root(t, 0);
	assert_string_equal(text_of(t, r, "protocolversion"), "4");
	assert_string_equal(text_of(t, r, "protocoltool"), "memcheck");
	/* the user comment is raw XML, markup and all */
	uint32_t uc = nth(t, r, "usercomment", 0);
	assert_string_equal(rt_vgxml_text(t, uc),
			    "<run by=\"generate.sh\">tp_vgmem, <b>all kinds</b></run>");
	assert_int_equal(rt_vgxml_node_at(t, uc)->flags, RT_VGXML_RAW);
	/* an argument with XML's special characters, unescaped */
	uint32_t argv = nth(t, nth(t, r, "args", 0), "argv", 0);
	assert_string_equal(text_of(t, argv, "arg"), "x<y&z");
	/* every memcheck kind tp_vgmem provokes */
	static const char *const kinds[] = {
		"InvalidRead", "InvalidWrite", "InvalidFree", "MismatchedFree", "UninitCondition",
		"UninitValue", "SyscallParam", "Overlap", "FishyValue", "InvalidJump",
		"ClientCheck", "InvalidMemPool", "Leak_DefinitelyLost", "Leak_IndirectlyLost",
		"Leak_PossiblyLost", "Leak_StillReachable"};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (error_with(t, r, "kind", kinds[k]) == RT_NONE)
			fail_msg("no <error> of kind %s", kinds[k]);
	/* the named thread, the client messages, suppressions as CDATA */
	assert_int_not_equal(error_with(t, r, "threadname", "vg-worker"), RT_NONE);
	uint32_t msg = nth(t, r, "clientmsg", 0);
	assert_string_equal(text_of(t, msg, "text"),
			    "tp_vgmem: a client message with <markup> & an ampersand\n  ");
	assert_int_not_equal(rt_vgxml_find(t, nth(t, r, "clientmsg", 1), "stack", RT_NONE), RT_NONE);
	uint32_t raw = nth(t, nth(t, nth(t, r, "error", 0), "suppression", 0), "rawtext", 0);
	assert_int_equal(rt_vgxml_node_at(t, raw)->flags, RT_VGXML_CDATA);
	assert_true(rt_vgxml_text(t, raw)[0] == '\n' && strstr(rt_vgxml_text(t, raw), "Memcheck:"));
	/* a leak's figures inside its <xwhat> */
	uint32_t xw = nth(t, error_with(t, r, "kind", "Leak_DefinitelyLost"), "xwhat", 0);
	assert_non_null(strstr(text_of(t, xw, "text"), "definitely lost"));
	assert_non_null(rt_vgxml_child_text(t, xw, "leakedbytes"));
	assert_string_equal(text_of(t, nth(t, r, "status", 1), "state"), "FINISHED");
	rt_trace_free(t);
}

static void file_memcheck_segv(void **state)
{
	(void)state;
	rt_vgxml_stats st;
	rt_trace *t = check_file("memcheck-segv.xml", &st, NULL);
	uint32_t fs = nth(t, root(t, 0), "fatal_signal", 0);
	assert_string_equal(text_of(t, fs, "signo"), "11");
	assert_string_equal(text_of(t, fs, "signame"), "SIGSEGV");
	assert_string_equal(text_of(t, fs, "siaddr"), "0x0");
	assert_non_null(rt_vgxml_child_text(t, fs, "sicode"));
	assert_non_null(rt_vgxml_child_text(t, fs, "event"));
	const rt_vgxml_node *stack = rt_vgxml_node_at(t, nth(t, fs, "stack", 0));
	const rt_frame *f = rt_trace_bt_frames(t, stack->bt);
	assert_non_null(strstr(rt_trace_str(t, f[0].text), "main() at "));
	rt_trace_free(t);
}

static void file_helgrind_drd(void **state)
{
	(void)state;
	rt_vgxml_stats st;
	rt_trace *t = check_file("helgrind.xml", &st, NULL);
	uint32_t r = root(t, 0);
	assert_string_equal(text_of(t, r, "protocoltool"), "helgrind");
	uint32_t at = nth(t, r, "announcethread", 0);
	assert_non_null(rt_vgxml_child_text(t, at, "hthreadid"));
	assert_int_not_equal(error_with(t, r, "kind", "Race"), RT_NONE);
	assert_int_not_equal(error_with(t, r, "kind", "UnlockUnlocked"), RT_NONE);
	uint32_t order = error_with(t, r, "kind", "LockOrder");
	assert_non_null(rt_vgxml_child_text(t, nth(t, order, "xwhat", 0), "hthreadid"));
	rt_trace_free(t);

	t = check_file("drd.xml", &st, NULL);
	r = root(t, 0);
	assert_string_equal(text_of(t, r, "protocoltool"), "drd");
	uint32_t e = nth(t, r, "error", 0);
	assert_string_equal(text_of(t, e, "kind"), "ConflictingAccess");
	/* drd's own elements: a segment with its stacks */
	assert_int_not_equal(rt_vgxml_find(t, e, "other_segment_start", RT_NONE), RT_NONE);
	rt_trace_free(t);
}

static void file_protocols_5_6(void **state)
{
	(void)state;
	rt_vgxml_stats st;
	rt_trace *t = check_file("proto5.xml", &st, NULL);
	uint32_t e = nth(t, root(t, 0), "error", 0);
	assert_string_equal(text_of(t, e, "kind"), "FdBadClose");
	assert_string_equal(text_of(t, e, "fd"), "3");
	assert_string_equal(text_of(t, e, "path"), "/tmp/data & more.txt");
	assert_int_equal(st.errors, 3);
	rt_trace_free(t);

	seen s;
	t = read_data("proto6.xml", &s, &st);
	assert_int_equal(s.nwarn, 0); /* every protocol 6 element is known */
	rt_trace_free(t);
	t = check_file("proto6.xml", &st, NULL);
	assert_int_equal(st.docs, 2);
	uint32_t r = root(t, 0);
	static const char *const kinds[] = {"ReallocSizeZero", "InvalidSizeAndAlignment",
					    "InvalidAlignment", "InvalidSize",
					    "MismatchedAllocateDeallocateSize",
					    "MismatchedAllocateDeallocateAlignment"};
	for (int k = 0; k < 6; k++)
		assert_string_equal(text_of(t, nth(t, r, "error", k), "kind"), kinds[k]);
	uint32_t es = nth(t, r, "error_summary", 0);
	assert_string_equal(text_of(t, es, "errors"), "7");
	assert_string_equal(text_of(t, es, "suppressed_contexts"), "0");
	uint32_t hs = nth(t, r, "heap_summary", 0);
	assert_string_equal(text_of(t, nth(t, hs, "memory_in_use_at_exit", 0), "blocks"), "2");
	assert_string_equal(text_of(t, nth(t, hs, "total_heap_usage", 0), "bytes_allocated"), "73,808");
	uint32_t ls = nth(t, r, "leak_summary", 0);
	assert_string_equal(text_of(t, nth(t, ls, "definitely_lost", 0), "in_blocks"), "1");
	uint32_t sr = nth(t, ls, "still_reachable", 0);
	uint32_t rh = nth(t, sr, "reachable_heuristic", 0);
	assert_string_equal(text_of(t, rh, "kind"), "stdstring");
	assert_string_equal(text_of(t, rh, "blocks"), "1");
	assert_string_equal(text_of(t, nth(t, ls, "suppressed", 0), "bytes"), "0");
	/* the second document: no leaks; an empty element has no text */
	uint32_t freed = nth(t, root(t, 1), "all_heap_blocks_freed", 0);
	assert_int_equal(rt_vgxml_node_at(t, freed)->text, RT_NONE);
	assert_int_equal(rt_vgxml_node_at(t, freed)->child, RT_NONE);
	rt_trace_free(t);
}

/* Protocols 1-3 as they are written: the spec's unclosed
 * <protocolversion>, bare '&' and '<' in texts, leak figures outside an
 * <xwhat>, suppression counts before the leak errors (protocol 1). */
static void file_protocols_1_3(void **state)
{
	(void)state;
	static const char *const files[] = {"proto1.xml", "proto2.xml", "proto3.xml"};
	for (int v = 0; v < 3; v++) {
		seen s;
		rt_vgxml_stats st;
		rt_trace *t = read_data(files[v], &s, &st);
		assert_int_equal(s.nwarn, 1); /* one warning for the repairs */
		assert_non_null(strstr(s.warn[0].msg, "unescaped"));
		uint32_t r = root(t, 0);
		char num[2] = {(char)('1' + v), 0};
		assert_string_equal(text_of(t, r, "protocolversion"), num);
		assert_int_equal(rt_vgxml_find(t, r, "protocoltool", RT_NONE), RT_NONE);
		rt_trace_free(t);
	}
	seen s;
	rt_vgxml_stats st;
	rt_trace *t = read_data("proto1.xml", &s, &st);
	assert_int_equal(s.warn[0].line, 17); /* build&test */
	assert_int_equal(s.warn[0].col, 48);
	uint32_t r = root(t, 0);
	uint32_t lq = nth(t, r, "logfilequalifier", 0);
	assert_string_equal(text_of(t, lq, "value"), "build&test<1>");
	assert_string_equal(rt_vgxml_text(t, nth(t, r, "usercomment", 0)),
			    "nightly run of <b>tests &amp; tools</b>");
	uint32_t argv = nth(t, nth(t, r, "args", 0), "argv", 0);
	assert_string_equal(rt_vgxml_text(t, nth(t, argv, "arg", 0)), "a<b&c");
	assert_string_equal(rt_vgxml_text(t, nth(t, argv, "arg", 1)), "& <ok>");
	uint32_t e = nth(t, r, "error", 0);
	assert_string_equal(text_of(t, e, "what"), "Invalid read of size 4 in operator<< & friends");
	const rt_vgxml_node *stack = rt_vgxml_node_at(t, nth(t, e, "stack", 0));
	const rt_frame *f = rt_trace_bt_frames(t, stack->bt);
	assert_string_equal(str(t, f[0].text),
			    "std::ostream& operator<<(std::ostream&, T const&) at /home/u/app.cc:12");
	assert_string_equal(text_of(t, nth(t, nth(t, r, "suppcounts", 0), "pair", 0), "name"),
			    "dl-hack3 <ld.so>");
	/* protocol 1: suppression counts, then the leaks, figures outside <xwhat> */
	uint32_t leak = nth(t, r, "error", 1);
	assert_true(rt_vgxml_find(t, r, "suppcounts", RT_NONE) < leak);
	assert_string_equal(text_of(t, leak, "leakedbytes"), "100");
	assert_string_equal(text_of(t, leak, "leakedblocks"), "1");
	assert_int_equal(st.errors, 3);
	rt_trace_free(t);
}

/* Protocol 3: an inline chain, two <auxwhat>s, an <origin>. */
static void file_protocol_3(void **state)
{
	(void)state;
	seen s;
	rt_vgxml_stats st;
	rt_trace *t = read_data("proto3.xml", &s, &st);
	uint32_t e = nth(t, root(t, 0), "error", 0);
	assert_string_equal(rt_vgxml_text(t, nth(t, e, "auxwhat", 1)),
			    "Address 0x41A3028 is 8 bytes inside data symbol \"table<int>\"");
	uint32_t origin = nth(t, e, "origin", 0);
	assert_non_null(rt_vgxml_child_text(t, origin, "what"));
	assert_int_equal(rt_trace_bt_len(t, rt_vgxml_node_at(t, nth(t, origin, "stack", 0))->bt), 2);
	assert_string_equal(text_of(t, nth(t, nth(t, root(t, 0), "suppcounts", 0), "pair", 0), "name"),
			    "glibc <2.5> & friends");
	rt_trace_free(t);
}

/* ---- the model ---- */

#define HEAD "<?xml version=\"1.0\"?>\n<valgrindoutput>\n<protocolversion>4</protocolversion>\n"
#define TAIL "</valgrindoutput>\n"

static void texts(void **state)
{
	(void)state;
	rt_trace *t = rd(HEAD
			 "<preamble>\n  <line>  spaces kept  </line>\n  <line></line>\n"
			 "  <line> </line>\n</preamble>\n"
			 "<pid>&#52;2</pid>\n"
			 "<tool>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;</tool>\n"
			 "<errorcounts>\n</errorcounts>\n"
			 "<suppcounts></suppcounts>\n"
			 "<status>mixed <state>RUNNING</state> content dropped</status>\n"
			 "<args><argv><exe>line\nbreak</exe></argv></args>\n"
			 "<unknownthing>  \n</unknownthing>\n"
			 TAIL, NULL, NULL);
	uint32_t r = root(t, 0);
	assert_int_equal(rt_vgxml_node_at(t, r)->text, RT_NONE);
	uint32_t pre = nth(t, r, "preamble", 0);
	assert_string_equal(rt_vgxml_text(t, nth(t, pre, "line", 0)), "  spaces kept  ");
	assert_null(rt_vgxml_text(t, nth(t, pre, "line", 1)));          /* empty: no text */
	assert_string_equal(rt_vgxml_text(t, nth(t, pre, "line", 2)), " "); /* a leaf's blank */
	assert_int_equal(rt_vgxml_node_at(t, pre)->text, RT_NONE);     /* between children */
	assert_string_equal(text_of(t, r, "pid"), "42");
	assert_string_equal(text_of(t, r, "tool"), "a <b> & \"c\" 'd'");
	/* containers with nothing inside have neither text nor children */
	for (int k = 0; k < 2; k++) {
		const rt_vgxml_node *n = rt_vgxml_node_at(t, nth(t, r, k ? "suppcounts" : "errorcounts", 0));
		assert_int_equal(n->text, RT_NONE);
		assert_int_equal(n->child, RT_NONE);
	}
	uint32_t st = nth(t, r, "status", 0);
	assert_int_equal(rt_vgxml_node_at(t, st)->text, RT_NONE);
	assert_string_equal(text_of(t, st, "state"), "RUNNING");
	assert_string_equal(text_of(t, nth(t, nth(t, r, "args", 0), "argv", 0), "exe"), "line\nbreak");
	/* an unknown element is kept, its blank text too (not a known container) */
	assert_string_equal(rt_vgxml_text(t, nth(t, r, "unknownthing", 0)), "  \n");
	assert_string_equal(rt_vgxml_name(t, rt_vgxml_node_at(t, r)->child), "protocolversion");
	rt_trace_free(t);
}

static void usercomment_raw(void **state)
{
	(void)state;
	rt_trace *t = rd(HEAD
			 "<usercomment>a &amp; <b x=\"1\">bold</b><!-- c --><![CDATA[<x>]]>"
			 "<?pi z?>&#65;<e/></usercomment>\n"
			 "<usercomment></usercomment>\n"
			 "<tool>after</tool>\n" TAIL, NULL, NULL);
	uint32_t r = root(t, 0);
	uint32_t uc = nth(t, r, "usercomment", 0);
	assert_string_equal(rt_vgxml_text(t, uc), "a &amp; <b x=\"1\">bold</b><!-- c --><![CDATA[<x>]]>"
					       "<?pi z?>&#65;<e/>");
	assert_int_equal(rt_vgxml_node_at(t, uc)->flags, RT_VGXML_RAW);
	assert_int_equal(rt_vgxml_node_at(t, uc)->child, RT_NONE);
	assert_null(rt_vgxml_text(t, nth(t, r, "usercomment", 1)));
	assert_string_equal(text_of(t, r, "tool"), "after");
	rt_trace_free(t);
}

static void rawtext_cdata(void **state)
{
	(void)state;
	rt_trace *t = rd(HEAD
			 "<error><suppression>\n  <rawtext>\n<![CDATA[\n{\n  a]]]]><![CDATA[>b\n}\n]]>\n"
			 "  </rawtext>\n</suppression></error>\n"
			 "<error><suppression><rawtext>plain &amp; text</rawtext></suppression></error>\n"
			 TAIL, NULL, NULL);
	uint32_t r = root(t, 0);
	uint32_t raw = nth(t, nth(t, nth(t, r, "error", 0), "suppression", 0), "rawtext", 0);
	assert_string_equal(rt_vgxml_text(t, raw), "\n{\n  a]]>b\n}\n");
	assert_int_equal(rt_vgxml_node_at(t, raw)->flags, RT_VGXML_CDATA);
	raw = nth(t, nth(t, nth(t, r, "error", 1), "suppression", 0), "rawtext", 0);
	assert_string_equal(rt_vgxml_text(t, raw), "plain & text");
	assert_int_equal(rt_vgxml_node_at(t, raw)->flags, 0);
	rt_trace_free(t);
}

#define FRAME(ip, rest) "<frame><ip>" ip "</ip>" rest "</frame>\n"

static void stack_frames(void **state)
{
	(void)state;
	rt_trace *t = rd(HEAD "<error><stack>\n"
			 /* an inline chain: three <frame>s at one ip */
			 FRAME("0x401000", "<obj>/bin/app</obj><fn>inner</fn><dir>/src</dir>"
				"<file>a.h</file><line>3</line>")
			 FRAME("0x401000", "<obj>/bin/app</obj><fn>middle</fn><dir>/src</dir>"
				"<file>a.c</file><line>10</line>")
			 FRAME("0x401000", "<obj>/bin/app</obj><fn>outer(int)</fn><dir></dir>"
				"<file>b.c</file><line>20</line>")
			 /* recursion: identical frames stay apart */
			 FRAME("0x402000", "<obj>/bin/app</obj><fn>rec</fn><file>r.c</file><line>5</line>")
			 FRAME("0x402000", "<obj>/bin/app</obj><fn>rec</fn><file>r.c</file><line>5</line>")
			 /* the other text forms */
			 FRAME("0x403000", "<obj>/lib/libc.so.6</obj><fn>malloc</fn>")
			 FRAME("0x404000", "<fn>lonely</fn>")
			 FRAME("0x405000", "<obj>/lib/ld.so</obj>")
			 FRAME("0x406000", "")
			 FRAME("0x407000", "<obj>/bin/app</obj><file>x.c</file><line>7</line>")
			 "</stack></error>\n" TAIL, NULL, NULL);
	uint32_t e = nth(t, root(t, 0), "error", 0);
	const rt_vgxml_node *sn = rt_vgxml_node_at(t, nth(t, e, "stack", 0));
	assert_int_equal(sn->child, RT_NONE);
	assert_int_equal(sn->text, RT_NONE);
	assert_int_equal(rt_trace_bt_len(t, sn->bt), 8);
	const rt_frame *f = rt_trace_bt_frames(t, sn->bt);
	static const char *const want[] = {"inner() at /src/a.h:3", "rec() at r.c:5", "rec() at r.c:5",
					   "malloc() from /lib/libc.so.6", "lonely()", "from /lib/ld.so",
					   "(none)", "from /bin/app"};
	static const uint64_t addrs[] = {0x401000, 0x402000, 0x402000, 0x403000,
					 0x404000, 0x405000, 0x406000, 0x407000};
	for (int i = 0; i < 8; i++) {
		assert_int_equal(f[i].addr, addrs[i]);
		assert_string_equal(str(t, f[i].text), want[i]);
	}
	rt_frame_info info;
	assert_true(rt_trace_frame_info(t, &f[0], &info));
	assert_string_equal(str(t, info.module), "/bin/app");
	assert_int_equal(info.n, 3);
	static const char *const fns[] = {"inner", "middle", "outer(int)"};
	static const char *const files[] = {"/src/a.h", "/src/a.c", "b.c"};
	static const uint32_t lines[] = {3, 10, 20};
	for (int k = 0; k < 3; k++) {
		assert_string_equal(str(t, info.locs[k].fn), fns[k]);
		assert_string_equal(str(t, info.locs[k].file), files[k]);
		assert_int_equal(info.locs[k].line, lines[k]);
		assert_int_equal(info.locs[k].flags, 0);
	}
	assert_true(rt_trace_frame_info(t, &f[1], &info));
	assert_int_equal(info.n, 1);
	assert_true(rt_trace_frame_info(t, &f[4], &info));
	assert_int_equal(info.module, RT_NONE);
	assert_false(rt_trace_frame_info(t, &f[6], &info)); /* an ip alone: nothing to keep */
	assert_true(rt_trace_frame_info(t, &f[7], &info));
	assert_int_equal(info.locs[0].fn, RT_NONE);
	assert_string_equal(str(t, info.locs[0].file), "x.c");
	rt_trace_free(t);
}

/* The same stack twice is one backtrace; a chain cut short (by
 * --num-callers) keeps the longer chain's details. */
static void stack_repeats(void **state)
{
	(void)state;
	rt_frame_info info;
	rt_trace *t = rd(HEAD "<error><stack>"
	       FRAME("0x10", "<fn>a</fn><line>1</line>") FRAME("0x10", "<fn>b</fn><line>2</line>")
	       "</stack><stack>"
	       FRAME("0x10", "<fn>a</fn><line>1</line>") FRAME("0x10", "<fn>b</fn><line>2</line>")
	       "</stack><stack>" FRAME("0x10", "<fn>a</fn><line>1</line>")
	       "</stack><stack></stack></error>" TAIL, NULL, NULL);
	uint32_t e = nth(t, root(t, 0), "error", 0);
	uint32_t bt0 = rt_vgxml_node_at(t, nth(t, e, "stack", 0))->bt;
	assert_int_equal(rt_vgxml_node_at(t, nth(t, e, "stack", 1))->bt, bt0);
	uint32_t bt2 = rt_vgxml_node_at(t, nth(t, e, "stack", 2))->bt;
	assert_int_equal(rt_trace_bt_len(t, bt2), 1);
	assert_true(rt_trace_frame_info(t, rt_trace_bt_frames(t, bt2), &info));
	assert_int_equal(info.n, 2);
	assert_int_equal(rt_trace_bt_len(t, rt_vgxml_node_at(t, nth(t, e, "stack", 3))->bt), 0);
	rt_trace_free(t);
}

static void stack_odd_content(void **state)
{
	(void)state;
	seen s = watch();
	rt_trace *t = rd(HEAD "<error><stack><frame><ip>zz</ip><obj>o</obj><extra>x</extra></frame>"
			 "<note>n</note><note>m</note></stack><kind>k</kind></error>" TAIL, &s, NULL);
	uint32_t e = nth(t, root(t, 0), "error", 0);
	const rt_vgxml_node *sn = rt_vgxml_node_at(t, nth(t, e, "stack", 0));
	assert_int_equal(rt_trace_bt_len(t, sn->bt), 1);
	assert_int_equal(rt_trace_bt_frames(t, sn->bt)[0].addr, 0);
	assert_string_equal(text_of(t, e, "kind"), "k");
	assert_int_equal(s.nwarn, 3); /* bad ip, <extra>, <note> once */
	rt_trace_free(t);
}

static void warnings_unknown(void **state)
{
	(void)state;
	seen s = watch();
	rt_trace *t = rd(HEAD "<x1>a</x1><x1>b</x1><x2 attr=\"v\"><x1/></x2>" TAIL, &s, NULL);
	assert_int_equal(s.nwarn, 3); /* <x1>, <x2>, the attribute */
	assert_non_null(strstr(s.warn[0].msg, "<x1>"));
	assert_int_equal(s.warn[0].line, 4);
	assert_int_equal(s.warn[0].col, 1);
	assert_int_equal(count_children(t, nth(t, root(t, 0), "x2", 0)), 1);
	rt_trace_free(t);
}

/* ---- real life ---- */

#define DOC HEAD "<protocoltool>memcheck</protocoltool>\n" \
	"<error>\n  <unique>0x1</unique>\n  <kind>InvalidRead</kind>\n  <stack>\n" \
	"    <frame><ip>0x1</ip><fn>f</fn></frame>\n  </stack>\n</error>\n" \
	"<errorcounts>\n</errorcounts>\n" TAIL

/* Every complete element is kept, the open top-level one is not. */
static void check_cut(const rt_trace *t, size_t cut)
{
	for (size_t i = 0; i < rt_vgxml_node_count(t); i++) {
		const rt_vgxml_node *n = rt_vgxml_node_at(t, (uint32_t)i);
		if (n->parent == RT_NONE)
			continue;
		/* a top-level element is there only when its end tag was read */
		if (rt_vgxml_node_at(t, n->parent)->parent == RT_NONE) {
			char end[64];
			snprintf(end, sizeof end, "</%s>", rt_vgxml_name(t, (uint32_t)i));
			if (!strcmp(rt_vgxml_name(t, (uint32_t)i), "protocolversion"))
				continue;
			const char *hit = strstr(DOC, end);
			assert_non_null(hit);
			assert_true((size_t)(hit - DOC) + strlen(end) <= cut);
		}
	}
}

static void truncated_everywhere(void **state)
{
	(void)state;
	size_t len = strlen(DOC), root_end = (size_t)(strstr(DOC, "<valgrindoutput>") - DOC) + 16;
	for (size_t cut = 0; cut < len; cut++) {
		rt_trace *t = rt_trace_new();
		seen s = watch();
		rt_vgxml_stats st;
		rt_diag err;
		int rc = rd_opts(t, DOC, cut, &s, &st, &err);
		if (cut < root_end) { /* no root yet */
			assert_int_equal(rc, -1);
			assert_non_null(strstr(err.msg, "expected"));
		} else if (cut < len - 1) {
			if (rc != 0 || !st.truncated || s.nwarn != 1)
				fail_msg("cut at %zu: rc %d truncated %d warnings %d", cut, rc, st.truncated, s.nwarn);
			assert_non_null(strstr(s.warn[0].msg, "input ends inside <"));
			assert_int_equal(rt_vgxml_doc_count(t), 1);
			check_cut(t, cut);
		}
		rt_trace_free(t);
	}
}

static void truncated_message(void **state)
{
	(void)state;
	const char *cut = strstr(DOC, "<kind>");
	char *doc = strndup(DOC, (size_t)(cut - DOC) + 4);
	rt_trace *t = rt_trace_new();
	seen s = watch();
	rt_vgxml_stats st;
	rt_diag err;
	assert_int_equal(rd_opts(t, doc, strlen(doc), &s, &st, &err), 0);
	assert_true(st.truncated);
	assert_int_equal(st.elements, 2);
	assert_int_equal(st.errors, 0);
	assert_int_equal(s.nwarn, 1);
	assert_string_equal(s.warn[0].file, "mem.xml");
	assert_int_equal(s.warn[0].line, 7);
	assert_int_equal(s.warn[0].col, 3); /* where expat stopped: before "<kin" */
	assert_string_equal(s.warn[0].msg, "input ends inside <error> (opened at line 5); the 2 "
					   "complete elements before it are kept");
	uint32_t r = root(t, 0);
	assert_int_equal(count_children(t, r), 2);
	assert_int_equal(rt_vgxml_find(t, r, "error", RT_NONE), RT_NONE);
	assert_int_equal(rt_vgxml_node_count(t), 3);
	rt_trace_free(t);
	free(doc);
}

static void empty_or_no_root(void **state)
{
	(void)state;
	expect_error("", 1, 1, "the input is empty");
	expect_error("  \n\n", 3, 1, "the input is empty");
	expect_error("<?xml version=\"1.0\"?>\n", 2, 1, "expected <valgrindoutput>");
	expect_error("<?xml version=\"1.0\"?>\n<errors>\n</errors>\n", 2, 1,
		     "expected <valgrindoutput>, found <errors>");
	expect_error("hello", 1, 1, "expected <valgrindoutput>");
}

static void multi_documents(void **state)
{
	(void)state;
	rt_vgxml_stats st;
	/* one after the other, with or without blanks and declarations */
	rt_trace *t = rd(DOC DOC "\n\n  " DOC "<valgrindoutput><tool>x</tool></valgrindoutput>"
			 "<valgrindoutput/>\n", NULL, &st);
	assert_int_equal(st.docs, 5);
	assert_int_equal(rt_vgxml_doc_count(t), 5);
	assert_int_equal(st.errors, 3);
	assert_false(st.truncated);
	assert_string_equal(text_of(t, root(t, 3), "tool"), "x");
	for (int d = 0; d < 3; d++)
		assert_int_equal(count_children(t, root(t, (size_t)d)), 4);
	rt_trace_free(t);

	/* a child's document inside its parent's (fork, one --xml-fd), and
	 * a grandchild's inside the child's */
	t = rd(HEAD "<pid>1</pid>\n" HEAD "<pid>2</pid>\n<?xml version=\"1.0\"?>\n<valgrindoutput>"
	       "<pid>3</pid></valgrindoutput>\n<tool>of 2</tool>\n" TAIL
	       "<tool>of 1</tool>\n" TAIL, NULL, &st);
	assert_int_equal(st.docs, 3);
	assert_false(st.truncated);
	static const char *const pids[] = {"1", "2", "3"}, *const tools[] = {"of 1", "of 2", NULL};
	for (int d = 0; d < 3; d++) {
		assert_string_equal(text_of(t, root(t, (size_t)d), "pid"), pids[d]);
		const char *tool = rt_vgxml_child_text(t, root(t, (size_t)d), "tool");
		if (tools[d])
			assert_string_equal(tool, tools[d]);
		else
			assert_null(tool);
	}
	rt_trace_free(t);

	/* exec: the document is cut where the new program's starts */
	seen s = watch();
	t = rd(HEAD "<pid>1</pid>\n" DOC, &s, &st);
	assert_int_equal(st.docs, 2);
	assert_true(st.truncated);
	assert_int_equal(s.nwarn, 1);
	assert_string_equal(s.warn[0].msg, "input ends inside <valgrindoutput> (opened at line 2, "
					   "interrupted at line 5 by another document); its 2 complete "
					   "elements are kept");
	rt_trace_free(t);

	/* what follows a document must be another one */
	expect_error(DOC "<pid>1</pid>\n", 15, 1, "expected another <valgrindoutput> document");
	static const char nuls[] = DOC "\n\0\0";
	expect_error_n(nuls, sizeof nuls - 1, 16, 1, "expected another <valgrindoutput> document");
}

static void multi_documents_files(void **state)
{
	(void)state;
	seen s;
	rt_vgxml_stats st;
	rt_trace *t = read_data("children.xml", &s, &st);
	assert_int_equal(st.docs, 3);
	assert_false(st.truncated);
	assert_int_equal(s.nwarn, 0);
	/* the shell's document got its end back after its children's */
	assert_string_equal(text_of(t, nth(t, root(t, 0), "status", 1), "state"), "FINISHED");
	assert_string_equal(text_of(t, root(t, 1), "tool"), "memcheck");
	for (int d = 1; d < 3; d++) {
		uint32_t argv = nth(t, nth(t, root(t, (size_t)d), "args", 0), "argv", 0);
		assert_non_null(strstr(text_of(t, argv, "exe"), "tp_vgrace"));
	}
	rt_trace_free(t);

	t = read_data("children-exec.xml", &s, &st);
	assert_int_equal(st.docs, 2);
	assert_true(st.truncated);
	assert_int_equal(s.nwarn, 1);
	assert_non_null(strstr(s.warn[0].msg, "interrupted at line 38"));
	rt_trace_free(t);

	t = read_data("killed.xml", &s, &st);
	assert_true(st.truncated);
	assert_string_equal(text_of(t, nth(t, root(t, 0), "status", 0), "state"), "RUNNING");
	rt_trace_free(t);

	t = read_data("cut.xml", &s, &st);
	assert_true(st.truncated);
	assert_int_equal(st.errors, 5);
	assert_non_null(strstr(s.warn[0].msg, "input ends inside <error>"));
	rt_trace_free(t);
}

/* The spec's typo is accepted in every protocol; repairs are for
 * protocols 1-3 only (a protocol 4 document with a bare '&' is bad). */
static void protocol_quirks(void **state)
{
	(void)state;
	seen s = watch();
	rt_trace *t = rd("<?xml version=\"1.0\"?>\n<valgrindoutput>\n"
			 "<protocolversion>3<protocolversion>\n<tool>a&b <c> d<e</tool>\n"
			 "<what>x<!-- <no> & --></what>\n<what><![CDATA[<&>]]>&#x26;&#38;&bogus;</what>\n"
			 "<error><leakedbytes>5</leakedbytes><leakedblocks>1</leakedblocks></error>\n"
			 TAIL, &s, NULL);
	uint32_t r = root(t, 0);
	assert_string_equal(text_of(t, r, "protocolversion"), "3");
	assert_string_equal(text_of(t, r, "tool"), "a&b <c> d<e");
	assert_string_equal(rt_vgxml_text(t, nth(t, r, "what", 0)), "x");
	assert_string_equal(rt_vgxml_text(t, nth(t, r, "what", 1)), "<&>&&&bogus;");
	uint32_t e = nth(t, r, "error", 0);
	assert_string_equal(text_of(t, e, "leakedbytes"), "5");
	assert_int_equal(s.nwarn, 1);
	assert_int_equal(s.warn[0].line, 4);
	assert_int_equal(s.warn[0].col, 8); /* the '&' */
	rt_trace_free(t);

	t = rd("<valgrindoutput><protocolversion>4<protocolversion><tool>t</tool>" TAIL, NULL, NULL);
	assert_string_equal(text_of(t, root(t, 0), "protocolversion"), "4");
	assert_string_equal(text_of(t, root(t, 0), "tool"), "t");
	rt_trace_free(t);

	/* (expat's position: where the token went wrong) */
	expect_error(HEAD "<tool>a&b</tool>\n" TAIL, 4, 10, "not well-formed");
	expect_error(HEAD "<tool>a<b</tool>\n" TAIL, 4, 10, "not well-formed");
}

static void malformed_positions(void **state)
{
	(void)state;
	/* expat points at the name in a mismatched end tag */
	expect_error(HEAD "<error>\n  <kind>x</kind>\n</errors>\n" TAIL, 6, 3, "expected </error>");
	expect_error(HEAD "<error><kind>x</what></error>" TAIL, 4, 17, "expected </kind>");
	expect_error(HEAD "<pid>1</pid>\n<pid 2</pid>\n" TAIL, 5, 6, "expected");
	expect_error(HEAD "<pid>1</pid>\n" TAIL "junk", 6, 1, "expected another <valgrindoutput>");
	expect_error(HEAD "<error><?xml version=\"1.0\"?></error>" TAIL, 4, 8, "XML declaration");
	/* the position counts from the start of the document it is in */
	expect_error(DOC DOC HEAD "\n\n<x></y>" TAIL, 34, 6, "expected </x>");

	/* everything complete before the error is kept */
	rt_trace *t = rt_trace_new();
	rt_diag err;
	const char *bad = HEAD "<pid>1</pid>\n<error><kind>x</kind><tid>2</kid></error>" TAIL;
	assert_int_equal(rd_opts(t, bad, strlen(bad), NULL, NULL, &err), -1);
	uint32_t r = root(t, 0);
	assert_string_equal(text_of(t, r, "pid"), "1");
	assert_int_equal(rt_vgxml_find(t, r, "error", RT_NONE), RT_NONE);
	rt_trace_free(t);
}

static void entities_rejected(void **state)
{
	(void)state;
	expect_error("<?xml version=\"1.0\"?>\n<!DOCTYPE valgrindoutput [\n"
		     " <!ENTITY lol \"lol\">\n"
		     " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
		     " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
		     " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
		     " <!ENTITY lol9 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
		     "]>\n<valgrindoutput><tool>&lol9;</tool></valgrindoutput>\n",
		     3, 15, "no entity declaration (<!ENTITY lol>)");
	expect_error("<!DOCTYPE v [<!ENTITY % p SYSTEM \"/etc/passwd\"> %p;]>\n<valgrindoutput/>",
		     1, 47, "no entity declaration");
	expect_error(HEAD "<tool>&nbsp;</tool>\n" TAIL, 4, 7, "undefined entity");
	/* an external subset is never read: its entities are undefined */
	expect_error("<!DOCTYPE valgrindoutput SYSTEM \"vg.dtd\">\n<valgrindoutput>"
		     "<tool>&ext;</tool></valgrindoutput>", 2, 23, "&ext;");
	/* a DOCTYPE without entities is harmless */
	rt_trace *t = rd("<!DOCTYPE valgrindoutput [<!ELEMENT tool ANY>]>\n<valgrindoutput><tool>t"
			 "</tool></valgrindoutput>", NULL, NULL);
	assert_string_equal(text_of(t, root(t, 0), "tool"), "t");
	rt_trace_free(t);
}

/* ---- streaming ---- */

/* A document of n errors, each with its own unique id and address. */
static char *many_errors(size_t n, size_t *len)
{
	size_t cap = 600 * n + 256, off = 0;
	char *buf = malloc(cap);
	off += (size_t)snprintf(buf + off, cap - off, HEAD "<protocoltool>memcheck</protocoltool>\n");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, cap - off,
					"<error>\n  <unique>0x%zx</unique>\n  <tid>1</tid>\n"
					"  <kind>InvalidRead</kind>\n  <what>Invalid read of size %zu</what>\n"
					"  <stack>\n    <frame>\n      <ip>0x%zx</ip>\n      <fn>f%zu</fn>\n"
					"    </frame>\n  </stack>\n  <auxwhat>Address 0x%zx is bad</auxwhat>\n"
					"</error>\n", i, i % 8, 0x401000 + i % 5, i % 5, 0x4a00000 + 16 * i);
	off += (size_t)snprintf(buf + off, cap - off, TAIL);
	*len = off;
	return buf;
}

static size_t nstrs(const rt_trace *t)
{
	rt_str_mark m;
	rt_trace_str_mark(t, &m);
	return m.nstrs;
}

static void on_element_drop(void **state)
{
	(void)state;
	size_t len;
	char *buf = many_errors(2000, &len);
	rt_trace *t = rt_trace_new();
	seen s = {0};
	s.drop = 1;
	rt_vgxml_stats st;
	rt_diag err;
	assert_int_equal(rd_opts(t, buf, len, &s, &st, &err), 0);
	assert_int_equal(st.errors, 2000);
	assert_int_equal(st.elements, 2002);
	assert_int_equal(s.calls, 2002);
	/* dropped: the root alone is left, nodes never piled up, and the
	 * strings of each error (its unique id, its address) went with it */
	assert_int_equal(rt_vgxml_node_count(t), 1);
	assert_true(s.maxnodes < 20);
	assert_true(nstrs(t) < 60);
	assert_int_equal(rt_trace_bt_count(t), 5);
	rt_trace_free(t);

	/* kept: everything is there */
	t = rt_trace_new();
	memset(&s, 0, sizeof s);
	assert_int_equal(rd_opts(t, buf, len, &s, &st, &err), 0);
	assert_int_equal(s.calls, 2002);
	assert_int_equal(count_children(t, root(t, 0)), 2002);
	assert_string_equal(text_of(t, nth(t, root(t, 0), "error", 1999), "unique"), "0x7cf");
	assert_true(nstrs(t) > 4000);
	rt_trace_free(t);
	free(buf);
}

/* What the consumer interned while looking at an element stays, even
 * when it drops the element. */
static bool keep_a_string(void *ctx, rt_trace *t, uint32_t node)
{
	uint32_t *ids = ctx;
	const char *u = rt_vgxml_child_text(t, node, "unique");
	if (u) {
		char copy[64];
		snprintf(copy, sizeof copy, "seen %s", u);
		ids[strtoul(u, NULL, 16)] = rt_trace_intern(t, copy, strlen(copy));
	}
	return false;
}

static void on_element_consumer_strings(void **state)
{
	(void)state;
	size_t len;
	char *buf = many_errors(50, &len);
	uint32_t ids[50];
	rt_trace *t = rt_trace_new();
	rt_vgxml_read_opts o = {keep_a_string, NULL, ids};
	rt_diag err;
	assert_int_equal(rt_vgxml_read_mem(t, buf, len, "m", &o, NULL, &err), 0);
	for (int i = 0; i < 50; i++) {
		char want[64];
		snprintf(want, sizeof want, "seen 0x%x", i);
		assert_string_equal(rt_trace_str(t, ids[i]), want);
	}
	rt_trace_free(t);
	free(buf);
}

/* The same bytes through a file descriptor, in chunks (the document is
 * bigger than one), split documents and all. */
static void fd_chunks(void **state)
{
	(void)state;
	size_t len;
	char *one = many_errors(4000, &len); /* ~1.3 MB */
	char *buf = malloc(3 * len + 64);
	memcpy(buf, one, len);
	memcpy(buf + len, "\n", 1);
	memcpy(buf + len + 1, one, len);
	memcpy(buf + 2 * len + 1, one, len / 2); /* cut */
	size_t total = 2 * len + 1 + len / 2;
	char path[] = "/tmp/test_vgxml_read.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, total), (ssize_t)total);
	lseek(fd, 0, SEEK_SET);
	rt_trace *a = rt_trace_new(), *b = rt_trace_new();
	seen sa = {0}, sb = {0};
	sa.drop = sb.drop = -1;
	rt_vgxml_read_opts oa = {NULL, on_warn, &sa}, ob = {NULL, on_warn, &sb};
	rt_vgxml_stats sta, stb;
	rt_diag err;
	assert_int_equal(rt_vgxml_read_fd(a, fd, "f", &oa, &sta, &err), 0);
	assert_int_equal(rt_vgxml_read_mem(b, buf, total, "f", &ob, &stb, &err), 0);
	close(fd);
	unlink(path);
	assert_int_equal(sta.bytes, total);
	assert_int_equal(sta.docs, 3);
	assert_true(sta.truncated);
	assert_int_equal(sta.errors, stb.errors);
	assert_int_equal(sta.elements, stb.elements);
	assert_int_equal(rt_vgxml_node_count(a), rt_vgxml_node_count(b));
	for (uint32_t i = 0; i < rt_vgxml_node_count(a); i++) {
		const rt_vgxml_node *x = rt_vgxml_node_at(a, i), *y = rt_vgxml_node_at(b, i);
		assert_string_equal(rt_vgxml_name(a, i), rt_vgxml_name(b, i));
		assert_string_equal(str(a, x->text), str(b, y->text));
		assert_int_equal(x->child, y->child);
	}
	assert_int_equal(sa.nwarn, 1);
	assert_int_equal(sa.warn[0].line, sb.warn[0].line);
	assert_int_equal(sa.warn[0].col, sb.warn[0].col);
	rt_trace_free(a);
	rt_trace_free(b);
	free(buf);
	free(one);
}

static void sniff(void **state)
{
	(void)state;
	static const char *const yes[] = {
		"<?xml version=\"1.0\"?>\n\n<valgrindoutput>\n", "<valgrindoutput>",
		"\xef\xbb\xbf  <valgrindoutput >", "<!-- c -->\n<valgrindoutput>",
		"<?xml version=\"1.0\"?><!--x--><valgrindoutput\n>"};
	static const char *const no[] = {
		"", "<?xml version=\"1.0\"?>", "<valgrindoutputs>", "version=2.0, arch=x86_64\n",
		"<?xml version=\"1.0\"?><callgrind>", "<valgrind"};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!rt_vgxml_sniff(yes[i], strlen(yes[i])))
			fail_msg("not sniffed: %s", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (rt_vgxml_sniff(no[i], strlen(no[i])))
			fail_msg("sniffed: %s", no[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_memcheck),
		cmocka_unit_test(file_memcheck_segv),
		cmocka_unit_test(file_helgrind_drd),
		cmocka_unit_test(file_protocols_5_6),
		cmocka_unit_test(file_protocols_1_3),
		cmocka_unit_test(file_protocol_3),
		cmocka_unit_test(texts),
		cmocka_unit_test(usercomment_raw),
		cmocka_unit_test(rawtext_cdata),
		cmocka_unit_test(stack_frames),
		cmocka_unit_test(stack_repeats),
		cmocka_unit_test(stack_odd_content),
		cmocka_unit_test(warnings_unknown),
		cmocka_unit_test(truncated_everywhere),
		cmocka_unit_test(truncated_message),
		cmocka_unit_test(empty_or_no_root),
		cmocka_unit_test(multi_documents),
		cmocka_unit_test(multi_documents_files),
		cmocka_unit_test(protocol_quirks),
		cmocka_unit_test(malformed_positions),
		cmocka_unit_test(entities_rejected),
		cmocka_unit_test(on_element_drop),
		cmocka_unit_test(on_element_consumer_strings),
		cmocka_unit_test(fd_chunks),
		cmocka_unit_test(sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
