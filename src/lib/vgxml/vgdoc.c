/* Valgrind documents in the model (include/rtrace/vgdoc.h): element trees
 * in one node array per trace, linked by index so that the array can grow
 * and a streaming reader can cut it back. */
#include "rtrace/vgdoc.h"
#include "model/trace_int.h"
#include "vgxml/vgdoc_int.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

struct rt_vgxml_docs {
	rt_vgxml_node *nodes;
	size_t n, cap;
	uint32_t *roots;
	size_t nroots, croots;
	bool mapped; /* the heap checking results were filled from them */
};

static void vg_free(void *data)
{
	struct rt_vgxml_docs *vg = data;
	free(vg->nodes);
	free(vg->roots);
	free(vg);
}

/* The documents are an extension of the trace: the core model does not
 * know them (model/trace_int.h). */
static const rt_trace_ext vg_ext = {"Valgrind documents", vg_free};

static struct rt_vgxml_docs *vg_get(rt_trace *t) { return rt_trace_ext_need(t, &vg_ext, sizeof(struct rt_vgxml_docs)); }

static const struct rt_vgxml_docs *vg_peek(const rt_trace *t) { return rt_trace_ext_get(t, &vg_ext); }

bool rt_vgxml_is_source(const rt_trace *t) { return vg_peek(t) != NULL; }

bool rt_vgxml_mark_mapped(rt_trace *t)
{
	struct rt_vgxml_docs *vg = vg_get(t);
	bool first = !vg->mapped;
	vg->mapped = true;
	return first;
}

static rt_vgxml_node *vg_node(const rt_trace *t, uint32_t id)
{
	const struct rt_vgxml_docs *vg = vg_peek(t);
	return vg && id < vg->n ? &vg->nodes[id] : NULL;
}

uint32_t rt_vgxml_add(rt_trace *t, uint32_t parent, const char *name)
{
	return rt_vgxml_add_id(t, parent, rt_trace_intern(t, name, strlen(name)));
}

uint32_t rt_vgxml_add_id(rt_trace *t, uint32_t parent, uint32_t name)
{
	struct rt_vgxml_docs *vg = vg_get(t);
	uint32_t id = (uint32_t)vg->n;
	rt_vgxml_node n = {
		.name = name,
		.text = RT_NONE, .bt = RT_NONE, .parent = RT_NONE,
		.child = RT_NONE, .last = RT_NONE, .next = RT_NONE,
	};
	RT_PUSH(vg->nodes, vg->n, vg->cap, n);
	rt_vgxml_node *p = parent == RT_NONE ? NULL : vg_node(t, parent);
	if (!p) {
		RT_PUSH(vg->roots, vg->nroots, vg->croots, id);
		return id;
	}
	vg->nodes[id].parent = parent;
	if (p->last == RT_NONE)
		p->child = id;
	else
		vg->nodes[p->last].next = id;
	p->last = id;
	return id;
}

uint32_t rt_vgxml_add_text(rt_trace *t, uint32_t parent, const char *name, const char *text,
			size_t len)
{
	uint32_t id = rt_vgxml_add(t, parent, name);
	vg_node(t, id)->text = rt_trace_intern(t, text, len);
	return id;
}

uint32_t rt_vgxml_add_stack(rt_trace *t, uint32_t parent, uint32_t bt)
{
	uint32_t id = rt_vgxml_add(t, parent, "stack");
	vg_node(t, id)->bt = bt;
	return id;
}

void rt_vgxml_set_text(rt_trace *t, uint32_t node, uint32_t text)
{
	rt_vgxml_node *n = vg_node(t, node);
	if (n)
		n->text = text;
}

void rt_vgxml_set_flags(rt_trace *t, uint32_t node, uint32_t flags)
{
	rt_vgxml_node *n = vg_node(t, node);
	if (n)
		n->flags = flags;
}

/* Unlinks node from its parent, whose children before it all have
 * smaller ids (children are only ever appended). */
static void vg_unlink(struct rt_vgxml_docs *vg, uint32_t id)
{
	rt_vgxml_node *p = &vg->nodes[vg->nodes[id].parent];
	if (p->child == id) {
		p->child = p->last = RT_NONE;
		return;
	}
	uint32_t prev = p->child;
	while (vg->nodes[prev].next != id)
		prev = vg->nodes[prev].next;
	vg->nodes[prev].next = RT_NONE;
	p->last = prev;
}

void rt_vgxml_truncate(rt_trace *t, uint32_t node)
{
	struct rt_vgxml_docs *vg = rt_trace_ext_get(t, &vg_ext);
	if (!vg || node >= vg->n)
		return;
	if (vg->nodes[node].parent != RT_NONE)
		vg_unlink(vg, node);
	vg->n = node;
	while (vg->nroots && vg->roots[vg->nroots - 1] >= node)
		vg->nroots--;
}

size_t rt_vgxml_node_count(const rt_trace *t)
{
	const struct rt_vgxml_docs *vg = vg_peek(t);
	return vg ? vg->n : 0;
}

const rt_vgxml_node *rt_vgxml_node_at(const rt_trace *t, uint32_t id) { return vg_node(t, id); }

size_t rt_vgxml_doc_count(const rt_trace *t)
{
	const struct rt_vgxml_docs *vg = vg_peek(t);
	return vg ? vg->nroots : 0;
}

uint32_t rt_vgxml_doc_root(const rt_trace *t, size_t i)
{
	const struct rt_vgxml_docs *vg = vg_peek(t);
	return vg && i < vg->nroots ? vg->roots[i] : RT_NONE;
}

const char *rt_vgxml_name(const rt_trace *t, uint32_t node)
{
	const rt_vgxml_node *n = vg_node(t, node);
	return n ? rt_trace_str(t, n->name) : "";
}

uint32_t rt_vgxml_find(const rt_trace *t, uint32_t node, const char *name, uint32_t after)
{
	const rt_vgxml_node *n = vg_node(t, node);
	if (!n)
		return RT_NONE;
	uint32_t c = after == RT_NONE ? n->child : vg_node(t, after)->next;
	for (; c != RT_NONE; c = vg_node(t, c)->next)
		if (!strcmp(rt_trace_str(t, vg_node(t, c)->name), name))
			return c;
	return RT_NONE;
}

const char *rt_vgxml_text(const rt_trace *t, uint32_t node)
{
	const rt_vgxml_node *n = vg_node(t, node);
	return n && n->text != RT_NONE ? rt_trace_str(t, n->text) : NULL;
}

const char *rt_vgxml_child_text(const rt_trace *t, uint32_t node, const char *name)
{
	return rt_vgxml_text(t, rt_vgxml_find(t, node, name, RT_NONE));
}
