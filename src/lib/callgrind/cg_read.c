/* Streaming reader for Callgrind profiles (callgrind-format.txt and the
 * Valgrind 3.2.1 revision), as Callgrind, Cachegrind, Xdebug and pprof
 * write them.
 *
 * The input is read line by line in fixed-size chunks; each line updates
 * the current position (ob=, fl=, fn=, ... and the subpositions of the
 * last cost line) or adds costs to the model, which aggregates them per
 * position at once. A header line after body lines starts a new part.
 * Name compression ("(id) name", "(id)") is per input file. */
#include "callgrind/cg_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Compression ids of one name kind: id from the file -> name id.
 * Producers number names from 1 up: those ids index an array; others
 * (sparse, huge) go through a hash index. */
typedef struct idmap {
	uint32_t *dense; /* CG_NONE: undefined */
	size_t ndense;
	uint64_t *key;
	uint32_t *val;
	size_t n, cap;
	cg_index ix;
} idmap;

#define IDMAP_DENSE (1u << 22)

enum next_line { NEXT_COST, NEXT_CALL, NEXT_JUMP };

typedef struct reader {
	cg_profile *p;
	const cg_read_opts *o;
	unsigned flags;
	rt_diag *err;
	const char *name;
	cg_read_stats st;
	uint64_t lineno;
	const char *line; /* start of the current line, for columns */
	bool events_seen; /* in this input */

	idmap ids[3];
	uint32_t empty[3]; /* name id of "" per kind */

	uint32_t version;
	const char *creator;

	/* current part */
	uint32_t part; /* index in p->parts; CG_NONE before the first */
	bool body;     /* it has cost lines */
	bool part_events; /* it has its own events: line */
	uint32_t ncols;
	uint32_t *cols; /* slot of each column */
	bool identity;  /* cols[i] == i */
	uint64_t *sum;  /* per column */
	uint64_t *vals; /* per slot, scratch */
	uint64_t *total; /* per slot, self costs of the whole input */
	size_t ntotal;
	uint64_t summary_line, totals_line;

	/* current position; a function named by fn= (or cfn=) exists in the
	 * model once a line uses it: mapping definitions create nothing */
	uint32_t ob, fl, file, fn, code;
	struct pending_fn {
		uint32_t object, file, name, flags;
		uint64_t stamp;
		bool set;
	} pend, pend_callee;
	uint32_t cob, cfile, callee, callee_flags;
	bool cfile_given;
	uint32_t jfile, jfn;
	uint64_t last[4]; /* by enum cg_pos_kind */
	bool warned_nofn;

	enum next_line next;
	uint64_t next_from; /* line of the pending calls=/jump= */
	cg_call call;
	cg_jump jump;
} reader;

/* --- messages --- */

