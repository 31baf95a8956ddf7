/* Streaming reader for the rtrace text protocol.
 *
 * The protocol is line based. A call record is followed by its "$name =
 * value" argument lines and its backtrace frame lines; an empty line ends
 * it. Compressed traces list several calls before one shared backtrace, so
 * calls wait in a pending group until their frames are complete. Lines
 * starting with "# " are temporary comments and are dropped on reading. */
#include "rtrace/text.h"
#include "model/trace_int.h"
#include "text/text_frame.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct parser {
	rt_trace *t;
	const rt_read_opts *o;
	rt_diag *err;
	const char *file;
	uint64_t line;
	bool header_done;
	bool failed;
	uint64_t last_index;

	rt_call *pending; /* calls waiting for their backtrace */
	size_t npending, cpending;
	rt_frame *frames;
	size_t nframes, cframes;
	uint32_t depth_seen; /* frames seen, including those over max_depth */

	/* The previous group, complete but not yet interned: its hash slot is
	 * prefetched while the next record is parsed (see flush_group). */
	rt_call *staged;
	size_t nstaged, cstaged;
	rt_frame *sframes;
	size_t nsframes, csframes;
	uint32_t shash;

	/* arguments of the last pending call */
	rt_kv *args;
	size_t nargs, cargs;
	rt_arena argmem;

	/* the last function names seen: a trace uses a handful of them, and
	 * interning hashes the name on every call otherwise */
	struct {
		char name[32];
		uint32_t len, id;
	} names[4];
	unsigned next_name;

	rt_read_stats stats;
} parser;

static int fail(parser *p, const char *line, const char *at, const char *fmt, ...)
{
	rt_diag *d = p->err;
	d->file = p->file;
	d->line = p->line;
	d->col = line && at ? (uint32_t)(at - line) + 1 : 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	p->failed = true;
	return -1;
}

static void warn(parser *p, uint32_t col, const char *fmt, ...)
{
	if (!p->o || !p->o->warn)
		return;
	rt_diag d = {p->file, p->line, col, ""};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d.msg, sizeof d.msg, fmt, ap);
	va_end(ap);
	p->o->warn(p->o->ctx, &d);
}

#define EXPECTED(p, line, s, end, what)                                          \
	do {                                                                     \
		char fb_[16];                                                    \
		return fail(p, line, s, "expected %s, found %s", what,           \
			    rt_diag_found(s, end, fb_, sizeof fb_));                     \
	} while (0)

/* Parses hex digits (no prefix) into *v; returns the end or NULL. */
static const char *parse_hex(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	const char *start = s;
	while (s < end && rt_hexval[(unsigned char)*s]) {
		if (s - start >= 16)
			return NULL;
		x = (x << 4) | (uint64_t)(rt_hexval[(unsigned char)*s] - 1);
		s++;
	}
	*v = x;
	return s > start ? s : NULL;
}

static const char *parse_dec(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;
	const char *start = s;
	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return NULL;
		x = x * 10 + d;
		s++;
	}
	*v = x;
	return s > start ? s : NULL;
}

static bool has_prefix(const char *s, const char *end, const char *pfx)
{
	size_t n = strlen(pfx);
	return (size_t)(end - s) >= n && memcmp(s, pfx, n) == 0;
}

/* "0x" followed by hex digits. */
static const char *parse_addr(const char *s, const char *end, uint64_t *v)
{
	if (!has_prefix(s, end, "0x"))
		return NULL;
	return parse_hex(s + 2, end, v);
}

/* Free text that is stored (names, paths, comments) must be text: numbers
 * and punctuation are checked by the grammar itself, so only these fields
 * pay for a byte scan, and binary data is still caught on its first line. */
static int check_text(parser *p, const char *line, const char *s, const char *end)
{
	for (; s < end; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch < 0x20 && ch != '\t')
			return fail(p, line, s, "expected text, found byte 0x%02x (binary data?)", ch);
	}
	return 0;
}

/* --- pending call group --- */

