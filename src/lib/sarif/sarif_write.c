/* SARIF 2.1.0 writer: the Valgrind documents of the traces given (those
 * read from Valgrind XML, or memcheck's document of rtrace's own findings
 * built for the write, rt_vgxml_build) as one log with one run, so that
 * everything the model holds reaches code scanning through the one path
 * the XML writer takes too: whatever Valgrind XML can say, SARIF says.
 *
 * Each <error> is a result (memcheck's loss records are errors too): its
 * ruleId "TOOL/KIND", its message the tool's <what> or <xwhat><text>,
 * its location the first frame in the user's code of its first stack;
 * each of its stacks a code flow, outermost frame first as a thread of
 * execution runs (a race's two threads are two flows), labelled with the
 * <auxwhat> that precedes it; the later stacks' user frames also related
 * locations. The rules are those the results use, in order of first use,
 * described by sarif_rules.c. */
#include "rtrace/rtrace.h"
#include "rtrace/sarif.h"
#include "sarif/sarif_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rule_ref {
	const char *tool, *kind; /* strings of the documents' traces */
} rule_ref;

typedef struct sw {
	sj j;
	const char *root;
	rule_ref *rules;
	size_t nrules, cap;
	char (*prints)[33]; /* the fingerprints written so far */
	size_t nprints, pcap;
} sw;

/* A stack of an error, with what the tool said of it. */
typedef struct err_stack {
	uint32_t bt;
	const char *label;
} err_stack;

#define MAX_STACKS 16

typedef struct err_view {
	const rt_trace *t;
	uint32_t root; /* the document's */
	const char *tool, *kind, *what;
	err_stack st[MAX_STACKS];
	size_t nst;
} err_view;

static const char *doc_tool(const rt_trace *t, uint32_t root)
{
	const char *tool = rt_vgxml_child_text(t, root, "protocoltool");
	if (!tool)
		tool = rt_vgxml_child_text(t, root, "tool");
	return tool ? tool : "memcheck";
}

static size_t rule_index(sw *w, const char *tool, const char *kind)
{
	for (size_t i = 0; i < w->nrules; i++)
		if (!strcmp(w->rules[i].tool, tool) && !strcmp(w->rules[i].kind, kind))
			return i;
	if (w->nrules == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		rule_ref *r = realloc(w->rules, w->cap * sizeof *r);
		if (!r)
			abort();
		w->rules = r;
	}
	w->rules[w->nrules] = (rule_ref){tool, kind};
	return w->nrules++;
}

/* The stacks under node, each labelled with the nearest description
 * before it (<auxwhat>, <xauxwhat>'s text, an <origin>'s <what>, or the
 * name of the element holding it: drd's <other_segment_start>). */
static void collect_stacks(err_view *e, uint32_t node, const char **label)
{
	const rt_trace *t = e->t;
	for (uint32_t c = rt_vgxml_node_at(t, node)->child; c != RT_NONE; c = rt_vgxml_node_at(t, c)->next) {
		const char *name = rt_vgxml_name(t, c);
		const rt_vgxml_node *n = rt_vgxml_node_at(t, c);
		if (!strcmp(name, "stack")) {
			if (e->nst < MAX_STACKS)
				e->st[e->nst++] = (err_stack){n->bt, *label};
		} else if (!strcmp(name, "auxwhat") || !strcmp(name, "what")) {
			if (rt_vgxml_text(t, c))
				*label = rt_vgxml_text(t, c);
		} else if (!strcmp(name, "xauxwhat")) {
			if (rt_vgxml_child_text(t, c, "text"))
				*label = rt_vgxml_child_text(t, c, "text");
		} else if (n->child != RT_NONE && strcmp(name, "xwhat") && strcmp(name, "suppression")) {
			const char *inner = name;
			collect_stacks(e, c, &inner);
		}
	}
}

