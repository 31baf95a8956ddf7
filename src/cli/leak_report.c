/* rtrace run's report of a trace's heap checking results, in memcheck's
 * words and order: heap errors, loss records (blocks grouped by leak kind
 * and allocation stack, smallest first), LEAK SUMMARY, ERROR SUMMARY.
 * Frames print as an address and the module it is in (or, with details
 * from a resolver, what sp-rtrace's resolver printed for them). */
#define _GNU_SOURCE
#include "leak_report.h"
#include "cli.h"

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


static const char *module_of(const rt_trace *t, uint64_t addr)
{
	for (size_t i = rt_trace_mmap_count(t); i-- > 0;) {
		const rt_mmap *m = rt_trace_mmap_at(t, i);
		if (addr >= m->from && addr < m->to)
			return m->module;
	}
	return NULL;
}

/* "   at FN" (the interposed function), then "   by 0xADDR: ..." for each
 * frame of the stack. */
void leak_print_stack(const rt_trace *t, uint32_t fn, uint32_t bt)
{
	bool first = true;
	if (fn != RT_NONE && *rt_trace_str(t, fn)) {
		cli_info("   at %s", rt_trace_str(t, fn));
		first = false;
	}
	uint32_t n = bt == RT_NONE ? 0 : rt_trace_bt_len(t, bt);
	const rt_frame *f = n ? rt_trace_bt_frames(t, bt) : NULL;
	for (uint32_t i = 0; i < n; i++, first = false) {
		const char *how = first ? "at" : "by";
		const char *mod = module_of(t, f[i].addr);
		rt_frame_info fi;
		char text[1024];
		if (rt_trace_frame_info(t, &f[i], &fi) && rt_text_frame_format(t, &fi, text, sizeof text))
			cli_info("   %s 0x%" PRIX64 ": %s", how, f[i].addr, text);
		else
			cli_info("   %s 0x%" PRIX64 ": ???%s%s%s", how, f[i].addr, mod ? " (in " : "",
			     mod ? mod : "", mod ? ")" : "");
	}
	if (!n)
		cli_info("   (no stack recorded)");
}

static void print_error(const rt_trace *t, const rt_heap_error *e)
{
	char size[32];
	cli_info("%s", e->kind == RT_ERR_INVALID_FREE ? "Invalid free() / delete / delete[] / realloc()"
						   : "Mismatched free() / delete / delete []");
	leak_print_stack(t, e->fn, e->bt);
	if (e->block == RT_BLOCK_UNKNOWN) {
		cli_info(" Address 0x%" PRIx64 " is not stack'd, malloc'd or (recently) free'd", e->addr);
		return;
	}
	cli_info(" Address 0x%" PRIx64 " is %" PRIu64 " bytes inside a block of size %s %s", e->addr,
	     e->addr - e->block_addr, cli_grouped(e->block_size, size),
	     e->block == RT_BLOCK_LIVE ? "alloc'd" : "free'd");
	if (e->block == RT_BLOCK_FREED) {
		leak_print_stack(t, e->free_fn, e->free_bt);
		cli_info(" Block was alloc'd at");
	}
	leak_print_stack(t, e->alloc_fn, e->alloc_bt);
}

void leak_report_errors(const rt_trace *t, leak_counts *n)
{
	size_t ne = rt_trace_heap_error_count(t);
	for (size_t i = 0; i < ne; i++) {
		const rt_heap_error *e = rt_trace_heap_error_at(t, i);
		print_error(t, e);
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

static void print_loss(const rt_trace *t, const rt_loss_record *l, size_t i, size_t n)
{
	char a[32], b[32], c[32], d[32];
	if (l->kind == RT_LEAK_DEFINITE && l->indirect)
		cli_info("%s (%s direct, %s indirect) bytes in %s blocks are %s in loss record %s of %zu",
		     cli_grouped(l->bytes + l->indirect, a), cli_grouped(l->bytes, b), cli_grouped(l->indirect, c),
		     cli_grouped(l->blocks, d), rt_leak_kind_name(l->kind), cli_grouped(i + 1, a + 16), n);
	else
		cli_info("%s bytes in %s blocks are %s in loss record %s of %zu", cli_grouped(l->bytes, a),
		     cli_grouped(l->blocks, c), rt_leak_kind_name(l->kind), cli_grouped(i + 1, b), n);
	leak_print_stack(t, l->fn, l->bt);
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
			print_loss(t, &r[i], i, nr);
		if (o->errors_for & (1u << r[i].kind)) {
			n->errors++;
			n->contexts++;
		}
	}
	free(r);
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
