/* An allocation profile of an rtrace trace, in the Callgrind model: what
 * KCachegrind and callgrind_annotate show of a CPU profile, shown of
 * resources: who allocates, how much, and what leaks, through the call
 * graph.
 *
 * Events, per resource type ("memory" unprefixed, others prefixed by
 * their type in CamelCase, e.g. FileDescriptorAllocs):
 *   Allocs        allocation calls
 *   Bytes / Size  their sizes (other types: only when some size is not 1)
 *   Leaks, LeakedBytes      with leak verdicts (memory of `rtrace run`,
 *                           Valgrind XML): definitely and indirectly lost
 *   Unfreed, UnfreedBytes   without: still allocated at the trace's end
 *   Temporary     memory: allocations freed with no other allocation in
 *                 between (heaptrack's definition, rt_hp's)
 *   PeakBytes     memory: bytes live at the peak heap consumption, at the
 *                 site that allocated them (the sum: the peak)
 * The last two are `rtrace heap`'s figures, so callgrind_annotate's totals
 * are its summary's; a site's inclusive peak is what its callers held at
 * the peak moment (peak bytes of distinct blocks add up).
 *
 * Costs are first summed per backtrace (cg_stream.c's pass); each backtrace then gives its
 * cost to its innermost frame (the allocation site, self cost) and to
 * each distinct (caller position, callee) edge along it once (calls=,
 * inclusive cost), so recursion does not count a stack twice on one
 * edge. A frame's inlined functions are functions of their own, the
 * inner called by the outer at the line it was inlined at. */
#include "callgrind/cg_trace.h"
#include "rtrace/heapcheck.h"
#include "rtrace/rtrace.h"
#include "rtrace/trace.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The events of a type: its costs, the leak pair being the verdicts'
 * with them (memory). */
enum { EV_ALLOCS = CG_EV_ALLOCS, EV_SIZE = CG_EV_SIZE, EV_LEAKS = CG_EV_UNFREED, EV_LEAKED = CG_EV_UNFREED_SIZE,
       EV_PER_TYPE = CG_EV_N };

/* A frame's function: one trace frame is one or more of them (inlining). */
typedef struct vframe {
	uint32_t fn;   /* cg_fn */
	uint32_t code; /* its cg_code in part 0 */
	uint64_t addr, line;
} vframe;

/* What a distinct trace frame (address and text) gives, found on its
 * first sight: a stack repeats the frames of others (python3: 1.5M
 * frames on its stacks, few distinct), and each sight cost a detail
 * look-up, a name's interning per function and an snprintf per
 * unresolved address. */
typedef struct fmemo {
	uint64_t addr;
	uint32_t text;
	uint32_t first, n; /* its functions in the pool; first FM_NOT: not yet */
	int8_t alloc;      /* allocator_frame: 1, 0, -1 not yet; -2 an empty slot */
} fmemo;
#define FM_NOT UINT32_MAX

typedef struct builder {
	rt_trace *t;
	cg_profile *p;
	const cg_trace_opts *o;
	bool verdicts;
	uint32_t slot[RT_MAX_RESOURCES + 1][EV_PER_TYPE]; /* by res_type; CG_NONE: none */
	uint32_t nslots;
	uint64_t *cost;  /* per backtrace (+1: calls without one), nslots each */
	uint64_t *count; /* calls= count per backtrace */
	uint32_t nbt;
	uint32_t unknown[3]; /* "???" per kind */
	bool saturated;      /* a sum was held at 2^64-1 */
	fmemo *memo;         /* open addressing by address and text */
	size_t nmemo, cmemo; /* used, slots (a power of two) */
	vframe *pool;        /* the frames' functions, memo[].first on */
	size_t npool, cpool;
	uint32_t stack;      /* add_stack: stacks added so far */
	uint32_t *stamp;     /* by call: the last stack that added to it */
	size_t nstamp;
} builder;


/* --- events --- */

/* "file descriptor" -> "FileDescriptor": event names are letters and
 * digits only. */
static void camel(const char *type, char *buf, size_t n)
{
	size_t k = 0;
	bool up = true;
	for (const char *s = type; *s && k + 1 < n; s++) {
		if (!isalnum((unsigned char)*s)) {
			up = true;
			continue;
		}
		buf[k++] = up ? (char)toupper((unsigned char)*s) : *s;
		up = false;
	}
	buf[k] = '\0';
}

