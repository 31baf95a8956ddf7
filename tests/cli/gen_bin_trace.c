/* Writes binary traces for the tests, with the encoder of bin_encoder.h:
 *
 *   gen_bin_trace sample FILE   the trace that tests/cli/bin_input.sh reads
 *   gen_bin_trace seeds DIR     seeds for the fuzz_bin_read harness
 *                               (tests/fuzz/corpus-bin/ holds their output)
 */
#include "bin_encoder.h"

#include <stdio.h>
#include <string.h>

enum { FN_MALLOC = 1, FN_FREE, FN_CALLOC };
enum { ALLOC = 1, FREE = 2 };

static void preamble(bfile *bf, bthread *t, uint64_t flags)
{
	/* 2011-06-16 15:49:48.5 UTC */
	enc_process(bf, t, 4242, 1, 1308239388, 500000000, "x86_64", "/usr/bin/app",
		    "app --run", 10, flags);
	enc_maps(bf, t, 1);
	enc_module(bf, t, 0x400000, 0x401000, 0, "/usr/bin/app");
	enc_module(bf, t, 0x7f0000000000, 0x7f0000100000, 0, "/lib/libc.so.6");
	enc_resource(bf, t, 1, "memory", "memory allocation in bytes", 0);
	enc_function(bf, t, FN_MALLOC, "malloc");
	enc_function(bf, t, FN_FREE, "free");
	enc_function(bf, t, FN_CALLOC, "calloc");
	enc_context(bf, t, 1, "first context");
}

/* Two threads sharing a stack under two ids, one address reused across
 * them, a context, a tracer message; chunks small enough to interleave. */
static void sample(bfile *bf)
{
	static const uint64_t main_stack[] = {0x400123, 0x400456};
	static const uint64_t libc_stack[] = {0x7f0000001000, 0x400789};
	bf_init(bf, 128, 4242);
	bthread a = bf_thread(100), b = bf_thread(101);
	preamble(bf, &a, 1);
	enc_bt(bf, &a, 1, 2, main_stack);
	enc_call(bf, &a, 1, 1000000, ALLOC, FN_MALLOC, 1, 0x1000, 16, 1, 0);
	enc_bt(bf, &b, 2, 2, main_stack);
	enc_call(bf, &b, 2, 2000000, ALLOC, FN_MALLOC, 1, 0x2000, 32, 2, 1);
	enc_call(bf, &a, 3, 1000000, FREE, FN_FREE, 1, 0x1000, 0, 0, 0);
	enc_bt(bf, &b, 3, 2, libc_stack);
	enc_call(bf, &b, 4, 3000000, ALLOC, FN_CALLOC, 1, 0x3000, 64, 3, 0);
	enc_call(bf, &a, 5, 1000000, ALLOC, FN_MALLOC, 1, 0x1000, 16, 1, 0);
	enc_call(bf, &b, 6, 1000000, FREE, FN_FREE, 1, 0x2000, 0, 0, 1);
	enc_call(bf, &a, 7, 1000000, ALLOC, FN_MALLOC, 1, 0x4000, 8, 1, 0);
	enc_message(bf, &a, "rtrace: tracing stopped: disk full");
	enc_end(bf, &a, 7);
	bf_finish(bf);
}

/* Several threads, one reusing a dead thread's tid, a second MAPS
 * generation, a refcount resource, chunks of 96 bytes, no clean exit. */
static void threads(bfile *bf)
{
	bf_init(bf, 96, 77);
	bthread t[3] = {bf_thread(1), bf_thread(2), bf_thread(3)};
	preamble(bf, &t[0], 3);
	enc_resource(bf, &t[0], 2, "segment", "shared memory segment", 1);
	for (uint64_t i = 1; i <= 40; i++) {
		bthread *w = &t[(i * 7) % 3];
		uint64_t frames[3] = {0x400100 + i % 5, 0x400200, 0x7f0000000100};
		if (i % 5 == 1)
			enc_bt(bf, w, i, 3, frames);
		if (i == 20) {
			enc_maps(bf, w, 2);
			enc_module(bf, w, 0x7f1000000000, 0x7f1000010000, 0, "/usr/lib/libfoo.so");
			t[2] = bf_thread(3); /* thread 3 died; a new one got its tid */
		}
		enc_call(bf, w, i, 1000 * i, i % 3 ? ALLOC : FREE, i % 3 ? FN_MALLOC : FN_FREE,
			 i % 4 ? 1 : 2, 0x1000 + (i / 2) * 16, i, i % 5 == 1 ? i : 0, i % 2);
	}
}

/* The leak check's and heap errors' records (format 1.1), written at the
 * end by a thread other than the one that defined the stacks. */
