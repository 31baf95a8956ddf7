/* Suppressions applied to a trace's heap checking results, as memcheck
 * applies them (rtrace/supp.h). valgrind keeps its suppressions in a
 * list, the last file's last block first, and moves a suppression to the
 * front each time it matches: the first that matches wins, and the list
 * order is the order of its used-suppression lines. Heap errors are
 * matched as they happened, once per context (an error kind at one
 * stack: the later ones of a context follow the first); loss records
 * after them, in memcheck's order. What is suppressed stays in the
 * trace, marked, so that loss record numbers stay memcheck's ("loss
 * record 3 of 3" with the first suppressed). */
#include "rtrace/heapcheck.h"
#include "supp/supp_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct use {
	uint64_t count, bytes, blocks;
	bool leak;
} use;

typedef struct applier {
	const rt_supp_set *s;
	rt_trace *t;
	rt_trace *scratch; /* the stacks as memcheck's, built for matching */
	rt_vgxml_stack_opts so;
	size_t *order;     /* valgrind's list: indexes into s->v */
	use *uses;         /* by index */
} applier;

/* The suppression that matches an error of kind at the memcheck stack of
 * fn/bt, moved to the front of the list; -1 when none does. */
static long find(applier *a, const char *kind, const char *extra, unsigned leak_kind, uint32_t fn, uint32_t bt)
{
	uint32_t id = rt_vgxml_stack(a->scratch, a->t, fn, bt, &a->so);
	size_t n;
	rt_supp_frame *f = rt_supp_frames(a->scratch, id, &n);
	long found = -1;
	for (size_t i = 0; i < a->s->n && found < 0; i++) {
		size_t k = a->order[i];
		if (!rt_supp_match_one(&a->s->v[k], kind, extra, leak_kind, f, n, a->so.num_callers))
			continue;
		memmove(a->order + 1, a->order, i * sizeof *a->order);
		a->order[0] = k;
		found = (long)k;
	}
	free(f);
	return found;
}

static bool same_context(const rt_heap_error *x, const rt_heap_error *y)
{
	return x->kind == y->kind && x->bt == y->bt && x->fn == y->fn;
}

static void apply_errors(applier *a)
{
	size_t n = rt_trace_heap_error_count(a->t);
	rt_heap_error *e = rt_trace_heap_errors(a->t);
	long *by = rt_xmalloc((n ? n : 1) * sizeof *by); /* each error's suppression, -1 none */
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < i && !same_context(&e[j], &e[i]))
			j++;
		char aux[160];
		bool fishy = e[i].kind == RT_ERR_FISHY_VALUE;
		by[i] = j < i ? by[j]
		      : find(a, fishy ? "FishyValue" : "Free",
			     fishy ? rt_heap_error_fishy_aux(a->t, &e[i], aux, sizeof aux) : NULL, 0, e[i].fn, e[i].bt);
		if (by[i] >= 0) {
			e[i].suppressed = 1;
			a->uses[by[i]].count++;
		}
	}
	free(by);
}

typedef struct key {
	uint8_t kind;
	uint32_t fn, bt;
} key;

static int key_cmp(const void *x, const void *y)
{
	const key *a = x, *b = y;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->bt != b->bt)
		return a->bt < b->bt ? -1 : 1;
	return (a->fn > b->fn) - (a->fn < b->fn);
}

/* Each leak whose loss record is among the nk keys is marked. */
static void mark_leaks(rt_trace *t, key *keys, size_t nk)
{
	qsort(keys, nk, sizeof *keys, key_cmp);
	rt_leak *l = rt_trace_leaks(t);
	for (size_t i = 0; nk && i < rt_trace_leak_count(t); i++) {
		key k = {l[i].kind, l[i].fn, l[i].bt};
		if (bsearch(&k, keys, nk, sizeof *keys, key_cmp))
			l[i].suppressed = 1;
	}
}

static void apply_leaks(applier *a)
{
	size_t nr = 0, nk = 0;
	rt_loss_record *r = rt_trace_loss_records(a->t, &nr);
	key *keys = rt_xmalloc((nr ? nr : 1) * sizeof *keys);
	const rt_leak_summary *cur = rt_trace_leak_summary(a->t);
	rt_leak_summary s = cur ? *cur : (rt_leak_summary){0};
	for (size_t i = 0; i < nr; i++) {
		long k = find(a, "Leak", NULL, r[i].kind, r[i].fn, r[i].bt);
		if (k < 0)
			continue;
		keys[nk++] = (key){r[i].kind, r[i].fn, r[i].bt};
		/* its line counts the indirect bytes, the summary does not (memcheck) */
		a->uses[k] = (use){a->uses[k].count + 1, a->uses[k].bytes + r[i].bytes + r[i].indirect,
				   a->uses[k].blocks + r[i].blocks, true};
		s.bytes[r[i].kind] -= r[i].bytes < s.bytes[r[i].kind] ? r[i].bytes : s.bytes[r[i].kind];
		s.blocks[r[i].kind] -= r[i].blocks < s.blocks[r[i].kind] ? r[i].blocks : s.blocks[r[i].kind];
		s.suppressed_bytes += r[i].bytes;
		s.suppressed_blocks += r[i].blocks;
	}
	mark_leaks(a->t, keys, nk);
	if (cur)
		rt_trace_set_leak_summary(a->t, &s);
	free(keys);
	free(r);
}

void rt_supp_apply(const rt_supp_set *s, rt_trace *t, const rt_vgxml_stack_opts *so)
{
	applier a = {s, t, rt_trace_new(), {so ? so->num_callers : 0, true}, NULL, NULL};
	a.order = rt_xmalloc((s->n ? s->n : 1) * sizeof *a.order);
	a.uses = rt_xcalloc(s->n ? s->n : 1, sizeof *a.uses);
	for (size_t i = 0; i < s->n; i++)
		a.order[i] = s->n - 1 - i;
	apply_errors(&a);
	apply_leaks(&a);
	for (size_t i = 0; i < s->n; i++) {
		const supp *su = &s->v[a.order[i]];
		const use *u = &a.uses[a.order[i]];
		if (!u->count)
			continue;
		rt_supp_used out = {su->name, su->file, su->line, u->count, u->leak, u->bytes, u->blocks};
		rt_trace_add_supp_used(t, &out);
	}
	free(a.order);
	free(a.uses);
	rt_trace_free(a.scratch);
}
