/* Resolver test program, built at -O0 and -O2 as a PIE executable: leaks
 * from its own functions (one always inlined), from a shared library
 * (tp_reslib.c), and from each plugin named on the command line, which is
 * dlopen'ed, called and dlclose'd in turn (so a later plugin may be loaded
 * where an earlier one was). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

char *reslib_make(size_t n);

static void *volatile keep[64];

static inline __attribute__((always_inline)) void *res_inner(size_t n)
{
	return malloc(n); /* res_inner: malloc */
}

__attribute__((noinline)) void *res_leaf(size_t n)
{
	void *p = res_inner(n);
	keep[63] = p;
	return p;
}

__attribute__((noinline)) void *res_middle(size_t n)
{
	void *p = res_leaf(n + 1);
	keep[62] = p;
	return p;
}

static int run_plugin(const char *path, int i)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*fn)(size_t) = (void *(*)(size_t))dlsym(h, "plugin_alloc");
	if (!fn) {
		fprintf(stderr, "%s: no plugin_alloc\n", path);
		return 1;
	}
	keep[i] = fn(40 + (size_t)i);
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	keep[0] = res_middle(10);
	keep[1] = reslib_make(20);
	for (int i = 1; i < argc && i < 60; i++)
		if (run_plugin(argv[i], i + 1))
			return 1;
	return 0;
}
