/* rtrace run's report of a trace's heap checking results, in memcheck's
 * words and order: heap errors, loss records (blocks grouped by leak kind
 * and allocation stack, smallest first), LEAK SUMMARY, ERROR SUMMARY.
 * Stacks are memcheck's, built by the XML writer's rules (rt_vgxml_stack),
 * printed as memcheck prints frames; the caller resolves the trace first
 * (once the program has ended). */
#define _GNU_SOURCE
#include "leak_report.h"
#include "cli.h"
#include "rtrace/vgxml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool leak_parse_kinds(const char *s, unsigned *set)
{
	static const char *const names[] = {"", "definite", "indirect", "possible", "reachable"};
	unsigned v = 0;
	if (!strcmp(s, "all") || !strcmp(s, "none")) {
		*set = !strcmp(s, "all") ? LEAK_KINDS_ALL : 0;
		return true;
	}
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, ",");
		unsigned k = 1;
		while (k <= RT_LEAK_KINDS && (strlen(names[k]) != n || strncmp(p, names[k], n)))
			k++;
		if (k > RT_LEAK_KINDS)
			return false;
		v |= 1u << k;
		p += n + (p[n] == ',');
	}
	*set = v;
	return v != 0;
}


/* One frame's text as memcheck prints it after the address: each entry
 * of the inline chain is a line of its own at the same address,
 * innermost first, "fn (file:line)" with the file's base name when a
 * line is known, else "fn (in /module)", "???" for no function. */
static void print_frame(const rt_trace *d, const rt_frame *f, bool *first)
{
	rt_frame_info fi = {RT_NONE, 0, NULL};
	rt_trace_frame_info(d, f, &fi);
	const char *mod = fi.module != RT_NONE ? rt_trace_str(d, fi.module) : NULL;
	for (uint32_t k = 0; k < (fi.n ? fi.n : 1); k++, *first = false) {
		const rt_srcloc *l = k < fi.n ? &fi.locs[k] : NULL;
		const char *fn = l && l->fn != RT_NONE ? rt_trace_str(d, l->fn) : "???";
		const char *file = l && l->file != RT_NONE && l->line ? rt_trace_str(d, l->file) : NULL;
		const char *how = *first ? "at" : "by";
		if (!f->addr && *first) /* the interposed function: its address is the tracer's */
			cli_info("   at %s", fn);
		else if (file)
			cli_info("   %s 0x%" PRIX64 ": %s (%s:%" PRIu32 ")", how, f->addr, fn,
				 strrchr(file, '/') ? strrchr(file, '/') + 1 : file, l->line);
		else
			cli_info("   %s 0x%" PRIX64 ": %s%s%s%s", how, f->addr, fn, mod ? " (in " : "",
				 mod ? mod : "", mod ? ")" : "");
	}
}

/* The stack of a call to fn from backtrace bt as memcheck prints it,
 * built by the XML writer's rules (rt_vgxml_stack) in a trace of its own
 * so that the report and the XML show the same frames. */
void leak_print_stack(const rt_trace *t, const rt_vgxml_stack_opts *so, uint32_t fn, uint32_t bt)
{
	rt_trace *d = rt_trace_new();
	uint32_t id = rt_vgxml_stack(d, t, fn, bt, so);
	uint32_t n = id == RT_NONE ? 0 : rt_trace_bt_len(d, id);
	bool first = true;
	for (uint32_t i = 0; i < n; i++)
		print_frame(d, &rt_trace_bt_frames(d, id)[i], &first);
	if (!n)
		cli_info("   (no stack recorded)");
	rt_trace_free(d);
}

