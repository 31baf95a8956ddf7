/* rtrace run's prefaulting of the traces' pages (run_prefault.c). */
#ifndef RT_CLI_RUN_PREFAULT_H
#define RT_CLI_RUN_PREFAULT_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct run_prefault run_prefault;

/* Starts a thread that follows the traces the manifest names, or, when
 * raw_suffix (the records in PATH.raw, compressed by rtrace run), those
 * run_prefault_follow names, and puts the page-cache pages of the chunks
 * their tracers reserved and did not take yet in place, so that the
 * program's first stores to them take no page allocation. NULL when it
 * cannot (then nothing changes but the program's faults). */
run_prefault *run_prefault_start(const char *manifest, bool raw_suffix);
/* The trace PATH of process pid is to be followed (the compressor's
 * traces longer than one chunk; pf NULL: nothing). */
void run_prefault_follow(run_prefault *pf, pid_t pid, const char *path);
/* Stops the thread and frees pf (NULL: nothing). */
void run_prefault_stop(run_prefault *pf);

#endif
