/* libFuzzer harness for the Callgrind reader and the annotate report.
 *
 * The whole input is read as a profile, so the profiles of
 * tests/data/callgrind are seeds as they are. Its last byte picks the
 * options (a seed's last byte is '\n': flipping its bits keeps it
 * parseable):
 *
 *   bit 0   read from a file descriptor (memfd) instead of memory
 *   bit 1   read: CG_READ_MERGE_PARTS
 *   bit 2   read: CG_READ_LINES
 *   bit 3   report: --inclusive=yes
 *   bit 4   report: --tree=both
 *   bit 5   report: --show-percs=no
 *   bit 6   report: --threshold=100
 *   bit 7   report: --sort and --show with each event, derived ones too
 *
 * Invariants checked (abort otherwise): every index in the model points
 * into its table; summary: and totals: have no more values than columns;
 * the cost lines' values add up to the parts' sums (also when reading
 * stopped at an error); the report is written without error; the model
 * written in the Callgrind format (names and positions compressed or not,
 * by bit 3) reads back without error with the same cost per event and
 * the same number of calls.
 * The report does not annotate sources (no file system access). */
#define _GNU_SOURCE /* memfd_create */
#include "rtrace/callgrind.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void on_warn(void *ctx, const rt_diag *d)
{
	char buf[1024];
	(void)ctx;
	rt_diag_format(d, buf, sizeof buf); /* exercises the formatting */
}

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_cg_read: broken invariant: %s\n", what);
		abort();
	}
}

static void check_model(const cg_profile *p)
{
	size_t nfn, ncode, ncost, ncall, njump, npart, nev;
	const cg_fn *fns = cg_profile_fns(p, &nfn);
	const cg_code *codes = cg_profile_codes(p, &ncode);
	const cg_cost *costs = cg_profile_costs(p, &ncost);
	const cg_call *calls = cg_profile_calls(p, &ncall);
	const cg_jump *jumps = cg_profile_jumps(p, &njump);
	const cg_part *parts = cg_profile_parts(p, &npart);
	const cg_event *ev = cg_profile_events(p, &nev);
	uint32_t slots = cg_profile_slots(p), nfile = cg_profile_name_count(p, CG_FILE);
	for (size_t i = 0; i < nfn; i++)
		check(fns[i].name < cg_profile_name_count(p, CG_FUNCTION) && fns[i].file < nfile &&
		      fns[i].object < cg_profile_name_count(p, CG_OBJECT), "function names");
	for (size_t i = 0; i < ncode; i++)
		check(codes[i].fn < nfn && codes[i].file < nfile && codes[i].part < npart, "code");
	uint64_t *sum = calloc(slots + 1, sizeof *sum);
	for (size_t i = 0; i < ncost; i++) {
		check(costs[i].code < ncode && costs[i].given <= slots, "cost");
		for (uint32_t k = 0; k < slots; k++)
			sum[k] += costs[i].v[k];
	}
	for (size_t i = 0; i < ncall; i++)
		check(calls[i].code < ncode && calls[i].callee < nfn && calls[i].given <= slots, "call");
	for (size_t i = 0; i < njump; i++)
		check(jumps[i].code < ncode && jumps[i].to_fn < nfn && jumps[i].to_file < nfile, "jump");
	for (size_t i = 0; i < npart; i++) {
		check(parts[i].nsummary <= parts[i].nevents && parts[i].ntotals <= parts[i].nevents,
		      "summary: and totals: have a value per column at most");
		for (uint32_t c = 0; c < parts[i].nevents; c++) {
			check(parts[i].events[c] < nev && ev[parts[i].events[c]].slot < slots, "part events");
			sum[ev[parts[i].events[c]].slot] -= parts[i].sum[c];
		}
	}
	for (uint32_t k = 0; k < slots; k++)
		check(sum[k] == 0, "cost lines add up to the parts' sums");
	free(sum);
}