static void flush_args(parser *p)
{
	if (!p->nargs)
		return;
	rt_call *c = &p->pending[p->npending - 1];
	if (c->args != RT_NONE)
		rt_trace_release_args(p->t, c->args);
	c->args = rt_trace_add_args(p->t, p->args, (uint32_t)p->nargs);
	p->nargs = 0;
	rt_arena_free(&p->argmem);
}

/* Interns the staged group's backtrace and hands its calls on. A new
 * backtrace's resolved frames get the details their text says: the one
 * place a frame's text is read (text_frame.h). */
static void commit_staged(parser *p)
{
	if (!p->nstaged)
		return;
	uint32_t before = rt_trace_bt_count(p->t);
	uint32_t bt = rt_trace_intern_bt_hashed(p->t, p->sframes, (uint32_t)p->nsframes, p->shash);
	for (size_t i = 0; bt >= before && i < p->nsframes; i++)
		rt_text_frame_details(p->t, &p->sframes[i]);
	for (size_t i = 0; i < p->nstaged; i++) {
		rt_call *c = &p->staged[i];
		c->bt = bt;
		if (p->o && p->o->on_call) {
			rt_trace_saw_call(p->t, c);
			p->o->on_call(p->o->ctx, p->t, c);
		} else
			rt_trace_append_call(p->t, c);
	}
	p->stats.calls += p->nstaged;
	p->nstaged = 0;
}

#define SWAP(a, b)                                                             \
	do {                                                                   \
		__typeof__(a) tmp_ = (a);                                      \
		(a) = (b);                                                     \
		(b) = tmp_;                                                    \
	} while (0)

/* Ends the pending group. Interning probes a table that is a cache miss
 * per call at millions of stacks, so the group is only staged here, its
 * slot prefetched, and interned when the next group ends. Calls keep
 * their order: a group is committed before the next one is staged. */
static void flush_group(parser *p)
{
	if (!p->npending)
		return;
	flush_args(p);
	commit_staged(p);
	SWAP(p->pending, p->staged);
	SWAP(p->cpending, p->cstaged);
	SWAP(p->frames, p->sframes);
	SWAP(p->cframes, p->csframes);
	p->nstaged = p->npending;
	p->nsframes = p->nframes;
	p->shash = rt_bt_hash(p->sframes, (uint32_t)p->nsframes);
	rt_trace_prefetch_bt(p->t, p->shash);
	p->npending = 0;
	p->nframes = 0;
	p->depth_seen = 0;
}

/* --- records --- */

/* "\t0xADDR[ resolved text]" */
static int parse_frame(parser *p, const char *line, const char *end)
{
	uint64_t addr;
	if (!has_prefix(line + 1, end, "0x"))
		EXPECTED(p, line, line + 1, end, "a frame address '0x...' or an argument '$name = value'");
	const char *s = parse_hex(line + 3, end, &addr);
	if (!s)
		EXPECTED(p, line, line + 3, end, "at most 16 hexadecimal digits of a frame address");
	rt_frame f = {addr, RT_NONE};
	if (s < end) {
		if (*s != ' ')
			EXPECTED(p, line, s, end, "a space or end of line after the frame address");
		s++;
		if (s == end)
			EXPECTED(p, line, s, end, "the resolved name after the space");
		if (check_text(p, line, s, end))
			return -1;
		f.text = rt_trace_intern(p->t, s, (size_t)(end - s));
	}
	if (!p->npending) {
		warn(p, 1, "backtrace frame without a preceding call record; ignored");
		return 0;
	}
	p->depth_seen++;
	if (p->o && p->o->max_depth && p->depth_seen > p->o->max_depth)
		return 0;
	RT_PUSH(p->frames, p->nframes, p->cframes, f);
	return 0;
}

