/* Heap checking results in the model (include/rtrace/heapcheck.h) and
 * their text-protocol form: permanent comments ("## ...") at the end of
 * the calls, which sp-rtrace's tools skip and rtrace keeps on reading. */
#include "rtrace/heapcheck.h"
#include "model/heapcheck_int.h"
#include "model/trace_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_hc {
	bool has_summary;
	rt_leak_summary summary;
	rt_leak *leaks;
	size_t nleaks, cleaks;
	rt_heap_error *errs;
	size_t nerrs, cerrs;
	rt_supp_used *used;
	size_t nused, cused;
};

static void hc_free(void *data)
{
	struct rt_hc *hc = data;
	free(hc->leaks);
	free(hc->errs);
	free(hc->used);
	free(hc);
}

static const rt_trace_ext hc_ext = {"heap checking results", hc_free};

static struct rt_hc *hc_get(rt_trace *t) { return rt_trace_ext_need(t, &hc_ext, sizeof(struct rt_hc)); }

static const struct rt_hc *hc_peek(const rt_trace *t) { return rt_trace_ext_get(t, &hc_ext); }

const rt_leak_summary *rt_trace_leak_summary(const rt_trace *t)
{
	const struct rt_hc *hc = hc_peek(t);
	return hc && hc->has_summary ? &hc->summary : NULL;
}

void rt_trace_set_leak_summary(rt_trace *t, const rt_leak_summary *s)
{
	struct rt_hc *hc = hc_get(t);
	hc->summary = *s;
	hc->has_summary = true;
}

void rt_trace_add_leak(rt_trace *t, const rt_leak *l)
{
	struct rt_hc *hc = hc_get(t);
	RT_PUSH(hc->leaks, hc->nleaks, hc->cleaks, *l);
}

size_t rt_trace_leak_count(const rt_trace *t)
{
	const struct rt_hc *hc = hc_peek(t);
	return hc ? hc->nleaks : 0;
}

const rt_leak *rt_trace_leak_at(const rt_trace *t, size_t i) { return &hc_peek(t)->leaks[i]; }

rt_leak *rt_trace_leaks(rt_trace *t) { return hc_get(t)->leaks; }

void rt_trace_add_heap_error(rt_trace *t, const rt_heap_error *e)
{
	struct rt_hc *hc = hc_get(t);
	RT_PUSH(hc->errs, hc->nerrs, hc->cerrs, *e);
}

size_t rt_trace_heap_error_count(const rt_trace *t)
{
	const struct rt_hc *hc = hc_peek(t);
	return hc ? hc->nerrs : 0;
}

const rt_heap_error *rt_trace_heap_error_at(const rt_trace *t, size_t i) { return &hc_peek(t)->errs[i]; }

rt_heap_error *rt_trace_heap_errors(rt_trace *t) { return hc_get(t)->errs; }

void rt_trace_add_supp_used(rt_trace *t, const rt_supp_used *u)
{
	struct rt_hc *hc = hc_get(t);
	rt_supp_used c = *u;
	c.name = rt_trace_strdup(t, u->name, strlen(u->name));
	c.file = rt_trace_strdup(t, u->file, strlen(u->file));
	RT_PUSH(hc->used, hc->nused, hc->cused, c);
}

size_t rt_trace_supp_used_count(const rt_trace *t)
{
	const struct rt_hc *hc = hc_peek(t);
	return hc ? hc->nused : 0;
}

const rt_supp_used *rt_trace_supp_used_at(const rt_trace *t, size_t i) { return &hc_peek(t)->used[i]; }

/* --- loss records --- */

static int loss_by_place(const void *a, const void *b)
{
	const rt_leak *x = *(const rt_leak *const *)a, *y = *(const rt_leak *const *)b;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->bt != y->bt)
		return x->bt < y->bt ? -1 : 1;
	return (x->fn > y->fn) - (x->fn < y->fn);
}

rt_loss_record *rt_loss_records(const rt_leak *leaks, size_t n, size_t *count)
{
	*count = 0;
	if (!n)
		return NULL;
	const rt_leak **v = rt_xmalloc(n * sizeof *v);
	rt_loss_record *r = rt_xmalloc(n * sizeof *r);
	size_t nr = 0;
	for (size_t i = 0; i < n; i++)
		v[i] = &leaks[i];
	qsort(v, n, sizeof *v, loss_by_place);
	for (size_t i = 0; i < n; i++) {
		if (!nr || loss_by_place(&v[i], &v[i - 1]))
			r[nr++] = (rt_loss_record){v[i]->kind, v[i]->fn, v[i]->bt, 0, 0, 0, v[i]->suppressed};
		r[nr - 1].bytes += v[i]->size;
		r[nr - 1].indirect += v[i]->indirect;
		r[nr - 1].blocks += v[i]->blocks ? v[i]->blocks : 1;
	}
	free(v);
	qsort(r, nr, sizeof *r, rt_hc_loss_cmp);
	*count = nr;
	return r;
}

