/* Frames of a compressed trace decoded ahead, on worker threads.
 *
 * Each frame of a compressed trace decodes on its own (zstd, then the
 * columns back into records and plain calls, as the model calls the
 * reader hands over: rt_bin_zc_decode_calls), and that is ~half of
 * `rtrace heap`'s instructions on churn (255 of 471 a call; the calls'
 * model form, their runs, the bounds of their ids are found here too,
 * so that the reader only puts ids and times in). The merge in index
 * order, the ids and the analysis stay on the
 * reader's thread; what moves is the decoding of the frames a stream will
 * enter next: when a stream enters a frame, bin_merge.c queues its next
 * few here, and a worker decodes each into a slot's buffers while the
 * reader works through the current one. Entering a queued frame swaps
 * the slot's buffers with the stream's: no copy, and the slot keeps the
 * old ones for its next frame, so memory is the slots' (a slot: up to a
 * chunk of rows and its calls, ~330 KB at most), not the trace's.
 *
 * A frame decodes to the same bytes, calls and message wherever it is
 * decoded, so what the reader delivers, and where it stops on a broken
 * frame, does not depend on the number of threads. A frame the reader
 * needs that no worker has started yet is decoded by the reader itself
 * (never a wait for a queue), and one it cannot queue (every slot taken)
 * as well. One mutex guards the slots' states and the queue; the buffers
 * of a slot belong to whoever holds its state (queued: nobody; running:
 * its worker; done: the reader). */
#include "bin_zpar.h"
#include "format/trace_format.h"
#include "util/util.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A mapped trace's frames are read with pread, not through the map: a
 * frame read through the map faulted its pages in, and giving them back
 * after it (madvise, with a TLB shootdown on each CPU a worker ran on)
 * was 4% of rtrace heap's time on python3's trace (0.575 s against 0.552
 * s without the release); read into the decoder's buffer, its pages are
 * never mapped. A read that fails leaves the map to tell. */
