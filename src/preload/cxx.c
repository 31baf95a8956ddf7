/* The C++ operators new and delete, under their mangled names. Each one
 * forwards to the implementation that follows us (libstdc++'s), found on
 * first use, so new_handler and std::bad_alloc behave as without rtrace;
 * each is recorded under its own name so mismatched pairs are visible.
 *
 * No landing pads: the tracer links libc alone (issue 21; libgcc_s was
 * there for cleanups that restored the busy flag when operator new threw,
 * ~0.05 ms of loading in every traced process, C programs included). So
 * nothing of ours is live while an exception passes: a throwing operator
 * calls libstdc++'s nothrow one (which runs the new_handler loop and
 * returns NULL where it would throw), restores the flag and the heap's
 * safe-point depth, and only then throws std::bad_alloc itself through
 * std::__throw_bad_alloc. The exception passes through this frame with
 * its unwind table alone (-fexceptions). One difference remains: a
 * new_handler that throws something else than std::bad_alloc has it
 * replaced by std::bad_alloc. Calls made while the tracer is busy (the
 * nothrow operators call the throwing ones) go straight on. */
#define _GNU_SOURCE
#include "heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

static void *next_sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p)
		abort(); /* called by C++ code, so libstdc++ must be loaded */
	return p;
}

/* std::__throw_bad_alloc(), libstdc++'s: throws from its own frame. */
static __attribute__((noreturn)) void throw_bad_alloc(void)
{
	static void (*thrower)(void);
	if (!thrower)
		thrower = (void (*)(void))next_sym("_ZSt17__throw_bad_allocv");
	thrower();
	abort();
}

typedef struct nothrow_t nothrow_t;
typedef size_t align_t;
/* std::nothrow: libstdc++ reads no member of it */
static const struct nothrow_t {
	char unused;
} nothrow_tag;

static void fishy(int fn, size_t n)
{
	if (fn == FN_NEW || fn == FN_NEW_NOTHROW)
		rt_heap_fishy(FN_NEW, HARG_SIZE, n);
	else if (fn == FN_NEW_ARRAY || fn == FN_NEW_ARRAY_NOTHROW)
		rt_heap_fishy(FN_NEW_ARRAY, HARG_SIZE, n);
}

/* libstdc++'s operators call malloc and free: those inner calls are not
 * the program's (the busy flag), and the call is a safe point's inside. */
#define INNER(expr)                                                            \
	do {                                                                   \
		int saved_ = rt_t.busy;                                        \
		rt_t.busy = 1;                                                 \
		expr;                                                          \
		rt_t.busy = saved_;                                            \
	} while (0)

/* The body of every operator new: next is libstdc++'s nothrow form;
 * throws: the operator's failure is std::bad_alloc. */
#define NEW_BODY(FN, nargs, throws)                                            \
	fishy(FN, n);                                                          \
	rt_heap_enter();                                                       \
	void *p;                                                               \
	INNER(p = next nargs);                                                 \
	if (p)                                                                 \
		rt_heap_alloc(FN, p, n);                                       \
	rt_heap_leave();                                                       \
	if (throws && !p)                                                      \
		throw_bad_alloc();                                             \
	return p;

/* A throwing operator: libstdc++'s nothrow form nsym underneath, its own
 * form (real) for the calls made while busy. */
#define NEW(sym, FN, params, args, nsym, nparams, nargs)                       \
	RT_EXPORT void *sym params                                             \
	{                                                                      \
		static void *(*next) nparams, *(*real) params;                 \
		if (RT_UNLIKELY(!real))                                        \
			real = (void *(*)params)next_sym(#sym);                \
		if (RT_UNLIKELY(!next))                                        \
			next = (void *(*)nparams)next_sym(#nsym);              \
		if (rt_t.busy)                                                 \
			return real args;                                      \
		NEW_BODY(FN, nargs, 1)                                         \
	}

#define NEW_NOTHROW(sym, FN, params, args)                                     \
	RT_EXPORT void *sym params                                             \
	{                                                                      \
		static void *(*next) params;                                   \
		if (RT_UNLIKELY(!next))                                        \
			next = (void *(*)params)next_sym(#sym);                \
		NEW_BODY(FN, args, 0)                                          \
	}

#define NT_ (size_t n, const nothrow_t *t)
#define NTA_ (size_t n, align_t a, const nothrow_t *t)
NEW(_Znwm, FN_NEW, (size_t n), (n), _ZnwmRKSt9nothrow_t, NT_, (n, &nothrow_tag))
NEW(_Znam, FN_NEW_ARRAY, (size_t n), (n), _ZnamRKSt9nothrow_t, NT_, (n, &nothrow_tag))
NEW(_ZnwmSt11align_val_t, FN_NEW_ALIGNED, (size_t n, align_t a), (n, a), _ZnwmSt11align_val_tRKSt9nothrow_t,
    NTA_, (n, a, &nothrow_tag))
NEW(_ZnamSt11align_val_t, FN_NEW_ARRAY_ALIGNED, (size_t n, align_t a), (n, a),
    _ZnamSt11align_val_tRKSt9nothrow_t, NTA_, (n, a, &nothrow_tag))
NEW_NOTHROW(_ZnwmRKSt9nothrow_t, FN_NEW_NOTHROW, NT_, (n, t))
NEW_NOTHROW(_ZnamRKSt9nothrow_t, FN_NEW_ARRAY_NOTHROW, NT_, (n, t))
NEW_NOTHROW(_ZnwmSt11align_val_tRKSt9nothrow_t, FN_NEW_ALIGNED, NTA_, (n, a, t))
NEW_NOTHROW(_ZnamSt11align_val_tRKSt9nothrow_t, FN_NEW_ARRAY_ALIGNED, NTA_, (n, a, t))

#define DELETE(sym, FN, params, args)                                          \
	RT_EXPORT void sym params                                              \
	{                                                                      \
		static void (*next) params;                                    \
		if (!p)                                                        \
			return;                                                \
		rt_heap_enter();                                               \
		if (rt_heap_release(FN, p)) { /* else reported and dropped */  \
			if (RT_UNLIKELY(!next))                                \
				next = (void (*)params)next_sym(#sym);         \
			INNER(next args);                                      \
		}                                                              \
		rt_heap_leave();                                               \
	}

DELETE(_ZdlPv, FN_DELETE, (void *p), (p))
DELETE(_ZdaPv, FN_DELETE_ARRAY, (void *p), (p))
DELETE(_ZdlPvm, FN_DELETE_SIZED, (void *p, size_t s), (p, s))
DELETE(_ZdaPvm, FN_DELETE_ARRAY_SIZED, (void *p, size_t s), (p, s))
DELETE(_ZdlPvRKSt9nothrow_t, FN_DELETE, (void *p, const nothrow_t *t), (p, t))
DELETE(_ZdaPvRKSt9nothrow_t, FN_DELETE_ARRAY, (void *p, const nothrow_t *t), (p, t))
DELETE(_ZdlPvSt11align_val_t, FN_DELETE_ALIGNED, (void *p, align_t a), (p, a))
DELETE(_ZdaPvSt11align_val_t, FN_DELETE_ARRAY_ALIGNED, (void *p, align_t a), (p, a))
DELETE(_ZdlPvmSt11align_val_t, FN_DELETE_ALIGNED, (void *p, size_t s, align_t a), (p, s, a))
DELETE(_ZdaPvmSt11align_val_t, FN_DELETE_ARRAY_ALIGNED, (void *p, size_t s, align_t a), (p, s, a))