/* "\t$name = value" */
static int parse_arg(parser *p, const char *line, const char *end)
{
	const char *name = line + 2, *s = name;
	while (s < end && *s != ' ')
		s++;
	if (s == name)
		EXPECTED(p, line, s, end, "an argument name after '$'");
	if (!has_prefix(s, end, " = "))
		EXPECTED(p, line, s, end, "' = ' after the argument name");
	const char *value = s + 3;
	if (check_text(p, line, name, end))
		return -1;
	if (!p->npending) {
		warn(p, 1, "argument without a preceding call record; ignored");
		return 0;
	}
	if (p->nframes) {
		warn(p, 1, "argument after backtrace frames; kept with the call");
	}
	rt_kv kv = {rt_arena_strndup(&p->argmem, name, (size_t)(s - name)),
		    rt_arena_strndup(&p->argmem, value, (size_t)(end - value))};
	RT_PUSH(p->args, p->nargs, p->cargs, kv);
	return 0;
}

/* "[HH:MM:SS.fff] " */
static const char *parse_timestamp(parser *p, const char *line, const char *s,
				   const char *end, uint64_t *us)
{
	uint64_t h, m, sec, frac;
	const char *q = parse_dec(s + 1, end, &h);
	if (!q || q >= end || *q != ':' || !(q = parse_dec(q + 1, end, &m)) ||
	    q >= end || *q != ':' || !(q = parse_dec(q + 1, end, &sec)) || q >= end ||
	    *q != '.') {
		fail(p, line, q ? q : s, "expected a timestamp '[HH:MM:SS.mmm]'");
		return NULL;
	}
	const char *f = q + 1;
	q = parse_dec(f, end, &frac);
	int digits = q ? (int)(q - f) : 0;
	if (!q || digits > 9 || q >= end || *q != ']') {
		fail(p, line, q ? q : f, "expected fractional seconds and ']' in the timestamp");
		return NULL;
	}
	if (digits > 6) {
		for (int i = digits; i > 6; i--)
			frac /= 10;
	} else {
		for (int i = digits; i < 6; i++)
			frac *= 10;
	}
	if (digits > rt_trace_ts_digits(p->t))
		rt_trace_set_ts_digits(p->t, digits > 6 ? 6 : digits);
	*us = ((h * 60 + m) * 60 + sec) * 1000000 + frac;
	if (q + 1 >= end || q[1] != ' ') {
		fail(p, line, q + 1, "expected a space after the timestamp");
		return NULL;
	}
	return q + 2;
}

/* "(SIZE) = 0xID" or "(0xID)" at s, through to the end of the line. */
static int parse_call_tail(parser *p, const char *line, const char *s,
			   const char *end, rt_call *c)
{
	const char *q;
	if (has_prefix(s, end, "(0x")) {
		q = parse_hex(s + 3, end, &c->res_id);
		if (!q)
			EXPECTED(p, line, s + 3, end, "a hexadecimal resource id");
		c->kind = RT_CALL_FREE;
	} else {
		q = parse_dec(s + 1, end, &c->size);
		if (!q)
			EXPECTED(p, line, s + 1, end, "a decimal resource size or '0x' resource id");
		if (!has_prefix(q, end, ") = "))
			EXPECTED(p, line, q, end, "') = ' after the resource size");
		q += 4;
		const char *r = parse_addr(q, end, &c->res_id);
		if (!r)
			EXPECTED(p, line, q, end, "a resource id '0x...'");
		c->kind = RT_CALL_ALLOC;
		if (r != end)
			EXPECTED(p, line, r, end, "end of line after the resource id");
		return 0;
	}
	if (q >= end || *q != ')')
		EXPECTED(p, line, q, end, "')' after the resource id");
	if (q + 1 != end)
		EXPECTED(p, line, q + 1, end, "end of line after ')'");
	return 0;
}

static uint32_t intern_name(parser *p, const char *s, size_t len)
{
	for (unsigned i = 0; i < 4; i++)
		if (p->names[i].len == len && memcmp(p->names[i].name, s, len) == 0)
			return p->names[i].id;
	uint32_t id = rt_trace_intern(p->t, s, len);
	if (len && len <= sizeof p->names[0].name) {
		unsigned i = p->next_name++ % 4;
		memcpy(p->names[i].name, s, len);
		p->names[i].len = (uint32_t)len;
		p->names[i].id = id;
	}
	return id;
}