static void add_event(builder *b, uint8_t key, int which, const char *name, const char *long_name)
{
	char prefix[64] = "", full[128];
	const rt_resource *r = key ? rt_trace_resource_get(b->t, key) : NULL;
	if (r)
		camel(r->type, prefix, sizeof prefix);
	snprintf(full, sizeof full, "%s%s", prefix, name);
	uint32_t ev = cg_event_get(b->p, full, strlen(full));
	cg_event_make_raw(b->p, ev);
	char *ln = rt_xasprintf("%s%s%s", r ? r->type : "", r ? ": " : "", long_name);
	b->p->events[ev].long_name = rt_arena_strndup(&b->p->arena, ln, strlen(ln));
	free(ln);
	b->slot[key][which] = b->p->events[ev].slot;
}

/* The events of the resource types the trace allocates (memory also
 * when it only has leak verdicts, as a Valgrind XML report). */
static void define_events(builder *b, const cg_usage *u)
{
	bool used[RT_MAX_RESOURCES + 1];
	const bool *sized = u->sized;
	memcpy(used, u->used, sizeof used);
	for (uint8_t k = 0; k <= RT_MAX_RESOURCES; k++)
		for (int e = 0; e < EV_PER_TYPE; e++)
			b->slot[k][e] = CG_NONE;
	bool any = false;
	for (uint8_t k = 0; k <= RT_MAX_RESOURCES; k++)
		any |= used[k];
	/* nothing allocated (an empty trace, only releases): memory's events,
	 * zero, so that the profile is one the tools open */
	if (!any && !b->verdicts)
		used[0] = true;
	for (uint8_t k = 0; k <= RT_MAX_RESOURCES; k++) {
		bool leaks = k == 0 && b->verdicts;
		if (!used[k] && !leaks)
			continue;
		if (used[k])
			add_event(b, k, EV_ALLOCS, "Allocs", "allocation calls");
		if (used[k] && (k == 0 || sized[k]))
			add_event(b, k, EV_SIZE, k ? "Size" : "Bytes", k ? "allocated size" : "allocated bytes");
		if (leaks) {
			add_event(b, k, EV_LEAKS, "Leaks", "leaked blocks (definitely and indirectly lost)");
			add_event(b, k, EV_LEAKED, "LeakedBytes", "leaked bytes (definitely and indirectly lost)");
		} else {
			add_event(b, k, EV_LEAKS, "Unfreed", "not released by the end of the trace");
			if (k == 0 || sized[k])
				add_event(b, k, EV_LEAKED, k ? "UnfreedSize" : "UnfreedBytes",
					  "size not released by the end of the trace");
		}
		if (used[k] && k == 0) {
			add_event(b, k, CG_EV_TEMPORARY, "Temporary",
				  "temporary allocations (freed with no allocation in between)");
			add_event(b, k, CG_EV_PEAK, "PeakBytes", "bytes live at the peak heap consumption");
		}
	}
	b->nslots = cg_profile_slots(b->p);
}

/* --- costs per backtrace --- */

static uint64_t *bt_cost(builder *b, uint32_t bt)
{
	return &b->cost[(size_t)(bt == RT_NONE || bt >= b->nbt ? b->nbt : bt) * b->nslots];
}

static void add(builder *b, uint32_t bt, uint8_t key, int which, uint64_t v)
{
	uint32_t s = b->slot[key][which];
	if (s != CG_NONE)
		b->saturated |= !cg_sat_add(&bt_cost(b, bt)[s], v);
}

/* The pass's costs; with verdicts, memory's leaks are theirs. */
static void sum_sites(builder *b, const cg_site_cost *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (int e = 0; e < EV_PER_TYPE; e++)
			if (!(c[i].key == 0 && b->verdicts && (e == EV_LEAKS || e == EV_LEAKED)))
				add(b, c[i].bt, c[i].key, e, c[i].v[e]);
		b->count[c[i].bt == RT_NONE || c[i].bt >= b->nbt ? b->nbt : c[i].bt] += c[i].v[EV_ALLOCS];
	}
}

/* Leak verdicts: the lost blocks (memory). */
static void sum_leaks(builder *b)
{
	for (size_t i = 0; b->verdicts && i < rt_trace_leak_count(b->t); i++) {
		const rt_leak *l = rt_trace_leak_at(b->t, i);
		if (l->kind != RT_LEAK_DEFINITE && l->kind != RT_LEAK_INDIRECT)
			continue;
		uint64_t blocks = l->blocks ? l->blocks : 1;
		add(b, l->bt, 0, EV_LEAKS, blocks);
		add(b, l->bt, 0, EV_LEAKED, l->size);
		uint32_t bt = l->bt == RT_NONE || l->bt >= b->nbt ? b->nbt : l->bt;
		if (!b->count[bt])
			b->count[bt] = blocks; /* a stack known by its leaks only */
	}
}

