/* The Valgrind XML reader's expat handlers: each element becomes a node of
 * the trace's Valgrind documents (rtrace/vgdoc.h), each <stack> a
 * backtrace. Element names are looked up once per distinct name; a
 * repeated stack costs one hash of its frames' bytes. A top-level element
 * the consumer drops goes with the strings first seen in it, so that a
 * huge file is read in constant memory. */
#include "util/util.h"
#include "vgxml/vgxml_read_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- element names ---- */

static void vgxml_names_rehash(vgxml_reader *r)
{
	free(r->slots);
	r->nslots = r->nslots ? r->nslots * 2 : 256;
	r->slots = rt_xcalloc(r->nslots, sizeof *r->slots);
	for (size_t k = 0; k < r->nnames; k++) {
		size_t i = r->names[k].hash & (r->nslots - 1);
		while (r->slots[i])
			i = (i + 1) & (r->nslots - 1);
		r->slots[i] = (uint32_t)k + 1;
	}
}

/* The index of name in the name table, added when new. */
static uint32_t vgxml_name_index(vgxml_reader *r, const char *name)
{
	uint32_t h = 2166136261u;
	size_t len = 0;
	for (; name[len]; len++)
		h = (h ^ (unsigned char)name[len]) * 16777619u;
	size_t i = h & (r->nslots - 1);
	for (; r->slots[i]; i = (i + 1) & (r->nslots - 1)) {
		const vgxml_name *e = &r->names[r->slots[i] - 1];
		if (e->hash == h && e->len == len && !memcmp(e->s, name, len))
			return r->slots[i] - 1;
	}
	vgxml_name e = {rt_xstrdup(name), (uint32_t)len, h, RT_NONE, rt_vgxml_known(name, len), false};
	RT_PUSH(r->names, r->nnames, r->cnames, e);
	r->slots[i] = (uint32_t)r->nnames;
	if (r->nnames * 2 > r->nslots)
		vgxml_names_rehash(r);
	return (uint32_t)r->nnames - 1;
}

static uint32_t vgxml_name_id(vgxml_reader *r, uint32_t k)
{
	vgxml_name *e = &r->names[k];
	if (e->id == RT_NONE) {
		e->id = rt_trace_intern(r->t, e->s, e->len);
		if (e->id > r->names_max_id)
			r->names_max_id = e->id;
	}
	return e->id;
}

/* After strings from nstrs on were given back: names interned among them
 * are interned again, now below any later element's mark, so that they
 * are not given back (and interned anew) with every dropped element. */
static void vgxml_names_repin(vgxml_reader *r, size_t nstrs)
{
	if (r->names_max_id < nstrs)
		return;
	r->names_max_id = 0;
	for (size_t k = 0; k < r->nnames; k++) {
		if (r->names[k].id != RT_NONE && r->names[k].id >= nstrs)
			r->names[k].id = RT_NONE;
		if (r->names[k].id != RT_NONE && r->names[k].id > r->names_max_id)
			r->names_max_id = r->names[k].id;
	}
	for (size_t k = 0; k < r->nnames; k++)
		if (r->names[k].id == RT_NONE && r->names[k].known >= 0)
			vgxml_name_id(r, (uint32_t)k);
}

const char *rt_vgxml_open_name(const vgxml_reader *r, size_t depth)
{
	return depth < r->depth ? r->names[r->stack[depth].name].s : "";
}

static unsigned vgxml_flags(const vgxml_reader *r, const vgxml_open *e)
{
	return rt_vgxml_known_flags(r->names[e->name].known);
}

/* ---- text ---- */

static void vgxml_text_add(vgxml_reader *r, const char *s, size_t len)
{
	rt_grow((void **)&r->txt, &r->ctxt, r->ntxt + len, 1);
	memcpy(r->txt + r->ntxt, s, len);
	r->ntxt += len;
}

