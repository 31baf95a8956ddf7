/* The lifetime filter (lifetime.c): a per-thread delay queue of memory
 * CALL records from which a release drops its own thread's allocation
 * when that is still held, leaving a count per stack (DROPPED records). */
#ifndef RT_LIFETIME_H
#define RT_LIFETIME_H

#include "preload.h"

#define RT_LIFE_MAX 4096u /* the longest ring (calls) */

/* After the options: the thread-end destructor. */
void rt_life_init(void);
/* Queues a memory CALL record (rt_opt.min_lifetime set). */
void rt_life_hold(uint64_t index, int kind, int fn, uint64_t res_id, uint64_t size, uint64_t bt);
/* The release free_index of the block allocated at alloc_index: true
 * when that allocation was still held in this thread's ring and both
 * are dropped (counted), false when the release is to be recorded. */
bool rt_life_drop(uint64_t free_index, uint64_t alloc_index);
/* Writes this thread's held records (before a record of another kind
 * that must follow them). */
void rt_life_commit(void);
/* rt_life_commit and the dropped counts: the trace is then complete for
 * this thread (exit, fork, exec, a stop of the threads, thread end). */
void rt_life_flush(void);

#endif
