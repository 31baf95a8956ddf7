/* The program's environment, without the tracer's variables.
 *
 * `rtrace run` passes the options as RTRACE_* variables and the tracer
 * itself through LD_PRELOAD (format/run_env.h). The program must see the
 * environment it was given: shells copy environ into their variables at
 * start and export them again to what they run, and bash brings its own
 * getenv, setenv and unsetenv, which resolve before libc's for every
 * library and do nothing to environ before the shell's variables exist.
 * So at start the tracer takes its variables out of environ itself,
 * editing the array in place (libc's environment functions are never
 * called), and LD_PRELOAD goes back to the user's value, at its place.
 *
 * When children are followed, what was taken out is put back only into
 * the environment handed to exec (execve and its family in fd.c,
 * posix_spawn, posix_spawnp and system here, popen through file.c), built on the
 * caller's stack (it may be a vfork child) from the environment the
 * program passes: the program started runs with the tracer, which takes
 * the variables out again, so following works through any shell. The
 * user's LD_PRELOAD of that environment follows the tracer's and becomes
 * RT_ENV_USER_LD_PRELOAD. An environment that already carries the protocol
 * (RT_ENV_MANIFEST: a nested `rtrace run`) goes through unchanged. */
#define _GNU_SOURCE
#include "preload.h"
#include "format/run_env.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define LDP "LD_PRELOAD"
static const char *const ours[] = {RT_ENV_OURS};
#define N_OURS (sizeof ours / sizeof *ours)

static bool follow;
static const char *saved[N_OURS]; /* "NAME=value" taken out, for exec */
static const char *user_entry;    /* RT_ENV_USER_LD_PRELOAD's, among them */
static const char *tracer;        /* the tracer's part of LD_PRELOAD */
static size_t tracer_len;

/* The value of `name` in env when s is its "name=value" entry, or NULL.
 * Byte by byte, not strlen and strncmp: every entry of the environment is
 * tried against each of the tracer's names at start and at each exec, and
 * nearly all differ at their first byte (with libc's two calls, ~10 us of
 * each traced command in a shell loop, 45 variables). */
static const char *entry_value(const char *s, const char *name)
{
	while (*name && *s == *name)
		s++, name++;
	return !*name && *s == '=' ? s + 1 : NULL;
}

static int our_index(const char *s)
{
	for (size_t i = 0; i < N_OURS; i++)
		if (entry_value(s, ours[i]))
			return (int)i;
	return -1;
}

/* "LD_PRELOAD=U" for the user's U, without allocating: the suffix of
 * "RTRACE_USER_LD_PRELOAD=U" (NULL when the names ever stop sharing it). */
static char *user_preload_entry(void)
{
	size_t off = strlen(RT_ENV_USER_LD_PRELOAD) - strlen(LDP);
	if (!user_entry || !entry_value(user_entry + off, LDP))
		return NULL;
	return (char *)user_entry + off;
}

/* The tracer's part of "LD_PRELOAD=P:U" (P), given the user's U. */
static void note_tracer(const char *preload, const char *user)
{
	size_t n = strlen(preload), u = user ? strlen(user) : 0;
	if (u && n > u && preload[n - u - 1] == ':' && !strcmp(preload + n - u, user))
		n -= u + 1;
	tracer = preload;
	tracer_len = n;
}

/* At start, after the options are read: the variables out of environ,
 * LD_PRELOAD back to the user's (or gone), every other entry in order. */
void rt_env_init(bool follow_children)
{
	follow = follow_children;
	if (!environ)
		return;
	char **ldp = NULL;
	for (char **e = environ; *e; e++) {
		int i = our_index(*e);
		if (i >= 0)
			saved[i] = *e;
		if (entry_value(*e, RT_ENV_USER_LD_PRELOAD))
			user_entry = *e;
		else if (entry_value(*e, LDP))
			ldp = e;
	}
	if (ldp)
		note_tracer(entry_value(*ldp, LDP),
			    user_entry ? entry_value(user_entry, RT_ENV_USER_LD_PRELOAD) : NULL);
	char **out = environ;
	for (char **e = environ; *e; e++) {
		char *s = e == ldp ? user_preload_entry() : our_index(*e) < 0 ? *e : NULL;
		if (s)
			*out++ = s;
	}
	*out = NULL;
}

static bool wants_tracer(char *const *envp)
{
	if (!follow || !tracer)
		return false;
	for (char *const *e = envp; e && *e; e++)
		if (entry_value(*e, RT_ENV_MANIFEST))
			return false;
	return true;
}

static const char *user_of(char *const *envp)
{
	for (char *const *e = envp; e && *e; e++)
		if (entry_value(*e, LDP))
			return entry_value(*e, LDP);
	return NULL;
}