/* --- frames --- */

static uint32_t name_of(builder *b, enum cg_kind kind, uint32_t str)
{
	if (str == RT_NONE)
		return b->unknown[kind];
	const char *s = rt_trace_str(b->t, str);
	return cg_intern(b->p, kind, s, strlen(s));
}

static uint32_t address_name(builder *b, uint64_t addr)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "0x%016" PRIx64, addr);
	return cg_intern(b->p, CG_FUNCTION, buf, (size_t)n);
}

static vframe fn_of(builder *b, uint32_t object, uint32_t file, uint32_t name, uint64_t addr, uint64_t line)
{
	uint32_t fn = cg_fn_get(b->p, object, file, name);
	return (vframe){fn, cg_code_get(b->p, 0, fn, file), addr, line};
}

/* The object of a frame with details fi: the module they name, else the
 * one the memory map places its address in (a text trace's frame names
 * its module only when no source line is known). */
static uint32_t object_of(builder *b, const rt_frame_info *fi, uint64_t addr)
{
	if (fi->module != RT_NONE)
		return name_of(b, CG_OBJECT, fi->module);
	const char *mod = rt_trace_module_at(b->t, addr);
	return mod ? cg_intern(b->p, CG_OBJECT, mod, strlen(mod)) : b->unknown[CG_OBJECT];
}

/* The functions of trace frame f, innermost first, appended to *v: from
 * its details; a frame without a known function is its address. */
static void frame_functions(builder *b, const rt_frame *f, vframe **v, size_t *n, size_t *cap)
{
	uint64_t addr = b->o->instr ? f->addr : 0;
	rt_frame_info fi = {RT_NONE, 0, NULL};
	rt_trace_frame_info(b->t, f, &fi);
	uint32_t ob = object_of(b, &fi, f->addr);
	if (!fi.n) {
		vframe vf = fn_of(b, ob, b->unknown[CG_FILE], address_name(b, f->addr), addr, 0);
		RT_PUSH(*v, *n, *cap, vf);
		return;
	}
	for (uint32_t k = 0; k < fi.n; k++) {
		const rt_srcloc *l = &fi.locs[k];
		uint32_t name = l->fn == RT_NONE ? address_name(b, f->addr) : name_of(b, CG_FUNCTION, l->fn);
		vframe vf = fn_of(b, ob, name_of(b, CG_FILE, l->file), name, addr, l->line);
		RT_PUSH(*v, *n, *cap, vf);
	}
}

/* The allocator's own frames at the top of a stack: Valgrind's
 * replacement functions, rtrace's tracer. The allocation site is the
 * first frame below them. */
static bool allocator_frame(const rt_trace *t, const rt_frame *f)
{
	rt_frame_info fi;
	const char *m = rt_trace_frame_info(t, f, &fi) && fi.module != RT_NONE ? rt_trace_str(t, fi.module)
										: rt_trace_module_at(t, f->addr);
	if (!m)
		return false;
	const char *base = strrchr(m, '/');
	base = base ? base + 1 : m;
	return !strncmp(base, "vgpreload_", 10) || !strcmp(base, "librtrace-preload.so");
}

static size_t memo_home(const builder *b, const rt_frame *f)
{
	return (size_t)rt_mix64(f->addr ^ (uint64_t)f->text << 48) & (b->cmemo - 1);
}

static void memo_grow(builder *b)
{
	fmemo *old = b->memo;
	size_t n = b->cmemo;
	b->cmemo = n ? 2 * n : 1024;
	b->memo = rt_xmalloc(b->cmemo * sizeof *b->memo);
	for (size_t i = 0; i < b->cmemo; i++)
		b->memo[i].alloc = -2; /* an empty slot */
	for (size_t i = 0; i < n; i++) {
		if (old[i].alloc == -2)
			continue;
		rt_frame f = {old[i].addr, old[i].text};
		size_t j = memo_home(b, &f);
		while (b->memo[j].alloc != -2)
			j = (j + 1) & (b->cmemo - 1);
		b->memo[j] = old[i];
	}
	free(old);
}

/* f's entry, made on its first sight. */
static fmemo *memo_of(builder *b, const rt_frame *f)
{
	if (2 * (b->nmemo + 1) > b->cmemo)
		memo_grow(b);
	size_t j = memo_home(b, f);
	for (; b->memo[j].alloc != -2; j = (j + 1) & (b->cmemo - 1))
		if (b->memo[j].addr == f->addr && b->memo[j].text == f->text)
			return &b->memo[j];
	b->nmemo++;
	b->memo[j] = (fmemo){f->addr, f->text, FM_NOT, 0, -1};
	return &b->memo[j];
}

