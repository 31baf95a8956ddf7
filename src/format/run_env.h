/* The environment protocol between `rtrace run` (src/cli/run.c) and the
 * tracer it preloads (src/preload/): the program's environment is the only
 * channel into a process started with exec, so the options travel as
 * RTRACE_* variables. Both sides include this header; no other file spells
 * a variable's name or a flag letter.
 *
 * Who sets what: `rtrace run` sets every variable below except
 * RT_ENV_PRELOAD (the user's) before it execs the program; the tracer
 * reads them once, in its constructor, and then removes them from environ,
 * with LD_PRELOAD restored to the user's, so that the program and what it
 * starts see the environment they were given; when children are followed
 * it adds them back only to the environment it passes to exec
 * (src/preload/env.c). RT_ENV_OURS lists the variables it removes. */
#ifndef RT_RUN_ENV_H
#define RT_RUN_ENV_H

/* Set by the user, read by `rtrace run`: the tracer library to preload
 * instead of the one next to rtrace or in the library directory. */
#define RT_ENV_PRELOAD "RTRACE_PRELOAD"

/* The LD_PRELOAD the user had, even empty (unset: none); the tracer gives
 * it back to LD_PRELOAD. */
#define RT_ENV_USER_LD_PRELOAD "RTRACE_USER_LD_PRELOAD"

/* Absolute directory the trace files go to (tracer default: "."). */
#define RT_ENV_DIR "RTRACE_DIR"

/* A file the tracer appends one entry to per process, each ended by a NUL
 * byte (a path may hold newlines): "PID PATH" for the trace it created,
 * "PID !PATH" when it could not write the one it tried (empty: none).
 * Without RT_FLAG_FOLLOW, also "PID >PROG" before an exec of PROG (made
 * absolute along PATH when exec looks it up), which will run untraced,
 * and "PID >" after that exec failed, taking it back. An entry without
 * its NUL was cut short and is no entry. */
#define RT_ENV_MANIFEST "RTRACE_MANIFEST"

/* Frames per backtrace, decimal (tracer default 32, at most 256). */
#define RT_ENV_DEPTH "RTRACE_DEPTH"

/* Option letters, any order; a letter absent is the default. Each is a
 * one-letter string, for run's format string; the tracer looks for its
 * first (only) character. */
#define RT_ENV_FLAGS "RTRACE_FLAGS"
#define RT_FLAG_NO_TIMESTAMPS "T" /* CALL records carry no time */
#define RT_FLAG_TRACE_FREES "f"   /* releases get backtraces too */
#define RT_FLAG_FOLLOW "c"        /* children started with exec are traced */
#define RT_FLAG_START_PAUSED "p"  /* tracing starts paused (toggle signal) */
#define RT_FLAG_LIBUNWIND "u"     /* every stack through libunwind */
#define RT_FLAG_CHECK_UNWIND "k"  /* both unwinders, differences reported */
/* rtrace run compresses the traces as they grow: the tracer writes each
 * trace's raw chunks to PATH and announces PATH; once the trace grows past
 * its first chunk, the tracer renames its file PATH RT_RAW_SUFFIX and
 * leaves PATH to rtrace run, which writes the compressed trace there and
 * removes the raw file. A short trace (one chunk at most) stays raw under
 * PATH, and rtrace run does nothing to it (docs/binary-format.md,
 * "Compressed traces"). */
#define RT_FLAG_COMPRESS "z"
#define RT_RAW_SUFFIX ".raw"

/* Signal number, decimal, that pauses and resumes tracing (0: none). */
#define RT_ENV_TOGGLE_SIGNAL "RTRACE_TOGGLE_SIGNAL"

/* Signal number, decimal, that asks for a leak check now (0: none). The
 * tracer runs the check at the next call of an interposed heap function
 * by any thread; a value sent with sigqueue (`rtrace check`) picks the
 * mode (RT_TF_CHECK_*; 0: full). `rtrace check` reads this variable back
 * from /proc/PID/environ (the process's initial environment, which the
 * removal from environ does not touch) to know which signal to send. */
#define RT_ENV_CHECK_SIGNAL "RTRACE_CHECK_SIGNAL"

/* The lifetime filter (`rtrace run --min-lifetime=N`): N, decimal, the
 * calls of its own thread within which a block's release drops both
 * records, or "Nms": the milliseconds (0 or unset: off). */
#define RT_ENV_MIN_LIFETIME "RTRACE_MIN_LIFETIME"

/* The leak check at exit: RT_ENV_LEAK_FULL (the tracer's default),
 * RT_ENV_LEAK_SUMMARY, or anything else for none (run passes the value of
 * --leak-check, "full", "summary" or "no", on unchanged). */
#define RT_ENV_LEAK_CHECK "RTRACE_LEAK_CHECK"
#define RT_ENV_LEAK_FULL "full"
#define RT_ENV_LEAK_SUMMARY "summary"

/* Comma-separated tracing modules (tracer default: "memory"). */
#define RT_ENV_MODULES "RTRACE_MODULES"
#define RT_ENV_MODULES_DEFAULT "memory"

/* Set (any value): the tracer prints its modules, one
 * "name<TAB>description<TAB>types" line each, and exits
 * (`rtrace run --list-modules`, which preloads it into /bin/true). */
#define RT_ENV_LIST_MODULES "RTRACE_LIST_MODULES"

/* The name prefix of the trace files `rtrace run` keeps made ahead of
 * need in RT_ENV_DIR (src/cli/run_pool.c), for the tracer to take one
 * instead of creating its own (unset or empty: it creates its own; at
 * most 63 bytes). Slot i is the prefix followed by i in decimal, for i
 * from 0 to RT_POOL_SLOTS - 1 (some may be missing: taken, not yet made
 * again), each a regular file, empty, 0600, with disk blocks for its
 * first RT_POOL_RESERVE bytes (its size). A tracer takes one by renaming
 * it to its trace's name in the same directory (renameat2
 * RENAME_NOREPLACE: a name taken is EEXIST, a slot taken ENOENT, and the
 * file is its own from then on), then opens it by that name; it tries
 * at most RT_POOL_TRIES slots, from its process id's, and else creates
 * its file itself. */
#define RT_ENV_POOL "RTRACE_POOL"
#define RT_POOL_SLOTS 8
#define RT_POOL_TRIES 4
#define RT_POOL_RESERVE 16384 /* the tracer's header page and its first chunk's first part */

/* What the tracer removes from the program's environment once read. */
#define RT_ENV_OURS                                                            \
	RT_ENV_USER_LD_PRELOAD, RT_ENV_DIR, RT_ENV_MANIFEST, RT_ENV_DEPTH,     \
	RT_ENV_FLAGS, RT_ENV_TOGGLE_SIGNAL, RT_ENV_LEAK_CHECK, RT_ENV_MODULES,         \
	RT_ENV_CHECK_SIGNAL, RT_ENV_MIN_LIFETIME, RT_ENV_POOL

#endif
