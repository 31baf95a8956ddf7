/* Internals of the Valgrind XML reader shared by its files: the input and
 * its documents (vgxml_read.c), the elements expat reports, as the model's
 * nodes (vgxml_tree.c), the byte-level work done before expat sees the
 * input (vgxml_repair.c: element names, the document head, protocol 1-3
 * repairs) and the frames of a <stack> (vgxml_stack.c). */
#ifndef RT_VGXML_READ_INT_H
#define RT_VGXML_READ_INT_H

#include "rtrace/trace.h"
#include "rtrace/vgxml.h"
#include "model/trace_int.h"
#include "vgxml/vgdoc_int.h"

#include <expat.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- element names (vgxml_repair.c) ---- */

enum {
	VGXML_NAME_KNOWN = 0x01, /* in a protocol or written by Valgrind 3.19 */
	VGXML_NAME_CONTAINER = 0x02, /* whitespace-only text means "empty" */
};

/* Element names with a role in the reader, as indices of the known-name
 * table; rt_vgxml_known returns one of these for them. */
enum vgxml_name_id {
	VGXML_VALGRINDOUTPUT = 0,
	VGXML_PROTOCOLVERSION,
	VGXML_USERCOMMENT,
	VGXML_RAWTEXT,
	VGXML_STACK,
	VGXML_FRAME,
	VGXML_IP,
	VGXML_OBJ,
	VGXML_FN,
	VGXML_DIR,
	VGXML_FILE,
	VGXML_LINE,
	VGXML_ERROR,
	VGXML_NAMED_ROLES /* first index of the other known names */
};

/* Index of a known element name, or -1. */
int rt_vgxml_known(const char *name, size_t len);
/* VGXML_NAME_* flags of known name index i. */
unsigned rt_vgxml_known_flags(int i);
/* Longer than every known name. */
#define VGXML_NAME_MAX 32

/* ---- before expat (vgxml_repair.c) ---- */

/* What the start of a document says: its protocol version (0 when there
 * is no <protocolversion> first child) and where the protocol 1-3 spec's
 * typo `<protocolversion>N<protocolversion>` needs a '/' (the offset just
 * after the second '<'; SIZE_MAX when the tag is closed properly). */
typedef struct vgxml_head {
	unsigned version;
	size_t typo_at;
} vgxml_head;

/* Scans the head of a document in p[0..n); false when more bytes are
 * needed to tell (never when eof). */
bool rt_vgxml_head_scan(const char *p, size_t n, bool eof, vgxml_head *h);

/* The protocol 1-3 repair: escapes a '&' that starts no valid reference
 * and a '<' that starts no known element tag, end tag, comment, CDATA
 * section, declaration or processing instruction. <usercomment> content,
 * raw XML by the spec, passes as it is. */
typedef struct vgxml_repair {
	int mode;          /* text, comment, CDATA, PI, declaration, usercomment */
	uint64_t repaired; /* characters escaped */
	uint64_t lines;    /* newlines passed, for the first repair's position */
	uint64_t first_line;
	uint32_t first_col;
	uint32_t col;
} vgxml_repair;

enum vgxml_repair_stop {
	VGXML_REPAIR_MORE,  /* all consumed, or the rest needs more input */
	VGXML_REPAIR_SPLIT, /* stopped before a document start or after a
			     * document end: a piece boundary */
};

/* Repairs src[0..*n) into dst (room for 5 * *n + 8 bytes); sets *n to the
 * bytes consumed and *out to the bytes written. */
enum vgxml_repair_stop rt_vgxml_repair(vgxml_repair *r, const char *src, size_t *n, bool eof,
				       char *dst, size_t *out);

/* ---- <stack> frames (vgxml_stack.c) ---- */

typedef struct vgxml_str {
	const char *s; /* NULL when the element is absent */
	size_t len;
} vgxml_str;

/* One <frame> as read. */
typedef struct vgxml_frame {
	uint64_t ip;
	vgxml_str obj, fn, dir, file;
	uint32_t line; /* 0 when absent */
} vgxml_frame;

