/* Collapsed stacks of a heap profile: one line per allocation site,
 * "outer;...;inner weight", the input of flamegraph.pl, inferno and
 * speedscope. Frames are named by what the resolver or the reader
 * recorded (rt_trace_frame_info), an inlined call being a frame of its
 * own as in the viewers' other inputs; the tools take everything before
 * the last space as the stack, so only ';' and line ends are replaced. */
#include "rtrace/heapprof.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static void put_name(FILE *fp, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, fp);
}

/* One frame, outermost function first when calls were inlined into it. */
static void put_frame(FILE *fp, const rt_trace *t, const rt_frame *f)
{
	rt_frame_info info;
	if (rt_trace_frame_info(t, f, &info) && info.n) {
		bool named = false;
		for (uint32_t k = info.n; k-- > 0;) {
			if (info.locs[k].fn == RT_NONE)
				continue;
			if (named)
				fputc(';', fp);
			put_name(fp, rt_trace_str(t, info.locs[k].fn));
			named = true;
		}
		if (named)
			return;
	}
	const char *mod = rt_trace_module_at(t, f->addr);
	const char *base = mod ? strrchr(mod, '/') : NULL;
	if (mod) {
		fputc('[', fp);
		put_name(fp, base ? base + 1 : mod);
		fputs("] ", fp);
	}
	fprintf(fp, "0x%" PRIx64, f->addr);
}

int rt_hp_write_collapsed(const rt_hp *h, const rt_trace *t, rt_hp_cost_type type, FILE *fp)
{
	for (size_t i = 0; i < rt_hp_site_count(h); i++) {
		const rt_hp_site *s = rt_hp_site_at(h, i);
		uint64_t w = rt_hp_cost_of(&s->cost, type);
		if (!w)
			continue;
		uint32_t n = s->bt == RT_NONE ? 0 : rt_trace_bt_len(t, s->bt);
		const rt_frame *f = n ? rt_trace_bt_frames(t, s->bt) : NULL;
		if (!n)
			fputs("[no backtrace]", fp);
		for (uint32_t k = n; k-- > 0;) {
			put_frame(fp, t, &f[k]);
			if (k)
				fputc(';', fp);
		}
		fprintf(fp, " %" PRIu64 "\n", w);
	}
	if (fflush(fp) || ferror(fp))
		return errno ? -errno : -EIO;
	return 0;
}
