/* /proc/self/maps, read and parsed once for the whole tracer: the MODULE
 * records (record.c) and the leak check's mappings (leak_stop.c). Both
 * run where malloc may not be called (inside an interposer, or with the
 * heap table locked at exit), so the reader takes its memory from mmap
 * and the parser works in place, allocation-free and async-signal-safe. */
#ifndef RT_MAPS_H
#define RT_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line, "lo-hi perms offset dev inode path". */
typedef struct rt_maps_line {
	uintptr_t lo, hi;
	uint64_t off;
	bool r, w, x;
	const char *path; /* into the text: the rest of the line, maybe empty */
	size_t path_len;
} rt_maps_line;

/* The whole file, NUL-terminated, in pages of its own (*cap bytes, for
 * munmap); *len: its length. NULL (and errno) when it cannot be read. */
char *rt_maps_read(size_t *len, size_t *cap);
/* The executable mappings at least (the lines MODULE records are made
 * of), in rt_maps_read's format, asked of the kernel mapping by mapping
 * where it can (PROCMAP_QUERY); in a forked child, its parent's last
 * list while ld.so has loaded and unloaded nothing since (maps.c), lent
 * (*cap = 0). Given back with rt_maps_release. */
char *rt_maps_read_modules(size_t *len, size_t *cap);
void rt_maps_release(char *text, size_t cap);
/* The path of the file mapped at addr, as maps names it (maps.c). */
bool rt_maps_file_at(uintptr_t addr, char *out, size_t cap);
/* The next well-formed line at *at (lines end with a newline or a NUL),
 * *at moved past it; false at end. */
bool rt_maps_next(const char **at, const char *end, rt_maps_line *l);
/* Reserves the descriptor the reader takes when the program has left
 * none free (at start, and again in a forked child). */
void rt_maps_reserve(void);

#endif
