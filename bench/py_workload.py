"""JSON and regex workload for bench/tracer.sh (about 1-3 s with Debian's
python3 on the benchmark machine).

Builds nested structures of dicts, lists and strings, dumps them to JSON
and loads them back, then runs a handful of regular expressions over
generated text. Everything is seeded, so the output (counts and checksums)
is the same on every run: bench/tracer.sh compares it across the tracers.

usage: python3 bench/py_workload.py [SCALE]   (default 1.0)
"""
import hashlib
import json
import random
import re
import sys

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
rng = random.Random(12345)

WORDS = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
    "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho",
    "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "malloc",
    "free", "realloc", "trace", "stack", "frame", "heap", "leak",
]


def word():
    return rng.choice(WORDS)


def make_node(depth):
    """A random tree: dicts of lists of dicts, with strings, ints, floats."""
    if depth == 0 or rng.random() < 0.15:
        r = rng.random()
        if r < 0.4:
            return "%s-%d" % (word(), rng.randrange(100000))
        if r < 0.7:
            return rng.randrange(-10**9, 10**9)
        if r < 0.9:
            return round(rng.uniform(-1e6, 1e6), 3)
        return rng.random() < 0.5
    if rng.random() < 0.5:
        return {"%s_%d" % (word(), i): make_node(depth - 1) for i in range(rng.randrange(2, 7))}
    return [make_node(depth - 1) for _ in range(rng.randrange(2, 7))]


def count(node):
    if isinstance(node, dict):
        return 1 + sum(count(v) for v in node.values())
    if isinstance(node, list):
        return 1 + sum(count(v) for v in node)
    return 1


def json_phase(rounds):
    digest = hashlib.sha256()
    nodes = 0
    for i in range(rounds):
        doc = {"id": i, "name": word(), "tree": make_node(6)}
        text = json.dumps(doc, sort_keys=True)
        back = json.loads(text)
        assert back == doc
        pretty = json.dumps(back, indent=2, sort_keys=True)
        nodes += count(back)
        digest.update(text.encode())
        digest.update(str(len(pretty)).encode())
    return nodes, digest.hexdigest()[:16]


def make_text(lines):
    out = []
    for i in range(lines):
        kind = rng.randrange(4)
        if kind == 0:
            out.append("%04d-%02d-%02d %02d:%02d:%02d INFO %s allocated %d bytes at 0x%012x"
                       % (2020 + rng.randrange(6), 1 + rng.randrange(12), 1 + rng.randrange(28),
                          rng.randrange(24), rng.randrange(60), rng.randrange(60),
                          word(), rng.randrange(1, 1 << 20), rng.randrange(1 << 47)))
        elif kind == 1:
            out.append("user %s.%s@%s.example.org called %s(%d, %d)"
                       % (word(), word(), word(), word(), rng.randrange(1000), rng.randrange(1000)))
        elif kind == 2:
            out.append(" ".join(word() for _ in range(rng.randrange(5, 20))))
        else:
            out.append("ERROR [%s] %s failed: errno=%d (%s)"
                       % (word(), word(), rng.randrange(1, 133), " ".join(word() for _ in range(3))))
    return "\n".join(out)


PATTERNS = [
    re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})"),
    re.compile(r"0x[0-9a-f]{12}"),
    re.compile(r"\b[\w.]+@[\w.]+\.org\b"),
    re.compile(r"(\w+)\((\d+), (\d+)\)"),
    re.compile(r"^ERROR \[(\w+)\] .*errno=(\d+)", re.M),
    re.compile(r"\b(alpha|omega|leak|heap)\w*\b"),
    re.compile(r"(?i)allocated\s+(\d+)\s+bytes"),
]


def regex_phase(rounds, lines):
    total = 0
    digest = hashlib.sha256()
    for _ in range(rounds):
        text = make_text(lines)
        for pat in PATTERNS:
            found = pat.findall(text)
            total += len(found)
            digest.update(repr(found[:50]).encode())
        swapped = PATTERNS[1].sub(lambda m: m.group(0).upper(), text)
        words = re.split(r"\s+", swapped)
        total += len(words)
        digest.update(str(len(swapped)).encode())
    return total, digest.hexdigest()[:16]


nodes, jd = json_phase(int(300 * scale))
matches, rd = regex_phase(int(12 * scale), 8000)
print("py_workload: json nodes %d digest %s; regex matches %d digest %s" % (nodes, jd, matches, rd))
