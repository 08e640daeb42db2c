// libemberline_agent.so's injected front end: the agent loaded into a running program (the session's injector,
// engine/inject, makes one of the program's threads call dlopen and then emberline_agent_attach). LD_PRELOAD's
// interposition happened when the program started, without the agent: here the hooks take the allocation
// functions' entries in every loaded module's global offset table instead (agent_got.h), and those of every module
// loaded later (a dlopen or dlclose through the hooks counts a change as it begins; for two seconds after it, the
// slow paths of the hooks count the loaded modules every 5 ms and look at the tables of any new one).
// With the in-process sampler asked, every thread of the program gets its CPU timer at the attach, and a thread made
// later through pthread_create its own as it starts (pthread_create, sigaction and signal are redirected too).
//
// emberline_agent_attach(options)  the session's options, one NAME=VALUE per line (the environment's names,
//                                  agent_protocol.h's kEnv*): starts the agent (its ring in the session's folder),
//                                  then rewrites the tables. Returns how many modules now call the hooks, or a
//                                  negative errno: EINVAL (no options), EEXIST (a launched session's agent runs
//                                  here), EBUSY (another session is attached), EIO (no ring), ENOSYS (no allocator
//                                  found).
// emberline_agent_detach(unused)   puts the tables back, retires the agent (agentRetire). Returns 0, or -ENOENT
//                                  when no session was attached.
//
// When the session dies instead, a hook's slow path finds it gone (agent_liveness.cpp) and detaches the same way.
// The library itself stays mapped (a thread may still be inside a hook); attaching again reuses it.
//
// Thread: attach and detach run on the thread the injector stopped (at a point where it holds none of the C
// library's or the dynamic linker's locks) or, for a session found dead, on a hook's slow path.

#include "engine/agent/agent_core.h"
#include "engine/agent/agent_cpu.h"
#include "engine/agent/agent_tables.h"
#include "engine/agent/agent_writer.h"
#include "engine/agent/got/agent_got.h"

#include <errno.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