rt_loss_record *rt_trace_loss_records(const rt_trace *t, size_t *count)
{
	size_t n = rt_trace_leak_count(t);
	return rt_loss_records(n ? rt_trace_leak_at(t, 0) : NULL, n, count);
}

const char *rt_leak_heuristic_name(unsigned h)
{
	static const char *const names[] = {"", "stdstring", "length64", "newarray",
					    "multipleinheritance"};
	return h <= RT_LEAK_HEURISTICS ? names[h] : "";
}

const char *rt_heap_error_kind_name(unsigned kind)
{
	return kind == RT_ERR_INVALID_FREE	  ? "InvalidFree"
	       : kind == RT_ERR_MISMATCHED_FREE ? "MismatchedFree"
	       : kind == RT_ERR_FISHY_VALUE	  ? "FishyValue"
					  : "";
}

/* --- text protocol --- */

static void put_totals(rt_out *out, const char *what, uint64_t bytes, uint64_t blocks)
{
	rt_out_str(out, "## leak check: ");
	rt_out_str(out, what);
	rt_out_str(out, ": ");
	rt_out_u64(out, bytes);
	rt_out_str(out, " bytes in ");
	rt_out_u64(out, blocks);
	rt_out_str(out, " blocks\n");
}

static void write_summary(const rt_leak_summary *s, rt_out *out)
{
	rt_out_str(out, s->mode == RT_LEAK_CHECK_FULL ? "## leak check (full): " : "## leak check (summary): ");
	rt_out_u64(out, s->checked);
	rt_out_str(out, " blocks checked in ");
	rt_out_u64(out, s->us);
	rt_out_str(out, " us\n");
	for (unsigned k = 1; k <= RT_LEAK_KINDS; k++)
		put_totals(out, rt_leak_kind_name(k), s->bytes[k], s->blocks[k]);
	for (unsigned h = 1; h <= RT_LEAK_HEURISTICS; h++) {
		if (!s->heur_blocks[h])
			continue;
		rt_out_str(out, "## leak check: of which reachable via heuristic ");
		rt_out_str(out, rt_leak_heuristic_name(h));
		rt_out_str(out, ": ");
		rt_out_u64(out, s->heur_bytes[h]);
		rt_out_str(out, " bytes in ");
		rt_out_u64(out, s->heur_blocks[h]);
		rt_out_str(out, " blocks\n");
	}
}

/* Whether the call numbered index is in the output (calls are in index
 * order when the trace came from a binary trace, the only source of
 * verdicts; otherwise every verdict is printed). */
static bool call_present(const rt_trace *t, uint64_t index)
{
	const rt_call *c = rt_trace_calls_const(t);
	size_t l = 0, r = rt_trace_call_count(t);
	while (l < r) {
		size_t m = (l + r) / 2;
		if (c[m].index < index)
			l = m + 1;
		else
			r = m;
	}
	return l < rt_trace_call_count(t) && c[l].index == index && c[l].kind != RT_CALL_DEAD;
}

static void write_leak(const rt_trace *t, const rt_leak *l, rt_out *out)
{
	rt_out_str(out, "## leak ");
	if (l->index)
		rt_out_u64(out, l->index);
	else
		rt_out_ch(out, '-');
	rt_out_str(out, ": ");
	rt_out_str(out, rt_leak_kind_name(l->kind));
	rt_out_str(out, ", ");
	rt_out_u64(out, l->size);
	rt_out_str(out, " bytes");
	if (l->blocks > 1) { /* a loss record read from Valgrind XML */
		rt_out_str(out, " in ");
		rt_out_u64(out, l->blocks);
		rt_out_str(out, " blocks");
	}
	if (!l->index && l->addr) { /* the call line gives a traced block's address */
		rt_out_str(out, " at 0x");
		rt_out_hex(out, l->addr, 1);
	}
	if (l->fn != RT_NONE) {
		rt_out_str(out, " by ");
		rt_out_str(out, rt_trace_str(t, l->fn));
	}
	if (l->indirect) {
		rt_out_str(out, " (");
		rt_out_u64(out, l->indirect);
		rt_out_str(out, " bytes indirectly lost with it)");
	}
	if (l->heuristic) {
		rt_out_str(out, " (via heuristic ");
		rt_out_str(out, rt_leak_heuristic_name(l->heuristic));
		rt_out_ch(out, ')');
	}
	rt_out_ch(out, '\n');
	if (!l->index && l->bt != RT_NONE) /* no call line gives its stack */
		rt_hc_write_stack(t, "allocated at", RT_NONE, l->bt, out);
}

