// libemberline_agent.so and a library opened with RTLD_DEEPBIND in a launched program (the preload front end's dlopen,
// agent_preload.cpp). Such a library, and each one loaded with it, resolves the allocation functions to its own
// dependencies first: to the C library's, around the interposed hooks. Its allocations would escape the agent, and its
// frees would hand the C library the program's sampled blocks past their marks (agent_track.h), which the C library
// takes for a corrupt chunk and aborts on.
//
// So new samples stop being marked before the library loads (frees ask the filter again, as in exact mode), and once
// it is loaded its modules' global offset tables are taken over as an attach takes a running program's (agent_got.h):
// its allocations are profiled from then on, and its frees of the program's blocks come back through the hooks. A
// module of it that binds an allocator of its own is left alone, and named, as for an attach.
//
// The tables are rewritten as soon as dlopen returns where the call means the same made by the agent as by its caller
// (the dynamic linker reads its caller's return address for the search path and the namespace): a path (with a slash,
// no $ substitution), or a name searched for by the program itself with no search path of its own (RPATH, RUNPATH),
// from the main namespace. Else the call stays its caller's (a tail call) and the tables are rewritten at the next slow
// path of a hook after the library is in the dynamic linker's list.
//
// Left open: a block marked before the dlopen and freed by the library before its tables are rewritten (by its
// initializers, or, where the call stayed its caller's, before that slow path); what the library allocated before
// (freed later through the hooks, it comes off the heap count without having been counted on).
//
// Thread: the thread calling dlopen; the pending rewrite on any thread's slow path.

#include "engine/agent/agent_core.h"
#include "engine/agent/agent_writer.h"
#include "engine/agent/got/agent_got.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#include <atomic>

namespace emberline::agent {

int hookDeepBound(); // agent_attach.cpp

namespace {

// The dynamic linker's count of loads when a library opened with RTLD_DEEPBIND by its caller was not yet taken over
// (0: none waits).
std::atomic<uint64_t> g_pendingLoads{0};

// Whether dlopen(file) from `caller` finds and loads the same as from inside the agent (which has no search path of
// its own and is in the main namespace).
bool sameFromAgent(const char *file, const void *caller)
{
    if (file == nullptr || strchr(file, '$') != nullptr)
        return false;
    Dl_info info;
    link_map *map = nullptr;
    if (dladdr1(caller, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) == 0 || map == nullptr)
        return false;
    Lmid_t space = -1;
    if (dlinfo(map, RTLD_DI_LMID, &space) != 0 || space != LM_ID_BASE)
        return false;
    if (strchr(file, '/') != nullptr)
        return true; // no search
    // Searched: the caller's search path, and for one without RUNPATH those of the modules that loaded it. The program
    // itself loaded nothing before it; without a path of its own, its search and the agent's are the same.
    if (map->l_name == nullptr || map->l_name[0] != '\0' || map->l_ld == nullptr)
        return false;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
            return false;
    }
    return true;
}

// A hook's slow path (g_slowPathCheck): the library waited for is in the dynamic linker's list. The dynamic linker's
// own allocations, made while it loads and relocates, are left alone (this thread is inside dlopen), and so are those
// whose caller the hook does not know. A module another thread is still loading is left for a later slow path
// (gotHook tells it without a lock: no wait for the loader's lock, which a dlopen holds while it runs the library's
// initializers, and those may wait for a lock this thread holds).
bool takePending(uint64_t caller)
{
    const uint64_t seen = g_pendingLoads.load(std::memory_order_acquire);
    if (seen == 0 || caller == 0 || linkerCode(caller))
        return false;
    const InternalWork work;
    if (linkerLoads() == seen)
        return false;
    uint64_t expected = seen;
    if (!g_pendingLoads.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
        return false; // another thread takes it
    if (hookDeepBound() > 0) {
        expected = 0;
        g_pendingLoads.compare_exchange_strong(expected, seen, std::memory_order_acq_rel); // a later slow path
    }
    return false;
}

} // namespace

bool deepBindBegins(const char *file, const void *caller)
{
    const AgentScope scope; // errno kept
    if (realFunctions().programScope)
        return false; // loaded into a running program: the attach's watch of new modules takes it
    refuseMarks();
    bool here = false;
    {
        const InternalWork work; // dladdr1 and dlinfo: the dynamic linker's own allocations
        here = sameFromAgent(file, caller);
        if (!here) {
            g_pendingLoads.store(linkerLoads(), std::memory_order_release);
            g_slowPathCheck = takePending;
        }
    }
    return here;
}

void *deepBindOpened(void *handle)
{
    const AgentScope scope; // errno kept
    if (handle != nullptr)
        hookDeepBound();
    return handle;
}

} // namespace emberline::agent