/* How many frames from f[0] on (n of them) are one machine frame:
 * Valgrind's inline chain, consecutive frames at the same ip and object
 * that differ in fn/file/line. Identical frames (recursion) stay apart. */
uint32_t rt_vgxml_chain_len(const vgxml_frame *f, uint32_t n);

/* The rt_frame of an inline chain f[0..n) (n >= 1): its address, the text
 * the rtrace text protocol prints after it (as sp-rtrace's resolver:
 * "fn() at dir/file:line", "fn() from obj", "fn()", "from obj") and, as
 * its details, the object and one source location per <frame>. *recorded
 * tells whether the trace's frame details changed. */
rt_frame rt_vgxml_make_frame(rt_trace *t, const vgxml_frame *f, uint32_t n, bool *recorded);

/* Stacks already seen, by their <frame>s' bytes, so that a repeated
 * stack costs one hash and compare. */
typedef struct vgxml_stack_cache vgxml_stack_cache;

vgxml_stack_cache *rt_vgxml_stack_cache_new(void);
void rt_vgxml_stack_cache_free(vgxml_stack_cache *c);
/* The backtrace of the stack whose serialized frames are key[0..len), or
 * RT_NONE. */
uint32_t rt_vgxml_stack_cache_get(const vgxml_stack_cache *c, const char *key, size_t len,
				  uint64_t hash);
void rt_vgxml_stack_cache_put(vgxml_stack_cache *c, const char *key, size_t len, uint64_t hash,
			      uint32_t bt);

/* ---- the reader (vgxml_read.c, vgxml_tree.c) ---- */

enum vgxml_kind {
	VGXML_K_GENERIC,   /* an element node: text or children */
	VGXML_K_ROOT,      /* <valgrindoutput> */
	VGXML_K_UCOMMENT,  /* <usercomment>: its content as raw XML text */
	VGXML_K_RAWTEXT,   /* <rawtext>: its CDATA sections as text */
	VGXML_K_STACK,     /* <stack>: a backtrace, no child nodes */
	VGXML_K_FRAME,     /* <frame> of a stack */
	VGXML_K_FIELD,     /* <ip>, <obj>, <fn>, <dir>, <file>, <line> of a frame */
	VGXML_K_SKIP,      /* anything else inside a stack: not kept */
};

/* An open element. */
typedef struct vgxml_open {
	uint32_t node; /* RT_NONE inside a stack (and for the stack until it ends) */
	uint32_t name; /* index in the reader's name table */
	uint8_t kind;  /* enum vgxml_kind */
	uint8_t field; /* VGXML_K_FIELD: VGXML_IP .. VGXML_LINE */
	bool children; /* has child elements: its own text is dropped */
	bool cdata;    /* VGXML_K_RAWTEXT: a CDATA section was seen */
} vgxml_open;

/* An element name seen in the input. */
typedef struct vgxml_name {
	char *s;
	uint32_t len, hash;
	uint32_t id; /* string id in the trace, RT_NONE until needed */
	int known;   /* rt_vgxml_known index or -1 */
	bool warned; /* unknown, and said so */
} vgxml_name;

/* A <frame> of the stack being read: its fields' bytes in the stack's
 * key (see vgxml_tree.c). */
typedef struct vgxml_fref {
	uint32_t off[6], len[6]; /* by field - VGXML_IP */
	uint8_t have;            /* bit per field present */
} vgxml_fref;

/* A document whose root is open. */
typedef struct vgxml_doc {
	uint32_t root;
	uint64_t line;   /* where the root opened */
	uint64_t kept;   /* complete top-level elements */
	uint64_t cut_at; /* line where another document interrupted it */
	unsigned version;
} vgxml_doc;

/* A piece of input fed to expat: parser offsets [pstart, pend) came from
 * raw input offsets [rstart, rend), byte for byte when linear. */
typedef struct vgxml_piece {
	uint64_t pstart, pend, rstart, rend;
	bool linear;
} vgxml_piece;

#define VGXML_PIECES 8