static int read_profile(cg_profile *p, const uint8_t *data, size_t size, const cg_read_opts *o)
{
	rt_diag err;
	if (!(o->flags & 0x100))
		return cg_read_mem(p, (const char *)data, size, "fuzz.cg", o, NULL, &err);
	int fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET))
		abort();
	cg_read_opts fo = *o;
	fo.flags &= ~0x100u;
	int rc = cg_read_fd(p, fd, "fuzz.cg", &fo, NULL, &err);
	close(fd);
	return rc;
}

static void report(const cg_profile *p, unsigned bits)
{
	static int devnull = -1;
	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY);
	size_t nev;
	const cg_event *ev = cg_profile_events(p, &nev);
	const char **names = calloc(nev + 1, sizeof *names);
	uint32_t n = 0;
	for (size_t i = 0; i < nev; i++)
		if (ev[i].slot != CG_NONE || ev[i].nterms)
			names[n++] = ev[i].name;
	cg_annotate_opts o = {0};
	o.input = "fuzz.cg";
	o.no_auto = true;
	o.inclusive = bits & 0x08;
	o.tree_caller = o.tree_calling = bits & 0x10;
	o.no_percs = bits & 0x20;
	o.threshold = bits & 0x40 ? "100" : NULL;
	if (bits & 0x80) {
		o.show = o.sort = names;
		o.nshow = o.nsort = n;
	}
	char msg[256];
	check(cg_annotate_write(p, devnull, &o, msg, sizeof msg) == 0, "the report is written");
	free(names);
}

/* Cost per event name of all cost lines, and the calls' total count. */
static uint64_t event_total(const cg_profile *p, const char *name, uint64_t *ncalls)
{
	uint32_t ev = cg_profile_find_event(p, name);
	size_t nev, ncost, ncall;
	const cg_event *e = cg_profile_events(p, &nev);
	const cg_cost *c = cg_profile_costs(p, &ncost);
	const cg_call *k = cg_profile_calls(p, &ncall);
	*ncalls = 0;
	for (size_t i = 0; i < ncall; i++)
		*ncalls += k[i].count;
	if (ev == CG_NONE || e[ev].slot == CG_NONE)
		return 0;
	uint64_t t = 0;
	for (size_t i = 0; i < ncost; i++)
		t += c[i].v[e[ev].slot];
	return t;
}

static void round_trip(const cg_profile *p, unsigned bits)
{
	cg_write_opts wo = {bits & 0x08, bits & 0x08, false};
	size_t len;
	char *buf = cg_write_mem(p, &wo, &len);
	cg_profile *q = cg_profile_new();
	cg_read_opts ro = {0, NULL, NULL};
	rt_diag err;
	size_t nparts, with_events = 0;
	const cg_part *pt = cg_profile_parts(p, &nparts);
	for (size_t i = 0; i < nparts; i++)
		with_events += pt[i].nevents > 0;
	/* parts cut off before their events: line are not written */
	check(cg_read_mem(q, buf, len, "written.cg", &ro, NULL, &err) == 0 || !with_events,
	      "the written profile reads back");
	size_t nev;
	const cg_event *ev = cg_profile_events(p, &nev);
	for (size_t i = 0; i < nev; i++) {
		uint64_t np, nq;
		if (ev[i].slot != CG_NONE)
			check(event_total(p, ev[i].name, &np) == event_total(q, ev[i].name, &nq) && np == nq,
			      "the written profile has the same costs and calls");
	}
	cg_profile_free(q);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned bits = size ? data[size - 1] : 0;
	cg_read_opts o = {(bits & 1 ? 0x100u : 0) | (bits & 2 ? CG_READ_MERGE_PARTS : 0) |
				  (bits & 4 ? CG_READ_LINES : 0),
			  on_warn, NULL};
	cg_profile *p = cg_profile_new();
	read_profile(p, data, size, &o);
	check_model(p);
	if (cg_profile_slots(p)) {
		report(p, bits);
		round_trip(p, bits);
	}
	cg_profile_free(p);
	return 0;
}
