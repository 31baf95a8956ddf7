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

void leak_report_errors(const rt_trace *t, const leak_opts *o, leak_counts *n)
{
	size_t ne = rt_trace_heap_error_count(t);
	for (size_t i = 0; i < ne; i++) {
		const rt_heap_error *e = rt_trace_heap_error_at(t, i);
		print_error(t, &o->stack, e);
		cli_info("%s", "");
		n->errors++;
		/* a context: an error kind at a place (memcheck's counting) */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const rt_heap_error *p = rt_trace_heap_error_at(t, j);
			seen = p->kind == e->kind && p->bt == e->bt && p->fn == e->fn;
		}
		n->contexts += !seen;
	}
}

static void print_loss(const rt_trace *t, const rt_vgxml_stack_opts *so, const rt_loss_record *l, size_t i, size_t n)
{
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
}

static void print_summary(const rt_leak_summary *s)
{
	static const char *const label[] = {"", "definitely lost", "indirectly lost",
					    "  possibly lost", "still reachable"};
	char a[32], b[32];
	cli_info("LEAK SUMMARY:");
	for (int k = 1; k <= RT_LEAK_KINDS; k++) {
		cli_info("   %s: %s bytes in %s blocks", label[k], cli_grouped(s->bytes[k], a), cli_grouped(s->blocks[k], b));
		if (k == RT_LEAK_REACHABLE && (s->heur_blocks[1] | s->heur_blocks[2] | s->heur_blocks[3] | s->heur_blocks[4]))
			cli_info("                      of which reachable via heuristic:");
		for (int h = 1; k == RT_LEAK_REACHABLE && h <= RT_LEAK_HEURISTICS; h++)
			if (s->heur_blocks[h])
				cli_info("                        %-19s: %s bytes in %s blocks", rt_leak_heuristic_name((unsigned)h),
				     cli_grouped(s->heur_bytes[h], a), cli_grouped(s->heur_blocks[h], b));
	}
	cli_info("        suppressed: 0 bytes in 0 blocks");
}

static uint64_t leak_blocks_in_use(const rt_leak_summary *s)
{
	uint64_t n = 0;
	for (int k = 1; k <= RT_LEAK_KINDS; k++)
		n += s->blocks[k];
	return n;
}

void leak_report_leaks(const rt_trace *t, const leak_opts *o, leak_counts *n)
{
	const rt_leak_summary *s = rt_trace_leak_summary(t);
	unsigned mode = s && o->mode < s->mode ? o->mode : s ? s->mode : 0; /* the lesser */
	if (!mode)
		return;
	size_t nr = 0;
	rt_loss_record *r = rt_trace_loss_records(t, &nr);
	for (size_t i = 0; i < nr && mode == RT_LEAK_CHECK_FULL; i++) {
		if (o->show & (1u << r[i].kind))
			print_loss(t, &o->stack, &r[i], i, nr);
		if (o->errors_for & (1u << r[i].kind)) {
			n->errors++;
			n->contexts++;
		}
	}
	free(r);
	cli_info_summary(true); /* memcheck's -q prints its errors, not what follows */
	if (!leak_blocks_in_use(s)) { /* memcheck's words when nothing is left */
		cli_info("All heap blocks were freed -- no leaks are possible");
		cli_info("%s", "");
		return;
	}
	print_summary(s);
	if (mode == RT_LEAK_CHECK_SUMMARY)
		cli_info("Rerun with --leak-check=full to see details of leaked memory");
	else if (!(o->show & (1u << RT_LEAK_REACHABLE)) && s->blocks[RT_LEAK_REACHABLE])
		cli_info("Reachable blocks (those to which a pointer was found) are not shown.");
}

void leak_report_end(const leak_counts *n)
{
	char a[32], b[32];
	cli_info("ERROR SUMMARY: %s errors from %s contexts", cli_grouped(n->errors, a), cli_grouped(n->contexts, b));
}
