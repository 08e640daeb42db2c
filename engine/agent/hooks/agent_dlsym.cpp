// libemberline_agent.so's dlsym (the preload front end's). A lookup in a handle of dlopen's searches that module and
// its dependencies, not the global scope where the hooks come first: dlsym(dlopen("libc.so.6"), "free") (Python's
// ctypes.CDLL("libc.so.6").free, say) finds the C library's own free. Its calls would pass the hooks: unseen by the
// agent, and, handed a sampled block of the program's past its mark (agent_track.h), the C library takes it for a
// corrupt chunk and aborts. So a handle's lookup that finds the definition a hook passes its calls on to gets the hook
// instead, as the global scope would have given it.
//
// RTLD_DEFAULT and RTLD_NEXT lookups are passed on as tail calls: the dynamic linker reads the caller's return address
// for them (where the search starts; the agent's own lookups of the next definitions come through here too). A
// handle's lookup does not depend on its caller.
//
// Left open: dlvsym, which the agent does not hook (it finds the C library's dlsym with it), and an interposer of the
// program's own placed after the agent in the search order, whose RTLD_NEXT lookup of free finds the C library's.
//
// Thread: any thread of the program.

#include "engine/agent/agent_core.h"
#include "engine/agent/got/agent_got.h"

#include <dlfcn.h>

#include <atomic>

namespace emberline::agent {

int injectedCHooks(GotHook *out, int room);   // agent_preload.cpp
int injectedCxxHooks(GotHook *out, int room); // agent_cxx.cpp

namespace {

constexpr int kRoom = 64;

using DlsymFn = void *(*)(void *, const char *);

std::atomic<DlsymFn> g_realDlsym{nullptr};

// The C library's dlsym, found by version: the current one, or the first one's (glibc before 2.34, in libdl). The
// agent's own look-up: the search starts after it.
DlsymFn realDlsym()
{
    DlsymFn found = g_realDlsym.load(std::memory_order_acquire);
    if (__builtin_expect(found == nullptr, 0)) {
        found = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
        if (found == nullptr)
            found = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
        g_realDlsym.store(found, std::memory_order_release);
    }
    return found;
}

// The hook that passes its calls on to `found`, else `found`. A C name is compared with the C hooks' definitions,
// looked up when the agent started; a C++ name (the Itanium ABI's "_Z") with the operators', looked up on first use
// (a C program has none: those look-ups fail, and must not leave their failure for the program's dlerror to report).
__attribute__((noinline)) void *hookFor(void *found, const char *name)
{
    if (found == nullptr)
        return found;
    GotHook hooks[kRoom];
    const bool cxxName = name != nullptr && name[0] == '_' && name[1] == 'Z';
    const int count = cxxName ? injectedCxxHooks(hooks, kRoom) : injectedCHooks(hooks, kRoom);
    for (int i = 0; i < count; ++i) {
        const GotHook &hook = hooks[i];
        if (hook.kind != GotOther && hook.definition == found)
            return hook.hook;
    }
    return found;
}

} // namespace
} // namespace emberline::agent

using namespace emberline::agent;

EMBERLINE_EXPORT void *dlsym(void *handle, const char *name)
{
    const DlsymFn next = realDlsym();
    if (__builtin_expect(next == nullptr, 0))
        return nullptr;
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT)
        EMBERLINE_TAIL_CALL return next(handle, name); // the caller's return address is the dynamic linker's to read
    return hookFor(next(handle, name), name);
}
