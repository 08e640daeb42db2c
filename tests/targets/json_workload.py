# A malloc-heavy real workload for the memory tests and benchmarks: CPython (run with PYTHONMALLOC=malloc, so that every
# object is a malloc) encoding and decoding JSON documents of nested dicts, lists and strings, keeping a share of
# the decoded documents alive (the live heap grows and some of it is never freed: leaks at exit). With `pretty`, the
# documents are encoded indented with sorted keys: more of the time goes to formatting, about half as many
# allocations a second (300 rounds: 43 million allocations, 4.7 GiB, in 4.8 s here; the plain encoding makes 16 to 19
# million a second).
# With EMBERLINE_WORKLOAD_GO set to a path, it starts once that file exists (a profiler attaches to it first).
# Usage: python3 json_workload.py [ROUNDS] [pretty]
import json
import os
import sys
import time

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 800
pretty = len(sys.argv) > 2 and sys.argv[2] == "pretty"
doc = {
    "users": [
        {"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 7), "x" * (i % 50)], "score": i * 0.5,
         "address": {"street": "%d Main St" % i, "zip": "%05d" % i}}
        for i in range(2000)
    ]
}
kept = []
go = os.environ.get("EMBERLINE_WORKLOAD_GO")
while go and not os.path.exists(go):
    time.sleep(0.005)
start = time.perf_counter()
cpu = time.process_time()
total = 0
for r in range(rounds):
    text = json.dumps(doc, indent=2, sort_keys=True) if pretty else json.dumps(doc)
    back = json.loads(text)
    total += len(text) + len(back["users"])
    if r % 50 == 0:
        kept.append(back)  # never dropped
print(total, len(kept))
# The workload's own time, for the benchmarks: what the program lost to the profiler, without its start and end.
print("workload %.3f s cpu %.3f s" % (time.perf_counter() - start, time.process_time() - cpu), file=sys.stderr)
