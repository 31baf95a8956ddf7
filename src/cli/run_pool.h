/* rtrace run's pool of trace files made ahead (run_pool.c), which the
 * traced processes take instead of creating theirs (format/run_env.h,
 * RT_ENV_POOL). */
#ifndef RT_CLI_RUN_POOL_H
#define RT_CLI_RUN_POOL_H

#include <stddef.h>

typedef struct run_pool run_pool;

/* Starts the pool in the output directory dir and puts its slots' name
 * prefix (the value of RT_ENV_POOL) in name; NULL when it cannot be made
 * (the tracers then create their files themselves). */
run_pool *run_pool_start(const char *dir, char *name, size_t len);
/* Stops it and removes the files nobody took (NULL: nothing).
 * A process that looks for one afterwards creates its own. */
void run_pool_stop(run_pool *p);

#endif