static void print_error(const rt_trace *t, const rt_vgxml_stack_opts *so, const rt_heap_error *e)
{
	char size[32];
	if (e->kind == RT_ERR_FISHY_VALUE) {
		char what[160];
		cli_info("%s", rt_heap_error_fishy_what(t, e, what, sizeof what));
		leak_print_stack(t, so, e->fn, e->bt);
		return;
	}
	cli_info("%s", e->kind == RT_ERR_INVALID_FREE ? "Invalid free() / delete / delete[] / realloc()"
						   : "Mismatched free() / delete / delete []");
	leak_print_stack(t, so, e->fn, e->bt);
	if (e->block == RT_BLOCK_UNKNOWN) {
		cli_info(" Address 0x%" PRIx64 " is not stack'd, malloc'd or (recently) free'd", e->addr);
		return;
	}
	cli_info(" Address 0x%" PRIx64 " is %" PRIu64 " bytes inside a block of size %s %s", e->addr,
	     e->addr - e->block_addr, cli_grouped(e->block_size, size),
	     e->block == RT_BLOCK_LIVE ? "alloc'd" : "free'd");
	if (e->block == RT_BLOCK_FREED) {
		leak_print_stack(t, so, e->free_fn, e->free_bt);
		cli_info(" Block was alloc'd at");
	}
	leak_print_stack(t, so, e->alloc_fn, e->alloc_bt);
}

/* After an error, with --gen-suppressions, the suppression that hides
 * it, printed as valgrind prints it: without the report's prefix. */
static void print_suppression(const rt_trace *t, const leak_opts *o, uint32_t fn, uint32_t bt, const char *kind,
			      const char *aux)
{
	if (!o->gen_suppressions)
		return;
	rt_trace *d = rt_trace_new();
	uint32_t id = rt_vgxml_stack(d, t, fn, bt, &o->stack);
	char *text = rt_vgxml_suppression_text(d, id, kind, aux);
	cli_raw(text);
	free(text);
	rt_trace_free(d);
}

void leak_report_errors(const rt_trace *t, const leak_opts *o, leak_counts *n)
{
	size_t ne = rt_trace_heap_error_count(t);
	for (size_t i = 0; i < ne; i++) {
		const rt_heap_error *e = rt_trace_heap_error_at(t, i);
		/* a context: an error kind at a place (memcheck's counting) */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const rt_heap_error *p = rt_trace_heap_error_at(t, j);
			seen = p->kind == e->kind && p->bt == e->bt && p->fn == e->fn;
		}
		if (e->suppressed) {
			n->supp_errors++;
			n->supp_contexts += !seen;
			continue;
		}
		print_error(t, &o->stack, e);
		cli_info("%s", "");
		char aux[160];
		if (!seen && e->kind == RT_ERR_FISHY_VALUE) /* one per context, as memcheck prints it */
			print_suppression(t, o, e->fn, e->bt, "Memcheck:FishyValue",
					  rt_heap_error_fishy_aux(t, e, aux, sizeof aux));
		else if (!seen)
			print_suppression(t, o, e->fn, e->bt, "Memcheck:Free", NULL);
		n->errors++;
		n->contexts += !seen;
	}
}

static void print_loss(const rt_trace *t, const leak_opts *o, const rt_loss_record *l, size_t i, size_t n)
{
	static const char *const kinds[] = {"", "definite", "indirect", "possible", "reachable"};
	const rt_vgxml_stack_opts *so = &o->stack;
	char a[32], b[32], c[32], d[32];
	if (l->kind == RT_LEAK_DEFINITE && l->indirect)
		cli_info("%s (%s direct, %s indirect) bytes in %s blocks are %s in loss record %s of %zu",
		     cli_grouped(l->bytes + l->indirect, a), cli_grouped(l->bytes, b), cli_grouped(l->indirect, c),
		     cli_grouped(l->blocks, d), rt_leak_kind_name(l->kind), cli_grouped(i + 1, a + 16), n);
	else
		cli_info("%s bytes in %s blocks are %s in loss record %s of %zu", cli_grouped(l->bytes, a),
		     cli_grouped(l->blocks, c), rt_leak_kind_name(l->kind), cli_grouped(i + 1, b), n);
	leak_print_stack(t, so, l->fn, l->bt);
	cli_info("%s", "");
	char aux[48];
	snprintf(aux, sizeof aux, "match-leak-kinds: %s", kinds[l->kind <= RT_LEAK_KINDS ? l->kind : 0]);
	print_suppression(t, o, l->fn, l->bt, "Memcheck:Leak", aux);
}

