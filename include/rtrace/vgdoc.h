/* Valgrind's findings carried by a trace: each <valgrindoutput> document
 * read from a Valgrind XML file as a tree of elements, so that nothing of
 * it is lost on the way to another format and back (the memcheck document
 * of rtrace's own findings is built in a trace of its own, when written:
 * rt_vgxml_build). Stacks are not stored as elements: a <stack> node holds
 * a backtrace of the trace, and its frames' obj/fn/dir/file/line are the
 * frames' details (rt_trace_frame_info), one rt_frame per machine address
 * with the inline chain Valgrind prints as several <frame>s. */
#ifndef RTRACE_VGDOC_H
#define RTRACE_VGDOC_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	RT_VGXML_RAW = 0x01,   /* text is raw XML, written unescaped (<usercomment>) */
	RT_VGXML_CDATA = 0x02, /* text came from, and goes to, CDATA blocks (<rawtext>) */
};

/* One element. Node ids are indices into the trace's node array; links
 * are node ids or RT_NONE. An element has either text or children. */
typedef struct rt_vgxml_node {
	uint32_t name;   /* element name, string id */
	uint32_t text;   /* character data, string id; RT_NONE when absent */
	uint32_t bt;     /* <stack>: the frames as a backtrace id, else RT_NONE */
	uint32_t parent; /* RT_NONE for a document's root */
	uint32_t child;  /* first child */
	uint32_t last;   /* last child (for appending) */
	uint32_t next;   /* next sibling */
	uint32_t flags;  /* RT_VGXML_RAW, RT_VGXML_CDATA */
} rt_vgxml_node;

/* Builds: a new element as the last child of parent (RT_NONE: a new
 * document's root <valgrindoutput>). Returns its id. */
RTRACE_API uint32_t rt_vgxml_add(rt_trace *t, uint32_t parent, const char *name);
/* Same with character data (len bytes, copied). */
RTRACE_API uint32_t rt_vgxml_add_text(rt_trace *t, uint32_t parent, const char *name,
			const char *text, size_t len);
/* A <stack> child of parent holding backtrace bt. */
RTRACE_API uint32_t rt_vgxml_add_stack(rt_trace *t, uint32_t parent, uint32_t bt);
/* Sets or replaces a node's text (RT_NONE clears it). */
RTRACE_API void rt_vgxml_set_text(rt_trace *t, uint32_t node, uint32_t text);
RTRACE_API void rt_vgxml_set_flags(rt_trace *t, uint32_t node, uint32_t flags);
/* Removes node and everything added after it (a streaming reader drops
 * each top-level element once its consumer has seen it); the node is
 * unlinked from its parent. Interned strings and backtraces stay. */
RTRACE_API void rt_vgxml_truncate(rt_trace *t, uint32_t node);

RTRACE_API size_t rt_vgxml_node_count(const rt_trace *t);
RTRACE_API const rt_vgxml_node *rt_vgxml_node_at(const rt_trace *t, uint32_t id);

/* Documents, in file order: their root nodes. A document whose root was
 * truncated away no longer counts. */
RTRACE_API size_t rt_vgxml_doc_count(const rt_trace *t);
RTRACE_API uint32_t rt_vgxml_doc_root(const rt_trace *t, size_t i);

/* The element's name ("" for a bad id). */
RTRACE_API const char *rt_vgxml_name(const rt_trace *t, uint32_t node);
/* The first child named name after child `after` (RT_NONE: from the
 * first child); RT_NONE when there is none. */
RTRACE_API uint32_t rt_vgxml_find(const rt_trace *t, uint32_t node, const char *name, uint32_t after);
/* The text of the first child named name, or NULL. */
RTRACE_API const char *rt_vgxml_child_text(const rt_trace *t, uint32_t node, const char *name);
/* The node's own text, or NULL. */
RTRACE_API const char *rt_vgxml_text(const rt_trace *t, uint32_t node);

#ifdef __cplusplus
}
#endif
#endif