/* "<index>. [@<ctx> ][[HH:MM:SS.mmm] ]<name>[<<type>>](...)" */
static int parse_call(parser *p, const char *line, const char *end, const char *s)
{
	rt_call c = {0};
	c.bt = c.args = RT_NONE;
	if (parse_dec(line, end, &c.index) != s)
		return fail(p, line, line, "expected a record index below 2^64");
	s += 2; /* ". " */
	if (s < end && *s == '@') {
		uint64_t ctx;
		const char *q = parse_hex(s + 1, end, &ctx);
		if (!q || ctx > UINT32_MAX)
			EXPECTED(p, line, s + 1, end, "a hexadecimal context mask after '@'");
		if (q >= end || *q != ' ')
			EXPECTED(p, line, q, end, "a space after the context mask");
		c.context = (uint32_t)ctx;
		s = q + 1;
	}
	if (s < end && *s == '[') {
		s = parse_timestamp(p, line, s, end, &c.timestamp_us);
		if (!s)
			return -1;
		c.flags |= RT_CALL_HAS_TIMESTAMP;
	}
	/* the name runs to the last '(' (C++ names contain parentheses) */
	const char *paren = NULL;
	for (const char *q = end; q > s; q--)
		if (q[-1] == '(') {
			paren = q - 1;
			break;
		}
	if (!paren)
		return fail(p, line, end, "expected '(' with the resource size or id");
	const char *name_end = paren;
	if (paren > s && paren[-1] == '>') {
		/* the type opens at the last '<', unless that names no type:
		 * type names may contain '<' themselves ("<1> : a<b (...)") */
		const char *first = NULL;
		for (const char *lt = paren - 1; lt-- > s;) {
			if (*lt != '<')
				continue;
			if (!first)
				first = lt;
			c.res_type = rt_trace_find_resource(p->t, lt + 1, (size_t)(paren - 2 - lt));
			if (c.res_type) {
				name_end = lt;
				break;
			}
		}
		if (!first)
			return fail(p, line, paren - 1, "expected '<' opening the resource type");
		if (!c.res_type) {
			const char *type = first + 1;
			size_t tlen = (size_t)(paren - 1 - type);
			return fail(p, line, type,
				    "expected a resource type listed in the resource registry, found '%.*s'",
				    (int)(tlen > 64 ? 64 : tlen), type);
		}
	} else if (rt_trace_resource_count(p->t)) {
		c.res_type = 1; /* untyped calls belong to the only resource */
	}
	if (name_end == s)
		return fail(p, line, s, "expected a function name");
	if (check_text(p, line, s, name_end))
		return -1;
	c.fn = intern_name(p, s, (size_t)(name_end - s));
	if (parse_call_tail(p, line, paren, end, &c))
		return -1;

	/* frames already collected belong to the previous group */
	if (p->nframes)
		flush_group(p);
	flush_args(p);
	RT_PUSH(p->pending, p->npending, p->cpending, c);
	p->last_index = c.index;
	return 0;
}

/* ": <module> => 0xFROM-0xTO" */
static int parse_mmap(parser *p, const char *line, const char *end)
{
	const char *arrow = NULL;
	for (const char *q = line + 2; q + 4 <= end; q++)
		if (memcmp(q, " => ", 4) == 0)
			arrow = q; /* the last one: paths may contain " => " */
	if (!arrow || arrow == line + 2)
		return fail(p, line, arrow ? arrow : end, "expected '<module> => 0xSTART-0xEND'");
	uint64_t from, to;
	const char *s = parse_addr(arrow + 4, end, &from);
	if (!s)
		EXPECTED(p, line, arrow + 4, end, "a start address '0x...'");
	if (s >= end || *s != '-')
		EXPECTED(p, line, s, end, "'-' between the start and end addresses");
	const char *e = parse_addr(s + 1, end, &to);
	if (!e)
		EXPECTED(p, line, s + 1, end, "an end address '0x...'");
	if (e != end)
		EXPECTED(p, line, e, end, "end of line after the end address");
	char *module = rt_xmalloc((size_t)(arrow - line - 2) + 1);
	memcpy(module, line + 2, (size_t)(arrow - line - 2));
	module[arrow - line - 2] = '\0';
	rt_trace_add_mmap(p->t, module, from, to);
	free(module);
	return 0;
}