static bool vgxml_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* An element without children gets its character data: exact bytes, but
 * whitespace alone in a container (<errorcounts>\n</errorcounts>) is no
 * text. */
static void vgxml_text_set(vgxml_reader *r, const vgxml_open *e)
{
	uint32_t flags = e->kind == VGXML_K_UCOMMENT ? RT_VGXML_RAW
			 : e->kind == VGXML_K_RAWTEXT && e->cdata ? RT_VGXML_CDATA : 0;
	if (flags && !e->children)
		rt_vgxml_set_flags(r->t, e->node, flags);
	if (e->children || !r->ntxt)
		return;
	if ((vgxml_flags(r, e) & VGXML_NAME_CONTAINER) && vgxml_blank(r->txt, r->ntxt))
		return;
	rt_vgxml_set_text(r->t, e->node, rt_trace_intern(r->t, r->txt, r->ntxt));
}

/* ---- stacks ---- */

/* The stack's key: each <frame> is 'F', each field a tag byte, its bytes
 * and a NUL (XML text has none), so equal keys are equal stacks. */
static void vgxml_key_add(vgxml_reader *r, char tag, const char *s, size_t len)
{
	rt_grow((void **)&r->key, &r->ckey, r->nkey + len + 2, 1);
	r->key[r->nkey++] = tag;
	memcpy(r->key + r->nkey, s, len);
	r->nkey += len;
	if (tag != 'F')
		r->key[r->nkey++] = '\0';
}

static void vgxml_frame_begin(vgxml_reader *r)
{
	vgxml_fref f = {{0}, {0}, 0};
	RT_PUSH(r->frefs, r->nfrefs, r->cfrefs, f);
	vgxml_key_add(r, 'F', "", 0);
}

static void vgxml_field_end(vgxml_reader *r, unsigned field)
{
	vgxml_fref *f = &r->frefs[r->nfrefs - 1];
	unsigned k = field - VGXML_IP;
	vgxml_key_add(r, (char)('a' + k), r->txt, r->ntxt);
	f->off[k] = (uint32_t)(r->nkey - r->ntxt - 1);
	f->len[k] = (uint32_t)r->ntxt;
	f->have |= (uint8_t)(1u << k);
}

