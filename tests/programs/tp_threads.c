/* 8 threads churn malloc/free and each leaks 10 blocks of 32 bytes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *worker(void *arg)
{
	long id = (long)arg;
	void *keep[64] = {0};
	for (int i = 0; i < 20000; i++) {
		int k = (int)((i * 7 + id) % 64);
		free(keep[k]);
		keep[k] = malloc((size_t)(i % 200) + 1);
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	for (int i = 0; i < 10; i++)
		if (!malloc(32))
			return NULL;
	return NULL;
}

int main(void)
{
	pthread_t t[8];
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	puts("threads done");
	return 0;
}