static int fail_at(reader *r, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_at(reader *r, const char *at, const char *fmt, ...)
{
	rt_diag *d = r->err;
	d->file = r->name;
	d->line = r->lineno;
	d->col = at && r->line ? (uint32_t)(at - r->line) + 1 : 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	return -1;
}

static void warn_line(reader *r, uint64_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn_line(reader *r, uint64_t line, const char *fmt, ...)
{
	if (!r->o || !r->o->warn)
		return;
	rt_diag d = {r->name, line, 1, ""};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d.msg, sizeof d.msg, fmt, ap);
	va_end(ap);
	r->o->warn(r->o->ctx, &d);
}

static int expected(reader *r, const char *s, const char *e, const char *what)
{
	char fb[16];
	return fail_at(r, s, "expected %s, found %s", what, rt_diag_found(s, e, fb, sizeof fb));
}

/* --- lexing --- */

static inline const char *skip_space(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int hexdigit(char c)
{
	return rt_hexval[(unsigned char)c] - 1;
}

/* Decimal digits with overflow checks: the slow path of parse_num for
 * numbers of 20 digits or more (at most one fits in 64 bits). */
static const char *parse_dec_checked(const char *s, const char *e, uint64_t *v, bool *overflow)
{
	uint64_t x = 0;
	for (; s < e && is_digit(*s); s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (x > (UINT64_MAX - d) / 10) {
			*overflow = true;
			return NULL;
		}
		x = x * 10 + d;
	}
	*v = x;
	return s;
}

/* Number := "0x" hex digits | decimal digits. Returns the end, or NULL
 * (no number there, or one beyond 64 bits: *overflow). Every cost line
 * is numbers: up to 19 digits cannot overflow and skip the checks. */
static inline __attribute__((always_inline)) const char *parse_num(const char *s, const char *e,
								    uint64_t *v, bool *overflow)
{
	uint64_t x = 0;
	*overflow = false;
	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexdigit(s[2]) >= 0) {
		const char *start = s += 2;
		int d;
		for (; s < e && (d = hexdigit(*s)) >= 0; s++)
			x = x << 4 | (uint64_t)d;
		while (s - start > 16 && *start == '0')
			start++;
		if (s - start > 16) {
			*overflow = true;
			return NULL;
		}
		*v = x;
		return s;
	}
	const char *start = s;
	for (; s < e && is_digit(*s); s++)
		x = x * 10 + (uint64_t)(*s - '0');
	if (s - start >= 20)
		return parse_dec_checked(start, e, v, overflow);
	*v = x;
	return s > start ? s : NULL;
}

/* A number followed by a space or the end of the line. */
static inline __attribute__((always_inline)) const char *number(reader *r, const char *s, const char *e, uint64_t *v, const char *what)
{
	bool ovf;
	const char *q = parse_num(s, e, v, &ovf);
	if (ovf) {
		fail_at(r, s, "number too large for 64 bits in %s", what);
		return NULL;
	}
	if (!q || (q < e && *q != ' ' && *q != '\t')) {
		char buf[96];
		snprintf(buf, sizeof buf, "%s (a number)", what);
		expected(r, q ? q : s, e, buf);
		return NULL;
	}
	return q;
}

/* Free text that is stored must be text: binary data is caught here. */
static int check_text(reader *r, const char *s, const char *e)
{
	for (; s < e; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t')
			return fail_at(r, s, "expected text, found byte 0x%02x (binary data?)",
				       (unsigned char)*s);
	return 0;
}

static const char *dup_text(reader *r, const char *s, const char *e)
{
	return rt_arena_strndup(&r->p->arena, s, (size_t)(e - s));
}

/* --- name compression --- */

typedef struct id_key {
	const idmap *m;
	uint64_t id;
} id_key;

static bool id_eq(const void *ctx, uint32_t i)
{
	const id_key *k = ctx;
	return k->m->key[i] == k->id;
}

static uint32_t idmap_find(const idmap *m, uint64_t id)
{
	if (id < IDMAP_DENSE)
		return id < m->ndense ? m->dense[id] : CG_NONE;
	id_key k = {m, id};
	uint32_t i = cg_index_find(&m->ix, cg_hash(id, 0, 0), id_eq, &k);
	return i == CG_NONE ? CG_NONE : m->val[i];
}

static void idmap_set(idmap *m, uint64_t id, uint32_t name)
{
	if (id < IDMAP_DENSE) {
		if (id >= m->ndense) {
			size_t n = m->ndense;
			rt_grow((void **)&m->dense, &m->ndense, id + 1, sizeof *m->dense);
			for (size_t i = n; i < m->ndense; i++)
				m->dense[i] = CG_NONE;
		}
		m->dense[id] = name;
		return;
	}
	id_key k = {m, id};
	uint32_t i = cg_index_find(&m->ix, cg_hash(id, 0, 0), id_eq, &k);
	if (i != CG_NONE) {
		m->val[i] = name;
		return;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap;
		rt_grow((void **)&m->key, &cap, m->n + 1, sizeof *m->key);
		rt_grow((void **)&m->val, &m->cap, m->n + 1, sizeof *m->val);
	}
	m->key[m->n] = id;
	m->val[m->n] = name;
	cg_index_add(&m->ix, cg_hash(id, 0, 0), (uint32_t)m->n++);
}

static void idmap_free(idmap *m)
{
	free(m->dense);
	free(m->key);
	free(m->val);
	cg_index_free(&m->ix);
	memset(m, 0, sizeof *m);
}

static const char *kind_spec[3] = {"ob=", "fl=", "fn="};

/* PositionName: "(id) name" defines id, "(id)" refers to it, anything
 * else is the name itself. */
static int parse_name(reader *r, enum cg_kind k, const char *s, const char *e, uint32_t *out)
{
	s = skip_space(s, e);
	if (e - s < 2 || s[0] != '(' || !is_digit(s[1])) {
		if (check_text(r, s, e))
			return -1;
		*out = cg_intern(r->p, k, s, (size_t)(e - s));
		return 0;
	}
	uint64_t id;
	bool ovf;
	const char *q = parse_num(s + 1, e, &id, &ovf);
	if (!q || q == e || *q != ')')
		return q || !ovf ? expected(r, q ? q : s + 1, e, "')' after the compressed name's id")
				 : fail_at(r, s + 1, "compressed name id too large");
	const char *name = skip_space(q + 1, e);
	uint32_t known = idmap_find(&r->ids[k], id);
	if (name == e) {
		if (known == CG_NONE)
			return fail_at(r, s, "undefined compressed name (%" PRIu64 ") for %s", id,
				       kind_spec[k]);
		*out = known;
		return 0;
	}
	if (check_text(r, name, e))
		return -1;
	*out = cg_intern(r->p, k, name, (size_t)(e - name));
	if (known != CG_NONE && known != *out)
		warn_line(r, r->lineno, "compressed name (%" PRIu64 ") for %s redefined from '%s' to '%s'",
			  id, kind_spec[k], cg_profile_name(r->p, k, known),
			  cg_profile_name(r->p, k, *out));
	idmap_set(&r->ids[k], id, *out);
	return 0;
}

/* --- parts --- */

static cg_part *cur_part(reader *r)
{
	return &r->p->parts[r->part];
}

static uint64_t *arena_u64(reader *r, size_t n)
{
	uint64_t *v = rt_arena_alloc(&r->p->arena, (n ? n : 1) * sizeof *v);
	memset(v, 0, (n ? n : 1) * sizeof *v);
	return v;
}

static void reset_position(reader *r)
{
	r->ob = r->empty[CG_OBJECT];
	r->fl = r->file = r->empty[CG_FILE];
	r->fn = r->code = CG_NONE;
	r->cob = r->cfile = r->callee = r->jfile = r->jfn = CG_NONE;
	r->cfile_given = r->pend.set = r->pend_callee.set = false;
	memset(r->last, 0, sizeof r->last);
	r->next = NEXT_COST;
}

/* Sets the part's columns (events: line) and the reader's mapping. */
static void set_columns(reader *r, const uint32_t *evs, uint32_t n)
{
	cg_profile *p = r->p;
	cg_part *pt = cur_part(r);
	uint32_t *ev = rt_arena_alloc(&p->arena, (n ? n : 1) * sizeof *ev);
	memcpy(ev, evs, n * sizeof *ev);
	pt->events = ev;
	pt->nevents = n;
	free(r->cols);
	r->cols = rt_xmalloc((n ? n : 1) * sizeof *r->cols);
	r->identity = true;
	for (uint32_t i = 0; i < n; i++) {
		r->cols[i] = p->events[evs[i]].slot;
		r->identity &= r->cols[i] == i;
	}
	r->ncols = n;
	r->sum = arena_u64(r, n);
	pt->sum = r->sum;
	free(r->vals);
	r->vals = rt_xcalloc(p->nslots ? p->nslots : 1, sizeof *r->vals);
}

/* The checks that need the whole part: totals: must be the sum of the
 * cost lines, summary: at least that (less: the input looks truncated). */
static void end_part(reader *r)
{
	if (r->part == CG_NONE)
		return;
	cg_part *pt = cur_part(r);
	const cg_profile *p = r->p;
	for (uint32_t i = 0; i < pt->nevents; i++) {
		const char *ev = p->events[pt->events[i]].name;
		uint64_t t = i < pt->ntotals ? pt->totals[i] : 0;
		if ((pt->flags & CG_HAS_TOTALS) && t != r->sum[i]) {
			warn_line(r, r->totals_line, "totals: %s is %" PRIu64 ", but the cost lines add up to %" PRIu64,
				  ev, t, r->sum[i]);
			break;
		}
	}
	for (uint32_t i = 0; (pt->flags & CG_HAS_SUMMARY) && i < pt->nevents; i++) {
		const char *ev = p->events[pt->events[i]].name;
		uint64_t s = i < pt->nsummary ? pt->summary[i] : 0;
		if (s < r->sum[i]) {
			warn_line(r, r->summary_line, "summary: %s is %" PRIu64 ", less than the cost lines' %" PRIu64,
				  ev, s, r->sum[i]);
			break;
		}
		if (s > r->sum[i] && !(pt->flags & CG_HAS_TOTALS)) {
			warn_line(r, r->lineno, "the part that starts on line %" PRIu64 " ends with %s at %" PRIu64
				  " of its summary: %" PRIu64 " (truncated input?)",
				  pt->first_line, ev, r->sum[i], s);
			pt->flags |= CG_PART_TRUNCATED;
			break;
		}
	}
}

/* A header line after body lines (or the first one) starts a part; it
 * keeps the previous part's positions and events. */
static void start_part(reader *r)
{
	cg_profile *p = r->p;
	end_part(r);
	cg_part np = {0};
	np.source = r->name;
	np.first_line = r->lineno;
	np.version = r->version;
	np.creator = r->creator;
	if (r->part != CG_NONE) {
		const cg_part *prev = cur_part(r);
		np.npositions = prev->npositions;
		memcpy(np.positions, prev->positions, sizeof np.positions);
	} else {
		np.npositions = 1;
		np.positions[0] = CG_POS_LINE;
	}
	RT_PUSH(p->parts, p->nparts, p->cparts, np);
	r->part = (uint32_t)p->nparts - 1;
	r->st.parts++;
	r->body = r->part_events = false;
	r->summary_line = r->totals_line = 0;
	if (r->ncols) {
		uint32_t n = r->ncols, *evs = rt_xmalloc(n * sizeof *evs);
		memcpy(evs, p->parts[r->part - 1].events, n * sizeof *evs);
		set_columns(r, evs, n);
		free(evs);
	}
	reset_position(r);
}

/* --- header lines --- */

static int hdr_number(reader *r, const char *s, const char *e, uint64_t *v, const char *key)
{
	s = skip_space(s, e);
	const char *q = number(r, s, e, v, key);
	if (!q)
		return -1;
	q = skip_space(q, e);
	return q == e ? 0 : expected(r, q, e, "the end of the line");
}

static int hdr_positions(reader *r, const char *s, const char *e)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} kinds[] = {{"instr", CG_POS_INSTR}, {"addr", CG_POS_INSTR}, {"bb", CG_POS_BB}, {"line", CG_POS_LINE}};
	cg_part *pt = cur_part(r);
	uint32_t n = 0;
	uint8_t pos[3];
	for (s = skip_space(s, e); s < e; s = skip_space(s, e)) {
		const char *w = s;
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		size_t i, len = (size_t)(s - w);
		for (i = 0; i < sizeof kinds / sizeof *kinds; i++)
			if (strlen(kinds[i].name) == len && !memcmp(kinds[i].name, w, len))
				break;
		if (i == sizeof kinds / sizeof *kinds)
			return expected(r, w, e, "'instr', 'bb' or 'line'");
		for (uint32_t j = 0; j < n; j++)
			if (pos[j] == kinds[i].kind)
				return fail_at(r, w, "position '%.*s' given twice", (int)len, w);
		pos[n++] = kinds[i].kind;
	}
	if (!n)
		return expected(r, s, e, "'instr', 'bb' or 'line'");
	pt->npositions = n;
	memcpy(pt->positions, pos, n);
	return 0;
}

