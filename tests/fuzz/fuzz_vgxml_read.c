/* libFuzzer harness for the Valgrind XML reader (rt_vgxml_read_mem).
 *
 * The whole input is a Valgrind XML file, so tests/data/vgxml's files are
 * valid seeds as they are (tests/fuzz/corpus-vgxml/). Each input is read
 * three times: keeping every element, dropping every top-level element
 * from on_element (the streaming mode), and cut short where its last byte
 * says.
 *
 * Invariants checked (abort otherwise): the result is 0 or -1, an error
 * has a position and a message; the node tree is well linked (parents,
 * children, siblings, documents' roots) and every <stack> holds a valid
 * backtrace; kept, the roots' children are the complete top-level
 * elements counted; dropped, only the roots are left; both reads agree on
 * the result and the counts; a prefix of the input never has more
 * complete elements than the whole. */
#include "rtrace/diag.h"
#include "rtrace/trace.h"
#include "rtrace/vgxml.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "fuzz_vgxml_read: %s:%d: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			abort();                                                     \
		}                                                                    \
	} while (0)

static void on_warn(void *ctx, const rt_diag *d)
{
	char buf[1024];
	(void)ctx;
	rt_diag_format(d, buf, sizeof buf);
	CHECK(d->msg[0]);
}

static bool drop_all(void *ctx, rt_trace *t, uint32_t node)
{
	(void)ctx;
	const rt_vgxml_node *n = rt_vgxml_node_at(t, node);
	CHECK(n && n->parent != RT_NONE);
	CHECK(rt_vgxml_node_at(t, n->parent)->parent == RT_NONE);
	return false;
}

/* Checks the links of every node; returns the roots' children. */
static uint64_t check_tree(const rt_trace *t)
{
	size_t n = rt_vgxml_node_count(t);
	uint64_t top = 0;
	for (uint32_t i = 0; i < n; i++) {
		const rt_vgxml_node *x = rt_vgxml_node_at(t, i);
		CHECK(x->name != RT_NONE);
		if (x->bt != RT_NONE) {
			CHECK(x->bt < rt_trace_bt_count(t));
			CHECK(x->child == RT_NONE);
			CHECK(!strcmp(rt_vgxml_name(t, i), "stack"));
		}
		if (x->parent == RT_NONE)
			continue;
		CHECK(x->parent < i);
		const rt_vgxml_node *p = rt_vgxml_node_at(t, x->parent);
		top += p->parent == RT_NONE;
		uint32_t c = p->child;
		while (c != RT_NONE && c != i) {
			CHECK(c < n);
			c = rt_vgxml_node_at(t, c)->next;
		}
		CHECK(c == i); /* listed by its parent */
		CHECK(x->next == RT_NONE ? p->last == i : x->next > i);
	}
	for (size_t d = 0; d < rt_vgxml_doc_count(t); d++)
		CHECK(rt_vgxml_node_at(t, rt_vgxml_doc_root(t, d))->parent == RT_NONE);
	return top;
}

static int read_once(const uint8_t *data, size_t size, bool drop, rt_vgxml_stats *st,
		     size_t *nodes)
{
	rt_trace *t = rt_trace_new();
	rt_vgxml_read_opts o = {drop ? drop_all : NULL, on_warn, NULL};
	rt_diag err;
	int rc = rt_vgxml_read_mem(t, (const char *)data, size, "fuzz", &o, st, &err);
	CHECK(rc == 0 || rc == -1);
	if (rc) {
		CHECK(err.line >= 1 && err.col >= 1 && err.msg[0]);
		char buf[1024];
		rt_diag_format(&err, buf, sizeof buf);
	}
	CHECK(st->bytes == size);
	CHECK(st->errors <= st->elements);
	uint64_t top = check_tree(t);
	if (drop)
		CHECK(top == 0 && rt_vgxml_node_count(t) == rt_vgxml_doc_count(t));
	else
		CHECK(top == st->elements);
	CHECK(rt_vgxml_doc_count(t) == st->docs);
	*nodes = rt_vgxml_node_count(t);
	rt_trace_free(t);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)rt_vgxml_sniff((const char *)data, size);
	rt_vgxml_stats keep, drop, cut;
	size_t nkeep, ndrop, ncut;
	int rc = read_once(data, size, false, &keep, &nkeep);
	CHECK(read_once(data, size, true, &drop, &ndrop) == rc);
	CHECK(keep.docs == drop.docs && keep.errors == drop.errors);
	CHECK(keep.elements == drop.elements && keep.truncated == drop.truncated);
	if (size > 1) {
		size_t at = size * data[size - 1] / 256;
		read_once(data, at, false, &cut, &ncut);
		if (rc == 0)
			CHECK(cut.elements <= keep.elements);
	}
	return 0;
}