/* "@ <hex id> : <name>" */
static int parse_context(parser *p, const char *line, const char *end)
{
	uint64_t id;
	const char *s = parse_hex(line + 2, end, &id);
	if (!s || id > UINT32_MAX)
		EXPECTED(p, line, line + 2, end, "a hexadecimal context id");
	if (!has_prefix(s, end, " : "))
		EXPECTED(p, line, s, end, "' : ' after the context id");
	s += 3;
	char *name = rt_xmalloc((size_t)(end - s) + 1);
	memcpy(name, s, (size_t)(end - s));
	name[end - s] = '\0';
	rt_trace_add_context(p->t, (uint32_t)id, name);
	free(name);
	return 0;
}

/* "<hex id> : <type> (<desc>)[ [<flags>]]" */
static int parse_resource(parser *p, const char *line, const char *end, const char *gt)
{
	uint64_t mask;
	if (!parse_hex(line + 1, gt, &mask) || mask == 0 || mask > UINT32_MAX ||
	    (mask & (mask - 1)))
		return fail(p, line, line + 1, "expected a single-bit hexadecimal resource id");
	const char *s = gt + 1;
	if (!has_prefix(s, end, " : "))
		EXPECTED(p, line, s, end, "' : ' after the resource id");
	const char *type = s + 3, *te = type;
	while (te < end && *te != ' ')
		te++;
	if (te == type)
		EXPECTED(p, line, te, end, "a resource type name");
	if (!has_prefix(te, end, " ("))
		EXPECTED(p, line, te, end, "' (' opening the resource description");
	const char *desc = te + 2, *de = end, *flags = NULL, *fe = NULL;
	if (end[-1] == ']') {
		for (const char *q = end - 1; q > desc; q--)
			if (q[-1] == ' ' && *q == '[') {
				flags = q + 1;
				fe = end - 1;
				de = q - 1;
				break;
			}
	}
	if (de <= desc || de[-1] != ')')
		return fail(p, line, de, "expected ')' closing the resource description");
	de--;
	if (rt_trace_resource_count(p->t) == RT_MAX_RESOURCES)
		return fail(p, line, line, "expected at most %d resource types", RT_MAX_RESOURCES);
	char *buf = rt_xmalloc((size_t)(end - line) + 3);
	char *t = buf, *d = buf + (te - type) + 1, *f = d + (de - desc) + 1;
	memcpy(t, type, (size_t)(te - type));
	t[te - type] = '\0';
	memcpy(d, desc, (size_t)(de - desc));
	d[de - desc] = '\0';
	if (flags) {
		memcpy(f, flags, (size_t)(fe - flags));
		f[fe - flags] = '\0';
	}
	rt_trace_add_resource(p->t, (uint32_t)mask, t, d, flags ? f : NULL);
	free(buf);
	return 0;
}

/* "& <name> : <path>" */
static int parse_attachment(parser *p, const char *line, const char *end)
{
	const char *name = line + 2, *s = name;
	while (s < end && *s != ' ')
		s++;
	if (s == name)
		EXPECTED(p, line, s, end, "an attachment name");
	if (!has_prefix(s, end, " : ") || s + 3 == end)
		EXPECTED(p, line, s, end, "' : <path>' after the attachment name");
	char *buf = rt_xmalloc((size_t)(end - line));
	size_t nl = (size_t)(s - name), pl = (size_t)(end - s - 3);
	memcpy(buf, name, nl);
	buf[nl] = '\0';
	memcpy(buf + nl + 1, s + 3, pl);
	buf[nl + 1 + pl] = '\0';
	rt_trace_add_attachment(p->t, buf, buf + nl + 1);
	free(buf);
	return 0;
}

