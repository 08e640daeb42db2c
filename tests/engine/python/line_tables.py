# Prints, for every code object of a test module, its first line, its raw line table (hex) and the line of every
# instruction as this interpreter's own API gives it: dis.findlinestarts (3.8, 3.9), co_lines() (3.10) or
# co_positions() (3.11+). tst_python_lines checks Emberline's decoders against it. One JSON object a line.
import dis
import json
import sys

GAP = "\n" * 300

SOURCE = (
    "def loop(n):\n"
    "    total = 0\n"
    "    for i in range(n):\n"
    "        if i % 3:\n"
    "            total += i\n"
    "        else:\n"
    "            total -= 1\n"
    "    while total > 10:\n"
    "        total //= 2\n"
    "    return total\n"
    "\n"
    "\n"
    "def far_lines(x):\n"
    "    a = x + 1\n" + GAP + "    b = a * 2\n" + GAP + GAP + "    c = (b\n" + GAP + "         + a)\n"
    "    return c\n"
    "\n"
    "def backwards(x):\n"
    "    return (\n"
    "        x\n"
    "        +\n"
    "        len(str(x))\n"
    "    ) if x else [\n"
    "        y for y in range(3)\n"
    "    ]\n"
    "\n"
    "def long_line(f):\n"
    "    return [" + ", ".join("f(%d)" % i for i in range(200)) + "]\n"
    "\n"
    "\n"
    "\n"
    "def empty_lines(x):\n"
    "\n"
    "\n"
    "    y = x\n"
    "\n"
    "\n"
    "    try:\n"
    "        y = 1 / y\n"
    "    except ZeroDivisionError:\n"
    "        y = 0\n"
    "    finally:\n"
    "        y += 1\n"
    "    return y\n"
    "\n"
    "class Worker:\n"
    "    def hot(self, values):\n"
    "        def inner(v):\n"
    "            return v * 2\n"
    "        return sum(inner(v) for v in values)\n"
    "\n"
    "async def coro(x):\n"
    "    await x\n"
    "    return x\n"
)


def code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from code_objects(const)


def lines_of(code):
    units = len(code.co_code) // 2
    if sys.version_info >= (3, 11):
        return [[2 * i, -1 if p[0] is None else p[0]] for i, p in enumerate(code.co_positions())]
    if sys.version_info >= (3, 10):
        out = []
        for start, end, line in code.co_lines():
            for offset in range(start, end, 2):
                out.append([offset, -1 if line is None else line])
        return out
    starts = list(dis.findlinestarts(code))
    out = []
    current = code.co_firstlineno
    k = 0
    for i in range(units):
        while k < len(starts) and starts[k][0] <= 2 * i:
            current = starts[k][1]
            k += 1
        out.append([2 * i, current])
    return out


def main():
    module = compile(SOURCE, "line_tables_source.py", "exec")
    for code in code_objects(module):
        table = code.co_linetable if sys.version_info >= (3, 10) else code.co_lnotab
        print(json.dumps({
            "name": code.co_name,
            "first": code.co_firstlineno,
            "table": table.hex(),
            "lines": lines_of(code),
        }))


main()
