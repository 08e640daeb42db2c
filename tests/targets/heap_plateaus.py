# A live heap that climbs in steps and holds each step, for the in-use accuracy benchmark: CPython (run with
# PYTHONMALLOC=malloc, so that every object is a malloc) grows a heap of bytes objects and tuples of mixed sizes
# (most small, some of tens of KiB) to each of the given sizes in MiB and then sleeps HOLD seconds, so that the
# flushes that end while it sleeps see a heap that does not move. The same seed gives the same heap every run.
# Prints "plateau MIB START END" (wall-clock seconds) for each step, on stderr, and into FILE when one is given.
# Usage: python3 heap_plateaus.py MIB[,MIB...] [HOLD] [FILE]
import random
import sys
import time

steps = [int(s) for s in sys.argv[1].split(",")]
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
out = open(sys.argv[3], "w") if len(sys.argv) > 3 else None
rng = random.Random(7)
kept = []
size = 0
for mib in steps:
    while size < mib << 20:
        r = rng.random()
        if r < 0.70:
            n = rng.randrange(16, 512)
        elif r < 0.97:
            n = rng.randrange(512, 16384)
        else:
            n = rng.randrange(16384, 262144)
        kept.append((bytes(n), n))
        size += n
    start = time.time()
    time.sleep(hold)
    line = "plateau %d %.6f %.6f" % (mib, start, time.time())
    print(line, file=sys.stderr, flush=True)
    if out:
        print(line, file=out, flush=True)
print("kept %d objects, %d bytes" % (len(kept), size))
