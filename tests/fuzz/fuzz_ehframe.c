/* libFuzzer harness for the tracer's call-frame reader
 * (src/preload/ehframe.c), which parses the memory of loaded modules
 * from inside malloc. Input: a 4-byte little-endian length, then a
 * loaded segment's bytes from its .eh_frame_hdr on (the seeds in
 * corpus-ehframe/ are real ones, cut out of test programs by
 * tests/fuzz/ehframe_seed.sh): the first `length` bytes are the header's
 * view, the whole rest the .eh_frame's, both placed at one address, as
 * in a process. Every read outside the views is an ASan report, as the
 * views are the input's own bytes. Looked up: every address of the
 * header's table and its neighbours, and a spread of others. Invariant
 * checked (abort otherwise): a row found covers the address asked. */
#include "ehframe.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x400000u

static void lookup(const rt_eh_src *s, uint64_t pc)
{
	rt_eh_row row;
	if (rt_eh_find(s, pc, 6, &row) == 0 && (pc < row.start || pc >= row.end))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint32_t hdr_len = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
			   (uint32_t)data[3] << 24;
	const uint8_t *seg = data + 4;
	size_t n = size - 4;
	if (hdr_len > n)
		hdr_len = (uint32_t)n;
	rt_eh_src s = {{seg, BASE, BASE + hdr_len}, {seg, BASE, BASE + n}};
	uint64_t frame;
	(void)rt_eh_frame_of(&s.hdr, &frame);
	/* the table's entries, read as the reader would (datarel sdata4) */
	for (size_t at = 12; at + 8 <= hdr_len && at < 12 + 8 * 64; at += 8) {
		int32_t loc;
		memcpy(&loc, seg + at, 4);
		uint64_t pc = BASE + (uint64_t)(int64_t)loc;
		lookup(&s, pc);
		lookup(&s, pc + 1);
		lookup(&s, pc - 1);
	}
	for (uint64_t pc = 0; pc < 0x800000u; pc += 0x20000u)
		lookup(&s, pc + (n & 0xff));
	return 0;
}