static int hdr_events(reader *r, const char *s, const char *e)
{
	cg_profile *p = r->p;
	if (r->part_events)
		return fail_at(r, r->line, "a second 'events:' line in the part's header");
	/* their values are per column of the events they were read with */
	if (cur_part(r)->flags & (CG_HAS_SUMMARY | CG_HAS_TOTALS))
		return fail_at(r, r->line, "'events:' after the part's 'summary:' or 'totals:' line");
	uint32_t *evs = NULL;
	size_t n = 0, cap = 0, nlisted = 0;
	bool *listed = NULL; /* by event: on this line already */
	for (s = skip_space(s, e); s < e; s = skip_space(s, e)) {
		const char *w = s;
		while (s < e && *s != ' ' && *s != '\t')
			s++;
		if (check_text(r, w, s))
			goto bad;
		uint32_t ev = cg_event_get(p, w, (size_t)(s - w));
		if (ev >= nlisted) {
			size_t was = nlisted;
			rt_grow((void **)&listed, &nlisted, ev + 1, sizeof *listed);
			memset(listed + was, 0, nlisted - was);
		}
		if (listed[ev]) {
			fail_at(r, w, "event '%s' listed twice", p->events[ev].name);
			goto bad;
		}
		listed[ev] = true;
		cg_event_make_raw(p, ev);
		RT_PUSH(evs, n, cap, ev);
	}
	free(listed);
	listed = NULL;
	if (!n) {
		expected(r, s, e, "event names");
		goto bad;
	}
	set_columns(r, evs, (uint32_t)n);
	free(evs);
	r->events_seen = r->part_events = true;
	return 0;
bad:
	free(listed);
	free(evs);
	return -1;
}