/* "key=value, key=value, " */
static int parse_header(parser *p, const char *line, const char *end)
{
	const char *s = line;
	/* an empty header line is a header without fields (sp-rtrace reads it
	 * so, and a trace whose only field was a dropped filter writes it) */
	if (line != end && !memchr(line, '=', (size_t)(end - line)))
		return fail(p, line, line, "expected the header line 'version=..., arch=..., ...'");
	while (s < end) {
		while (s < end && *s == ' ')
			s++;
		if (s == end)
			break;
		const char *eq = memchr(s, '=', (size_t)(end - s));
		const char *comma = memchr(s, ',', (size_t)(end - s));
		if (!eq || (comma && comma < eq))
			return fail(p, line, s, "expected 'key=value' in the header");
		const char *ve = comma ? comma : end;
		char *kv = rt_xmalloc((size_t)(ve - s) + 1);
		size_t kl = (size_t)(eq - s);
		memcpy(kv, s, kl);
		kv[kl] = '\0';
		memcpy(kv + kl + 1, eq + 1, (size_t)(ve - eq - 1));
		kv[ve - s] = '\0';
		rt_trace_set_header(p->t, kv, kv + kl + 1);
		free(kv);
		s = comma ? comma + 1 : end;
	}
	return 0;
}

/* A line that is no record of the protocol is a comment (the spec says
 * so), but a line that starts like a record and breaks off is an error. */
static int parse_line(parser *p, const char *line, const char *end)
{
	if (end > line && end[-1] == '\r')
		end--;
	if (!p->header_done) {
		p->header_done = true;
		if (check_text(p, line, line, end))
			return -1;
		return parse_header(p, line, end);
	}
	size_t n = (size_t)(end - line);
	char c0 = n ? line[0] : '\0';
	if (c0 == '#' && n > 1 && line[1] == ' ')
		return check_text(p, line, line, end); /* temporary comment: dropped */
	if (c0 == '\t') {
		if (n > 1 && line[1] == '$')
			return parse_arg(p, line, end);
		return parse_frame(p, line, end);
	}
	if (c0 >= '0' && c0 <= '9') {
		const char *s = line;
		while (s < end && *s >= '0' && *s <= '9')
			s++;
		if (s + 1 < end && s[0] == '.' && s[1] == ' ')
			return parse_call(p, line, end, s);
	}
	/* every other line ends the pending call group */
	flush_group(p);
	if (n == 0)
		return 0;
	if (check_text(p, line, line, end))
		return -1;
	if (c0 == ':' && n > 1 && line[1] == ' ')
		return parse_mmap(p, line, end);
	if (c0 == '@' && n > 1 && line[1] == ' ')
		return parse_context(p, line, end);
	if (c0 == '&' && n > 1 && line[1] == ' ')
		return parse_attachment(p, line, end);
	if (c0 == '<') {
		const char *gt = memchr(line, '>', n);
		if (gt && gt > line + 1 && parse_hex(line + 1, gt, &(uint64_t){0}) == gt)
			return parse_resource(p, line, end, gt);
	}
	if (c0 != '#')
		warn(p, 1, "not a record of the text protocol; kept as a comment");
	rt_trace_add_comment(p->t, p->last_index, line, n);
	return 0;
}

static void parser_init(parser *p, rt_trace *t, const char *name,
			const rt_read_opts *o, rt_diag *err)
{
	memset(p, 0, sizeof *p);
	p->t = t;
	p->o = o;
	p->err = err;
	p->file = name ? name : "<input>";
	rt_arena_init(&p->argmem);
	memset(err, 0, sizeof *err);
}

static int parser_finish(parser *p, rt_read_stats *stats, int rc)
{
	/* calls read before an error are kept: flush them too */
	flush_group(p);
	commit_staged(p);
	if (rc == 0 && !p->header_done)
		rc = fail(p, NULL, NULL, "expected the header line, found an empty file");
	free(p->pending);
	free(p->frames);
	free(p->staged);
	free(p->sframes);
	free(p->args);
	rt_arena_free(&p->argmem);
	if (stats)
		*stats = p->stats;
	return rc;
}