enum vgxml_stop {
	VGXML_GOING,
	VGXML_END,    /* the root ended (parser suspended) */
	VGXML_NESTED, /* another document starts inside this one */
	VGXML_FAIL,   /* *err is filled in */
};

typedef struct vgxml_reader {
	rt_trace *t;
	const rt_vgxml_read_opts *o;
	rt_vgxml_stats *st;
	rt_diag *err;
	const char *file;
	XML_Parser xp;
	bool failed;

	/* input: the window p[pos..end) is unread; p[0] is at offset off */
	int fd;
	char *buf;
	const char *p;
	size_t pos, end, cap;
	uint64_t off;
	bool eof;
	uint64_t line; /* position of p[pos], 1-based, between sessions */
	uint32_t col;

	/* the parser's session: one document, or the rest of one */
	vgxml_piece pieces[VGXML_PIECES];
	unsigned npieces;
	uint64_t pfed;     /* bytes given to the parser */
	uint64_t line0;    /* raw position of the session's first byte */
	uint32_t col0;
	uint32_t pre;      /* synthetic bytes before it (a resumed root) */
	uint64_t typo_at;  /* raw offset where the head's '/' goes, or UINT64_MAX */
	uint64_t typo_line; /* its line in the session, 0-based, and column */
	uint32_t typo_col;
	uint64_t repair_from; /* raw offset from which protocol 1-3 repair runs */
	bool repair;
	vgxml_repair rep;
	enum vgxml_stop stop;
	uint64_t stop_idx; /* parser offset of the stop: after the root's end
			    * tag, or at the nested document's start */

	/* documents */
	vgxml_doc doc;
	bool in_doc; /* the root is open */
	uint32_t resume_root; /* the root a resumed session re-enters */
	vgxml_doc *susp;   /* documents interrupted by a nested one */
	size_t nsusp, csusp;

	/* elements */
	vgxml_open *stack;
	size_t depth, cstack;
	char *txt;
	size_t ntxt, ctxt;
	bool raw;          /* inside <usercomment> */
	size_t raw_depth;  /* elements open inside it */
	bool in_cdata;
	uint64_t top_line; /* where the open top-level element started */
	rt_str_mark top_mark; /* the strings before it */
	uint32_t top_nbts;
	bool top_recorded; /* it changed frame details */
	bool warned_attr, warned_ip;

	/* the stack being read */
	char *key;
	size_t nkey, ckey;
	vgxml_fref *frefs;
	size_t nfrefs, cfrefs;
	vgxml_frame *frames;
	size_t cframes;
	rt_frame *bt;
	size_t cbt;
	vgxml_stack_cache *cache;

	/* element names */
	vgxml_name *names;
	size_t nnames, cnames;
	uint32_t *slots; /* name index + 1, 0 = empty */
	size_t nslots;
	uint32_t names_max_id; /* highest string id of a name, or 0 */
} vgxml_reader;

/* vgxml_tree.c */
void rt_vgxml_tree_setup(vgxml_reader *r);
void rt_vgxml_tree_free(vgxml_reader *r);
/* The open top-level element of a document cut short is not kept. */
void rt_vgxml_tree_drop_open(vgxml_reader *r);
const char *rt_vgxml_open_name(const vgxml_reader *r, size_t depth);

/* vgxml_diag.c */
/* The input's line and column of the current expat event (of the
 * reader's own position between sessions). */
void rt_vgxml_where(const vgxml_reader *r, uint64_t *line, uint32_t *col);
/* A warning or the failure at the current event. */
void rt_vgxml_warn(vgxml_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_vgxml_fail(vgxml_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning at a given place. */
void rt_vgxml_warn_at(vgxml_reader *r, uint64_t line, uint32_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A failure at the reader's own position, between documents. */
void rt_vgxml_fail_here(vgxml_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The root closed: the session ends after its end tag. */
void rt_vgxml_doc_end(vgxml_reader *r);
/* A document starts at the current event, inside the open one. */
void rt_vgxml_doc_nested(vgxml_reader *r);

#endif