namespace emberline::agent {

bool resolveInjected();                    // agent_preload.cpp
int injectedHooks(GotHook *out, int room); // agent_preload.cpp

namespace {

constexpr int kMaxHooks = 48; // the C functions, and C++'s operators
GotHook g_hooks[kMaxHooks];
int g_hookCount = 0;
std::atomic<bool> g_attached{false};
std::atomic<int> g_gotLock{0};
uint64_t g_changesSeen = 0; // the ring's mapsChanges when the tables were last looked at
GotCounts g_counts;
// A dlopen counts its change as it begins, before its module is loaded: for a while after each change, the loaded
// modules are counted again every few milliseconds (dl_iterate_phdr's count of loads and unloads), and their tables
// looked at when that count moved.
constexpr uint64_t kWatchNs = 2'000'000'000;
constexpr uint64_t kLookEveryNs = 5'000'000;
uint64_t g_watchUntilNs = 0;
uint64_t g_nextLookNs = 0;
uint64_t g_loadsSeen = 0;

// The options' text, kept while they are read (the session's buffer is on the stopped thread's stack): its lines,
// each ended by a zero.
char g_optionsText[1024];
size_t g_optionsBytes = 0;

const char *optionIn(const char *name, void *)
{
    const size_t length = strlen(name);
    for (size_t at = 0; at < g_optionsBytes; at += strlen(g_optionsText + at) + 1) {
        const char *line = g_optionsText + at;
        if (strncmp(line, name, length) == 0 && line[length] == '=')
            return line + length + 1;
    }
    return nullptr;
}

struct GotLock {
    bool held = false;
    explicit GotLock(bool wait)
    {
        int expected = 0;
        while (!(held = g_gotLock.compare_exchange_strong(expected, 1, std::memory_order_acquire)) && wait)
            expected = 0;
    }
    ~GotLock()
    {
        if (held)
            g_gotLock.store(0, std::memory_order_release);
    }
    GotLock(const GotLock &) = delete;
    GotLock &operator=(const GotLock &) = delete;
};

// Returns the modules left for a later look (not relocated yet): the loads are then not taken as seen, and the watch
// goes on.
int hookModules()
{
    const InternalWork work; // dl_iterate_phdr's lock
    g_loadsSeen = linkerLoads();
    const int left = gotHook(g_hooks, g_hookCount, reinterpret_cast<const void *>(&hookModules), g_counts);
    if (left > 0) {
        g_loadsSeen = 0;
        const uint64_t until = nowNs() + kWatchNs;
        g_watchUntilNs = g_watchUntilNs > until ? g_watchUntilNs : until;
    }
    if (!g_ring)
        return left;
    // What the tables left alone, for the session to name (each entry before the count that takes it in).
    const uint32_t listed = g_ring->escapedModules.load(std::memory_order_relaxed);
    for (uint32_t i = listed; i < g_counts.escapes && i < uint32_t(kEscapedModules) && i < uint32_t(kMaxGotEscapes);
         ++i)
        g_ring->escaped[i] = EscapedModule{g_counts.escaped[i].address, g_counts.escaped[i].kinds, 0};
    g_ring->escapedModules.store(g_counts.escapes, std::memory_order_release);
    return left;
}

int detach()
{
    if (!g_attached.exchange(false, std::memory_order_acq_rel))
        return -ENOENT;
    g_slowPathCheck = nullptr;
    {
        const GotLock lock(true);
        const InternalWork work;
        gotRestore();
    }
    agentRetire();
    return 0;
}

// A session that died left its folder behind (the agent's user owns it): its unwind tables and the folder go, as
// the session would have removed them (best effort: a file of another kind there stays, and so does the folder).
void removeSessionFolder()
{
    char path[sizeof g_directory + 64];
    const size_t length = strnlen(g_directory, sizeof g_directory);
    if (length == 0 || length + 1 + strlen(kUnwindArenaName) + 1 > sizeof path)
        return;
    memcpy(path, g_directory, length);
    path[length] = '/';
    memcpy(path + length + 1, kUnwindArenaName, strlen(kUnwindArenaName) + 1);
    unlink(path);
    rmdir(g_directory);
}

// On a hook's slow path: modules loaded since the tables were last looked at, and a session that is gone. The look
// is left to a later slow path where the allocation's caller is the dynamic linker (this thread may be inside a
// dlopen: its modules are not relocated yet, and gotHook would leave them for a later look anyway).
bool slowPathCheck(uint64_t caller)
{
    if (!g_attached.load(std::memory_order_acquire))
        return false;
    if (g_sessionGone.load(std::memory_order_relaxed)) {
        detach();
        removeSessionFolder();
        return true;
    }
    const uint64_t changes = g_ring ? g_ring->mapsChanges.load(std::memory_order_relaxed) : g_changesSeen;
    if ((changes == g_changesSeen && g_watchUntilNs == 0) || (caller != 0 && linkerCode(caller)))
        return false;
    const GotLock lock(false); // another thread looks already
    if (!lock.held)
        return false;
    const uint64_t now = nowNs();
    if (changes != g_changesSeen) {
        g_changesSeen = changes;
        g_watchUntilNs = now + kWatchNs;
        g_nextLookNs = 0;
    }
    if (now >= g_nextLookNs) {
        g_nextLookNs = now + kLookEveryNs;
        const InternalWork work;
        if (linkerLoads() != g_loadsSeen)
            hookModules();
    }
    if (now > g_watchUntilNs)
        g_watchUntilNs = 0;
    return false;
}

} // namespace

// A launched program's library opened with RTLD_DEEPBIND (hooks/agent_deepbind.cpp): the modules loaded since the last
// look (all of them at the first) are taken over as an attach takes them. Returns those left for a later look.
int hookDeepBound()
{
    const GotLock lock(true);
    if (g_hookCount == 0)
        g_hookCount = injectedHooks(g_hooks, kMaxHooks);
    return hookModules();
}

} // namespace emberline::agent

using namespace emberline::agent;

EMBERLINE_EXPORT int emberline_agent_attach(const char *options)
{
    const AgentScope scope;
    if (!options || strlen(options) >= sizeof g_optionsText)
        return -EINVAL;
    if (agentActive())
        return g_attached.load(std::memory_order_acquire) ? -EBUSY : -EEXIST;
    if (!resolveInjected())
        return -ENOSYS;
    g_optionsBytes = strlen(options);
    for (size_t i = 0; i <= g_optionsBytes; ++i)
        g_optionsText[i] = options[i] == '\n' ? '\0' : options[i];
    AgentOptions parsed;
    if (!optionsFrom(parsed, optionIn, nullptr))
        return -EINVAL;
    g_attachedNs = nowNs();
    if (!agentRestart(parsed))
        return -EIO;
    agentStartThreads(); // the calling thread's CPU timer among them
    cpuStartOtherThreads();
    if (g_hookCount == 0)
        g_hookCount = injectedHooks(g_hooks, kMaxHooks);
    g_counts = GotCounts{};
    {
        const GotLock lock(true);
        g_changesSeen = g_ring ? g_ring->mapsChanges.load(std::memory_order_acquire) : 0;
        g_watchUntilNs = 0;
        hookModules();
    }
    g_slowPathCheck = slowPathCheck;
    g_attached.store(true, std::memory_order_release);
    return int(g_counts.redirected);
}

EMBERLINE_EXPORT int emberline_agent_detach(const char *)
{
    const AgentScope scope;
    return detach();
}