/* Every writer ends lines with '\n': a last line without one was cut off
 * (the program or the copy was killed), and even a cut frame address still
 * parses, so it is reported instead of being trusted. */
static int truncated(parser *p, const char *line, const char *end)
{
	p->line++;
	return fail(p, line, end,
		    "expected '\\n' ending the line, found end of file (truncated trace; "
		    "the incomplete last line is dropped)");
}

static int feed_line(parser *p, const char *line, const char *end)
{
	p->line++;
	p->stats.lines++;
	if ((size_t)(end - line) > RT_TEXT_MAX_LINE)
		return fail(p, line, line + RT_TEXT_MAX_LINE,
			    "expected a line of at most %u bytes", RT_TEXT_MAX_LINE);
	return parse_line(p, line, end);
}

/* Feeds the complete lines of buf[0..len); returns bytes consumed. */
static size_t feed_lines(parser *p, const char *buf, size_t len, int *rc)
{
	const char *s = buf, *end = buf + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		if ((*rc = feed_line(p, s, nl)) != 0)
			return (size_t)(nl + 1 - buf);
		s = nl + 1;
	}
	return (size_t)(s - buf);
}

static int read_buffer(parser *p, const char *buf, size_t len)
{
	int rc = 0;
	size_t used = feed_lines(p, buf, len, &rc);
	if (!rc && used < len)
		rc = truncated(p, buf + used, buf + len);
	p->stats.bytes = len;
	return rc;
}

int rt_text_read_mem(rt_trace *t, const char *buf, size_t len, const char *name,
		     const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	parser p;
	parser_init(&p, t, name, opts, err);
	int rc = read_buffer(&p, buf, len);
	return parser_finish(&p, stats, rc);
}

#define READ_CHUNK (4u << 20)

static ssize_t stream_feed(void *ctx, const char *buf, size_t len)
{
	int rc = 0;
	size_t used = feed_lines(ctx, buf, len, &rc);
	return rc ? -1 : (ssize_t)used;
}

static int stream_last(void *ctx, const char *buf, size_t len)
{
	return truncated(ctx, buf, buf + len);
}

static int stream_error(void *ctx, int errnum, const char *buf, size_t len)
{
	parser *p = ctx;
	(void)len;
	if (!errnum) {
		p->line++;
		return fail(p, buf, buf + RT_TEXT_MAX_LINE, "expected a line of at most %u bytes",
			    RT_TEXT_MAX_LINE);
	}
	int rc = fail(p, NULL, NULL, "read error: %s", strerror(errnum));
	p->err->line = 0;
	return rc;
}

int rt_text_read_fd(rt_trace *t, int fd, const char *name,
		    const rt_read_opts *opts, rt_read_stats *stats, rt_diag *err)
{
	parser p;
	parser_init(&p, t, name, opts, err);
	rt_stream st = {stream_feed, stream_last, stream_error, &p, READ_CHUNK, RT_TEXT_MAX_LINE,
			&p.stats.bytes};
	int rc = rt_stream_fd(fd, &st);
	return parser_finish(&p, stats, rc);
}

static bool header_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ' ';
}

bool rt_text_sniff(const char *head, size_t n)
{
	const char *nl = memchr(head, '\n', n), *e = nl ? nl : head + n;
	if (nl && e > head && e[-1] == '\r')
		e--;
	if (e == head)
		return nl != NULL; /* an empty header line */
	for (const char *s = head; s < e;) {
		while (s < e && *s == ' ')
			s++;
		const char *k = s;
		while (s < e && header_key_char(*s))
			s++;
		if (s == e) /* cut by the peek, or spaces after the last comma */
			return !nl || s == k;
		bool alpha = (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z');
		if (*s != '=' || !alpha)
			return false;
		const char *comma = memchr(s, ',', (size_t)(e - s));
		s = comma ? comma + 1 : e;
	}
	return true;
}