const uint8_t *rt_bin_zframe_at(rt_bin_zc *z, int fd, const uint8_t *base, uint64_t off)
{
	uint8_t h[RT_TF_ZFRAME_HEADER];
	if (fd < 0 || pread(fd, h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
		return base + off;
	size_t n = RT_TF_ZFRAME_HEADER + (size_t)le32_at(h + RT_TF_OFF_ZLEN);
	uint8_t *b = rt_bin_zc_raw(z, n);
	if (pread(fd, b, n, (off_t)off) != (ssize_t)n)
		return base + off;
	return b;
}

void rt_bin_zframe_decode(rt_bin_zc *z, const uint8_t *h, rt_bin_zframe *f)
{
	uint32_t used = le32_at(h + RT_TF_OFF_USED), zlen = le32_at(h + RT_TF_OFF_ZLEN);
	rt_grow((void **)&f->buf, &f->cap, RT_TF_CHUNK_HEADER + (size_t)used + RT_BIN_ZC_SLACK, 1);
	memcpy(f->buf, h, RT_TF_CHUNK_HEADER);
	f->why[0] = 0;
	f->ok = rt_bin_zc_decode_calls(z, h + RT_TF_ZFRAME_HEADER, zlen, le32_at(h + RT_TF_OFF_ZCODING),
				       f->buf + RT_TF_CHUNK_HEADER, used, &f->calls, f->why, sizeof f->why);
}

enum { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

typedef struct slot {
	uint64_t off;
	int state;
	rt_bin_zframe f;
} slot;

struct rt_bin_zpar {
	const uint8_t *base;
	int fd; /* the trace's file, or -1: frames are read in base */
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	slot *slots;
	unsigned nslots;
	uint32_t *queue; /* slots queued, oldest first: a ring of 2 * nslots */
	unsigned qhead, qlen;
	bool stop;
	bool hold;        /* rt_bin_zpar_hold: a worker waits before decoding */
	unsigned nheld;   /* workers so waiting */
	uint64_t helped;  /* frames the reader decoded while it waited */
	pthread_t *th;
	unsigned nth;
};

/* The oldest slot still queued, or UINT32_MAX; under p->mu. A slot the
 * reader took over (it needed it first) is no longer queued: skipped. */
static uint32_t pop_queued(rt_bin_zpar *p)
{
	while (p->qlen) {
		uint32_t j = p->queue[p->qhead];
		p->qhead = (p->qhead + 1) % (2 * p->nslots);
		p->qlen--;
		if (p->slots[j].state == SLOT_QUEUED)
			return j;
	}
	return UINT32_MAX;
}

static void *worker(void *arg)
{
	rt_bin_zpar *p = arg;
	rt_bin_zc *z = rt_bin_zc_new();
	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint32_t j = pop_queued(p);
		if (j == UINT32_MAX) {
			if (p->stop)
				break;
			pthread_cond_wait(&p->work, &p->mu);
			continue;
		}
		slot *s = &p->slots[j];
		s->state = SLOT_RUNNING;
		for (p->nheld++; p->hold;)
			pthread_cond_wait(&p->work, &p->mu);
		p->nheld--;
		pthread_mutex_unlock(&p->mu);
		rt_bin_zframe_decode(z, rt_bin_zframe_at(z, p->fd, p->base, s->off), &s->f);
		pthread_mutex_lock(&p->mu);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	rt_bin_zc_free(z);
	return NULL;
}

rt_bin_zpar *rt_bin_zpar_new(const uint8_t *base, int fd, unsigned workers, unsigned slots)
{
	if (!workers || !slots)
		return NULL;
	rt_bin_zpar *p = rt_xcalloc(1, sizeof *p);
	p->base = base;
	p->fd = fd;
	p->nslots = slots;
	p->slots = rt_xcalloc(slots, sizeof *p->slots);
	p->queue = rt_xcalloc(2 * (size_t)slots, sizeof *p->queue);
	p->th = rt_xcalloc(workers, sizeof *p->th);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 0; i < workers; i++)
		if (pthread_create(&p->th[p->nth], NULL, worker, p) == 0)
			p->nth++;
	if (!p->nth) {
		rt_bin_zpar_free(p);
		return NULL;
	}
	return p;
}

void rt_bin_zpar_free(rt_bin_zpar *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	p->hold = false;
	for (unsigned i = 0; i < p->nslots; i++)
		if (p->slots[i].state == SLOT_QUEUED)
			p->slots[i].state = SLOT_FREE; /* nobody will want it */
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	for (unsigned i = 0; i < p->nslots; i++) {
		free(p->slots[i].f.buf);
		rt_bin_zcalls_free(&p->slots[i].f.calls);
	}
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->mu);
	free(p->th);
	free(p->queue);
	free(p->slots);
	free(p);
}

bool rt_bin_zpar_submit(rt_bin_zpar *p, uint64_t off, uint32_t *job)
{
	bool ok = false;
	pthread_mutex_lock(&p->mu);
	/* entries of slots the reader took over are dropped from the front
	 * here, the others when a worker pops them */
	while (p->qlen && p->slots[p->queue[p->qhead]].state != SLOT_QUEUED) {
		p->qhead = (p->qhead + 1) % (2 * p->nslots);
		p->qlen--;
	}
	for (uint32_t j = 0; j < p->nslots && p->qlen < 2 * p->nslots; j++) {
		if (p->slots[j].state != SLOT_FREE)
			continue;
		p->slots[j].state = SLOT_QUEUED;
		p->slots[j].off = off;
		p->queue[(p->qhead + p->qlen++) % (2 * p->nslots)] = j;
		*job = j;
		ok = true;
		pthread_cond_signal(&p->work);
		break;
	}
	pthread_mutex_unlock(&p->mu);
	return ok;
}

static void swap_frame(rt_bin_zframe *a, rt_bin_zframe *b)
{
	rt_bin_zframe t = *a;
	*a = *b;
	*b = t;
}

/* The oldest frame still queued, decoded here into its slot; false
 * when none is. Under p->mu, which is let go while decoding. */
static bool help_one(rt_bin_zpar *p, rt_bin_zc *z)
{
	uint32_t j = pop_queued(p);
	if (j == UINT32_MAX)
		return false;
	slot *o = &p->slots[j];
	o->state = SLOT_RUNNING;
	pthread_mutex_unlock(&p->mu);
	rt_bin_zframe_decode(z, rt_bin_zframe_at(z, p->fd, p->base, o->off), &o->f);
	pthread_mutex_lock(&p->mu);
	o->state = SLOT_DONE;
	p->helped++;
	return true;
}

/* Where the frame wanted is still being decoded by a worker, the reader
 * decodes the next frame queued meanwhile instead of waiting for it:
 * python3's trace (16.6M calls, 418 frames, one worker on 2 CPUs) had
 * the reading thread idle for a quarter of the pass, waiting on the
 * worker's frame, while the worker was the busier of the two. */
void rt_bin_zpar_take(rt_bin_zpar *p, uint32_t job, rt_bin_zc *z, rt_bin_zframe *f)
{
	slot *s = &p->slots[job];
	pthread_mutex_lock(&p->mu);
	bool mine = s->state == SLOT_QUEUED;
	if (mine)
		s->state = SLOT_RUNNING; /* taken over: pop_queued skips it */
	while (!mine && s->state != SLOT_DONE)
		if (!help_one(p, z))
			pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
	if (mine)
		rt_bin_zframe_decode(z, rt_bin_zframe_at(z, p->fd, p->base, s->off), &s->f);
	swap_frame(&s->f, f);
	pthread_mutex_lock(&p->mu);
	s->state = SLOT_FREE;
	pthread_mutex_unlock(&p->mu);
}

void rt_bin_zpar_hold(rt_bin_zpar *p, bool hold)
{
	pthread_mutex_lock(&p->mu);
	p->hold = hold;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
}

void rt_bin_zpar_counts(rt_bin_zpar *p, unsigned *held, uint64_t *helped)
{
	pthread_mutex_lock(&p->mu);
	*held = p->nheld;
	*helped = p->helped;
	pthread_mutex_unlock(&p->mu);
}
