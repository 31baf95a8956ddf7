/* The manifest through which the tracer tells `rtrace run` which trace
 * files it writes (format/run_env.h), read as it grows (run_manifest.c). */
#ifndef RT_CLI_RUN_MANIFEST_H
#define RT_CLI_RUN_MANIFEST_H

#include <sys/types.h>

/* Calls on(arg, pid, path) for each "PID PATH" entry (a trace file)
 * written after the first *seen bytes of the manifest, and moves *seen
 * past the complete entries read. */
void run_manifest_read(const char *manifest, off_t *seen, void (*on)(void *, pid_t, const char *), void *arg);

#endif