static bool memo_allocator(builder *b, const rt_frame *f)
{
	fmemo *m = memo_of(b, f);
	if (m->alloc < 0)
		m->alloc = allocator_frame(b->t, f);
	return m->alloc;
}

/* f's functions appended to *v, as frame_functions gives them, found
 * in the same order on f's first sight (so names are interned as
 * they were without the memo). */
static void memo_functions(builder *b, const rt_frame *f, vframe **v, size_t *n, size_t *cap)
{
	fmemo *m = memo_of(b, f);
	if (m->first == FM_NOT) {
		size_t at = b->npool;
		frame_functions(b, f, &b->pool, &b->npool, &b->cpool);
		m->first = (uint32_t)at;
		m->n = (uint32_t)(b->npool - at);
	}
	for (uint32_t i = 0; i < m->n; i++)
		RT_PUSH(*v, *n, *cap, b->pool[m->first + i]);
}

/* --- calls --- */

typedef struct edge {
	uint32_t caller, callee;
	uint32_t code; /* the caller's */
	uint64_t addr, line;
	uint64_t to_addr, to_line;
} edge;

static int edge_cmp(const void *a, const void *b)
{
	const edge *x = a, *y = b;
	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Self cost at v[0], and each distinct edge along v once: an edge of a
 * call the profile has is added where it is found, once a stack (the
 * stack's number stamped on the call; python3: 1.5M edges, most of them
 * known); the new ones are sorted, made and added in edge_cmp's order,
 * the first of equal ones kept (qsort is glibc's merge sort), as when
 * every edge of the stack was sorted to find the distinct ones. */
static void add_stack(builder *b, const vframe *v, size_t n, const uint64_t *cost, uint64_t count,
		      edge **e, size_t *cap)
{
	b->saturated |= !cg_add_cost(b->p, v[0].code, v[0].addr, v[0].line, cost, b->nslots);
	b->stack++;
	size_t ne = 0;
	for (size_t i = 1; i < n; i++) {
		edge x = {v[i].fn, v[i - 1].fn, v[i].code, v[i].addr, v[i].line, v[i - 1].addr, v[i - 1].line};
		cg_call c = {x.addr, x.line, x.to_addr, x.to_line, x.code, x.callee,
			     b->nslots, CG_CALL_FILE_GIVEN, count, NULL};
		uint32_t k = cg_call_find(b->p, &c);
		if (k == CG_NONE) {
			RT_PUSH(*e, ne, *cap, x);
		} else if (b->stamp[k] != b->stack) {
			b->stamp[k] = b->stack;
			b->saturated |= !cg_call_add_at(b->p, k, &c, cost);
		}
	}
	if (ne > 1)
		qsort(*e, ne, sizeof **e, edge_cmp);
	for (size_t i = 0; i < ne; i++) {
		const edge *x = &(*e)[i];
		if (i && !edge_cmp(x, x - 1))
			continue;
		cg_call c = {x->addr, x->line, x->to_addr, x->to_line, x->code, x->callee,
			     b->nslots, CG_CALL_FILE_GIVEN, count, NULL};
		b->saturated |= !cg_add_call(b->p, &c, cost);
		size_t at = b->p->ncalls - 1;
		if (at >= b->nstamp) {
			size_t m = b->nstamp ? 2 * b->nstamp : 1024;
			b->stamp = rt_xrealloc(b->stamp, m * sizeof *b->stamp);
			memset(b->stamp + b->nstamp, 0, (m - b->nstamp) * sizeof *b->stamp);
			b->nstamp = m;
		}
		b->stamp[at] = b->stack;
	}
}

static bool nonzero(const uint64_t *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i])
			return true;
	return false;
}

/* Every backtrace with a cost, as its functions. */
static void add_stacks(builder *b, const uint32_t *order)
{
	vframe *v = NULL;
	edge *e = NULL;
	rt_frame *f = NULL; /* the stack's frames, copied from where the trace keeps them */
	size_t cv = 0, ce = 0, cf = 0;
	for (uint32_t i = 0; i <= b->nbt; i++) {
		uint32_t bt = !order ? i : order[i] == RT_NONE ? b->nbt : order[i];
		const uint64_t *cost = &b->cost[(size_t)bt * b->nslots];
		if (!nonzero(cost, b->nslots))
			continue;
		size_t n = 0;
		uint32_t len = bt < b->nbt ? rt_trace_bt_len(b->t, bt) : 0, k = 0;
		if (len > cf) {
			rt_grow((void **)&f, &cf, len, sizeof *f);
			memset(f, 0, cf * sizeof *f); /* the padding stays zero, as the array's */
		}
		rt_trace_bt_copy(b->t, bt < b->nbt ? bt : RT_NONE, f);
		while (k + 1 < len && memo_allocator(b, &f[k]))
			k++;
		for (; k < len; k++)
			memo_functions(b, &f[k], &v, &n, &cv);
		if (!n) {
			static const char none[] = "(no backtrace)";
			vframe x = fn_of(b, b->unknown[CG_OBJECT], b->unknown[CG_FILE],
					 cg_intern(b->p, CG_FUNCTION, none, sizeof none - 1), 0, 0);
			RT_PUSH(v, n, cv, x);
		}
		add_stack(b, v, n, cost, b->count[bt], &e, &ce);
	}
	free(v);
	free(e);
	free(f);
}

