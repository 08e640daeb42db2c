# Run by python_host inside its embedded interpreter (tst_agent_python): the host gives HOOK and BENCH, the addresses
# of two of its C functions. Each probe calls HOOK with the truth of its own stack, from the interpreter's frames
# (traceback.walk_stack): each frame's name as the version names code (co_qualname from 3.11, co_name before), file,
# line, and whether one call of the eval loop must start there: E (called from C: map, next, the event loop, exec,
# the thread's start), P (called from Python code, so never before 3.11's inlined calls), ? (the standard library's
# frames, not asserted). The host walks the same stack with the agent and prints both.
import asyncio
import ctypes
import sys
import threading
import traceback

_hook = ctypes.CFUNCTYPE(None, ctypes.c_char_p)(HOOK)  # noqa: F821 (given by the host)
_bench = ctypes.CFUNCTYPE(None)(BENCH)  # noqa: F821
ENTERED = {"<module>", "inner", "numbers", "coroutine"}


def name_of(code):
    return getattr(code, "co_qualname", code.co_name)


def truth(label, stack):
    lines = [label]
    for frame, line in stack:
        code = frame.f_code
        if frame.f_back is None:
            expect = "E"
        elif code.co_filename != __file__:
            expect = "?"
        else:
            expect = "E" if code.co_name in ENTERED else "P"
        lines.append("%s\t%s\t%d\t%s" % (name_of(code), code.co_filename, line, expect))
    return "\n".join(lines).encode()


def probe(label):
    # One line: the frame's line is the same when the stack is taken and when the host walks it.
    stack = list(traceback.walk_stack(sys._getframe())); _hook(truth(label, stack))  # noqa: E702


def plain(label):
    probe(label)


def outer(label):
    def inner(_):
        plain(label)
        return 0

    return list(map(inner, [0]))


class Worker:
    def hot(self, label):
        return outer(label)


class Runner(threading.Thread):
    def run(self):
        Worker().hot("thread")


def numbers():
    plain("generator")
    yield 1


async def coroutine():
    plain("coroutine")


def deep(n):
    if n:
        return deep(n - 1)
    _bench()


def main():
    Worker().hot("main")
    runner = Runner()
    runner.start()
    runner.join()
    next(numbers())
    asyncio.run(coroutine())
    deep(100)


main()