static bool view_error(const rt_trace *t, uint32_t root, uint32_t err, const char *tool, err_view *e)
{
	memset(e, 0, sizeof *e);
	e->t = t;
	e->root = root;
	e->tool = tool;
	e->kind = rt_vgxml_child_text(t, err, "kind");
	if (!e->kind)
		return false;
	e->what = rt_vgxml_child_text(t, err, "what");
	uint32_t xw = rt_vgxml_find(t, err, "xwhat", RT_NONE);
	if (!e->what && xw != RT_NONE)
		e->what = rt_vgxml_child_text(t, xw, "text");
	if (!e->what)
		e->what = e->kind;
	const char *label = e->what;
	collect_stacks(e, err, &label);
	return true;
}

/* Calls fn on every error of every document of the models. */
typedef void (*error_fn)(sw *w, const err_view *e, uint32_t err);

static void each_error(sw *w, const rt_trace *const *docs, size_t n, error_fn fn)
{
	for (size_t i = 0; i < n; i++) {
		const rt_trace *t = docs[i];
		for (size_t d = 0; d < rt_vgxml_doc_count(t); d++) {
			uint32_t root = rt_vgxml_doc_root(t, d);
			const char *tool = doc_tool(t, root);
			for (uint32_t c = rt_vgxml_find(t, root, "error", RT_NONE); c != RT_NONE;
			     c = rt_vgxml_find(t, root, "error", c)) {
				err_view e;
				if (view_error(t, root, c, tool, &e))
					fn(w, &e, c);
			}
		}
	}
}

static void note_rule(sw *w, const err_view *e, uint32_t err)
{
	(void)err;
	rule_index(w, e->tool, e->kind);
}

/* --- rules --- */

static void put_rule_props(sj *j, const char *kind, const sarif_rule_info *r)
{
	sj_obj(j, "properties");
	sj_arr(j, "tags");
	sj_str(j, NULL, r->sec ? "security" : "reliability");
	if (!strncmp(kind, "Leak_", 5))
		sj_str(j, NULL, "memory-leak");
	if (r->cwe) {
		char cwe[48];
		snprintf(cwe, sizeof cwe, "external/cwe/cwe-%s", r->cwe);
		sj_str(j, NULL, cwe);
	}
	sj_end(j, ']');
	sj_str(j, "precision", !strcmp(kind, "Leak_PossiblyLost") ? "medium" : "high");
	sj_str(j, "problem.severity", r->severity);
	if (r->sec)
		sj_str(j, "security-severity", r->sec);
	sj_end(j, '}');
}

static void put_rule(sw *w, const rule_ref *ref)
{
	sarif_rule_info r;
	rt_sarif_rule_info(ref->tool, ref->kind, &r);
	char id[256], help[1024];
	snprintf(id, sizeof id, "%s/%s", ref->tool, ref->kind);
	snprintf(help, sizeof help, "%s Reported by Valgrind's %s kind %s (or rtrace's). See %s", r.full,
		 ref->tool, ref->kind, r.help_uri);
	sj *j = &w->j;
	sj_obj(j, NULL);
	sj_str(j, "id", id);
	sj_str(j, "name", *r.name ? r.name : ref->kind);
	sj_text(j, "shortDescription", r.brief);
	sj_text(j, "fullDescription", r.full);
	sj_text(j, "help", help);
	sj_str(j, "helpUri", r.help_uri);
	sj_obj(j, "defaultConfiguration");
	sj_str(j, "level", r.level);
	sj_end(j, '}');
	put_rule_props(j, ref->kind, &r);
	sj_end(j, '}');
}

static void put_driver(sw *w)
{
	sj *j = &w->j;
	sj_obj(j, "tool");
	sj_obj(j, "driver");
	sj_str(j, "name", "rtrace");
	sj_str(j, "version", RTRACE_VERSION);
	sj_str(j, "semanticVersion", RTRACE_VERSION);
	sj_arr(j, "rules");
	for (size_t i = 0; i < w->nrules; i++)
		put_rule(w, &w->rules[i]);
	sj_end(j, ']');
	sj_end(j, '}');
	sj_end(j, '}');
}

/* --- results --- */

/* A stack as a code flow: its frames outermost first, each with memcheck's
 * line for it. */
