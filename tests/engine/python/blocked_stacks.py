# A program whose threads block at known places, for tst_python_remote: the main thread in a plain function called
# by a nested function (called through map(), from C) of a function called by a method; a second thread waiting on
# an event; a third running an asyncio coroutine that awaits another which iterates a generator that waits. Once all
# are blocked, a reporter thread prints each one's stack as the interpreter itself sees it (qualified names where
# the version has them), then blocks too. Closing stdin ends the program.
import asyncio
import json
import linecache
import os
import sys
import threading
import time


def frames_of(frame):
    out = []
    while frame is not None:
        code = frame.f_code
        out.append({
            "name": getattr(code, "co_qualname", code.co_name),
            "file": code.co_filename,
            "line": frame.f_lineno,
        })
        frame = frame.f_back
    return out


def plain(fd):
    return os.read(fd, 1)


class Worker:
    def hot(self, fd):
        return outer(fd)


def outer(fd):
    def inner(x):
        plain(fd)
        return x

    return list(map(inner, [0]))


def waiting(event):
    event.wait()


def ticks(event):
    yield 1
    event.wait()
    yield 2


async def child(event):
    for _ in ticks(event):
        pass


async def parent(event):
    await child(event)


def run_loop(event):
    asyncio.run(parent(event))


def blocked_at(frame, function, text):
    return frame is not None and frame.f_code.co_name == function and \
        text in linecache.getline(frame.f_code.co_filename, frame.f_lineno)


def report(threads, hold):
    deadline = time.time() + 30
    while time.time() < deadline:
        frames = sys._current_frames()
        tops = [frames.get(t.ident) for t in threads]
        if blocked_at(tops[0], "plain", "os.read") and all(blocked_at(f, "wait", "acquire(") for f in tops[1:]):
            break
        time.sleep(0.02)
    frames = sys._current_frames()
    out = {"version": list(sys.version_info[:3]), "threads": [
        {"native_id": t.native_id, "role": role, "frames": frames_of(frames.get(t.ident))}
        for t, role in zip(threads, ("main", "waiting", "asyncio"))]}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os.read(hold, 1)


def main():
    event = threading.Event()
    waiter = threading.Thread(target=waiting, args=(event,), daemon=True)
    looper = threading.Thread(target=run_loop, args=(event,), daemon=True)
    waiter.start()
    looper.start()
    hold, _keep = os.pipe()
    reporter = threading.Thread(target=report, args=([threading.main_thread(), waiter, looper], hold), daemon=True)
    reporter.start()
    Worker().hot(sys.stdin.fileno())


main()
