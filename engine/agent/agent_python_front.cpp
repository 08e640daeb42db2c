// The agent's functions in front of CPython's allocators (python/agent_pymem.h installs them): each tells the core
// (agent_core.h) what the interpreter allocated or freed, around the interpreter's own call.
//
// Thread: every thread of the program that calls the interpreter's allocators.

#include "engine/agent/agent_core.h"
#include "engine/agent/python/agent_pymem.h"

#include <stddef.h>

namespace emberline::agent {

namespace {

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
    const auto *original = static_cast<const PyObjectArenaAllocator *>(ctx);
    void *arena = original->alloc(original->ctx, size);
    if (arena) {
        countHeapBytes(arena, size, false);
        pythonAllocated(arena, size);
    }
    return arena;
}

void arenaFree(void *ctx, void *arena, size_t size)
{
    const auto *original = static_cast<const PyObjectArenaAllocator *>(ctx);
    if (arena) {
        pythonFreeing(arena);
        countHeapBytes(arena, size, true);
    }
    original->free(original->ctx, arena, size);
}

} // namespace

PythonMemoryFunctions agentPythonFunctions()
{
    return {pyMalloc, pyCalloc, pyRealloc, pyFree, arenaAlloc, arenaFree};
}

} // namespace emberline::agent
