#!/usr/bin/env python3
"""Where the traced churn's time goes, per event: a `perf report --stdio
--no-children --sort dso,symbol` of `churn N T` under the tracer, its
self-time samples added up per part of the tracer, as nanoseconds per
call record (N x T x 2 events: a malloc and a free an iteration).

    perf_events.py REPORT.txt CPU_SECONDS EVENTS

CPU_SECONDS is the profile's total (cpu-clock's event count / 1e9). Under
`rtrace run`, report the program's process alone (`--comms churn
--percentage relative`, as tracer.sh does): rtrace run's own threads
(compressing, populating the trace's pages) are not the program's. See
bench/README.md, "Allocation-heavy code: where each nanosecond goes"."""
import re
import sys

LIBC_TIME = ("clock_gettime@@GLIBC_2.17", "__clock_gettime")
PARTS = [
    ("program and its allocator (churn, libc)",
     lambda d, s: d == "churn" or (d.startswith("libc") and s not in LIBC_TIME)),
    ("unwinder (cfi.c walk and memo check, unwind.c)",
     lambda d, s: s in ("rt_cfi_backtrace", "unwind", "rt_backtrace", "table_get", "walk_fresh", "intern")),
    ("live-block table (heap.c)",
     lambda d, s: (s.startswith("rt_heap_") and s != "rt_heap_bt")
     or s.split(".")[0] in ("st_ready", "st_delete", "st_grow", "rt_fn_family", "t_take", "t_insert", "remove_elsewhere", "front_claim")),
    ("record encoding (record.c: varints)",
     lambda d, s: s in ("call_head", "call_tail", "rt_record_call_bt", "rt_record_call")),
    ("reserve and commit (writer.c; inline since git fc18add)",
     lambda d, s: s in ("rt_reserve", "rt_commit", "rt_reserve_slow", "chunk_new")),
    ("clock read (vdso clock_gettime)", lambda d, s: s in ("__vdso_clock_gettime", "rt_now_ns") + LIBC_TIME),
    ("atomic call index", lambda d, s: s == "rt_next_index"),
    ("interposers (malloc, free)", lambda d, s: (d.startswith("librtrace") or d.endswith(".so") and not d.startswith("lib")) and s in ("malloc", "free")),
    ("kernel (page faults on the trace's pages, scheduling)", lambda d, s: d == "[kernel.kallsyms]"),
]


def main():
    report, cpu, events = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    totals = {}
    for line in open(report):
        m = re.match(r"\s+([0-9.]+)%\s+(\S+)\s+\[.\]\s+(\S+)", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(3)
        name = next((n for n, f in PARTS if f(dso, sym)), "other")
        totals[name] = totals.get(name, 0.0) + pct
    for name in [n for n, _ in PARTS] + ["other"]:
        pct = totals.get(name, 0.0)
        print("  %-56s %5.1f%%  %6.1f ns/event" % (name, pct, pct / 100 * cpu / events * 1e9))
    print("  %-56s %5.1f%%  %6.1f ns/event" % ("total", sum(totals.values()), cpu / events * 1e9))


if __name__ == "__main__":
    main()