/* memcheck's LEAK SUMMARY; with delta, each figure followed by its
 * change since old's (memcheck's increased mode: "300 (+100)"). */
static void print_summary(const rt_leak_summary *s, const rt_leak_summary *old, bool delta)
{
	static const char *const label[] = {"", "definitely lost", "indirectly lost",
					    "  possibly lost", "still reachable"};
	static const rt_leak_summary none;
	char a[64], b[64];
	if (!old)
		old = &none;
	cli_info("LEAK SUMMARY:");
	for (int k = 1; k <= RT_LEAK_KINDS; k++) {
		cli_info("   %s: %s bytes in %s blocks", label[k], rt_grouped_delta(s->bytes[k], old->bytes[k], delta, a),
			 rt_grouped_delta(s->blocks[k], old->blocks[k], delta, b));
		if (k == RT_LEAK_REACHABLE && (s->heur_blocks[1] | s->heur_blocks[2] | s->heur_blocks[3] | s->heur_blocks[4]))
			cli_info("                      of which reachable via heuristic:");
		for (int h = 1; k == RT_LEAK_REACHABLE && h <= RT_LEAK_HEURISTICS; h++)
			if (s->heur_blocks[h])
				cli_info("                        %-19s: %s bytes in %s blocks", rt_leak_heuristic_name((unsigned)h),
				     cli_grouped(s->heur_bytes[h], a), cli_grouped(s->heur_blocks[h], b));
	}
	cli_info("        suppressed: %s bytes in %s blocks",
		 rt_grouped_delta(s->suppressed_bytes, old->suppressed_bytes, delta, a),
		 rt_grouped_delta(s->suppressed_blocks, old->suppressed_blocks, delta, b));
}

/* Blocks in use at exit, the suppressed ones included (memcheck prints
 * its LEAK SUMMARY when all of them are suppressed). */
static uint64_t leak_blocks_in_use(const rt_leak_summary *s)
{
	uint64_t n = s->suppressed_blocks;
	for (int k = 1; k <= RT_LEAK_KINDS; k++)
		n += s->blocks[k];
	return n;
}

/* The exit check's loss records, numbered as memcheck numbers them: after
 * checks on demand, the last check's records that have no block left
 * stay in memcheck's table, listed (and counted) with no block. */
static rt_loss_delta *exit_records(const rt_trace *t, size_t *n)
{
	size_t nr = 0, nc = rt_trace_check_count(t);
	rt_loss_record *r = rt_trace_loss_records(t, &nr);
	rt_leak_check now = {.loss = r, .nloss = nr};
	rt_loss_delta *d = rt_check_deltas(nc ? rt_trace_check_at(t, nc - 1) : NULL, &now, n);
	free(r);
	return d;
}

void leak_report_leaks(const rt_trace *t, const leak_opts *o, leak_counts *n)
{
	const rt_leak_summary *s = rt_trace_leak_summary(t);
	unsigned mode = s && o->mode < s->mode ? o->mode : s ? s->mode : 0; /* the lesser */
	if (!mode)
		return;
	size_t nr = 0;
	rt_loss_delta *d = exit_records(t, &nr);
	for (size_t i = 0; i < nr && mode == RT_LEAK_CHECK_FULL; i++) {
		const rt_loss_record *r = &d[i].now;
		bool error = o->errors_for & (1u << r->kind);
		if (!r->blocks)
			continue;
		if (r->suppressed) {
			n->supp_errors += error;
			n->supp_contexts += error;
			continue;
		}
		if (o->show & (1u << r->kind))
			print_loss(t, o, r, i, nr);
		if (error) {
			n->errors++;
			n->contexts++;
		}
	}
	free(d);
	cli_info_summary(true); /* memcheck's -q prints its errors, not what follows */
	if (!leak_blocks_in_use(s)) { /* memcheck's words when nothing is left */
		cli_info("All heap blocks were freed -- no leaks are possible");
		cli_info("%s", "");
		return;
	}
	print_summary(s, NULL, false);
	if (mode == RT_LEAK_CHECK_SUMMARY)
		cli_info("Rerun with --leak-check=full to see details of leaked memory");
	else if (!(o->show & (1u << RT_LEAK_REACHABLE)) && s->blocks[RT_LEAK_REACHABLE])
		cli_info("Reachable blocks (those to which a pointer was found) are not shown.");
}