static uint64_t vgxml_number(const char *s, size_t n, unsigned base, bool *ok)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (base == 16 && i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	uint64_t v = 0;
	size_t start = i;
	for (; i < n; i++) {
		char c = s[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			     : base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : base;
		if (d >= base)
			break;
		v = v * base + d;
	}
	*ok = i > start && vgxml_blank(s + i, n - i);
	return v;
}

/* The <frame>s read, as the stack helper takes them. */
static void vgxml_frames_of(vgxml_reader *r, uint32_t n)
{
	rt_grow((void **)&r->frames, &r->cframes, n, sizeof *r->frames);
	for (uint32_t i = 0; i < n; i++) {
		const vgxml_fref *f = &r->frefs[i];
		vgxml_str v[6];
		for (unsigned k = 0; k < 6; k++)
			v[k] = (vgxml_str){f->have >> k & 1 ? r->key + f->off[k] : NULL, f->len[k]};
		bool ok = true;
		uint64_t ip = v[0].s ? vgxml_number(v[0].s, v[0].len, 16, &ok) : 0;
		if ((!ok || !v[0].s) && !r->warned_ip) {
			r->warned_ip = true;
			rt_vgxml_warn(r, "<frame> without a valid <ip>: its address is 0");
		}
		uint64_t line = v[5].s ? vgxml_number(v[5].s, v[5].len, 10, &ok) : 0;
		r->frames[i] = (vgxml_frame){ip, v[1], v[2], v[3], v[4],
					     line > UINT32_MAX ? 0 : (uint32_t)line};
	}
}

static uint32_t vgxml_stack_build(vgxml_reader *r)
{
	uint32_t n = (uint32_t)r->nfrefs, nbt = 0;
	vgxml_frames_of(r, n);
	rt_grow((void **)&r->bt, &r->cbt, n, sizeof *r->bt);
	for (uint32_t i = 0; i < n;) {
		uint32_t k = rt_vgxml_chain_len(r->frames + i, n - i);
		bool recorded;
		r->bt[nbt++] = rt_vgxml_make_frame(r->t, r->frames + i, k, &recorded);
		r->top_recorded |= recorded;
		i += k;
	}
	static const rt_frame none;
	return rt_trace_intern_bt(r->t, nbt ? r->bt : &none, nbt);
}

static uint32_t vgxml_stack_end(vgxml_reader *r, uint32_t parent)
{
	const char *key = r->nkey ? r->key : ""; /* a stack without frames */
	uint64_t hash = rt_hash_bytes(key, r->nkey);
	uint32_t bt = rt_vgxml_stack_cache_get(r->cache, key, r->nkey, hash);
	if (bt == RT_NONE) {
		bt = vgxml_stack_build(r);
		rt_vgxml_stack_cache_put(r->cache, key, r->nkey, hash, bt);
	}
	return rt_vgxml_add_stack(r->t, parent, bt);
}

/* ---- top-level elements ---- */

static void vgxml_top_begin(vgxml_reader *r)
{
	uint32_t col;
	rt_vgxml_where(r, &r->top_line, &col);
	rt_trace_str_mark(r->t, &r->top_mark);
	r->top_nbts = rt_trace_bt_count(r->t);
	r->top_recorded = false;
}

/* A complete child of the root: counted, shown to the consumer, dropped
 * when it says so, with the strings first seen in it unless something
 * kept may refer to them (new backtraces or frame details, or anything
 * the consumer added). */
static void vgxml_top_end(vgxml_reader *r, const vgxml_open *e)
{
	rt_vgxml_stats *st = r->st;
	r->doc.kept++;
	st->elements++;
	st->errors += r->names[e->name].known == VGXML_ERROR;
	if (!r->o || !r->o->on_element)
		return;
	rt_str_mark after;
	rt_trace_str_mark(r->t, &after);
	uint32_t nbts = rt_trace_bt_count(r->t);
	if (r->o->on_element(r->o->ctx, r->t, e->node))
		return;
	rt_vgxml_truncate(r->t, e->node);
	if (nbts == r->top_nbts && rt_trace_bt_count(r->t) == nbts && !r->top_recorded &&
	    rt_trace_str_unchanged(r->t, &after)) {
		rt_trace_str_release(r->t, &r->top_mark);
		vgxml_names_repin(r, r->top_mark.nstrs);
	}
}

void rt_vgxml_tree_drop_open(vgxml_reader *r)
{
	if (r->depth >= 2 && r->stack[1].node != RT_NONE)
		rt_vgxml_truncate(r->t, r->stack[1].node);
	r->depth = r->depth ? 1 : 0;
}

/* ---- expat handlers ---- */

static void vgxml_push(vgxml_reader *r, vgxml_open e)
{
	RT_PUSH(r->stack, r->depth, r->cstack, e);
}

static void vgxml_root_begin(vgxml_reader *r, uint32_t name)
{
	if (r->names[name].known != VGXML_VALGRINDOUTPUT) {
		rt_vgxml_fail(r, "expected <valgrindoutput>, found <%s>", r->names[name].s);
		return;
	}
	uint32_t root = r->resume_root;
	if (root == RT_NONE) {
		root = rt_vgxml_add_id(r->t, RT_NONE, vgxml_name_id(r, name));
		r->st->docs++;
		uint32_t col;
		r->doc = (vgxml_doc){root, 0, 0, 0, r->doc.version};
		rt_vgxml_where(r, &r->doc.line, &col);
	}
	r->in_doc = true;
	vgxml_push(r, (vgxml_open){root, name, VGXML_K_ROOT, 0, false, false});
}

/* Inside a stack only frames and their fields are read. */
static vgxml_open vgxml_stack_child(vgxml_reader *r, const vgxml_open *parent, uint32_t name)
{
	int known = r->names[name].known;
	vgxml_open e = {RT_NONE, name, VGXML_K_SKIP, 0, false, false};
	if (parent->kind == VGXML_K_STACK && known == VGXML_FRAME) {
		e.kind = VGXML_K_FRAME;
		vgxml_frame_begin(r);
	} else if (parent->kind == VGXML_K_FRAME && known >= VGXML_IP && known <= VGXML_LINE) {
		e.kind = VGXML_K_FIELD;
		e.field = (uint8_t)known;
	} else if (parent->kind != VGXML_K_SKIP && !r->names[name].warned) {
		r->names[name].warned = true;
		rt_vgxml_warn(r, "<%s> inside <%s> is not kept (a stack holds frames of ip, obj, fn, "
			      "dir, file and line)", r->names[name].s, r->names[parent->name].s);
	}
	return e;
}

static vgxml_open vgxml_child(vgxml_reader *r, const vgxml_open *parent, uint32_t name)
{
	if (parent->kind >= VGXML_K_STACK)
		return vgxml_stack_child(r, parent, name);
	int known = r->names[name].known;
	vgxml_open e = {RT_NONE, name, VGXML_K_GENERIC, 0, false, false};
	if (known == VGXML_STACK) {
		e.kind = VGXML_K_STACK;
		r->nkey = r->nfrefs = 0;
		return e;
	}
	e.node = rt_vgxml_add_id(r->t, parent->node, vgxml_name_id(r, name));
	if (known == VGXML_USERCOMMENT) {
		e.kind = VGXML_K_UCOMMENT;
		r->raw = true;
		r->raw_depth = 0;
	} else if (known == VGXML_RAWTEXT) {
		e.kind = VGXML_K_RAWTEXT;
	} else if (known < 0 && !r->names[name].warned) {
		r->names[name].warned = true;
		rt_vgxml_warn(r, "unknown element <%s> (kept)", r->names[name].s);
	}
	return e;
}

static void XMLCALL vgxml_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	vgxml_reader *r = ud;
	if (r->raw) {
		r->raw_depth++;
		XML_DefaultCurrent(r->xp);
		return;
	}
	uint32_t k = vgxml_name_index(r, name);
	if (atts[0] && !r->warned_attr) {
		r->warned_attr = true;
		rt_vgxml_warn(r, "attributes are not kept (<%s %s=...>)", name, atts[0]);
	}
	if (!r->depth) {
		vgxml_root_begin(r, k);
		return;
	}
	if (r->depth == 1 && r->names[k].known == VGXML_VALGRINDOUTPUT) {
		rt_vgxml_doc_nested(r);
		return;
	}
	vgxml_open *parent = &r->stack[r->depth - 1];
	parent->children = true;
	r->ntxt = 0;
	if (r->depth == 1)
		vgxml_top_begin(r);
	vgxml_push(r, vgxml_child(r, &r->stack[r->depth - 1], k));
}