static void put_flow(sw *w, const sarif_stack *s, const char *label)
{
	sj *j = &w->j;
	char text[1024];
	sj_obj(j, NULL);
	sj_text(j, "message", label);
	sj_arr(j, "threadFlows");
	sj_obj(j, NULL);
	sj_arr(j, "locations");
	for (size_t i = s->n; i-- > 0;) {
		sj_obj(j, NULL);
		rt_sarif_location(j, "location", &s->f[i], w->root, rt_sarif_frame_text(&s->f[i], text, sizeof text), -1);
		sj_u64(j, "nestingLevel", s->n - 1 - i);
		sj_end(j, '}');
	}
	sj_end(j, ']');
	sj_end(j, '}');
	sj_end(j, ']');
	sj_end(j, '}');
}

static void put_flows(sw *w, const err_view *e, const sarif_stack *s)
{
	sj_arr(&w->j, "codeFlows");
	for (size_t i = 0; i < e->nst; i++)
		if (s[i].n)
			put_flow(w, &s[i], e->st[i].label);
	sj_end(&w->j, ']');
}

/* The later stacks' frames in the user's code ("Address ... is inside a
 * block ... free'd", a race's other access). */
static void put_related(sw *w, const err_view *e, const sarif_stack *s)
{
	sj *j = &w->j;
	bool any = false;
	for (size_t i = 1; i < e->nst; i++) {
		long p = rt_sarif_primary(&s[i], w->root);
		if (p < 0)
			continue;
		if (!any)
			sj_arr(j, "relatedLocations");
		any = true;
		rt_sarif_location(j, NULL, &s[i].f[p], w->root, e->st[i].label, (long)i);
	}
	if (any)
		sj_end(j, ']');
}

/* memcheck's leak counts, for whoever sorts leaks by size. */
static void put_result_props(sw *w, const err_view *e, uint32_t err)
{
	uint32_t xw = rt_vgxml_find(e->t, err, "xwhat", RT_NONE);
	const char *bytes = xw == RT_NONE ? NULL : rt_vgxml_child_text(e->t, xw, "leakedbytes");
	const char *blocks = xw == RT_NONE ? NULL : rt_vgxml_child_text(e->t, xw, "leakedblocks");
	sj_obj(&w->j, "properties");
	sj_str(&w->j, "tool", e->tool);
	if (bytes)
		sj_u64(&w->j, "leakedBytes", strtoull(bytes, NULL, 10));
	if (blocks)
		sj_u64(&w->j, "leakedBlocks", strtoull(blocks, NULL, 10));
	sj_end(&w->j, '}');
}

/* The finding's identity, with its rank among those that look the same
 * in this log. */
static void put_fingerprint(sw *w, const err_view *e, const sarif_stack *s)
{
	char fp[33], text[48];
	rt_sarif_fingerprint(e->tool, e->kind, s, e->nst, fp);
	size_t same = 1;
	for (size_t i = 0; i < w->nprints; i++)
		same += !strcmp(w->prints[i], fp);
	if (w->nprints == w->pcap) {
		w->pcap = w->pcap ? w->pcap * 2 : 64;
		void *p = realloc(w->prints, w->pcap * sizeof *w->prints);
		if (!p)
			abort();
		w->prints = p;
	}
	memcpy(w->prints[w->nprints++], fp, sizeof fp);
	snprintf(text, sizeof text, "%s:%zu", fp, same);
	sj_obj(&w->j, "partialFingerprints");
	sj_str(&w->j, "rtrace/stack/v1", text);
	sj_end(&w->j, '}');
}

/* The program's executable, from the document's <args>. */
static const char *program(const err_view *e)
{
	uint32_t args = rt_vgxml_find(e->t, e->root, "args", RT_NONE);
	uint32_t argv = args == RT_NONE ? RT_NONE : rt_vgxml_find(e->t, args, "argv", RT_NONE);
	return argv == RT_NONE ? NULL : rt_vgxml_child_text(e->t, argv, "exe");
}

/* The result's location: its user frame, or the program for an error
 * without a stack (code scanning wants a location on every result). */
static void put_primary(sw *w, const err_view *e, const sarif_stack *s)
{
	long p = e->nst ? rt_sarif_primary(&s[0], w->root) : -1;
	sarif_frame prog = {0, NULL, NULL, program(e), 0, false};
	sj_arr(&w->j, "locations");
	if (p >= 0)
		rt_sarif_location(&w->j, NULL, &s[0].f[p], w->root, NULL, -1);
	else if (prog.module)
		rt_sarif_location(&w->j, NULL, &prog, w->root, NULL, -1);
	sj_end(&w->j, ']');
}

