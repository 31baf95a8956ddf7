/* Thread errors for Valgrind's helgrind and drd, for the Valgrind XML
 * reader's tests: a data race on a global (two threads increment it
 * without a lock), an unlock of a mutex nobody holds (locked and
 * unlocked before, so that the tools know it), and a lock-order
 * inversion (a then b, later b then a; helgrind reports it, drd does
 * not look for it). Prints one line; exits with 0. */
#include <pthread.h>
#include <stdio.h>

static int shared_counter;
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t not_held = PTHREAD_MUTEX_INITIALIZER;

static void *racer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++)
		shared_counter++;
	return NULL;
}

static void race(void)
{
	pthread_t t1, t2;
	pthread_create(&t1, NULL, racer, NULL);
	pthread_create(&t2, NULL, racer, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
}

static void lock_order(void)
{
	pthread_mutex_lock(&a);
	pthread_mutex_lock(&b);
	pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
	pthread_mutex_lock(&b);
	pthread_mutex_lock(&a); /* inverted: b then a */
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
}

int main(void)
{
	race();
	pthread_mutex_lock(&not_held);
	pthread_mutex_unlock(&not_held);
	pthread_mutex_unlock(&not_held); /* unlocking an unlocked mutex */
	lock_order();
	printf("tp_vgrace: counter %d\n", shared_counter);
	return 0;
}