static void XMLCALL vgxml_end(void *ud, const XML_Char *name)
{
	vgxml_reader *r = ud;
	(void)name;
	if (r->stop != VGXML_GOING)
		return; /* the end of an empty element whose start stopped the parser */
	if (r->raw && r->raw_depth) {
		r->raw_depth--;
		XML_DefaultCurrent(r->xp);
		return;
	}
	r->raw = false;
	vgxml_open e = r->stack[--r->depth];
	switch (e.kind) {
	case VGXML_K_GENERIC:
	case VGXML_K_UCOMMENT:
	case VGXML_K_RAWTEXT:
		vgxml_text_set(r, &e);
		break;
	case VGXML_K_FIELD:
		vgxml_field_end(r, e.field);
		break;
	case VGXML_K_STACK:
		e.node = vgxml_stack_end(r, r->stack[r->depth - 1].node);
		break;
	case VGXML_K_ROOT:
		r->in_doc = false;
		rt_vgxml_doc_end(r);
		return;
	default:
		break;
	}
	r->ntxt = 0;
	if (r->depth == 1)
		vgxml_top_end(r, &e);
}

static void XMLCALL vgxml_chars(void *ud, const XML_Char *s, int len)
{
	vgxml_reader *r = ud;
	if (r->raw) {
		XML_DefaultCurrent(r->xp);
		return;
	}
	if (!r->depth)
		return;
	const vgxml_open *e = &r->stack[r->depth - 1];
	if (e->children || (e->cdata && !r->in_cdata))
		return;
	vgxml_text_add(r, s, (size_t)len);
}

