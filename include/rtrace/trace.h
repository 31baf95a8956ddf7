/* rtrace trace model: everything a resource trace says, independent of the
 * format it was read from. Readers fill it, filters prune it, writers print
 * it. Strings and backtraces are interned: one copy per distinct value. */
#ifndef RTRACE_TRACE_H
#define RTRACE_TRACE_H

#include "rtrace/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_NONE UINT32_MAX

enum rt_call_kind {
	RT_CALL_DEAD = 0, /* removed by a filter, awaiting compaction */
	RT_CALL_ALLOC = 1,
	RT_CALL_FREE = 2,
};

enum { RT_CALL_HAS_TIMESTAMP = 0x01 };
/* A release the tracer's lifetime filter dropped (rt_dropped) came
 * after the call delivered before this one: heaptrack's "last
 * allocation" was reset in between. */
enum { RT_CALL_AFTER_DROP = 0x02 };

/* Header filter field bits, in the order the text protocol prints them. */
enum {
	RT_FILTER_LEAKS = 0x01,
	RT_FILTER_COMPRESS = 0x02,
	RT_FILTER_RESOLVE = 0x04,
};

/* One function call record (allocation or release of a resource). */
typedef struct rt_call {
	uint64_t index;        /* record index as the tracer numbered it */
	uint64_t res_id;       /* resource identifier (address, fd, ...) */
	uint64_t size;         /* resource size; 0 for releases */
	uint64_t timestamp_us; /* microseconds since midnight */
	uint32_t context;      /* context mask, 0 = no context */
	uint32_t fn;           /* function name, a string id */
	uint32_t bt;           /* backtrace id or RT_NONE */
	uint32_t args;         /* argument block id or RT_NONE */
	uint8_t res_type;      /* resource registry slot + 1, 0 = untyped */
	uint8_t kind;          /* enum rt_call_kind */
	uint8_t flags;         /* RT_CALL_HAS_TIMESTAMP */
} rt_call;

/* A backtrace frame: return address and, once resolved, the text the text
 * protocol prints after it ("func() at file.c:12", "func() from
 * /lib/x.so", "from /bin/app"). Only the text writer prints the text;
 * every other writer uses the frame's details (rt_trace_frame_info),
 * which the resolver and the readers record beside it. */
typedef struct rt_frame {
	uint64_t addr;
	uint32_t text; /* string id or RT_NONE */
} rt_frame;

typedef struct rt_kv {
	const char *key, *value;
} rt_kv;

/* An executable mapping of a module. The binary trace also says where in
 * the file it starts and, for modules loaded or unloaded mid-run
 * (dlopen/dlclose), during which calls it was mapped: the resolver needs
 * both when another module later took the same addresses. */
typedef struct rt_mmap {
	const char *module;
	uint64_t from, to;
	uint64_t offset;      /* file offset of `from`, or RT_OFFSET_UNKNOWN */
	uint64_t since, until; /* mapped for call indices [since, until) */
} rt_mmap;

#define RT_OFFSET_UNKNOWN UINT64_MAX

typedef struct rt_context {
	uint32_t id;
	const char *name;
} rt_context;

#define RT_MAX_RESOURCES 32

typedef struct rt_resource {
	uint32_t mask;     /* registry id as printed: 1 << (n - 1) */
	const char *type;  /* e.g. "memory" */
	const char *desc;  /* e.g. "memory allocation in bytes" */
	const char *flags; /* raw flag list ("refcount"), or NULL */
	bool refcount;
	bool removed; /* dropped by a resource filter */
} rt_resource;

typedef struct rt_comment {
	uint64_t after; /* index of the last call before it, 0 if none */
	const char *text;
} rt_comment;

typedef struct rt_attachment {
	const char *name, *path;
} rt_attachment;

typedef struct rt_trace rt_trace;

RTRACE_API rt_trace *rt_trace_new(void);
RTRACE_API void rt_trace_free(rt_trace *t);

/* Strings owned by the trace. */
RTRACE_API const char *rt_trace_strdup(rt_trace *t, const char *s, size_t len);
RTRACE_API uint32_t rt_trace_intern(rt_trace *t, const char *s, size_t len);
RTRACE_API const char *rt_trace_str(const rt_trace *t, uint32_t id);

/* Header: ordered key/value pairs. Setting an existing key replaces it. */
RTRACE_API void rt_trace_set_header(rt_trace *t, const char *key, const char *value);
RTRACE_API const char *rt_trace_header(const rt_trace *t, const char *key);
RTRACE_API size_t rt_trace_header_count(const rt_trace *t);
RTRACE_API const rt_kv *rt_trace_header_at(const rt_trace *t, size_t i);
/* The header's filter field as RT_FILTER_* bits. */
RTRACE_API unsigned rt_trace_filter_bits(const rt_trace *t);

/* Adds a mapping with an unknown file offset, mapped for the whole trace
 * (what the text protocol says). */
