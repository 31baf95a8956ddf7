/* rtrace run's compression of the traces while the program runs
 * (run_compress.c). */
#ifndef RT_CLI_RUN_COMPRESS_H
#define RT_CLI_RUN_COMPRESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "run_prefault.h"

typedef struct run_compress run_compress;

/* Follows the traces the manifest names, compressing at zstd level;
 * those that get a writer (longer than one chunk) are handed to pf. */
run_compress *run_compress_new(const char *manifest, int level, run_prefault *pf);
/* Waits for pid as waitpid(pid, status, 0) does, compressing the traces'
 * complete chunks meanwhile; returns what waitpid returned. */
pid_t run_compress_wait(run_compress *z, pid_t pid, int *status);
/* The program ended: every trace whose process has ended is compressed
 * to its end; those of processes still running are left as they are.
 * The pf given to run_compress_new is not used (it may be stopped). */
void run_compress_finish(run_compress *z);

#endif