/* Name in a formula or an event: line: up to a space or a delimiter. */
static const char *event_name_end(const char *s, const char *e)
{
	while (s < e && *s != ' ' && *s != '\t' && *s != '=' && *s != ':' && *s != '+' && *s != '*')
		s++;
	return s;
}

/* InheritedExpr := (Number Space* ("*" Space*)? )? Name ("+" ...)* */
static int parse_formula(reader *r, uint32_t ev, const char *s, const char *e, const char **end)
{
	cg_profile *p = r->p;
	struct cg_fterm *t = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		struct cg_fterm term = {1, 0};
		s = skip_space(s, e);
		if (s < e && is_digit(*s)) {
			bool ovf;
			const char *q = parse_num(s, e, &term.factor, &ovf);
			if (!q)
				goto bad_num;
			s = skip_space(q, e);
			if (s < e && *s == '*')
				s = skip_space(s + 1, e);
		}
		const char *w = s;
		s = event_name_end(s, e);
		if (s == w) {
			expected(r, s, e, "an event name in the formula");
			goto bad;
		}
		term.ev = cg_event_get(p, w, (size_t)(s - w));
		RT_PUSH(t, n, cap, term);
		s = skip_space(s, e);
		if (s == e || *s == ':')
			break;
		if (*s != '+') {
			expected(r, s, e, "'+', ':' or the end of the line in the formula");
			goto bad;
		}
		s++;
	}
	cg_formula *f = &p->formulas[ev]; /* cg_event_get() may have moved it */
	free(f->t);
	f->t = t;
	f->n = (uint32_t)n;
	f->line = r->lineno;
	f->source = r->name;
	*end = s;
	return 0;
bad_num:
	fail_at(r, s, "number too large for 64 bits in the formula");
bad:
	free(t);
	return -1;
}