/* A check's totals as a LEAK SUMMARY's. */
static rt_leak_summary check_summary(const rt_leak_check *c)
{
	rt_leak_summary s = {.mode = RT_LEAK_CHECK_FULL};
	for (int k = 1; k <= RT_LEAK_KINDS; k++) {
		s.bytes[k] = c->bytes[k];
		s.blocks[k] = c->blocks[k];
	}
	return s;
}

/* One check on demand as memcheck prints a VALGRIND_DO_LEAK_CHECK (or,
 * increased, a VALGRIND_DO_ADDED_LEAK_CHECK): the loss records its mode
 * shows, in the kinds --show-leak-kinds shows (each one of the kinds of
 * --errors-for-leak-kinds is an error, as memcheck counts them), then
 * the LEAK SUMMARY. */
static void report_check(const rt_trace *t, const leak_opts *o, const rt_leak_check *prev,
			 const rt_leak_check *c, leak_counts *n)
{
	bool delta = c->mode == RT_CHECK_INCREASED;
	size_t nd = 0;
	rt_loss_delta *d = rt_check_deltas(prev, c, &nd);
	for (size_t i = 0; i < nd; i++) {
		unsigned bit = 1u << d[i].now.kind;
		if (!rt_check_shows(&d[i], c->mode))
			continue;
		if (o->show & bit) {
			char line[400];
			cli_info("%s", rt_loss_delta_text(&d[i], delta, i, nd, line, sizeof line));
			leak_print_stack(t, &o->stack, d[i].now.fn, d[i].now.bt);
			cli_info("%s", "");
		}
		if (o->errors_for & bit) {
			n->errors++;
			n->contexts++;
		}
	}
	free(d);
	rt_leak_summary now = check_summary(c), old = prev ? check_summary(prev) : (rt_leak_summary){0};
	cli_info_summary(true);
	if (!leak_blocks_in_use(&now)) {
		cli_info("All heap blocks were freed -- no leaks are possible");
	} else {
		print_summary(&now, &old, delta);
		if (!(o->show & (1u << RT_LEAK_REACHABLE)) && now.blocks[RT_LEAK_REACHABLE])
			cli_info("Reachable blocks (those to which a pointer was found) are not shown.");
	}
	cli_info("%s", "");
	cli_info_summary(false);
}

void leak_report_checks(const rt_trace *t, const leak_opts *o, leak_counts *n)
{
	size_t nc = rt_trace_check_count(t);
	for (size_t i = 0; i < nc; i++)
		report_check(t, o, i ? rt_trace_check_at(t, i - 1) : NULL, rt_trace_check_at(t, i), n);
}

void leak_report_end(const leak_counts *n)
{
	char a[32], b[32], c[32], d[32];
	if (n->supp) /* memcheck's words; without suppressions, rtrace's line stays as it was */
		cli_info("ERROR SUMMARY: %s errors from %s contexts (suppressed: %s from %s)", cli_grouped(n->errors, a),
			 cli_grouped(n->contexts, b), cli_grouped(n->supp_errors, c), cli_grouped(n->supp_contexts, d));
	else
		cli_info("ERROR SUMMARY: %s errors from %s contexts", cli_grouped(n->errors, a),
			 cli_grouped(n->contexts, b));
}

void leak_report_used_suppressions(const rt_trace *t)
{
	char a[32], b[32], extra[96] = "";
	for (size_t i = 0; i < rt_trace_supp_used_count(t); i++) {
		const rt_supp_used *u = rt_trace_supp_used_at(t, i);
		if (!i)
			cli_info("%s", "");
		if (u->leak)
			snprintf(extra, sizeof extra, " suppressed: %s bytes in %s blocks", cli_grouped(u->bytes, a),
				 cli_grouped(u->blocks, b));
		cli_info("used_suppression: %6" PRIu64 " %s %s:%" PRIu32 "%s", u->count, u->name, u->file, u->line,
			 u->leak ? extra : "");
	}
}