static void heapcheck(bfile *bf)
{
	static const uint64_t stack[] = {0x400123, 0x400456};
	static const uint64_t sums[16] = {100, 1, 49, 1, 0, 0, 24, 1, 24, 1};
	static const uint64_t ids[4] = {FN_MALLOC, 1, FN_FREE, 0};
	bf_init(bf, 128, 99);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(bf, &a, 1);
	enc_bt(bf, &a, 1, 2, stack);
	enc_call(bf, &a, 1, 1000, ALLOC, FN_MALLOC, 1, 0x1000, 100, 1, 0);
	enc_call(bf, &a, 2, 1000, ALLOC, FN_MALLOC, 1, 0x2000, 49, 1, 0);
	enc_call(bf, &b, 3, 1000, FREE, FN_FREE, 1, 0x3000, 0, 0, 0);
	enc_heaperr(bf, &b, 1, 3, FN_FREE, 0x3000, 0, 0, 0, 0, ids);
	enc_leak(bf, &b, 1, 0x1000, 100, 1, 0, FN_MALLOC, 1, 49);
	enc_leak(bf, &b, 2, 0x2000, 49, 2, 0, FN_MALLOC, 1, 0);
	enc_leak(bf, &b, 0, 0x5000, 24, 4, 1, 0, 0, 0);
	enc_leaksum(bf, &b, 2, sums, 3, 10);
	enc_end(bf, &b, 3);
	bf_finish(bf);
}

/* Two leak checks on demand (format 1.4), written by a thread other than
 * the one that defined the stacks: a full one, then an increased one in
 * which the definitely lost record grew and the reachable one went away;
 * bad: a CHECKLOSS record of a check that was never written. */
static void checks(bfile *bf, bool bad)
{
	static const uint64_t s1[] = {0x400123, 0x400456}, s2[] = {0x400789};
	static const uint64_t t1[8] = {100, 1, 0, 0, 0, 0, 40, 1}, t2[8] = {300, 3, 0, 0, 0, 0, 0, 0};
	bf_init(bf, 128, 77);
	bthread a = bf_thread(1), b = bf_thread(2);
	preamble(bf, &a, 1);
	enc_bt(bf, &a, 1, 2, s1);
	enc_bt(bf, &a, 2, 1, s2);
	enc_call(bf, &a, 1, 1000, ALLOC, FN_MALLOC, 1, 0x1000, 100, 1, 0);
	enc_call(bf, &a, 2, 1000, ALLOC, FN_MALLOC, 1, 0x2000, 40, 2, 0);
	enc_check(bf, &b, 1, 2, 1, 2, 15, t1);
	enc_checkloss(bf, &b, 1, 1, FN_MALLOC, 1, 100, 1, 0);
	enc_checkloss(bf, &b, 1, 4, FN_MALLOC, 2, 40, 1, 0);
	enc_call(bf, &a, 3, 1000, ALLOC, FN_MALLOC, 1, 0x3000, 200, 1, 0);
	enc_call(bf, &a, 4, 1000, FREE, FN_FREE, 1, 0x2000, 0, 0, 0);
	enc_check(bf, &b, 2, 4, 2, 2, 12, t2);
	enc_checkloss(bf, &b, bad ? 5 : 2, 1, FN_MALLOC, 1, 300, 3, 0);
	enc_end(bf, &b, 4);
	bf_finish(bf);
}

static int write_seeds(const char *dir)
{
	bfile bf;
	char path[4096];
	int rc = 0;
	sample(&bf);
	snprintf(path, sizeof path, "%s/sample.rtrace", dir);
	rc |= bf_write(&bf, path);
	bf.f.len = bf.f.len - bf.chunk_size + 40; /* cut inside the last chunk */
	snprintf(path, sizeof path, "%s/sample-cut.rtrace", dir);
	rc |= bf_write(&bf, path);
	be_free(&bf.f);
	threads(&bf);
	snprintf(path, sizeof path, "%s/threads-killed.rtrace", dir);
	rc |= bf_write(&bf, path);
	be_free(&bf.f);
	heapcheck(&bf);
	snprintf(path, sizeof path, "%s/heapcheck.rtrace", dir);
	rc |= bf_write(&bf, path);
	be_free(&bf.f);
	checks(&bf, false);
	snprintf(path, sizeof path, "%s/checks.rtrace", dir);
	rc |= bf_write(&bf, path);
	be_free(&bf.f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "sample")) {
		bfile bf;
		sample(&bf);
		int rc = bf_write(&bf, argv[2]);
		be_free(&bf.f);
		return rc ? 1 : 0;
	}
	if (argc == 3 && (!strcmp(argv[1], "checks") || !strcmp(argv[1], "checks-bad"))) {
		bfile bf;
		checks(&bf, !strcmp(argv[1], "checks-bad"));
		int rc = bf_write(&bf, argv[2]);
		be_free(&bf.f);
		return rc ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "seeds"))
		return write_seeds(argv[2]) ? 1 : 0;
	fprintf(stderr, "usage: gen_bin_trace sample FILE | checks FILE | checks-bad FILE | seeds DIR\n");
	return 2;
}
