# CPython programs of the shapes Emberline's Python frames must follow, one per mode:
#   python_shapes.py MODE SECONDS FACTS
# Each mode spends about SECONDS of CPU in functions named after it, and appends what the test cannot see from the
# profile alone (process and thread ids) to the file FACTS, a "key value" pair a line.
#   generator    produce, a generator, does the work of each item its consumer (consume) asks for
#   asyncio      outer_work, a coroutine under asyncio.run, awaits inner_work, another; both work, and the task
#                yields to the event loop every round, so that the loop steps it again
#   cthread      c_thread_work runs on a thread _thread.start_new_thread made (no threading module); the main thread
#                waits on a lock
#   fork         the program forks: the child runs child_work and leaves by os._exit, the parent runs parent_work for
#                half the time and waits for the child
#   exec         before_exec works for a short while, then the program execs its own interpreter on this script in
#                mode after-exec, which runs after_exec
#   mp           a multiprocessing pool of two processes (the fork start method) runs mp_work twice
#   spawn        the same pool under the spawn start method: each worker a new interpreter (fork then exec) that
#                imports this script as __mp_main__
#   subprocess   subprocess.run starts another interpreter (fork then exec) on this script in mode sub-child, which
#                runs sub_child_work; the parent waits
#   subinterp    a subinterpreter (_xxsubinterpreters, 3.13's _interpreters) runs code on the main thread that starts
#                a thread of its own running sub_thread_work and itself runs sub_work; facts: "subinterp skip" when
#                this version has neither module
#   deep         descend calls itself 1,000 deep; bottom, at the bottom, works
#   long         long_work works for SECONDS (the test kills the program before it ends)
#   daemon       a daemon thread runs daemon_spin forever; the main thread runs main_work and returns, so that the
#                interpreter shuts down while the daemon thread is still busy in Python
import os
import sys
import time


def note(path, key, value):
    with open(path, "a") as f:
        f.write("%s %s\n" % (key, value))


