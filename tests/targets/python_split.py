# A CPython program whose split is known by construction, for Emberline's Python frames:
#   cpu SECONDS [thread]  a method (Worker.hot), a plain function (plain) and a nested function (outer.<locals>.cool)
#                         run the same loop body 60,000, 30,000 and 10,000 times a round: CPU time splits 60/30/10.
#                         With "thread", the rounds run on a second thread (named "splitter"), the main one waits.
#   alloc ROUNDS          big_three allocates three 1 MiB blocks a round and small_one one (each freed at once): the
#                         bytes they allocate are 3 to 1.
#   objects N             objects_three keeps 3N small bytes objects (pymalloc's: 97 bytes each) and objects_one N.
#   wait SECONDS          napping sleeps on the main thread while lock_waiter waits on a lock on a second thread
#                         (named "waiter"), both for SECONDS: wall time off a CPU, under their Python frames.
#   callback SECONDS      json's C encoder calls a Python function (encode_default) for every object it cannot encode:
#                         the C accelerator's frames lie between Python frames.
import json
import sys
import threading
import time


class Worker:
    def hot(self, n):
        s = 0
        for i in range(n):
            s += i * i
        return s


def plain(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def outer():
    def cool(n):
        s = 0
        for i in range(n):
            s += i * i
        return s

    return cool


def split(seconds):
    worker = Worker()
    cool = outer()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        worker.hot(60000)
        plain(30000)
        cool(10000)


def big_three():
    for _ in range(3):
        block = bytearray(1 << 20)
        del block


def small_one():
    block = bytearray(1 << 20)
    del block


# Small objects (pymalloc's, from its arenas), kept three for one, in lists made whole first (growth is not linear).
def objects_three(n, keep):
    for i in range(3 * n):
        keep[i] = bytes(64)


def objects_one(n, keep):
    for i in range(n):
        keep[i] = bytes(64)


def napping(seconds):
    time.sleep(seconds)


def lock_waiter(lock):
    lock.acquire()


class Opaque:
    pass


def encode_default(value):
    s = 0
    for i in range(2000):
        s += i
    return s


def callback(seconds):
    values = [Opaque() for _ in range(50)]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        json.dumps(values, default=encode_default)


# deep DEPTH SECONDS: the cpu mode's split run DEPTH Python frames deep (the module, main, the descent, split and the
# function running), for the cost of walking a deep chain at each sample.
def descend(depth, seconds):
    if depth > 0:
        return descend(depth - 1, seconds)
    return split(seconds)


def main():
    mode = sys.argv[1]
    if mode == "cpu":
        seconds = float(sys.argv[2])
        if len(sys.argv) > 3 and sys.argv[3] == "thread":
            thread = threading.Thread(target=split, args=(seconds,), name="splitter")
            thread.start()
            thread.join()
        else:
            split(seconds)
    elif mode == "alloc":
        for _ in range(int(sys.argv[2])):
            big_three()
            small_one()
    elif mode == "objects":
        n = int(sys.argv[2])
        three, one = [None] * (3 * n), [None] * n
        objects_three(n, three)
        objects_one(n, one)
    elif mode == "wait":
        seconds = float(sys.argv[2])
        lock = threading.Lock()
        lock.acquire()
        waiter = threading.Thread(target=lock_waiter, args=(lock,), name="waiter")
        waiter.start()
        napping(seconds)
        lock.release()
        waiter.join()
    elif mode == "rounds":
        # A fixed amount of work (the benchmarks' unit), timed by the program itself: "work SECONDS cpu SECONDS" on
        worker, cool = Worker(), outer()  # stderr, its wall time and its thread's CPU time (what a sampler's
        start, cpu = time.perf_counter(), time.thread_time()  # handler running on it costs, without the steal)
        for _ in range(int(sys.argv[2])):
            worker.hot(60000)
            plain(30000)
            cool(10000)
        print("work %.4f cpu %.4f" % (time.perf_counter() - start, time.thread_time() - cpu), file=sys.stderr)
    elif mode == "callback":
        callback(float(sys.argv[2]))
    elif mode == "deep":
        descend(max(0, int(sys.argv[2]) - 5), float(sys.argv[3]))


main()

# tests/data/pprof/python-cpu.pprof was recorded from this script: a line added or removed above Worker.hot's loop
# means recording it again (tests/data/pprof/README.md says how).