/* event: NAME [= FORMULA] [: LONG NAME] */
static int hdr_event(reader *r, const char *s, const char *e)
{
	cg_profile *p = r->p;
	s = skip_space(s, e);
	const char *w = s;
	s = event_name_end(s, e);
	if (s == w)
		return expected(r, s, e, "an event name");
	if (check_text(r, w, e))
		return -1;
	uint32_t ev = cg_event_get(p, w, (size_t)(s - w));
	s = skip_space(s, e);
	if (s < e && *s == '=') {
		const char *f = skip_space(s + 1, e), *fe;
		if (parse_formula(r, ev, f, e, &fe))
			return -1;
		const char *te = fe;
		while (te > f && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		p->events[ev].formula = dup_text(r, f, te);
		s = fe;
	}
	if (s < e && *s == ':')
		p->events[ev].long_name = dup_text(r, skip_space(s + 1, e), e);
	else if (s < e)
		return expected(r, s, e, "'=', ':' or the end of the line");
	return 0;
}

/* summary: and totals: costs, one per column. */
static int hdr_costs(reader *r, const char *s, const char *e, const uint64_t **out, uint32_t *nout,
		     const char *key)
{
	if (!r->ncols)
		return fail_at(r, r->line, "'%s:' before the 'events:' line", key);
	uint64_t *v = arena_u64(r, r->ncols);
	uint32_t n = 0;
	for (s = skip_space(s, e); s < e; s = skip_space(s, e)) {
		if (n == r->ncols)
			return fail_at(r, s, "more values than events (%u) in '%s:'", r->ncols, key);
		char what[24];
		snprintf(what, sizeof what, "a %s: value", key);
		if (!(s = number(r, s, e, &v[n++], what)))
			return -1;
	}
	*out = v;
	*nout = n;
	return 0;
}

static int hdr_desc(reader *r, const char *s, const char *e)
{
	cg_part *pt = cur_part(r);
	s = skip_space(s, e);
	if (check_text(r, s, e))
		return -1;
	cg_desc *d = rt_arena_alloc(&r->p->arena, (pt->ndesc + 1) * sizeof *d);
	if (pt->ndesc)
		memcpy(d, pt->desc, pt->ndesc * sizeof *d);
	const char *colon = memchr(s, ':', (size_t)(e - s)), *ke = colon ? colon : e;
	while (ke > s && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	d[pt->ndesc].text = dup_text(r, s, e);
	d[pt->ndesc].key = dup_text(r, s, ke);
	d[pt->ndesc].value = colon ? dup_text(r, skip_space(colon + 1, e), e) : "";
	pt->desc = d;
	pt->ndesc++;
	return 0;
}

static int hdr_text(reader *r, const char *s, const char *e, const char **out)
{
	s = skip_space(s, e);
	if (check_text(r, s, e))
		return -1;
	*out = dup_text(r, s, e);
	return 0;
}

static bool key_is(const char *k, size_t n, const char *name)
{
	return strlen(name) == n && !memcmp(k, name, n);
}

/* Header values that change the whole input rather than one part. */
static int hdr_file_level(reader *r, const char *k, size_t kn, const char *s, const char *e)
{
	cg_part *pt = cur_part(r);
	if (key_is(k, kn, "version")) {
		uint64_t v;
		if (hdr_number(r, s, e, &v, "a version"))
			return -1;
		if (v > 1)
			return fail_at(r, skip_space(s, e), "unsupported format version %" PRIu64
				       " (this reader knows versions 0 and 1)", v);
		pt->version = r->version = (uint32_t)v;
		/* a new file's parts (concatenated files) number names afresh */
		if (r->part)
			for (int i = 0; i < 3; i++)
				idmap_free(&r->ids[i]);
		return 0;
	}
	if (hdr_text(r, s, e, &r->creator))
		return -1;
	pt->creator = r->creator;
	return 0;
}

/* "key: value" lines. Returns 1 for keys it does not know (ignored). */
static int header_line(reader *r, const char *k, size_t kn, const char *s, const char *e)
{
	bool costs = key_is(k, kn, "summary") || key_is(k, kn, "totals");
	if (!costs && (r->part == CG_NONE || r->body))
		start_part(r);
	if (costs && r->part == CG_NONE)
		return fail_at(r, r->line, "'%.*s:' before the 'events:' line", (int)kn, k);
	cg_part *pt = cur_part(r);
	if (key_is(k, kn, "version") || key_is(k, kn, "creator"))
		return hdr_file_level(r, k, kn, s, e);
	if (key_is(k, kn, "pid") || key_is(k, kn, "thread") || key_is(k, kn, "part")) {
		uint64_t *v = k[0] == 'p' ? (k[1] == 'i' ? &pt->pid : &pt->number) : &pt->thread;
		pt->flags |= k[0] == 'p' ? (k[1] == 'i' ? CG_HAS_PID : CG_HAS_PART) : CG_HAS_THREAD;
		return hdr_number(r, s, e, v, k[0] == 't' ? "a thread number" : k[1] == 'i' ? "a process id" : "a part number");
	}
	if (key_is(k, kn, "cmd"))
		return hdr_text(r, s, e, &pt->cmd);
	if (key_is(k, kn, "desc"))
		return hdr_desc(r, s, e);
	if (key_is(k, kn, "positions"))
		return hdr_positions(r, s, e);
	if (key_is(k, kn, "events"))
		return hdr_events(r, s, e);
	if (key_is(k, kn, "event"))
		return hdr_event(r, s, e);
	if (key_is(k, kn, "summary")) {
		pt->flags |= CG_HAS_SUMMARY;
		r->summary_line = r->lineno;
		return hdr_costs(r, s, e, &pt->summary, &pt->nsummary, "summary");
	}
	if (key_is(k, kn, "totals")) {
		pt->flags |= CG_HAS_TOTALS;
		r->totals_line = r->lineno;
		return hdr_costs(r, s, e, &pt->totals, &pt->ntotals, "totals");
	}
	return 1;
}

/* --- body lines --- */

static uint32_t part_key(const reader *r)
{
	return r->flags & CG_READ_MERGE_PARTS ? 0 : r->part;
}

/* The code cost lines go to. The function named by fn= is made here, on
 * its first line (with its code in its own file, even when that line is
 * in an inlined one); no fn= at all is a nameless function. */
static uint32_t ensure_code(reader *r)
{
	if (r->code != CG_NONE)
		return r->code;
	cg_profile *p = r->p;
	if (r->fn == CG_NONE && r->pend.set) {
		r->fn = cg_fn_get(p, r->pend.object, r->pend.file, r->pend.name);
		if (r->pend.stamp > p->fns[r->fn].last_named)
			p->fns[r->fn].last_named = r->pend.stamp;
		r->pend.set = false;
		cg_code_get(p, part_key(r), r->fn, p->fns[r->fn].file);
	} else if (r->fn == CG_NONE) {
		if (!r->warned_nofn)
			warn_line(r, r->lineno, "cost line before any fn= line: counted under a function "
				  "without a name");
		r->warned_nofn = true;
		r->fn = cg_fn_get(p, r->ob, r->fl, r->empty[CG_FUNCTION]);
	}
	r->code = cg_code_get(p, part_key(r), r->fn, r->file);
	return r->code;
}

/* ob= fl= fi= fe= fn= cob= cfi= cfl= cfn= jfi= jfn= */
static int position_spec(reader *r, const char *k, size_t kn, const char *s, const char *e)
{
	bool called = kn == 3 && (k[0] == 'c' || k[0] == 'j');
	const char *spec = called ? k + 1 : k;
	enum cg_kind kind = spec[0] == 'o' ? CG_OBJECT : spec[1] == 'n' ? CG_FUNCTION : CG_FILE;
	uint32_t id = CG_NONE;
	if (parse_name(r, kind, s, e, &id))
		return -1;
	if (k[0] == 'j') {
		*(kind == CG_FILE ? &r->jfile : &r->jfn) = id;
	} else if (called) {
		if (kind == CG_OBJECT) {
			r->cob = id;
		} else if (kind == CG_FILE) {
			r->cfile = id;
			r->cfile_given = true;
		} else {
			struct pending_fn c = {r->cob != CG_NONE ? r->cob : r->ob,
					       r->cfile_given ? r->cfile : r->file, id,
					       r->cfile_given ? CG_CALL_FILE_GIVEN : 0, 0, true};
			r->pend_callee = c;
			r->callee = CG_NONE;
		}
	} else if (kind == CG_OBJECT) {
		r->ob = id;
		r->fn = r->code = CG_NONE;
		r->pend.set = false;
	} else if (kind == CG_FUNCTION) {
		struct pending_fn f = {r->ob, r->fl, id, 0, ++r->p->fn_lines, true};
		r->pend = f;
		r->file = r->fl;
		r->fn = r->code = CG_NONE;
	} else {
		if (spec[1] == 'l')
			r->fl = id;
		r->file = id;
		r->code = CG_NONE;
	}
	return 0;
}

/* SubPosition := Number | "+" Number | "-" Number | "*", relative to
 * `last`; followed by a space or the end of the line. */
static const char *subposition(reader *r, const char *s, const char *e, uint64_t last, uint64_t *v)
{
	char c = s < e ? *s : 0;
	if (c == '*') {
		*v = last;
		s++;
	} else {
		uint64_t d;
		const char *q = number(r, c == '+' || c == '-' ? s + 1 : s, e, &d, "a position");
		if (!q)
			return NULL;
		if (c == '+' && d > UINT64_MAX - last) {
			fail_at(r, s, "position beyond 64 bits");
			return NULL;
		}
		if (c == '-' && d > last) {
			fail_at(r, s, "relative position -%" PRIu64 " goes below 0 (last was %" PRIu64 ")", d, last);
			return NULL;
		}
		*v = c == '+' ? last + d : c == '-' ? last - d : d;
		s = q;
	}
	if (s < e && *s != ' ' && *s != '\t') {
		expected(r, s, e, "a space after the position");
		return NULL;
	}
	return skip_space(s, e);
}

/* The part's subpositions into pos[] (by kind), relative to the last
 * cost line's. A cost line's are the base of the next ones; the target of
 * calls=/jump=/jcnd= is not, and readers ignore it, so producers are loose
 * there: Xdebug writes "calls=1 0 0" (a number too many), some leave it
 * out. */
static const char *subpositions(reader *r, const char *s, const char *e, uint64_t pos[4], bool target)
{
	const cg_part *pt = cur_part(r);
	memcpy(pos, r->last, sizeof r->last);
	for (uint32_t i = 0; i < pt->npositions && (!target || s < e); i++) {
		uint8_t k = pt->positions[i];
		if (!(s = subposition(r, s, e, r->last[k], &pos[k])))
			return NULL;
	}
	if (!target)
		memcpy(r->last, pos, sizeof r->last);
	while (target && s < e) {
		uint64_t d;
		if (!(s = number(r, s, e, &d, "a position")))
			return NULL;
		s = skip_space(s, e);
	}
	return s;
}

/* An error where a self cost makes the input's total of its event pass
 * 2^64-1: every total above it (the part's, the program's, a function's)
 * would wrap. The input's total bounds all of them. */
static int total_check(reader *r, const char *at, uint32_t slot, uint64_t v)
{
	if (slot >= r->ntotal) {
		size_t was = r->ntotal;
		rt_grow((void **)&r->total, &r->ntotal, r->p->nslots > slot ? r->p->nslots : slot + 1,
			sizeof *r->total);
		memset(r->total + was, 0, (r->ntotal - was) * sizeof *r->total);
	}
	uint64_t t;
	if (!__builtin_add_overflow(r->total[slot], v, &t))
		return 0;
	const cg_profile *p = r->p;
	for (size_t ev = 0; ev < p->nevents; ev++)
		if (p->events[ev].slot == slot)
			return fail_at(r, at, "the costs of event '%s' add up past 2^64-1: its totals would wrap",
				       p->events[ev].name);
	return fail_at(r, at, "the costs add up past 2^64-1: the totals would wrap");
}

/* Costs into r->vals by slot; returns how many slots were given, or -1.
 * Self costs add to the part's sum once the whole line has parsed. */
static int costs(reader *r, const char *s, const char *e, bool self)
{
	uint32_t n = 0, given = 0;
	uint64_t *vals = r->vals;
	if (!r->identity)
		memset(vals, 0, r->p->nslots * sizeof *vals);
	while (s < e) {
		if (n == r->ncols)
			return fail_at(r, s, "more costs than events (%u)", r->ncols);
		uint64_t v;
		const char *at = s;
		if (!(s = number(r, s, e, &v, "a cost")))
			return -1;
		s = skip_space(s, e);
		uint32_t slot = r->identity ? n : r->cols[n];
		if (self && total_check(r, at, slot, v))
			return -1;
		vals[slot] = v;
		n++;
		if (slot + 1 > given)
			given = slot + 1;
	}
	for (uint32_t i = 0; self && i < n; i++) {
		uint32_t slot = r->identity ? i : r->cols[i];
		r->sum[i] += vals[slot];
		r->total[slot] += vals[slot];
	}
	return (int)given;
}


static int cost_line(reader *r, const char *s, const char *e)
{
	if (!r->ncols)
		return fail_at(r, s, "cost line before the 'events:' line");
	uint64_t pos[4];
	if (!(s = subpositions(r, s, e, pos, false)))
		return -1;
	int given = costs(r, s, e, r->next == NEXT_COST);
	if (given < 0)
		return -1;
	r->body = true;
	uint64_t addr = r->flags & CG_READ_LINES ? 0 : pos[CG_POS_INSTR];
	uint32_t code = ensure_code(r);
	switch (r->next) {
	case NEXT_COST:
		cur_part(r)->cost_lines++;
		/* within the input's total, which total_check() bounds */
		(void)cg_add_cost(r->p, code, addr, pos[CG_POS_LINE], r->vals, (uint32_t)given);
		break;
	case NEXT_CALL:
		r->call.code = code;
		r->call.addr = addr;
		r->call.line = pos[CG_POS_LINE];
		r->call.given = (uint32_t)given;
		if (!cg_add_call(r->p, &r->call, r->vals))
			return fail_at(r, r->line, "the inclusive costs or the count of this call add up past "
					     "2^64-1 with its earlier lines: they would wrap");
		r->cob = CG_NONE;
		r->cfile_given = false;
		break;
	case NEXT_JUMP:
		if (given)
			warn_line(r, r->lineno, "costs on the source line of a jump are ignored");
		r->jump.code = code;
		r->jump.addr = addr;
		r->jump.line = pos[CG_POS_LINE];
		r->jump.to_fn = r->jfn == CG_NONE ? r->fn
				: cg_fn_get(r->p, r->ob, r->jfile != CG_NONE ? r->jfile : r->file, r->jfn);
		r->jump.to_file = r->jfile != CG_NONE ? r->jfile : r->file;
		cg_add_jump(r->p, &r->jump);
		r->jfile = r->jfn = CG_NONE;
		break;
	}
	r->next = NEXT_COST;
	return 0;
}

/* calls=COUNT TARGET, jump=COUNT TARGET, jcnd=FOLLOWED/EXECUTED TARGET
 * (what Callgrind writes) or jcnd=EXECUTED FOLLOWED TARGET (the spec). */
static int association(reader *r, const char *k, const char *s, const char *e)
{
	if (!r->ncols)
		return fail_at(r, r->line, "'%s=' before the 'events:' line",
			       k[0] == 'c' ? "calls" : k[1] == 'u' ? "jump" : "jcnd");
	uint64_t a = 0, b = 0, pos[4];
	s = skip_space(s, e);
	const char *what = k[0] == 'c' ? "a call count" : "a jump count";
	bool ovf;
	const char *q = parse_num(s, e, &a, &ovf);
	if (k[1] == 'c' && q && q < e && *q == '/') {
		if (!(s = number(r, q + 1, e, &b, "the executed count")))
			return -1;
	} else if (!(s = number(r, s, e, &a, what))) {
		return -1;
	} else if (k[1] == 'c') {
		s = skip_space(s, e);
		if (!(s = number(r, s, e, &b, "the followed count")))
			return -1;
		uint64_t t = a;
		a = b;
		b = t;
	}
	if (!subpositions(r, skip_space(s, e), e, pos, true))
		return -1;
	uint64_t to_addr = r->flags & CG_READ_LINES ? 0 : pos[CG_POS_INSTR];
	if (k[0] == 'c') {
		if (r->callee == CG_NONE && !r->pend_callee.set)
			return fail_at(r, r->line, "calls= without a cfn= line before it");
		if (r->callee == CG_NONE) {
			const struct pending_fn *c = &r->pend_callee;
			r->callee = cg_fn_get(r->p, c->object, c->file, c->name);
			r->callee_flags = c->flags;
			r->pend_callee.set = false;
		}
		cg_call c = {0, 0, to_addr, pos[CG_POS_LINE], 0, r->callee, 0, r->callee_flags, a, NULL};
		r->call = c;
		r->next = NEXT_CALL;
	} else {
		cg_jump j = {0, 0, to_addr, pos[CG_POS_LINE], 0, 0, 0, k[1] == 'c', k[1] == 'c' ? b : a, a};
		r->jump = j;
		r->next = NEXT_JUMP;
	}
	r->next_from = r->lineno;
	return 0;
}

static bool is_position_key(const char *k, size_t n)
{
	static const char *const keys[] = {"ob", "fl", "fi", "fe", "fn", "cob", "cfi",
					   "cfl", "cfn", "jfi", "jfn"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (key_is(k, n, keys[i]))
			return true;
	return false;
}

/* "key=..." or "key: ..." lines. */
static int spec_line(reader *r, const char *s, const char *e)
{
	const char *k = s;
	while (s < e && *s != '=' && *s != ':')
		s++;
	size_t kn = (size_t)(s - k);
	if (s < e && *s == '=') {
		if (r->next != NEXT_COST)
			goto pending;
		if (is_position_key(k, kn)) {
			if (r->part == CG_NONE)
				start_part(r);
			return position_spec(r, k, kn, s + 1, e);
		}
		if (key_is(k, kn, "calls") || key_is(k, kn, "jump") || key_is(k, kn, "jcnd"))
			return association(r, k, s + 1, e);
		return fail_at(r, k, "unknown specification '%.*s=' (expected fn=, fl=, calls=, ...)",
			       (int)(kn > 40 ? 40 : kn), k);
	}
	if (s == e)
		return expected(r, k, e, "a cost line, a position (fn=, fl=, ...), calls=, jump= or a header line");
	if (r->next != NEXT_COST)
		goto pending;
	int rc = header_line(r, k, kn, s + 1, e);
	return rc < 0 ? -1 : 0;
pending:
	return fail_at(r, k, "expected the %s line of the %s on line %" PRIu64 ", found another line",
		       r->next == NEXT_CALL ? "cost" : "source", r->next == NEXT_CALL ? "calls=" : "jump",
		       r->next_from);
}

static int feed_line(reader *r, const char *s, const char *e)
{
	r->lineno++;
	r->line = s;
	if (e > s && e[-1] == '\r')
		e--;
	char c = s < e ? *s : 0;
	if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*')
		return cost_line(r, s, e);
	if (c == '#')
		return 0;
	const char *t = skip_space(s, e);
	if (t == e)
		return 0;
	if (t != s)
		return expected(r, s, e, "a line that does not start with a space");
	return spec_line(r, s, e);
}

/* --- driver --- */

static void reader_init(reader *r, cg_profile *p, const char *name, const cg_read_opts *o, rt_diag *err)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	r->o = o;
	r->flags = o ? o->flags : 0;
	p->merged |= (r->flags & CG_READ_MERGE_PARTS) != 0;
	p->no_addrs |= (r->flags & CG_READ_LINES) != 0;
	r->err = err;
	r->name = rt_arena_strndup(&p->arena, name ? name : "<input>", strlen(name ? name : "<input>"));
	r->part = CG_NONE;
	r->version = 1;
	for (int k = 0; k < 3; k++)
		r->empty[k] = cg_intern(p, (enum cg_kind)k, "", 0);
	reset_position(r);
	memset(err, 0, sizeof *err);
}

static void reader_free(reader *r)
{
	for (int k = 0; k < 3; k++)
		idmap_free(&r->ids[k]);
	free(r->cols);
	free(r->vals);
	free(r->total);
}

/* The last line of an input that does not end in a newline: a truncated
 * file ends like that, so what does not parse there is a warning. */
static int feed_last(reader *r, const char *s, const char *e)
{
	rt_diag saved = *r->err;
	if (!feed_line(r, s, e))
		return 0;
	warn_line(r, r->lineno, "the input ends inside this line (truncated?); it is left out: %s", r->err->msg);
	*r->err = saved;
	r->st.truncated = true;
	if (r->part != CG_NONE)
		cur_part(r)->flags |= CG_PART_TRUNCATED;
	return 0;
}

static int finish(reader *r, int rc, cg_read_stats *st)
{
	if (!rc && r->next != NEXT_COST) {
		warn_line(r, r->next_from, "the input ends before the %s line of this %s (truncated?)",
			  r->next == NEXT_CALL ? "cost" : "source", r->next == NEXT_CALL ? "calls=" : "jump");
		r->st.truncated = true;
		cur_part(r)->flags |= CG_PART_TRUNCATED;
	}
	if (!rc)
		end_part(r);
	if (!rc && !r->events_seen) {
		r->lineno = r->lineno ? r->lineno : 1;
		r->line = NULL;
		rc = fail_at(r, NULL, r->st.bytes ? "no 'events:' line: not a Callgrind profile"
					       : "empty input: not a Callgrind profile");
		r->err->line = 0;
	}
	cg_resolve_formulas(r->p, r->o ? r->o->warn : NULL, r->o ? r->o->ctx : NULL);
	r->st.lines = r->lineno;
	if (st)
		*st = r->st;
	reader_free(r);
	return rc;
}

int cg_read_mem(cg_profile *p, const char *buf, size_t len, const char *name,
		const cg_read_opts *o, cg_read_stats *st, rt_diag *err)
{
	reader r;
	reader_init(&r, p, name, o, err);
	r.st.bytes = len;
	const char *s = buf, *end = buf + len;
	int rc = 0;
	while (s < end && !rc) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl) {
			rc = feed_last(&r, s, end);
			break;
		}
		rc = feed_line(&r, s, nl);
		s = nl + 1;
	}
	return finish(&r, rc, st);
}

