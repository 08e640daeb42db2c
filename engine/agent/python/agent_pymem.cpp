#include "engine/agent/python/agent_pymem.h"

#include <dlfcn.h>
#include <stddef.h>

namespace emberline::agent {
namespace {

enum PyMemDomain : int { DomainMem = 1, DomainObject = 2 };
constexpr int kDomains[] = {DomainMem, DomainObject};
using GetAllocatorFn = void (*)(int domain, PyMemAllocatorEx *allocator);
using SetAllocatorFn = void (*)(int domain, PyMemAllocatorEx *allocator);
using ArenaAllocatorFn = void (*)(PyObjectArenaAllocator *allocator);

// The interpreter's own allocators, which the agent's functions call (their ctx points here).
PyMemAllocatorEx g_original[3];
PyObjectArenaAllocator g_originalArena;
PythonMemoryFunctions g_mine;
GetAllocatorFn g_get = nullptr;
ArenaAllocatorFn g_getArena = nullptr;
PythonAllocators g_installed = PythonAllocators::NotAsked;

bool domainsOurs()
{
    for (int domain : kDomains) {
        PyMemAllocatorEx now{};
        g_get(domain, &now);
        if (now.malloc != g_mine.malloc || now.free != g_mine.free)
            return false;
    }
    return true;
}

bool arenaOurs()
{
    PyObjectArenaAllocator now{};
    g_getArena(&now);
    return now.alloc == g_mine.arenaAlloc && now.free == g_mine.arenaFree;
}

} // namespace

PythonAllocators installPythonAllocators(bool domains, const PythonMemoryFunctions &mine)
{
    g_mine = mine;
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
            for (int domain : kDomains) {
                g_get(domain, &g_original[domain]);
                PyMemAllocatorEx ours = {&g_original[domain], mine.malloc, mine.calloc, mine.realloc, mine.free};
                set(domain, &ours);
            }
        }
        g_installed = PythonAllocators::Installed;
    } else {
        if (!arenaOurs()) {
            g_getArena(&g_originalArena);
            PyObjectArenaAllocator ours = {&g_originalArena, mine.arenaAlloc, mine.arenaFree};
            setArena(&ours);
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
