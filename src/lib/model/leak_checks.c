/* Leak checks on demand in the model (include/rtrace/heapcheck.h), their
 * deltas in memcheck's terms, and their text-protocol form.
 *
 * A check holds every loss record of every kind at its moment (the
 * tracer writes them all, whatever was asked), so the "increased" view
 * is derived here the way memcheck derives it (mc_leakcheck.c,
 * print_results): memcheck keeps its loss records from one search to the
 * next, moves each one's values to old_* before the next search, drops
 * those that had no block left, and shows in "increased" mode the records
 * whose bytes, indirect bytes or blocks grew. A record of the previous
 * check that has no block now is still numbered ("loss record 1 of 4"
 * counts it), which rt_check_deltas reproduces.
 *
 * The loss-record order (memcheck's cmp_LossRecords), memcheck's numbers
 * and kind names, and the stacks' comment form live here too: heapcheck.c
 * uses them for the exit check (and this file nothing of heapcheck.c's). */
#include "rtrace/heapcheck.h"
#include "model/heapcheck_int.h"
#include "model/trace_int.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rt_checks {
	rt_leak_check *c;
	size_t n, cap;
};

static void checks_free(void *data)
{
	struct rt_checks *cs = data;
	for (size_t i = 0; i < cs->n; i++)
		free(cs->c[i].loss);
	free(cs->c);
	free(cs);
}

static const rt_trace_ext checks_ext = {"leak checks on demand", checks_free};

static const struct rt_checks *checks_peek(const rt_trace *t) { return rt_trace_ext_get(t, &checks_ext); }

void rt_trace_add_check(rt_trace *t, const rt_leak_check *c)
{
	struct rt_checks *cs = rt_trace_ext_need(t, &checks_ext, sizeof *cs);
	rt_leak_check k = *c;
	k.loss = NULL;
	if (c->nloss) {
		k.loss = rt_xmalloc(c->nloss * sizeof *k.loss);
		memcpy(k.loss, c->loss, c->nloss * sizeof *k.loss);
	}
	RT_PUSH(cs->c, cs->n, cs->cap, k);
	/* Threads write their records into chunks of their own, so a check
	 * may be read before an earlier one: keep them in number order, which
	 * is call order and the order deltas are taken in. */
	size_t i = cs->n - 1;
	for (; i > 0 && cs->c[i - 1].number > k.number; i--)
		cs->c[i] = cs->c[i - 1];
	cs->c[i] = k;
}

bool rt_trace_add_check_loss(rt_trace *t, uint64_t number, const rt_loss_record *l)
{
	struct rt_checks *cs = (struct rt_checks *)checks_peek(t);
	for (size_t i = cs ? cs->n : 0; i-- > 0;) {
		rt_leak_check *c = &cs->c[i];
		if (c->number != number)
			continue;
		c->loss = rt_xrealloc(c->loss, (c->nloss + 1) * sizeof *c->loss);
		c->loss[c->nloss++] = *l;
		return true;
	}
	return false;
}

size_t rt_trace_check_count(const rt_trace *t)
{
	const struct rt_checks *cs = checks_peek(t);
	return cs ? cs->n : 0;
}

const rt_leak_check *rt_trace_check_at(const rt_trace *t, size_t i) { return &checks_peek(t)->c[i]; }

rt_leak_check *rt_trace_checks(rt_trace *t)
{
	const struct rt_checks *cs = checks_peek(t);
	return cs ? cs->c : NULL;
}

const char *rt_grouped(uint64_t v, char *buf)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v), j = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
	return buf;
}

const char *rt_leak_kind_name(unsigned kind)
{
	static const char *const names[] = {"", "definitely lost", "indirectly lost",
					    "possibly lost", "still reachable"};
	return kind <= RT_LEAK_KINDS ? names[kind] : "";
}

/* memcheck's cmp_LossRecords: total size, state, block count, then the
 * allocation context (memcheck compares ExeContext addresses, which grow
 * in creation order, as backtrace ids do). memcheck's states number the
 * kinds the other way round (Reachable 0, Possible 1, IndirectLeak 2,
 * Unreached 3): of records of one size, still reachable ones come first
 * and definitely lost ones last. */
int rt_hc_loss_cmp(const void *a, const void *b)
{
	const rt_loss_record *x = a, *y = b;
	uint64_t tx = x->bytes + x->indirect, ty = y->bytes + y->indirect;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind > y->kind ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks < y->blocks ? -1 : 1;
	if (x->bt != y->bt)
		return x->bt < y->bt ? -1 : 1;
	return (x->fn > y->fn) - (x->fn < y->fn);
}

static int delta_cmp(const void *a, const void *b)
{
	return rt_hc_loss_cmp(&((const rt_loss_delta *)a)->now, &((const rt_loss_delta *)b)->now);
}

static bool same_place(const rt_loss_record *a, const rt_loss_record *b)
{
	return a->kind == b->kind && a->bt == b->bt && a->fn == b->fn;
}

