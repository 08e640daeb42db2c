# A long-running Python service of steady habits, for checking that attaching to it and detaching leaves it as it was:
# every 50 ms it encodes and decodes a JSON document and keeps the last 2,000 results (its heap level from the start); a
# second thread sleeps 200 ms at a time and counts the sleeps cut short. Each minute it prints one line:
#   minute N iterations I cpu_us_per_iteration C rss_kib R short_sleeps S
# It ends, printing "done", when its standard input closes.
import collections
import json
import os
import select
import sys
import threading
import time

short_sleeps = 0


def sleeper(stop):
    global short_sleeps
    while not stop.is_set():
        start = time.monotonic()
        time.sleep(0.2)
        if time.monotonic() - start < 0.2:
            short_sleeps += 1


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def main():
    stop = threading.Event()
    thread = threading.Thread(target=sleeper, args=(stop,))
    thread.start()
    document = {"items": [{"id": i, "name": "item %d" % i, "tags": ["a", "b", str(i)]} for i in range(60)]}
    kept = collections.deque((json.loads(json.dumps(document)) for _ in range(2000)), maxlen=2000)
    minute, iterations, cpu_start, minute_start = 0, 0, time.process_time(), time.monotonic()
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], 0.05)
        if ready and not sys.stdin.buffer.read1(4096):
            break
        kept.append(json.loads(json.dumps(document)))
        iterations += 1
        if time.monotonic() - minute_start >= 60:
            cpu = time.process_time() - cpu_start
            minute += 1
            print("minute %d iterations %d cpu_us_per_iteration %.1f rss_kib %d short_sleeps %d"
                  % (minute, iterations, cpu * 1e6 / iterations, rss_kib(), short_sleeps), flush=True)
            iterations, cpu_start, minute_start = 0, time.process_time(), time.monotonic()
    stop.set()
    thread.join()
    print("done", flush=True)


main()
