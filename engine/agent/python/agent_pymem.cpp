#include "engine/agent/python/agent_pymem.h"

#include "engine/agent/agent_core.h"

#include <dlfcn.h>
#include <stddef.h>

namespace emberline::agent {
namespace {

// CPython's PyMemAllocatorEx, PyObjectArenaAllocator and PyMemAllocatorDomain, the same from 3.8 to 3.13
// (Include/cpython/pymem.h, Include/cpython/objimpl.h).
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
enum PyMemDomain : int { DomainMem = 1, DomainObject = 2 };
using GetAllocatorFn = void (*)(int domain, PyMemAllocatorEx *allocator);
using SetAllocatorFn = void (*)(int domain, PyMemAllocatorEx *allocator);
using ArenaAllocatorFn = void (*)(PyObjectArenaAllocator *allocator);

// The interpreter's own allocators, which the agent's functions call: the domains' by their ctx, the arenas' from
// here (its functions take the interpreter's ctx unchanged).
PyMemAllocatorEx g_original[3];
PyObjectArenaAllocator g_originalArena;
GetAllocatorFn g_get = nullptr;
ArenaAllocatorFn g_getArena = nullptr;
PythonAllocators g_installed = PythonAllocators::NotAsked;

// The interpreter's call, with what it allocates or frees through malloc inside it left to this one call: neither
// taken off the countdown nor recorded there (as an allocator's own operator new, agent_cxx.cpp). The heap counts
// still see malloc's blocks: they count the malloc heap.
template <typename Call> auto asOneCall(Call call)
{
    const AllocationCount count = allocationCount();
    ++t_state.inCxx;
    auto result = call();
    --t_state.inCxx;
    setAllocationCount(count);
    return result;
}

void *pyMalloc(void *ctx, size_t size)
{
    const auto *original = static_cast<const PyMemAllocatorEx *>(ctx);
    void *address = asOneCall([&] { return original->malloc(original->ctx, size); });
    pythonAllocated(address, size);
    return address;
}

void *pyCalloc(void *ctx, size_t count, size_t size)
{
    const auto *original = static_cast<const PyMemAllocatorEx *>(ctx);
    void *address = asOneCall([&] { return original->calloc(original->ctx, count, size); });
    pythonAllocated(address, count * size);
    return address;
}

// The free is recorded before the call (after it, another thread may be given the address); a failed call leaves the
// old block the program's, unrecorded from then on (its free will be an unknown one), as the C realloc's does.
void *pyRealloc(void *ctx, void *address, size_t size)
{
    const auto *original = static_cast<const PyMemAllocatorEx *>(ctx);
    if (address)
        pythonFreeing(address);
    void *moved = asOneCall([&] { return original->realloc(original->ctx, address, size); });
    pythonAllocated(moved, size);
    return moved;
}

void pyFree(void *ctx, void *address)
{
    const auto *original = static_cast<const PyMemAllocatorEx *>(ctx);
    if (address)
        pythonFreeing(address);
    asOneCall([&] {
        original->free(original->ctx, address);
        return 0;
    });
}

// An arena: mapped by the interpreter (no malloc inside), counted in the heap and sampled as one allocation.
void *arenaAlloc(void *ctx, size_t size)
{
    void *arena = g_originalArena.alloc(ctx, size);
    if (arena) {
        countHeapBytes(arena, size, false);
        pythonAllocated(arena, size);
    }
    return arena;
}

void arenaFree(void *ctx, void *arena, size_t size)
{
    if (arena) {
        pythonFreeing(arena);
        countHeapBytes(arena, size, true);
    }
    g_originalArena.free(ctx, arena, size);
}

bool domainsOurs()
{
    for (int domain : {DomainMem, DomainObject}) {
        PyMemAllocatorEx now{};
        g_get(domain, &now);
        if (now.malloc != pyMalloc || now.free != pyFree)
            return false;
    }
    return true;
}

bool arenaOurs()
{
    PyObjectArenaAllocator now{};
    g_getArena(&now);
    return now.alloc == arenaAlloc && now.free == arenaFree;
}

} // namespace

PythonAllocators installPythonAllocators(bool domains)
{
    // The interpreter's API in the program's scope (the executable's own symbols, or libpython's); none in a program
    // that is not a Python.
    g_get = reinterpret_cast<GetAllocatorFn>(dlsym(RTLD_DEFAULT, "PyMem_GetAllocator"));
    auto set = reinterpret_cast<SetAllocatorFn>(dlsym(RTLD_DEFAULT, "PyMem_SetAllocator"));
    g_getArena = reinterpret_cast<ArenaAllocatorFn>(dlsym(RTLD_DEFAULT, "PyObject_GetArenaAllocator"));
    auto setArena = reinterpret_cast<ArenaAllocatorFn>(dlsym(RTLD_DEFAULT, "PyObject_SetArenaAllocator"));
    if (!g_get || !set || !g_getArena || !setArena)
        return PythonAllocators::NoInterpreter;
    if (domains) {
        if (!domainsOurs()) {
            for (int domain : {DomainMem, DomainObject}) {
                g_get(domain, &g_original[domain]);
                PyMemAllocatorEx mine = {&g_original[domain], pyMalloc, pyCalloc, pyRealloc, pyFree};
                set(domain, &mine);
            }
        }
        g_installed = PythonAllocators::Installed;
    } else {
        if (!arenaOurs()) {
            g_getArena(&g_originalArena);
            PyObjectArenaAllocator mine = {g_originalArena.ctx, arenaAlloc, arenaFree};
            setArena(&mine);
        }
        g_installed = PythonAllocators::Arenas;
    }
    return g_installed;
}

PythonAllocators pythonAllocatorsNow()
{
    if (g_installed == PythonAllocators::Installed)
        return domainsOurs() ? g_installed : PythonAllocators::Replaced;
    if (g_installed == PythonAllocators::Arenas)
        return arenaOurs() ? g_installed : PythonAllocators::Replaced;
    return g_installed;
}

} // namespace emberline::agent