RTRACE_API void rt_trace_add_mmap(rt_trace *t, const char *module, uint64_t from, uint64_t to);
/* Adds m (its module string is copied); returns its index. */
RTRACE_API size_t rt_trace_add_mmap_full(rt_trace *t, const rt_mmap *m);
/* Marks mapping i unmapped from call index `until` on (UINT64_MAX: never). */
RTRACE_API void rt_trace_set_mmap_until(rt_trace *t, size_t i, uint64_t until);
RTRACE_API size_t rt_trace_mmap_count(const rt_trace *t);
RTRACE_API const rt_mmap *rt_trace_mmap_at(const rt_trace *t, size_t i);
/* The module mapped at addr (the latest mapping holding it), or NULL. */
RTRACE_API const char *rt_trace_module_at(const rt_trace *t, uint64_t addr);

RTRACE_API void rt_trace_add_context(rt_trace *t, uint32_t id, const char *name);
RTRACE_API size_t rt_trace_context_count(const rt_trace *t);
RTRACE_API const rt_context *rt_trace_context_at(const rt_trace *t, size_t i);
RTRACE_API void rt_trace_clear_contexts(rt_trace *t);

/* Returns the slot + 1 of the resource type (as rt_call.res_type), adding
 * it when new; 0 when the registry is full. */
RTRACE_API uint8_t rt_trace_add_resource(rt_trace *t, uint32_t mask, const char *type,
			      const char *desc, const char *flags);
RTRACE_API uint8_t rt_trace_find_resource(const rt_trace *t, const char *type, size_t len);
RTRACE_API size_t rt_trace_resource_count(const rt_trace *t);
RTRACE_API rt_resource *rt_trace_resource_at(rt_trace *t, size_t i);
RTRACE_API const rt_resource *rt_trace_resource_get(const rt_trace *t, uint8_t res_type);
/* Live (not removed) resource types. */
RTRACE_API size_t rt_trace_resource_live(const rt_trace *t);

RTRACE_API void rt_trace_add_comment(rt_trace *t, uint64_t after, const char *text, size_t len);
RTRACE_API size_t rt_trace_comment_count(const rt_trace *t);
RTRACE_API const rt_comment *rt_trace_comment_at(const rt_trace *t, size_t i);

RTRACE_API void rt_trace_add_attachment(rt_trace *t, const char *name, const char *path);
RTRACE_API size_t rt_trace_attachment_count(const rt_trace *t);
RTRACE_API const rt_attachment *rt_trace_attachment_at(const rt_trace *t, size_t i);

/* Backtraces: each distinct frame sequence is stored once. Until the
 * first rt_trace_bt_frames the frames are a tree (shared outer frames),
 * laid out as an array by that call: call it from one thread. */
RTRACE_API uint32_t rt_trace_intern_bt(rt_trace *t, const rt_frame *frames, uint32_t n);
RTRACE_API uint32_t rt_trace_bt_count(const rt_trace *t);
RTRACE_API uint32_t rt_trace_bt_len(const rt_trace *t, uint32_t bt);
RTRACE_API const rt_frame *rt_trace_bt_frames(const rt_trace *t, uint32_t bt);
/* The frames of bt one at a time, innermost first, where they are kept
 * (the tree or the array): no array of every stack is laid out for
 * them. Valid until the next rt_trace_bt_frames or rt_trace_intern_bt. */
typedef struct rt_bt_iter {
	const rt_trace *t;
	uint64_t at;
	uint32_t left;
} rt_bt_iter;
RTRACE_API void rt_trace_bt_iter(const rt_trace *t, uint32_t bt, rt_bt_iter *it);
/* The next frame into *f; false after the last. */
RTRACE_API bool rt_trace_bt_next(rt_bt_iter *it, rt_frame *f);
/* The frames of bt into f (rt_trace_bt_len of them), where the trace
 * keeps them, as rt_trace_bt_iter reads them; returns how many. */
RTRACE_API uint32_t rt_trace_bt_copy(const rt_trace *t, uint32_t bt, rt_frame *f);

/* What is known of a frame, beyond the text printed after its address:
 * the module and the inline chain, as a resolver found them, Valgrind XML
 * said them, or a resolved text trace's frame text says them (then module
 * is RT_NONE unless the text names it: the memory map tells). locs[0] is the innermost
 * function at the frame's own file:line; locs[k] is the function that
 * locs[k - 1] was inlined into, at the file:line of that inlined call; the
 * last entry is the function that was really called. */
typedef struct rt_srcloc {
	uint32_t fn;    /* function name as printed (demangled), or RT_NONE */
	uint32_t file;  /* source file path, or RT_NONE */
	uint32_t line;  /* 0 when unknown */
	uint32_t flags; /* RT_SRCLOC_* */
	/* The linkage (mangled) name fn was demangled from, as a string id
	 * + 1; 0 when fn is the linkage name itself or none is known (an
	 * initializer that leaves it out says so). Valgrind's suppressions
	 * match it. */
	uint32_t linkage;
} rt_srcloc;

