#pragma once

// CPython's memory as the agent counts it. The agent's hooks count what reaches malloc; CPython's small-object
// allocator (pymalloc) serves objects of up to 512 bytes from arenas it maps itself (mmap: 256 KiB each up to 3.9,
// 1 MiB from 3.10), which never reach malloc. So the agent puts itself in front of the interpreter's arena allocator
// (PyObject_SetArenaAllocator) by default: an arena counts as one allocation, of the Python code whose object needed
// it, and in the heap. Asked for (--python-allocators), it puts its own functions in front of the interpreter's object
// and memory domains instead (PyMem_SetAllocator, as a tracing allocator does): each call is counted and sampled as a
// malloc would be, with the Python frames that made it; what the Python allocator itself takes from malloc inside the
// call (a large object's block) is that one call, not another, and arenas are not counted apart.
//
// Installed before the interpreter starts (the agent's start in a launched program): replacing the allocators of a
// running interpreter needs its lock, which an agent loaded into a running program does not hold (a block must never
// reach a free other than its allocator's). A program that sets allocators of its own as it starts (PYTHONMALLOC,
// -X dev, an embedder) replaces these: the image's state then says so.
//
// Thread: install at the agent's start (before main); the functions on every thread that holds the interpreter's lock
// (arenas and the object and memory domains are only used with it held).

#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// CPython's PyMemAllocatorEx and PyObjectArenaAllocator, the same from 3.8 to 3.13 (Include/cpython/pymem.h,
// Include/cpython/objimpl.h). The agent's functions get the interpreter's own as their ctx.
struct PyMemAllocatorEx {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t count, size_t size);
    void *(*realloc)(void *ctx, void *address, size_t size);
    void (*free)(void *ctx, void *address);
};
struct PyObjectArenaAllocator {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *address, size_t size);
};
// The agent's functions (agent_python_front.cpp: agentPythonFunctions), put in front of the interpreter's.
struct PythonMemoryFunctions {
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t count, size_t size);
    void *(*realloc)(void *ctx, void *address, size_t size);
    void (*free)(void *ctx, void *address);
    void *(*arenaAlloc)(void *ctx, size_t size);
    void (*arenaFree)(void *ctx, void *address, size_t size);
};

// RingHeader::pythonAllocators.
enum class PythonAllocators : uint32_t {
    NotAsked = 0,      // memory off, or an agent loaded into a running program
    Installed = 1,     // in front of the object and memory domains (--python-allocators)
    NoInterpreter = 2, // the image has no CPython allocator API (not a Python, or one loaded later)
    Replaced = 3,      // installed, then the program set allocators of its own
    Arenas = 4,        // in front of the arena allocator (the default)
};

// Puts the agent's functions in front of the interpreter's domains (`domains`) or its arenas, where the image has the
// interpreter's API; says what it did.
PythonAllocators installPythonAllocators(bool domains, const PythonMemoryFunctions &mine);
// What is installed still is (Replaced when not), as the image ends.
PythonAllocators pythonAllocatorsNow();
// The agent's functions: each records through the core (agent_core.h) and calls the interpreter's.
PythonMemoryFunctions agentPythonFunctions();

} // namespace emberline::agent