size_t rt_env_exec_size(char *const *envp)
{
	if (!wants_tracer(envp))
		return 0;
	size_t n = 0;
	for (char *const *e = envp; e && *e; e++)
		n++;
	const char *user = user_of(envp);
	size_t u = user ? strlen(user) : 0;
	return (n + N_OURS + 2) * sizeof(char *) + sizeof LDP + tracer_len + 2 + u +
	       sizeof RT_ENV_USER_LD_PRELOAD + u + 1;
}

/* "NAME=a[:b]" at p (rt_env_exec_size made the room); returns the byte
 * after its end. rt_cat, not stpcpy: the exec interposers run this in
 * fork children, where a C library function the parent never called is
 * bound by ld.so (a lookup through every library's tables, ~30 us of
 * such a child). */
static char *put_entry(char *p, const char *name, const char *a, size_t alen, const char *b)
{
	size_t n = 0;
	rt_cat(p, SIZE_MAX, &n, name);
	p[n++] = '=';
	memcpy(p + n, a, alen);
	n += alen;
	if (b && *b) {
		p[n++] = ':';
		rt_cat(p, SIZE_MAX, &n, b);
	}
	p[n] = '\0';
	return p + n + 1;
}

char *const *rt_env_exec(char *const *envp, void *buf)
{
	if (!wants_tracer(envp))
		return envp;
	size_t n = 0, k = 0;
	for (char *const *e = envp; e && *e; e++)
		n++;
	char **env = buf;
	char *str = (char *)(env + n + N_OURS + 2);
	const char *user = user_of(envp);
	bool placed = false;
	for (char *const *e = envp; e && *e; e++) {
		if (our_index(*e) >= 0)
			continue;
		if (!entry_value(*e, LDP)) {
			env[k++] = *e;
		} else if (!placed) { /* the tracer's LD_PRELOAD, at the user's place */
			env[k++] = str;
			str = put_entry(str, LDP, tracer, tracer_len, user);
			placed = true;
		}
	}
	if (!placed) {
		env[k++] = str;
		str = put_entry(str, LDP, tracer, tracer_len, NULL);
	}
	if (user) {
		env[k++] = str;
		str = put_entry(str, RT_ENV_USER_LD_PRELOAD, user, strlen(user), NULL);
	}
	for (size_t i = 0; i < N_OURS; i++)
		if (saved[i] && saved[i] != user_entry)
			env[k++] = (char *)saved[i];
	env[k] = NULL;
	return env;
}

/* posix_spawn and posix_spawnp: the environment they pass. */
#define SPAWN(name)                                                            \
	RT_EXPORT int name(pid_t *pid, const char *path,                       \
			   const posix_spawn_file_actions_t *fa,               \
			   const posix_spawnattr_t *attr, char *const argv[],  \
			   char *const envp[])                                 \
	{                                                                      \
		static __typeof__(name) *next;                                 \
		if (!next)                                                     \
			next = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);    \
		RT_ENV_FOR_EXEC(envp);                                         \
		return next(pid, path, fa, attr, argv, envp);                  \
	}
SPAWN(posix_spawn)
SPAWN(posix_spawnp)

/* system(), when children are followed: libc's spawns the shell with
 * environ from inside, so it is done here as POSIX describes it (SIGINT
 * and SIGQUIT ignored and SIGCHLD blocked while the command runs), with
 * posix_spawn above. */
static int follow_system(const char *cmd)
{
	struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
	sigset_t chld, omask, dfl;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &omask);
	sigemptyset(&dfl);
	if (oint.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGINT);
	if (oquit.sa_handler != SIG_IGN)
		sigaddset(&dfl, SIGQUIT);
	posix_spawnattr_t a;
	posix_spawnattr_init(&a);
	posix_spawnattr_setsigmask(&a, &omask);
	posix_spawnattr_setsigdefault(&a, &dfl);
	posix_spawnattr_setflags(&a, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	pid_t pid;
	int status = -1, err = posix_spawn(&pid, "/bin/sh", NULL, &a, argv, environ);
	posix_spawnattr_destroy(&a);
	if (!err) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	} else {
		status = 127 << 8;
	}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	sigprocmask(SIG_SETMASK, &omask, NULL);
	return status;
}

RT_EXPORT int system(const char *cmd)
{
	static int (*next)(const char *);
	if (!next)
		next = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
	return cmd && wants_tracer(environ) ? follow_system(cmd) : next(cmd);
}

/* popen(), when children are followed (file.c's interposer calls this
 * with libc's): libc's spawns the shell with environ from inside and
 * returns at once, so environ holds the tracer's variables for that call
 * only (another thread reading environ meanwhile would see them). */
FILE *rt_env_popen(FILE *(*real)(const char *, const char *), const char *cmd, const char *mode)
{
	char *const *env = environ;
	RT_ENV_FOR_EXEC(env);
	char **keep = environ;
	environ = (char **)env;
	FILE *f = real(cmd, mode);
	int err = errno;
	environ = keep;
	errno = err;
	return f;
}
