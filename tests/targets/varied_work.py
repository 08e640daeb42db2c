"""A varied CPython workload for unwinding tests and benchmarks: json, re, zlib, hashlib, sorting with a key, a
recursive walk of a nested structure and some string work, in turn, for SECONDS (default 5). The stacks go through
the interpreter, libpython's C modules and their libraries (libz, libcrypto or CPython's own hashes, libc), many of
them distinct.

    python3 varied_work.py [SECONDS]
"""
import hashlib
import json
import random
import re
import sys
import time
import zlib

rng = random.Random(53)
WORDS = ["ember", "line", "stack", "frame", "unwind", "table", "sample", "module", "python", "record"]


def make_tree(depth):
    if depth == 0:
        return {"w": rng.choice(WORDS), "n": rng.randint(0, 1000), "f": rng.random()}
    return {"kids": [make_tree(depth - 1) for _ in range(3)], "tag": rng.choice(WORDS)}


def walk(node, depth=0):
    if "kids" in node:
        return sum(walk(k, depth + 1) for k in node["kids"]) + len(node["tag"])
    return node["n"] + depth


def do_json(tree):
    text = json.dumps(tree, sort_keys=True, indent=1)
    return len(json.loads(text))


PATTERN = re.compile(r"(\w+)-(\d+)\s+(?:ember|line)?")


def do_re(text):
    return sum(1 for _ in PATTERN.finditer(text)) + len(re.sub(r"\d+", "#", text[:20000]))


def do_zlib(data):
    packed = zlib.compress(data, 6)
    return len(zlib.decompress(packed))


def do_hash(data):
    h = hashlib.sha256()
    for i in range(0, len(data), 4096):
        h.update(data[i:i + 4096])
    return len(hashlib.md5(data).hexdigest()) + len(h.hexdigest())


def do_sort(records):
    return len(sorted(records, key=lambda r: (r[1], r[0]))[0][0])


def do_strings(n):
    parts = []
    for i in range(n):
        parts.append(("%s-%d" % (WORDS[i % len(WORDS)], i)).upper().lower())
    return len(" ".join(parts).split(" "))


def recurse(n, work):
    return recurse(n - 1, work) if n else work()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    tree = make_tree(6)
    text = " ".join("%s-%d ember" % (rng.choice(WORDS), i) for i in range(20000))
    data = text.encode() * 4
    records = [(rng.choice(WORDS), rng.randint(0, 10**6)) for _ in range(20000)]
    jobs = [
        lambda: walk(tree),
        lambda: do_json(tree),
        lambda: do_re(text),
        lambda: do_zlib(data),
        lambda: do_hash(data),
        lambda: do_sort(records),
        lambda: do_strings(20000),
    ]
    end = time.monotonic() + seconds
    total = 0
    i = 0
    while time.monotonic() < end:
        total += recurse(5 + i % 20, jobs[i % len(jobs)])
        i += 1
    print(total % 997, i)


if __name__ == "__main__":
    main()