rt_loss_delta *rt_check_deltas(const rt_leak_check *prev, const rt_leak_check *cur, size_t *count)
{
	size_t np = prev ? prev->nloss : 0, n = 0;
	rt_loss_delta *d = rt_xmalloc((cur->nloss + np + 1) * sizeof *d);
	for (size_t i = 0; i < cur->nloss; i++)
		d[n++] = (rt_loss_delta){cur->loss[i], 0, 0, 0};
	for (size_t j = 0; j < np; j++) {
		const rt_loss_record *o = &prev->loss[j];
		if (!o->blocks)
			continue;
		size_t i = 0;
		while (i < cur->nloss && !same_place(&d[i].now, o))
			i++;
		if (i == cur->nloss) /* gone since: listed with no block */
			d[i = n++] = (rt_loss_delta){{o->kind, o->fn, o->bt, 0, 0, 0, 0}, 0, 0, 0};
		d[i].old_bytes = o->bytes;
		d[i].old_indirect = o->indirect;
		d[i].old_blocks = o->blocks;
	}
	qsort(d, n, sizeof *d, delta_cmp);
	*count = n;
	return d;
}

bool rt_check_shows(const rt_loss_delta *d, unsigned mode)
{
	if (mode != RT_CHECK_INCREASED)
		return d->now.blocks > 0;
	return d->now.bytes > d->old_bytes || d->now.indirect > d->old_indirect || d->now.blocks > d->old_blocks;
}

const char *rt_grouped_delta(uint64_t now, uint64_t old, bool delta, char *buf)
{
	char a[32], b[32];
	if (!delta)
		return rt_grouped(now, buf);
	snprintf(buf, 64, "%s (%c%s)", rt_grouped(now, a), now >= old ? '+' : '-',
		 rt_grouped(now >= old ? now - old : old - now, b));
	return buf;
}

const char *rt_loss_delta_text(const rt_loss_delta *d, bool delta, size_t i, size_t n, char *buf, size_t cap)
{
	char t[64], by[64], ind[64], bl[64], a[32], b[32];
	const rt_loss_record *l = &d->now;
	rt_grouped_delta(l->bytes, d->old_bytes, delta, by);
	rt_grouped_delta(l->blocks, d->old_blocks, delta, bl);
	if (l->indirect) {
		rt_grouped_delta(l->bytes + l->indirect, d->old_bytes + d->old_indirect, delta, t);
		rt_grouped_delta(l->indirect, d->old_indirect, delta, ind);
		snprintf(buf, cap, "%s (%s direct, %s indirect) bytes in %s blocks are %s in loss record %s of %s", t,
			 by, ind, bl, rt_leak_kind_name(l->kind), rt_grouped(i + 1, a), rt_grouped(n, b));
	} else {
		snprintf(buf, cap, "%s bytes in %s blocks are %s in loss record %s of %s", by, bl,
			 rt_leak_kind_name(l->kind), rt_grouped(i + 1, a), rt_grouped(n, b));
	}
	return buf;
}

/* --- text protocol --- */

void rt_hc_write_stack(const rt_trace *t, const char *title, uint32_t fn, uint32_t bt, rt_out *out)
{
	rt_out_str(out, "##   ");
	rt_out_str(out, title);
	if (fn != RT_NONE) {
		rt_out_str(out, " by ");
		rt_out_str(out, rt_trace_str(t, fn));
	}
	rt_out_ch(out, '\n');
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	for (uint32_t i = 0; i < n; i++) {
		rt_out_str(out, "##\t0x");
		rt_out_hex(out, f[i].addr, 1);
		if (f[i].text != RT_NONE) {
			rt_out_ch(out, ' ');
			rt_out_str(out, rt_trace_str(t, f[i].text));
		}
		rt_out_ch(out, '\n');
	}
}

/* "## leak check 2 at call 57 (increased): 12 blocks checked in 30 us",
 * the totals per kind (with deltas when increased), then the loss
 * records the mode shows, each with its stack. */
static void write_check(const rt_trace *t, const rt_leak_check *prev, const rt_leak_check *c, rt_out *out)
{
	static const char *const kinds[] = {"", "definitely lost", "indirectly lost", "possibly lost",
					    "still reachable"};
	bool delta = c->mode == RT_CHECK_INCREASED;
	char line[512], a[64], b[64];
	snprintf(line, sizeof line, "## leak check %" PRIu64 " at call %" PRIu64 " (%s): %" PRIu64
		 " blocks checked in %" PRIu64 " us\n", c->number, c->index, delta ? "increased" : "full",
		 c->checked, c->us);
	rt_out_str(out, line);
	for (unsigned k = 1; k <= RT_LEAK_KINDS; k++) {
		snprintf(line, sizeof line, "## leak check %" PRIu64 ": %s: %s bytes in %s blocks\n", c->number,
			 kinds[k], rt_grouped_delta(c->bytes[k], prev ? prev->bytes[k] : 0, delta, a),
			 rt_grouped_delta(c->blocks[k], prev ? prev->blocks[k] : 0, delta, b));
		rt_out_str(out, line);
	}
	size_t n = 0;
	rt_loss_delta *d = rt_check_deltas(prev, c, &n);
	for (size_t i = 0; i < n; i++) {
		if (!rt_check_shows(&d[i], c->mode))
			continue;
		char text[400];
		snprintf(line, sizeof line, "## leak check %" PRIu64 ": %s\n", c->number,
			 rt_loss_delta_text(&d[i], delta, i, n, text, sizeof text));
		rt_out_str(out, line);
		rt_hc_write_stack(t, "allocated at", d[i].now.fn, d[i].now.bt, out);
	}
	free(d);
}

void rt_hc_write_checks(const rt_trace *t, rt_out *out)
{
	size_t n = rt_trace_check_count(t);
	for (size_t i = 0; i < n; i++)
		write_check(t, i ? rt_trace_check_at(t, i - 1) : NULL, rt_trace_check_at(t, i), out);
}
