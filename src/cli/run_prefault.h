/* rtrace run's prefaulting of the traces' pages (run_prefault.c). */
#ifndef RT_CLI_RUN_PREFAULT_H
#define RT_CLI_RUN_PREFAULT_H

#include <stdbool.h>

typedef struct run_prefault run_prefault;

/* Starts a thread that follows the traces the manifest names (their
 * records in PATH.raw when raw_suffix) and puts the page-cache pages of
 * the chunks their tracers reserved and did not take yet in place, so
 * that the program's first stores to them take no page allocation.
 * NULL when it cannot (then nothing changes but the program's faults). */
run_prefault *run_prefault_start(const char *manifest, bool raw_suffix);
/* Stops the thread and frees pf (NULL: nothing). */
void run_prefault_stop(run_prefault *pf);

#endif
