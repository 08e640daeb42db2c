# A malloc-heavy real workload for the memory tests and benchmarks: CPython (run with PYTHONMALLOC=malloc, so that every
# object is a malloc) encoding and decoding JSON documents of nested dicts, lists and strings, keeping a share of
# the decoded documents alive (the live heap grows and some of it is never freed: leaks at exit).
# Usage: python3 json_workload.py [ROUNDS]
import json
import sys
import time

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 800
doc = {
    "users": [
        {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 7), "x" * (i % 50)], "score": i * 0.5,
         "address": {"street": "%d Main St" % i, "zip": "%05d" % i}}
        for i in range(2000)
    ]
}
kept = []
start = time.perf_counter()
cpu = time.process_time()
total = 0
for r in range(rounds):
    text = json.dumps(doc)
    back = json.loads(text)
    total += len(text) + len(back["users"])
    if r % 50 == 0:
        kept.append(back)  # never dropped
print(total, len(kept))
# The workload's own time, for the benchmarks: what the program lost to the profiler, without its start and end.
print("workload %.3f s cpu %.3f s" % (time.perf_counter() - start, time.process_time() - cpu), file=sys.stderr)
