#!/usr/bin/env bash
# rtrace run populates the trace's pages before the tracer writes them
# (src/cli/run_prefault.c): the traced program's stores into its trace
# then fault no page in. The tracer maps its first 8 MiB segment without
# readahead, so without it each of that segment's 2048 pages was a major
# fault of the program (later segments fault with readahead: mostly
# minor ones); with it, a hundred or two per trace are left (the chunks
# a thread takes the moment the file grows, before rtrace run's thread
# sees it). Bound here: half the segment's pages (a busy machine may keep
# rtrace run's thread from running for a while: the program sleeps after
# each burst of records to let it). The trace reads back whole either way.
. "$(dirname "$0")/lib.sh"
: "${PROGRAMS:?}"
P=$PROGRAMS/tp_pagefaults
cd "$TMP" || exit 1

BURSTS=200 PAIRS=1500 # a burst: less than a chunk a thread
for threads in 1 2; do
  for mode in "" --compress=no; do
    name="$threads thread(s)${mode:+ $mode}"
    rm -rf d && mkdir d
    # shellcheck disable=SC2086
    "$RTRACE" run -q $mode -o d -- "$P" $BURSTS $PAIRS "$threads" > out 2> err && ok || bad "$name: status: $(cat err)"
    f=$(ls d/tp_pagefaults-*.rtrace)
    [ -z "$(ls d/*.raw 2> /dev/null)" ] && ok || bad "$name: raw file left"
    "$RTRACE" convert --to text -o t.txt "$f" 2> err && ok || bad "$name: convert: $(cat err)"
    calls=$(grep -c '^[0-9]' t.txt)
    want=$((2 * BURSTS * PAIRS * threads))
    [ "$calls" -ge "$want" ] && ok || bad "$name: $calls calls, expected $want and more"
    maj=$(awk '$1 == "majflt" { print $2 }' out)
    echo "prefault: $name: $maj major faults (2048 pages in the first segment)"
    [ -n "$maj" ] && [ $((maj * 2)) -lt 2048 ] && ok || bad "$name: $maj major faults"
  done
done

finish