def produce(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = 0
        for i in range(20000):
            s += i * i
        yield s


def consume(seconds):
    total = 0
    for value in produce(seconds):
        total += value & 1
    return total


async def inner_work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


async def outer_work(seconds):
    import asyncio

    end = time.monotonic() + seconds
    total = 0
    while time.monotonic() < end:
        s = 0
        for i in range(10000):
            s += i
        total += await inner_work(30000) + s
        await asyncio.sleep(0)
    return total


def spin(seconds):
    end = time.monotonic() + seconds
    s = 0
    while time.monotonic() < end:
        for i in range(10000):
            s += i * i
    return s


def c_thread_work(seconds, done, facts):
    import _thread

    note(facts, "thread", _thread.get_native_id())
    end = time.monotonic() + seconds
    s = 0
    while time.monotonic() < end:
        for i in range(10000):
            s += i * i
    done.release()


def child_work(seconds):
    return spin(seconds)


def parent_work(seconds):
    return spin(seconds)


def before_exec(seconds):
    return spin(seconds)


def after_exec(seconds):
    return spin(seconds)


def mp_work(seconds):
    spin(seconds)
    return os.getpid()


def sub_child_work(seconds):
    return spin(seconds)


# The subinterpreter's program: it shares nothing with this module, so it defines its own functions (their file is
# "<string>"). The main thread runs sub_work; sub_thread_work runs on a thread the subinterpreter starts.
SUBINTERPRETER_CODE = """
import threading
import time


def sub_spin(seconds):
    end = time.monotonic() + seconds
    s = 0
    while time.monotonic() < end:
        for i in range(10000):
            s += i * i
    return s


def sub_work(seconds):
    return sub_spin(seconds)


def sub_thread_work(seconds):
    return sub_spin(seconds)


thread = threading.Thread(target=sub_thread_work, args=(SECONDS,))
thread.start()
with open(FACTS, "a") as f:
    f.write("sub-main %d\\n" % threading.get_native_id())
    f.write("sub-thread %d\\n" % thread.native_id)
sub_work(SECONDS)
thread.join()
"""


def run_subinterpreter(seconds, facts):
    try:
        import _interpreters as interpreters  # 3.13
    except ImportError:
        try:
            import _xxsubinterpreters as interpreters  # 3.8-3.12
        except ImportError:
            note(facts, "subinterp", "skip")
            return
    code = SUBINTERPRETER_CODE.replace("SECONDS", repr(seconds)).replace("FACTS", repr(facts))
    # 3.9-3.11 make an isolated subinterpreter by default, one that may not start threads: ask for a shared one (3.8
    # has no such choice, 3.12 and 3.13's isolated ones allow threads).
    try:
        interp = interpreters.create(isolated=False) if sys.version_info[:2] in ((3, 9), (3, 10), (3, 11)) else None
    except TypeError:
        interp = None
    if interp is None:
        interp = interpreters.create()
    try:
        failed = interpreters.run_string(interp, code)
    finally:
        interpreters.destroy(interp)
    # 3.13's run_string returns what the code raised; the older ones raise RunFailedError.
    if failed is not None:
        raise RuntimeError("the subinterpreter's code failed: %r" % (failed,))


def bottom(seconds):
    end = time.monotonic() + seconds
    s = 0
    while time.monotonic() < end:
        for i in range(10000):
            s += i * i
    return s


def descend(n, seconds):
    if n == 0:
        return bottom(seconds)
    return descend(n - 1, seconds)


def long_work(seconds):
    return spin(seconds)


def daemon_spin():
    s = 0
    while True:
        for i in range(10000):
            s += i * i


def main_work(seconds):
    return spin(seconds)


def main():
    mode, seconds, facts = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    note(facts, "pid", os.getpid())
    if mode == "generator":
        consume(seconds)
    elif mode == "asyncio":
        import asyncio

        asyncio.run(outer_work(seconds))
    elif mode == "cthread":
        import _thread

        note(facts, "main", _thread.get_native_id())
        done = _thread.allocate_lock()
        done.acquire()
        _thread.start_new_thread(c_thread_work, (seconds, done, facts))
        done.acquire()
    elif mode == "fork":
        child = os.fork()
        if child == 0:
            child_work(seconds)
            os._exit(0)
        note(facts, "child", child)
        parent_work(seconds / 2)
        _, status = os.waitpid(child, 0)
        note(facts, "child-status", status)
    elif mode == "exec":
        before_exec(0.3)
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), "after-exec", str(seconds), facts])
    elif mode == "after-exec":
        after_exec(seconds)
    elif mode == "mp":
        import multiprocessing

        # The fork start method, Linux's default through 3.13 (3.14 makes forkserver the default): the workers are
        # forked children of this interpreter, each with its own agent ring, found by the session as they start.
        if "fork" not in multiprocessing.get_all_start_methods():
            note(facts, "skip", "fork")
            return
        with multiprocessing.get_context("fork").Pool(2) as pool:
            for worker in sorted(set(pool.map(mp_work, [seconds, seconds], chunksize=1))):
                note(facts, "worker", worker)
    elif mode == "spawn":
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(2) as pool:
            for worker in sorted(set(pool.map(mp_work, [seconds, seconds], chunksize=1))):
                note(facts, "worker", worker)
    elif mode == "subprocess":
        import subprocess

        subprocess.run([sys.executable, os.path.abspath(__file__), "sub-child", str(seconds), facts], check=True)
    elif mode == "sub-child":
        sub_child_work(seconds)
    elif mode == "subinterp":
        import threading

        note(facts, "main", threading.get_native_id())
        run_subinterpreter(seconds, facts)
    elif mode == "deep":
        sys.setrecursionlimit(1500)
        descend(1000, seconds)
    elif mode == "long":
        long_work(seconds)
    elif mode == "daemon":
        import threading

        note(facts, "main", threading.get_native_id())
        thread = threading.Thread(target=daemon_spin, name="spinner", daemon=True)
        thread.start()
        note(facts, "thread", thread.native_id)
        main_work(seconds)


# A guard, not a bare call: the spawn start method's workers import this script again (as __mp_main__).
if __name__ == "__main__":
    main()