enum { RT_SRCLOC_DEMANGLED = 0x01 /* fn is a demangled C++ name */ };

typedef struct rt_frame_info {
	uint32_t module; /* module path, string id or RT_NONE */
	uint32_t n;      /* entries in locs, 0 when no function is known */
	const rt_srcloc *locs;
} rt_frame_info;

/* Records what is known of frame f (keyed by its address and text);
 * locs is copied. Setting it again replaces it. */
RTRACE_API void rt_trace_set_frame_info(rt_trace *t, const rt_frame *f, uint32_t module,
			     const rt_srcloc *locs, uint32_t n);
/* Fills *info for frame f; false when nothing was recorded for it. */
RTRACE_API bool rt_trace_frame_info(const rt_trace *t, const rt_frame *f, rt_frame_info *info);

/* Argument blocks ("$name = value" lines of a call). */
RTRACE_API uint32_t rt_trace_add_args(rt_trace *t, const rt_kv *args, uint32_t n);
RTRACE_API uint32_t rt_trace_args_len(const rt_trace *t, uint32_t args);
RTRACE_API const rt_kv *rt_trace_args_at(const rt_trace *t, uint32_t args);
RTRACE_API void rt_trace_release_args(rt_trace *t, uint32_t args);
/* The value of argument `key` of call c, or NULL. */
RTRACE_API const char *rt_trace_call_arg(const rt_trace *t, const rt_call *c, const char *key);
/* Whether res_type is the resource type named `type` ("fd", "memory"). */
RTRACE_API bool rt_trace_res_is(const rt_trace *t, uint8_t res_type, const char *type);
/* A descriptor's release that found nothing to release (a close that
 * failed with EBADF: the tracer records it with "$error = EBADF"). */
RTRACE_API bool rt_trace_is_bad_close(const rt_trace *t, const rt_call *c);
/* What descriptor allocation c opened, as valgrind --track-fds names it:
 * its path, else "<AF_INET SOCK_STREAM socket from socket>" or "<pipe>". */
RTRACE_API void rt_trace_fd_describe(const rt_trace *t, const rt_call *c, char *buf, size_t n);

/* Calls, in record order. Pointers stay valid until the next append or
 * compaction. */
RTRACE_API rt_call *rt_trace_append_call(rt_trace *t, const rt_call *c);

/* Calls the tracer's lifetime filter (`rtrace run --min-lifetime`) left
 * out of the trace, per allocation function, stack and resource: that
 * many allocations, each released again soon after by its own thread,
 * their bytes, and how many of those releases heaptrack counts as
 * temporary. Added ones with the same keys are summed. */
typedef struct rt_dropped {
	uint32_t fn, bt; /* string id, backtrace id or RT_NONE */
	uint8_t res_type;
	uint64_t index; /* the first dropped allocation's call index */
	uint64_t count, bytes, temporary;
} rt_dropped;
RTRACE_API void rt_trace_add_dropped(rt_trace *t, const rt_dropped *d);
RTRACE_API size_t rt_trace_dropped_count(const rt_trace *t);
RTRACE_API const rt_dropped *rt_trace_dropped_at(const rt_trace *t, size_t i);
/* The same, to rewrite (the resolver's backtraces). */
RTRACE_API rt_dropped *rt_trace_dropped(rt_trace *t);
RTRACE_API size_t rt_trace_call_count(const rt_trace *t);
RTRACE_API rt_call *rt_trace_calls(rt_trace *t);
RTRACE_API const rt_call *rt_trace_calls_const(const rt_trace *t);
/* The time of the last call read with a time stamp, microseconds as
 * rt_call's: kept by the readers for every call they read, those a
 * streaming reader's caller did not keep (rt_read_opts.on_call) too, so
 * that a trace's elapsed time does not depend on what a filter kept.
 * false when no call had one. */
RTRACE_API void rt_trace_saw_call(rt_trace *t, const rt_call *c);
RTRACE_API bool rt_trace_last_timestamp(const rt_trace *t, uint64_t *us);
/* Marks a call removed; its arguments are released at once. */
RTRACE_API void rt_trace_kill_call(rt_trace *t, rt_call *c);
RTRACE_API size_t rt_trace_dead_count(const rt_trace *t);
/* Drops removed calls, keeping order. Returns how many remain. */
RTRACE_API size_t rt_trace_compact(rt_trace *t);
/* Sorts calls by index when a reader saw them out of order. */
RTRACE_API void rt_trace_sort_calls(rt_trace *t);

/* Timestamp precision used when printing: 3 (ms, sp-rtrace) or 6 (us). */
RTRACE_API void rt_trace_set_ts_digits(rt_trace *t, int digits);
RTRACE_API int rt_trace_ts_digits(const rt_trace *t);

#ifdef __cplusplus
}
#endif
#endif
