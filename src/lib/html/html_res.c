/* The other resources a trace followed (descriptors, streams, directory
 * streams, mappings, shared memory, any module's): per type, how many
 * were made and released, and a table of those still held at exit with
 * what they were (a descriptor's path as valgrind --track-fds names it,
 * a stream's or mapping's arguments) and the stack that made them. The
 * calls of these resources are few and are kept in the trace while the
 * memory calls stream past: the last call of each (type, id), found by
 * sorting them, says whether it was still held. */
#include "html/html_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ev {
	uint64_t id;
	size_t call;
	uint8_t type;
} ev;

static int cmp_ev(const void *a, const void *b)
{
	const ev *x = a, *y = b;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->call > y->call) - (x->call < y->call);
}

typedef struct held {
	size_t *call; /* the calls that made what was held at exit, in call order */
	size_t n;
	uint64_t made[RT_MAX_RESOURCES + 1], released[RT_MAX_RESOURCES + 1];
} held;

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

static bool is_memory(const rt_trace *t, uint8_t type)
{
	return !type || rt_trace_res_is(t, type, "memory");
}

static void find_held(const rt_trace *t, held *h)
{
	const rt_call *c = rt_trace_calls_const(t);
	size_t n = rt_trace_call_count(t), m = 0;
	ev *v = rt_xmalloc((n ? n : 1) * sizeof *v);
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < n; i++) {
		if (c[i].kind == RT_CALL_DEAD || c[i].res_type > RT_MAX_RESOURCES || is_memory(t, c[i].res_type) ||
		    rt_trace_is_bad_close(t, &c[i]))
			continue;
		if (c[i].kind == RT_CALL_ALLOC)
			h->made[c[i].res_type]++;
		else
			h->released[c[i].res_type]++;
		v[m++] = (ev){c[i].res_id, i, c[i].res_type};
	}
	qsort(v, m, sizeof *v, cmp_ev);
	h->call = rt_xmalloc((m ? m : 1) * sizeof *h->call);
	for (size_t i = 0; i < m; i++) {
		bool last = i + 1 == m || v[i + 1].type != v[i].type || v[i + 1].id != v[i].id;
		if (last && c[v[i].call].kind == RT_CALL_ALLOC)
			h->call[h->n++] = v[i].call;
	}
	qsort(h->call, h->n, sizeof *h->call, cmp_size);
	free(v);
}

/* What the resource is: a descriptor's file, else its arguments. */
static void describe(const rt_trace *t, const rt_call *c, char *buf, size_t n)
{
	if (rt_trace_res_is(t, c->res_type, "fd")) {
		rt_trace_fd_describe(t, c, buf, n);
		return;
	}
	size_t len = 0, na = c->args == RT_NONE ? 0 : rt_trace_args_len(t, c->args);
	const rt_kv *kv = na ? rt_trace_args_at(t, c->args) : NULL;
	*buf = '\0';
	for (size_t i = 0; i < na && len < n; i++) {
		int k = snprintf(buf + len, n - len, "%s%s=%s", i ? ", " : "", kv[i].key, kv[i].value);
		if (k < 0)
			break;
		len += (size_t)k;
	}
}

static void held_row(hw *w, const rt_trace *t, const rt_call *c)
{
	char buf[1024], fn[256];
	const rt_resource *r = rt_trace_resource_get(t, c->res_type);
	rt_out_str(w->o, "<tr><td>");
	hw_text(w->o, r && r->type ? r->type : "?");
	snprintf(buf, sizeof buf, rt_trace_res_is(t, c->res_type, "fd") ? "%" PRIu64 : "0x%" PRIx64, c->res_id);
	rt_out_str(w->o, "</td><td class=n>");
	hw_text(w->o, buf);
	rt_out_str(w->o, "</td>");
	describe(t, c, buf, sizeof buf);
	rt_out_str(w->o, "<td>");
	hw_text(w->o, buf);
	rt_out_str(w->o, "</td>");
	hw_num_td(w->o, c->size);
	snprintf(fn, sizeof fn, "%s", c->fn != RT_NONE ? rt_trace_str(t, c->fn) : "?");
	rt_out_str(w->o, "<td><details><summary>");
	hw_text(w->o, fn);
	rt_out_str(w->o, "</summary>");
	hw_stack(w, t, c->bt, false, HW_SITE_FRAMES);
	rt_out_str(w->o, "</details></td></tr>\n");
}

size_t hw_resource_types(const hw *w, const char **types, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n; i++) {
		const rt_trace *t = w->in[i].trace;
		held h;
		find_held(t, &h);
		for (size_t r = 1; r <= rt_trace_resource_count(t) && r <= RT_MAX_RESOURCES; r++) {
			const rt_resource *res = rt_trace_resource_get(t, (uint8_t)r);
			if (!res || !res->type || (!h.made[r] && !h.released[r]))
				continue;
			size_t k = 0;
			while (k < n && strcmp(types[k], res->type))
				k++;
			if (k == n && n < max)
				types[n++] = res->type;
		}
		free(h.call);
	}
	return n;
}

void hw_resources(hw *w, size_t i, const char *type)
{
	const rt_trace *t = w->in[i].trace;
	held h;
	char id[32];
	find_held(t, &h);
	snprintf(id, sizeof id, "res-%s-%zu", type, i);
	rt_out_str(w->o, "<input class=filter type=search placeholder=\"filter rows\" data-for=\"");
	hw_text(w->o, id);
	rt_out_str(w->o, "\"><table class=data id=\"");
	hw_text(w->o, id);
	rt_out_str(w->o, "\"><thead><tr><th class=sort>type</th><th class=\"sort n\">id</th><th class=sort>what</th>"
			 "<th class=\"sort n\">size</th><th class=sort>made by (open for the stack)</th></tr></thead>"
			 "<tbody>\n");
	const rt_call *c = rt_trace_calls_const(t);
	size_t rows = 0;
	for (size_t k = h.n; k-- > 0 && rows < w->max_rows;)
		if (rt_trace_res_is(t, c[h.call[k]].res_type, type)) {
			held_row(w, t, &c[h.call[k]]);
			rows++;
		}
	rt_out_str(w->o, "</tbody></table>");
	if (!rows)
		rt_out_str(w->o, "<p class=muted>None held at exit.</p>");
	free(h.call);
}

void hw_resource_summary(hw *w, size_t i)
{
	const rt_trace *t = w->in[i].trace;
	held h;
	char line[512];
	find_held(t, &h);
	for (size_t r = 1; r <= rt_trace_resource_count(t) && r <= RT_MAX_RESOURCES; r++) {
		const rt_resource *res = rt_trace_resource_get(t, (uint8_t)r);
		if (!res || !res->type)
			continue;
		size_t open = 0;
		for (size_t k = 0; k < h.n; k++)
			open += rt_trace_calls_const(t)[h.call[k]].res_type == r;
		rt_out_str(w->o, "<tr><td>resource ");
		hw_text(w->o, res->type);
		rt_out_str(w->o, "</td><td>");
		if (is_memory(t, (uint8_t)r))
			snprintf(line, sizeof line, "traced");
		else
			snprintf(line, sizeof line, "%" PRIu64 " made, %" PRIu64 " released, %zu held at exit", h.made[r],
				 h.released[r], open);
		rt_out_str(w->o, line);
		if (res->desc) {
			rt_out_str(w->o, " (");
			hw_text(w->o, res->desc);
			rt_out_ch(w->o, ')');
		}
		rt_out_str(w->o, "</td></tr>\n");
	}
	free(h.call);
}