static void put_result(sw *w, const err_view *e, uint32_t err)
{
	sj *j = &w->j;
	sarif_rule_info r;
	rt_sarif_rule_info(e->tool, e->kind, &r);
	sarif_stack s[MAX_STACKS];
	for (size_t i = 0; i < e->nst; i++)
		rt_sarif_stack(e->t, e->st[i].bt, &s[i]);
	char id[256];
	snprintf(id, sizeof id, "%s/%s", e->tool, e->kind);
	sj_obj(j, NULL);
	sj_str(j, "ruleId", id);
	sj_u64(j, "ruleIndex", rule_index(w, e->tool, e->kind));
	sj_str(j, "level", r.level);
	sj_text(j, "message", e->what);
	put_primary(w, e, s);
	put_fingerprint(w, e, s);
	if (e->nst)
		put_flows(w, e, s);
	put_related(w, e, s);
	put_result_props(w, e, err);
	sj_end(j, '}');
	for (size_t i = 0; i < e->nst; i++)
		free(s[i].f);
}

/* --- the log --- */

typedef struct sarif_model {
	const rt_trace *const *traces;
	size_t n;
} sarif_model;

static void put_base_ids(sw *w)
{
	size_t n = strlen(w->root);
	char *uri = malloc(n + 9);
	if (!uri)
		abort();
	snprintf(uri, n + 9, "file://%s%s", w->root, n && w->root[n - 1] == '/' ? "" : "/");
	sj_obj(&w->j, "originalUriBaseIds");
	sj_obj(&w->j, "SRCROOT");
	sj_str(&w->j, "uri", uri);
	sj_text(&w->j, "description", "The source root (rtrace's --source-root).");
	sj_end(&w->j, '}');
	sj_end(&w->j, '}');
	free(uri);
}

static void put_log(sw *w, const rt_trace *const *docs, size_t n)
{
	sj *j = &w->j;
	each_error(w, docs, n, note_rule);
	sj_obj(j, NULL);
	sj_str(j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	sj_str(j, "version", "2.1.0");
	sj_arr(j, "runs");
	sj_obj(j, NULL);
	put_driver(w);
	if (w->root)
		put_base_ids(w);
	sj_arr(j, "results");
	each_error(w, docs, n, put_result);
	sj_end(j, ']');
	sj_str(j, "columnKind", "utf16CodeUnits");
	sj_end(j, '}');
	sj_end(j, ']');
	sj_end(j, '}');
}

/* The documents of each trace: those it holds, or memcheck's of its
 * findings, built for this write and freed after. */
static void fill(rt_out *o, const void *model, const void *opts)
{
	const sarif_model *m = model;
	const rt_sarif_write_opts *so = opts;
	rt_trace **built = calloc(m->n ? m->n : 1, sizeof *built);
	const rt_trace **docs = calloc(m->n ? m->n : 1, sizeof *docs);
	if (!built || !docs)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		if (!rt_vgxml_doc_count(m->traces[i]))
			built[i] = rt_vgxml_build(m->traces[i], so ? &so->vg : NULL);
		docs[i] = built[i] ? built[i] : m->traces[i];
	}
	sw w = {{o, 0, {false}}, so && so->source_root && *so->source_root ? so->source_root : NULL, NULL, 0, 0,
		NULL, 0, 0};
	put_log(&w, docs, m->n);
	for (size_t i = 0; i < m->n; i++)
		rt_trace_free(built[i]);
	free(built);
	free(docs);
	free(w.rules);
	free(w.prints);
}

int rt_sarif_write_fd(const rt_trace *const *traces, size_t n, int fd, const rt_sarif_write_opts *opts)
{
	sarif_model m = {traces, n};
	return rt_out_write_fd(fd, fill, &m, opts);
}

char *rt_sarif_write_mem(const rt_trace *const *traces, size_t n, const rt_sarif_write_opts *opts,
			 size_t *len)
{
	sarif_model m = {traces, n};
	return rt_out_write_mem(len, fill, &m, opts);
}
