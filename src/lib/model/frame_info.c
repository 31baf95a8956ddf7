/* Details of resolved frames (module, inline chain), keyed by the frame's
 * address and text: what the text protocol cannot say but a Valgrind XML
 * writer needs. Open addressing; the inline chains live in one array. */
#include "rtrace/trace.h"
#include "model/trace_int.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct finfo {
	uint64_t addr;
	uint32_t text, module;
	uint32_t off, n; /* into locs[] */
} finfo;

struct rt_finfo_tab {
	finfo *ents;
	size_t nents, cents;
	uint32_t *slots; /* entry index + 1, 0 = empty */
	size_t nslots;
	rt_srcloc *locs;
	size_t nlocs, clocs;
};

static void finfo_free(void *data)
{
	struct rt_finfo_tab *tab = data;
	free(tab->ents);
	free(tab->slots);
	free(tab->locs);
	free(tab);
}

static const rt_trace_ext finfo_ext = {"frame details", finfo_free};

static size_t finfo_hash(uint64_t addr, uint32_t text)
{
	return (size_t)rt_mix64(addr ^ ((uint64_t)text << 32 | text));
}

/* The slot holding (addr, text), or the empty slot where it would go. */
static uint32_t *finfo_slot(const struct rt_finfo_tab *tab, uint64_t addr, uint32_t text)
{
	size_t mask = tab->nslots - 1;
	for (size_t i = finfo_hash(addr, text) & mask;; i = (i + 1) & mask) {
		uint32_t v = tab->slots[i];
		if (!v || (tab->ents[v - 1].addr == addr && tab->ents[v - 1].text == text))
			return &tab->slots[i];
	}
}

static void finfo_rehash(struct rt_finfo_tab *tab)
{
	free(tab->slots);
	tab->nslots = tab->nslots ? tab->nslots * 2 : 256;
	tab->slots = rt_xcalloc(tab->nslots, sizeof *tab->slots);
	for (size_t i = 0; i < tab->nents; i++)
		*finfo_slot(tab, tab->ents[i].addr, tab->ents[i].text) = (uint32_t)i + 1;
}

void rt_trace_set_frame_info(rt_trace *t, const rt_frame *f, uint32_t module,
			     const rt_srcloc *locs, uint32_t n)
{
	struct rt_finfo_tab *tab = rt_trace_ext_need(t, &finfo_ext, sizeof *tab);
	if ((tab->nents + 1) * 2 > tab->nslots)
		finfo_rehash(tab);
	uint32_t *s = finfo_slot(tab, f->addr, f->text);
	if (!*s) {
		finfo e = {f->addr, f->text, 0, 0, 0};
		RT_PUSH(tab->ents, tab->nents, tab->cents, e);
		*s = (uint32_t)tab->nents;
	}
	finfo *e = &tab->ents[*s - 1];
	e->module = module;
	e->n = n;
	e->off = (uint32_t)tab->nlocs; /* a replaced chain stays unused */
	if (n) {
		rt_grow((void **)&tab->locs, &tab->clocs, tab->nlocs + n, sizeof *tab->locs);
		memcpy(tab->locs + tab->nlocs, locs, n * sizeof *locs);
		tab->nlocs += n;
	}
}

bool rt_trace_frame_info(const rt_trace *t, const rt_frame *f, rt_frame_info *info)
{
	const struct rt_finfo_tab *tab = rt_trace_ext_get(t, &finfo_ext);
	if (!tab || !tab->nslots)
		return false;
	uint32_t v = *finfo_slot(tab, f->addr, f->text);
	if (!v)
		return false;
	const finfo *e = &tab->ents[v - 1];
	info->module = e->module;
	info->n = e->n;
	info->locs = e->n ? tab->locs + e->off : NULL;
	return true;
}