static void XMLCALL vgxml_cdata_begin(void *ud)
{
	vgxml_reader *r = ud;
	if (r->raw) {
		XML_DefaultCurrent(r->xp);
		return;
	}
	r->in_cdata = true;
	vgxml_open *e = &r->stack[r->depth - 1];
	if (e->kind == VGXML_K_RAWTEXT && !e->cdata && !e->children) {
		e->cdata = true; /* what came before the first section is layout */
		r->ntxt = 0;
	}
}

static void XMLCALL vgxml_cdata_end(void *ud)
{
	vgxml_reader *r = ud;
	if (r->raw)
		XML_DefaultCurrent(r->xp);
	else
		r->in_cdata = false;
}

/* Markup without a handler of its own: kept as it is inside a user
 * comment, ignored elsewhere (the XML declaration, comments, PIs). */
static void XMLCALL vgxml_default(void *ud, const XML_Char *s, int len)
{
	vgxml_reader *r = ud;
	if (r->raw)
		vgxml_text_add(r, s, (size_t)len);
}

static void XMLCALL vgxml_entity_decl(void *ud, const XML_Char *name, int is_param,
				      const XML_Char *value, int value_len, const XML_Char *base,
				      const XML_Char *system_id, const XML_Char *public_id,
				      const XML_Char *notation)
{
	(void)is_param, (void)value, (void)value_len, (void)base, (void)system_id;
	(void)public_id, (void)notation;
	rt_vgxml_fail(ud, "expected no entity declaration (<!ENTITY %s>): entities are never "
		      "expanded", name);
}

static void XMLCALL vgxml_skipped_entity(void *ud, const XML_Char *name, int is_param)
{
	(void)is_param;
	rt_vgxml_fail(ud, "expected &amp;, &lt;, &gt;, &quot;, &apos; or a character reference, "
		      "found the undefined entity &%s;", name);
}

void rt_vgxml_tree_setup(vgxml_reader *r)
{
	XML_Parser p = r->xp;
	XML_SetUserData(p, r);
	XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_NEVER);
	XML_SetElementHandler(p, vgxml_start, vgxml_end);
	XML_SetCharacterDataHandler(p, vgxml_chars);
	XML_SetCdataSectionHandler(p, vgxml_cdata_begin, vgxml_cdata_end);
	XML_SetDefaultHandler(p, vgxml_default);
	XML_SetEntityDeclHandler(p, vgxml_entity_decl);
	XML_SetSkippedEntityHandler(p, vgxml_skipped_entity);
	if (!r->cache)
		r->cache = rt_vgxml_stack_cache_new();
	if (!r->nslots)
		vgxml_names_rehash(r);
	r->depth = 0;
	r->ntxt = 0;
	r->raw = r->in_cdata = false;
}

void rt_vgxml_tree_free(vgxml_reader *r)
{
	for (size_t k = 0; k < r->nnames; k++)
		free(r->names[k].s);
	free(r->names);
	free(r->slots);
	free(r->stack);
	free(r->txt);
	free(r->key);
	free(r->frefs);
	free(r->frames);
	free(r->bt);
	rt_vgxml_stack_cache_free(r->cache);
}
