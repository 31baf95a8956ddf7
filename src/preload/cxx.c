/* The C++ operators new and delete, under their mangled names. Each one
 * forwards to the implementation that follows us (libstdc++'s), found on
 * first use, so new_handler and std::bad_alloc behave as without rtrace;
 * each is recorded under its own name so mismatched pairs are visible. */
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

/* libstdc++'s operators call malloc and free: those inner calls are not
 * the program's. The flag is restored by a cleanup, which also runs when
 * operator new throws (this file is built with -fexceptions); so is the
 * safe-point depth (heap.h). */
static void restore_busy(int *saved) { rt_t.busy = *saved; }
static void leave_heap(int *unused)
{
	(void)unused;
	rt_heap_leave();
}
#define INNER_CALL(expr)                                                       \
	do {                                                                   \
		int saved_ __attribute__((cleanup(restore_busy))) = rt_t.busy; \
		rt_t.busy = 1;                                                 \
		expr;                                                          \
	} while (0)
#define HEAP_SCOPE() int scope_ __attribute__((cleanup(leave_heap))) = (rt_heap_enter(), 0)

#define NEW(sym, FN, params, args)                                             \
	RT_EXPORT void *sym params                                             \
	{                                                                      \
		static void *(*next) params;                                   \
		if (RT_UNLIKELY(!next))                                        \
			next = (void *(*)params)next_sym(#sym);                \
		if (FN == FN_NEW || FN == FN_NEW_NOTHROW)                      \
			rt_heap_fishy(FN_NEW, HARG_SIZE, n);                   \
		else if (FN == FN_NEW_ARRAY || FN == FN_NEW_ARRAY_NOTHROW)     \
			rt_heap_fishy(FN_NEW_ARRAY, HARG_SIZE, n);             \
		HEAP_SCOPE();                                                  \
		void *p;                                                       \
		INNER_CALL(p = next args);                                     \
		if (p)                                                         \
			rt_heap_alloc(FN, p, n);                               \
		return p;                                                      \
	}

#define DELETE(sym, FN, params, args)                                          \
	RT_EXPORT void sym params                                              \
	{                                                                      \
		static void (*next) params;                                    \
		if (!p)                                                        \
			return;                                                \
		HEAP_SCOPE();                                                  \
		if (!rt_heap_release(FN, p))                                   \
			return; /* reported and dropped (heap.h) */            \
		if (RT_UNLIKELY(!next))                                        \
			next = (void (*)params)next_sym(#sym);                 \
		INNER_CALL(next args);                                         \
	}

typedef struct nothrow_t nothrow_t;
typedef size_t align_t;

NEW(_Znwm, FN_NEW, (size_t n), (n))
NEW(_Znam, FN_NEW_ARRAY, (size_t n), (n))
NEW(_ZnwmRKSt9nothrow_t, FN_NEW_NOTHROW, (size_t n, const nothrow_t *t), (n, t))
NEW(_ZnamRKSt9nothrow_t, FN_NEW_ARRAY_NOTHROW, (size_t n, const nothrow_t *t), (n, t))
NEW(_ZnwmSt11align_val_t, FN_NEW_ALIGNED, (size_t n, align_t a), (n, a))
NEW(_ZnamSt11align_val_t, FN_NEW_ARRAY_ALIGNED, (size_t n, align_t a), (n, a))
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, FN_NEW_ALIGNED, (size_t n, align_t a, const nothrow_t *t), (n, a, t))
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, FN_NEW_ARRAY_ALIGNED, (size_t n, align_t a, const nothrow_t *t), (n, a, t))

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