/* The function a FishyValue error names, as memcheck names it. */
static const char *fishy_fn(const rt_trace *t, const rt_heap_error *e)
{
	const char *fn = e->fn != RT_NONE ? rt_trace_str(t, e->fn) : "???";
	if (!strcmp(fn, "operator new")) /* memcheck's names for the operators */
		return "__builtin_new";
	if (!strcmp(fn, "operator new[]"))
		return "__builtin_vec_new";
	return fn;
}

const char *rt_heap_error_fishy_what(const rt_trace *t, const rt_heap_error *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "Argument '%s' of function %s has a fishy (possibly negative) value: %" PRId64,
		 e->arg == RT_ARG_NMEMB ? "nmemb" : "size", fishy_fn(t, e), (int64_t)e->addr);
	return buf;
}

const char *rt_heap_error_fishy_aux(const rt_trace *t, const rt_heap_error *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s(%s)", fishy_fn(t, e), e->arg == RT_ARG_NMEMB ? "nmemb" : "size");
	return buf;
}

/* "## error FishyValue: malloc(size = -1) at call 3", its stack. */
static void write_fishy(const rt_trace *t, const rt_heap_error *e, rt_out *out)
{
	rt_out_str(out, "## error FishyValue: ");
	rt_out_str(out, rt_trace_str(t, e->fn));
	rt_out_str(out, e->arg == RT_ARG_NMEMB ? "(nmemb = -" : "(size = -");
	rt_out_u64(out, -e->addr);
	rt_out_ch(out, ')');
	if (e->index) {
		rt_out_str(out, " at call ");
		rt_out_u64(out, e->index);
	}
	rt_out_ch(out, '\n');
	rt_hc_write_stack(t, "called at", RT_NONE, e->bt, out);
}

static void write_error(const rt_trace *t, const rt_heap_error *e, rt_out *out)
{
	if (e->kind == RT_ERR_FISHY_VALUE) {
		write_fishy(t, e, out);
		return;
	}
	rt_out_str(out, "## error ");
	rt_out_str(out, rt_heap_error_kind_name(e->kind));
	rt_out_str(out, ": ");
	rt_out_str(out, rt_trace_str(t, e->fn));
	rt_out_str(out, "(0x");
	rt_out_hex(out, e->addr, 1);
	rt_out_ch(out, ')');
	if (e->index) { /* 0: read from Valgrind XML, which numbers no calls */
		rt_out_str(out, " at call ");
		rt_out_u64(out, e->index);
	}
	if (e->block == RT_BLOCK_UNKNOWN) {
		rt_out_str(out, ": not stack'd, malloc'd or (recently) free'd\n");
	} else {
		rt_out_str(out, ": ");
		rt_out_u64(out, e->addr - e->block_addr);
		rt_out_str(out, " bytes inside a block of size ");
		rt_out_u64(out, e->block_size);
		rt_out_str(out, e->block == RT_BLOCK_LIVE ? " alloc'd\n" : " free'd\n");
	}
	rt_hc_write_stack(t, "released at", RT_NONE, e->bt, out);
	if (e->block == RT_BLOCK_FREED)
		rt_hc_write_stack(t, "block was free'd", e->free_fn, e->free_bt, out);
	if (e->block != RT_BLOCK_UNKNOWN)
		rt_hc_write_stack(t, "block was alloc'd", e->alloc_fn, e->alloc_bt, out);
}

void rt_hc_write_text(const rt_trace *t, rt_out *out)
{
	const struct rt_hc *hc = hc_peek(t);
	for (size_t i = 0; hc && i < hc->nerrs; i++)
		write_error(t, &hc->errs[i], out);
	rt_dropped_write_text(t, out);
	rt_hc_write_checks(t, out); /* in the order they ran, before the exit check */
	if (!hc)
		return;
	if (hc->has_summary)
		write_summary(&hc->summary, out);
	for (size_t i = 0; i < hc->nleaks; i++)
		if (!hc->leaks[i].index || call_present(t, hc->leaks[i].index))
			write_leak(t, &hc->leaks[i], out);
}
