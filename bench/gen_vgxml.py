#!/usr/bin/env python3
"""Writes a big Valgrind XML file for bench/vgxml.sh: a real memcheck
document (tests/data/vgxml/memcheck.xml) whose errors, suppressions and
client messages are repeated until the file has the requested size, each
error with its own <unique> id and the addresses in its texts varied (the
stacks stay those of the real run, as in a long run that hits the same
places again and again).

    gen_vgxml.py TEMPLATE.xml MEGABYTES > OUT.xml
"""
import re
import sys


def main():
    template, megabytes = sys.argv[1], float(sys.argv[2])
    doc = open(template).read()
    start = doc.index('<error>')
    end = doc.index('<status>', start)
    head, body, tail = doc[:start], doc[start:end], doc[end:]
    # every <unique> and heap address of the body becomes a field
    body = body.replace('%', '%%')
    uniques = len(re.findall(r'<unique>0x[0-9a-f]+</unique>', body))
    body = re.sub(r'<unique>0x[0-9a-f]+</unique>', '<unique>0x%x</unique>', body)
    addrs = len(re.findall(r'Address 0x[0-9a-f]+', body))
    body = re.sub(r'Address 0x[0-9a-f]+', 'Address 0x%x', body)
    fields = []
    for m in re.finditer(r'<unique>0x%x</unique>|Address 0x%x', body):
        fields.append('u' if m.group(0).startswith('<unique>') else 'a')
    out = sys.stdout
    out.write(head)
    size, want, uid, rep = len(head), int(megabytes * 1e6), 0, 0
    while size < want:
        values = []
        for f in fields:
            if f == 'u':
                values.append(uid)
                uid += 1
            else:
                values.append(0x4a00000 + (rep * 4096 + len(values) * 16) % 0x10000000)
        block = body % tuple(values)
        out.write(block)
        size += len(block)
        rep += 1
    out.write(tail)
    print(f'{rep} copies, {uid} errors, {uniques} uniques and {addrs} addresses per copy',
          file=sys.stderr)


main()
