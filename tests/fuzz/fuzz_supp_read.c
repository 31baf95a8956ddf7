/* libFuzzer harness for the suppression reader and matcher
 * (rtrace/supp.h): the whole input is read as a suppression file, from
 * memory. Invariants checked (abort otherwise): a malformed input is
 * reported at a line and column inside the input (or just after its end)
 * with a message; reading the same input again gives the same
 * suppressions or the same error; each suppression has a name, a file and
 * a kind, and is matched (without crashing) against a few stacks: C and
 * C++ frames, frames with nothing known, an empty stack. */
#include "rtrace/heapcheck.h"
#include "rtrace/supp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rt_supp_frame stack[] = {
	{"malloc", NULL, "/usr/lib/librtrace-preload.so", NULL, 0},
	{"_ZN3app10make_cacheEm", "app::make_cache(unsigned long)", "/bin/tp_supp", "/src/tp_supp.cpp", 17},
	{NULL, NULL, NULL, NULL, 0},
	{"main", NULL, "/bin/tp_supp", "tp_supp.cpp", 40},
	{"__libc_start_main", NULL, "/lib/libc.so.6", NULL, 0},
};

static uint64_t lines_of(const uint8_t *data, size_t size)
{
	uint64_t n = 1;
	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

static void read_once(const uint8_t *data, size_t size, rt_supp_set **s, int *rc, rt_diag *err)
{
	*s = rt_supp_new();
	memset(err, 0, sizeof *err);
	*rc = rt_supp_read_mem(*s, (const char *)data, size, "fuzz.supp", err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rt_supp_set *s, *again;
	rt_diag err, err2;
	int rc, rc2;
	read_once(data, size, &s, &rc, &err);
	read_once(data, size, &again, &rc2, &err2);
	if (rc != rc2 || rt_supp_count(s) != rt_supp_count(again))
		abort();
	if (rc) {
		char msg[1024];
		rt_diag_format(&err, msg, sizeof msg);
		if (!err.line || err.line > lines_of(data, size) || !err.col || !err.msg[0] ||
		    err.line != err2.line || err.col != err2.col || strcmp(err.msg, err2.msg))
			abort();
	}
	static const char *const kinds[] = {"Leak", "Free", "Cond"};
	for (size_t i = 0; i < rt_supp_count(s); i++) {
		rt_supp_info in;
		rt_supp_get(s, i, &in);
		if (!in.name || !in.file || !in.kind || !in.line || in.line > lines_of(data, size))
			abort();
		for (size_t k = 0; k < 3; k++)
			for (unsigned lk = RT_LEAK_DEFINITE; lk <= RT_LEAK_REACHABLE; lk++) {
				rt_supp_matches(s, i, kinds[k], lk, stack, sizeof stack / sizeof *stack);
				rt_supp_matches(s, i, kinds[k], lk, stack + 2, 1);
				rt_supp_matches(s, i, kinds[k], lk, NULL, 0);
			}
	}
	rt_supp_free(s);
	rt_supp_free(again);
	return 0;
}
