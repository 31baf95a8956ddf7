/* A deterministic heap profile for `rtrace heap`, compared with
 * heaptrack_print on heaptrack's recording of the same program
 * (cli/heapprof_heaptrack.sh). No stdio: its buffer would be one more
 * block. Linked with libstdc++ (as heaptrack's preloaded library is), whose
 * emergency pool is one block of P bytes allocated at load, first of all,
 * and freed at exit by __gnu_cxx::__freeres under both tracers.
 *   leaks:       3 blocks, 1000 + 2000 + 500 bytes, never freed
 *   temporaries: 10 blocks freed right after their allocation
 *   interleaved: 5 x (a, b, free a, free b): none temporary
 *   peak:        20 blocks of 4096 bytes live at once, then freed: the
 *                first release follows an allocation of the same size
 *                and stack, temporary by heaptrack's rule
 *   grow:        malloc then 8 reallocs, each releasing the block just
 *                allocated, then free: 9 temporaries
 *   exit:        the pool's release follows a release: temporary, as
 *                heaptrack resets "the last allocation" to the first
 *                (size, stack) pair, the pool's
 * 53 allocation calls, 21 temporary, peak P + 3500 + 81920 bytes,
 * 3500 bytes leaked. */
#include <stdlib.h>
#include <string.h>

static void *keep[20];
static void *lost[3];

__attribute__((noinline)) static void leaks(void)
{
	lost[0] = malloc(1000);
	lost[1] = malloc(2000);
	lost[2] = calloc(10, 50);
	lost[0] = lost[1] = lost[2] = NULL;
}

__attribute__((noinline)) static void temporaries(void)
{
	for (int i = 0; i < 10; i++) {
		char *p = malloc(100 + i);
		p[0] = 1;
		free(p);
	}
}

__attribute__((noinline)) static void interleaved(void)
{
	for (int i = 0; i < 5; i++) {
		char *a = malloc(200), *b = malloc(300);
		a[0] = b[0] = 1;
		free(a);
		free(b);
	}
}

__attribute__((noinline)) static void peak(void)
{
	for (int i = 0; i < 20; i++)
		keep[i] = calloc(1, 4096);
	for (int i = 0; i < 20; i++)
		free(keep[i]);
}

__attribute__((noinline)) static void grow(void)
{
	char *p = malloc(16);
	for (int i = 0; i < 8; i++) {
		p = realloc(p, (size_t)32 << i);
		memset(p, 0, (size_t)32 << i);
	}
	free(p);
}

int main(void)
{
	leaks();
	temporaries();
	interleaved();
	peak();
	grow();
	return 0;
}