/* --- the part --- */

static const char *command(builder *b)
{
	if (b->o->cmd)
		return b->o->cmd;
	const char *process = rt_trace_header(b->t, "process"), *args = rt_trace_header(b->t, "args");
	if (!process)
		return NULL;
	char *s = rt_xasprintf("%s%s%s", process, args && *args ? " " : "", args ? args : "");
	const char *d = rt_arena_strndup(&b->p->arena, s, strlen(s));
	free(s);
	return d;
}

static void add_part(builder *b)
{
	cg_profile *p = b->p;
	cg_part pt = {0};
	pt.source = rt_trace_header(b->t, "process") ? "trace" : NULL;
	pt.version = 1;
	pt.creator = "rtrace-" RTRACE_VERSION;
	pt.cmd = command(b);
	const char *pid = rt_trace_header(b->t, "pid");
	if (pid && *pid) {
		pt.pid = strtoull(pid, NULL, 10);
		pt.flags |= CG_HAS_PID;
	}
	pt.npositions = b->o->instr ? 2 : 1;
	pt.positions[0] = b->o->instr ? CG_POS_INSTR : CG_POS_LINE;
	pt.positions[1] = CG_POS_LINE;
	uint32_t *ev = rt_arena_alloc(&p->arena, (p->nevents ? p->nevents : 1) * sizeof *ev);
	uint64_t *sum = rt_arena_alloc(&p->arena, (b->nslots ? b->nslots : 1) * sizeof *sum);
	memset(sum, 0, (b->nslots ? b->nslots : 1) * sizeof *sum);
	for (uint32_t i = 0; i < p->nevents; i++)
		ev[i] = i;
	for (size_t i = 0; i <= b->nbt; i++)
		for (uint32_t s = 0; s < b->nslots; s++)
			b->saturated |= !cg_sat_add(&sum[s], b->cost[i * b->nslots + s]);
	pt.events = ev;
	pt.nevents = (uint32_t)p->nevents;
	pt.summary = pt.totals = pt.sum = sum;
	pt.nsummary = pt.ntotals = b->nslots;
	pt.flags |= CG_HAS_SUMMARY | CG_HAS_TOTALS;
	RT_PUSH(p->parts, p->nparts, p->cparts, pt);
}

cg_profile *cg_profile_build(rt_trace *t, const cg_trace_opts *opts, const cg_site_cost *c, size_t n,
			     const cg_usage *u, const uint32_t *order)
{
	static const cg_trace_opts defaults = {0};
	const rt_leak_summary *ls = rt_trace_leak_summary(t);
	builder b = {t, cg_profile_new(), opts ? opts : &defaults, ls && ls->mode == RT_LEAK_CHECK_FULL};
	static const char unknown[] = "???";
	for (int k = 0; k < 3; k++)
		b.unknown[k] = cg_intern(b.p, k, unknown, sizeof unknown - 1);
	define_events(&b, u);
	b.saturated = u->saturated;
	b.nbt = rt_trace_bt_count(t);
	b.cost = rt_xcalloc(((size_t)b.nbt + 1) * (b.nslots ? b.nslots : 1), sizeof *b.cost);
	b.count = rt_xcalloc((size_t)b.nbt + 1, sizeof *b.count);
	sum_sites(&b, c, n);
	sum_leaks(&b);
	add_part(&b);
	add_stacks(&b, order);
	free(b.memo);
	free(b.pool);
	free(b.stamp);
	free(b.cost);
	free(b.count);
	if (b.saturated && b.o->warn) {
		rt_diag d = {NULL, 0, 0, "costs add up past 2^64-1 (sizes of a crafted or corrupt trace?): "
					 "the sums that do are held at 18446744073709551615"};
		b.o->warn(b.o->ctx, &d);
	}
	return b.p;
}