/* Feeds the complete lines of buf[0, len); returns how many bytes were
 * consumed (the rest is an incomplete line), or -1 on a parse error. */
static ssize_t feed_chunk(void *ctx, const char *buf, size_t len)
{
	reader *r = ctx;
	const char *s = buf, *end = buf + len, *nl;
	while ((nl = memchr(s, '\n', (size_t)(end - s)))) {
		if (feed_line(r, s, nl))
			return -1;
		s = nl + 1;
	}
	return s - buf;
}

static int stream_last(void *ctx, const char *buf, size_t len)
{
	return feed_last(ctx, buf, buf + len);
}

static int stream_error(void *ctx, int errnum, const char *buf, size_t len)
{
	reader *r = ctx;
	(void)buf;
	(void)len;
	r->line = NULL;
	if (!errnum) {
		r->lineno++;
		return fail_at(r, NULL, "line longer than %u bytes (not a Callgrind profile?)", CG_MAX_LINE);
	}
	int rc = fail_at(r, NULL, "cannot read: %s", strerror(errnum));
	r->err->line = 0;
	return rc;
}

int cg_read_fd(cg_profile *p, int fd, const char *name, const cg_read_opts *o,
	       cg_read_stats *st, rt_diag *err)
{
	reader r;
	reader_init(&r, p, name, o, err);
	rt_stream s = {feed_chunk, stream_last, stream_error, &r, 1u << 20, CG_MAX_LINE, &r.st.bytes};
	int rc = rt_stream_fd(fd, &s);
	return finish(&r, rc, st);
}

bool cg_sniff(const char *head, size_t n)
{
	static const char *const keys[] = {"version:", "creator:", "pid:", "cmd:", "part:", "thread:",
					   "desc:", "positions:", "events:", "event:", "summary:",
					   "totals:", "ob=", "fl=", "fn="};
	const char *s = head, *e = head + n;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		size_t len = (size_t)(le - s);
		if (len >= 18 && !memcmp(s, "# callgrind format", 18))
			return true;
		if (len && *s != '#' && *s != '\r') {
			for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
				if (len >= strlen(keys[i]) && !memcmp(s, keys[i], strlen(keys[i])))
					return true;
			return false;
		}
		s = nl ? nl + 1 : e;
	}
	return false;
}
