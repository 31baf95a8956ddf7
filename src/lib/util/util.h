/* Internal helpers of librtrace: allocation that cannot fail silently,
 * growable arrays, an arena for model strings and a string interner. */
#ifndef RT_UTIL_H
#define RT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

void *rt_xmalloc(size_t n);
void *rt_xcalloc(size_t n, size_t size);
void *rt_xrealloc(void *p, size_t n);
char *rt_xstrdup(const char *s);
/* A formatted string, malloc'ed; dies on out of memory like the others. */
char *rt_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Ensures *cap >= need for an array of elem-sized items, growing by 1.5x. */
void rt_grow(void **p, size_t *cap, size_t need, size_t elem);

/* An open-addressing index of id + 1 per slot (0: free), linear probing:
 * grown to twice its slots (first: its size when it has none), and ids
 * 0 to n - 1 placed again at hash(ctx, id)'s slot or the next free one. */
void rt_index_grow(uint32_t **slots, size_t *nslots, size_t first, size_t n,
		   uint64_t (*hash)(const void *ctx, size_t id), const void *ctx);

#define RT_PUSH(arr, n, cap, value)                                        \
	do {                                                               \
		if ((n) == (cap))                                          \
			rt_grow((void **)&(arr), &(cap), (n) + 1, sizeof *(arr)); \
		(arr)[(n)++] = (value);                                    \
	} while (0)

/* Bump allocator: everything parsed into a model lives until the model dies. */
typedef struct rt_arena {
	struct rt_arena_chunk *head;
	char *cur, *end;
} rt_arena;

void rt_arena_init(rt_arena *a);
void rt_arena_free(rt_arena *a);
void *rt_arena_alloc(rt_arena *a, size_t n);
char *rt_arena_strndup(rt_arena *a, const char *s, size_t n);
/* Where the arena stands, to give back everything allocated after it
 * (rt_arena_rewind); only valid while nothing allocated before is freed. */
typedef struct rt_arena_mark {
	struct rt_arena_chunk *head;
	char *cur, *end;
} rt_arena_mark;

rt_arena_mark rt_arena_get_mark(const rt_arena *a);
void rt_arena_rewind(rt_arena *a, rt_arena_mark m);

/* String interner: equal strings get the same small id; ids index strs[]. */
typedef struct rt_strtab {
	rt_arena *arena;
	const char **strs;
	uint32_t *lens;
	size_t n, cap;
	uint64_t *slots; /* hash << 32 | (id + 1), 0 = empty */
	size_t nslots;
} rt_strtab;

void rt_strtab_init(rt_strtab *t, rt_arena *arena);
void rt_strtab_free(rt_strtab *t);
uint32_t rt_strtab_intern(rt_strtab *t, const char *s, size_t len);
/* Forgets the strings with ids >= n, most recent first (their bytes stay
 * in the arena: rewind it separately). */
void rt_strtab_truncate(rt_strtab *t, size_t n);

static inline uint64_t rt_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint64_t rt_hash_bytes(const void *p, size_t n);

/* Hex digit values + 1, by byte (0: not a hex digit). */
extern const uint8_t rt_hexval[256];

/* Streams a file descriptor to a line parser, in chunks: what a chunk
 * ends with (an incomplete line) is kept for the next one. */
typedef struct rt_stream {
	/* Parses the complete lines at the start of buf[0, len); returns the
	 * bytes used, or -1 to stop (the parser has its error). */
	ssize_t (*feed)(void *ctx, const char *buf, size_t len);
	/* The input ended with buf[0, len) and no newline after it. */
	int (*last)(void *ctx, const char *buf, size_t len);
	/* errnum: a read error; 0: a line longer than max_line, buf[0, len)
	 * its start. Returns the reader's error status. */
	int (*error)(void *ctx, int errnum, const char *buf, size_t len);
	void *ctx;
	size_t chunk, max_line;
	uint64_t *bytes; /* counts the bytes read */
} rt_stream;

/* Returns 0, or what feed/last/error returned to stop. */
int rt_stream_fd(int fd, const rt_stream *st);

/* Length of the well-formed UTF-8 sequence at s (n bytes available; s[0]
 * >= 0x80), 0 when it is not one (overlong forms, surrogates, beyond
 * U+10FFFF, cut short): the writers of text formats escape such bytes. */
size_t rt_utf8_len(const unsigned char *s, size_t n);

/* The readers' "found ..." in "expected X, found Y": the byte at s
 * ("'x'", "a space", "byte 0x01") or "end of line"; buf: 16 bytes. */
const char *rt_diag_found(const char *s, const char *end, char *buf, size_t n);

#endif
