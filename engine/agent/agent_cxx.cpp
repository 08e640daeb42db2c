// C++'s operator new and delete, in every form: the preload front end's (agent_preload.cpp has the C hooks).
//
// The C++ runtime's own operators (libstdc++, libc++) allocate through malloc and free, where the C hooks see
// them: those are passed straight on. An allocator that brings its own operators (tcmalloc does) allocates around
// malloc: its operators are counted here, as malloc is. Which is which is decided once per operator from the
// library that defines the next one (after the agent when preloaded; the program's own when the agent is loaded into
// a running program, which then writes these operators into the modules' global offset tables by their hidden names,
// as it does the C hooks). The symbols are the Itanium C++ ABI's names, defined with C linkage: the agent links no
// C++ runtime.
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_core.h"
#include "engine/agent/got/agent_got.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

namespace emberline::agent {

void *nextDefinition(const char *name);       // agent_preload.cpp
int injectedCxxHooks(GotHook *out, int room); // below

namespace {

enum CxxOp : int {
    OpNew,
    OpNewArray,
    OpNewNothrow,
    OpNewArrayNothrow,
    OpNewAligned,
    OpNewArrayAligned,
    OpNewAlignedNothrow,
    OpNewArrayAlignedNothrow,
    OpDelete,
    OpDeleteArray,
    OpDeleteSized,
    OpDeleteArraySized,
    OpDeleteNothrow,
    OpDeleteArrayNothrow,
    OpDeleteAligned,
    OpDeleteArrayAligned,
    OpDeleteSizedAligned,
    OpDeleteArraySizedAligned,
    OpDeleteAlignedNothrow,
    OpDeleteArrayAlignedNothrow,
    OpCount
};

constexpr const char *kCxxNames[OpCount] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

struct CxxOperator {
    std::atomic<void *> next{nullptr}; // the next definition (null until looked up, or when there is none)
    std::atomic<int> own{-1};          // -1: not looked up; 0: the C++ runtime's (through malloc); 1: an allocator's
};
CxxOperator g_cxx[OpCount];

__attribute__((noinline)) void lookUpCxx(int op)
{
    const AgentScope scope; // dlsym may change errno
    void *next = nullptr;
    int own = 0;
    {
        const InternalWork work;
        next = nextDefinition(kCxxNames[op]);
        if (next == nullptr)
            forgetLookupError(); // a C program has no operator new
        ModuleOfAddress module;
        if (moduleOfAddress(next, module))
            own = strstr(module.path, "libstdc++") == nullptr && strstr(module.path, "libc++") == nullptr;
    }
    g_cxx[op].next.store(next, std::memory_order_relaxed);
    g_cxx[op].own.store(own, std::memory_order_release);
}

inline CxxOperator &cxx(int op)
{
    if (__builtin_expect(g_cxx[op].own.load(std::memory_order_acquire) < 0, 0))
        lookUpCxx(op);
    return g_cxx[op];
}

// An operator new: the runtime's is passed on (its malloc is counted), an allocator's is counted here. Without a
// next definition at all (no C++ runtime: only a program calling the symbol by hand), malloc serves it.
template <int Op, typename... Extra> inline void *cxxNew(size_t size, bool nothrow, Extra... extra)
{
    CxxOperator &o = cxx(Op);
    auto *next = reinterpret_cast<void *(*)(size_t, Extra...)>(o.next.load(std::memory_order_relaxed));
    if (__builtin_expect(next == nullptr, 0)) {
        void *p = malloc(size == 0 ? 1 : size);
        if (!p && !nothrow)
            abort(); // the C++ runtime's std::bad_alloc cannot be thrown from here
        return p;
    }
    if (o.own.load(std::memory_order_relaxed) == 0)
        return next(size, extra...);
    // What the operator itself allocates through the hooked C functions (jemalloc's aligned new calls its exported
    // aligned_alloc) is this one call: neither recorded nor taken off the countdown there.
    const AllocationCount count = allocationCount();
    HeapSlot *const slot = t_state.slot; // nor counted in the heap there (the slow path counts nothing meanwhile)
    t_state.slot = nullptr;
    __atomic_store_n(&t_state.fast, nullptr, __ATOMIC_RELAXED); // set again by the next hook's other path
    ++t_state.inCxx;
    void *address = next(size, extra...);
    --t_state.inCxx;
    t_state.slot = slot;
    setAllocationCount(count);
    return allocated(address, size);
}

template <int Op, typename... Extra> inline void cxxDelete(void *address, Extra... extra)
{
    CxxOperator &o = cxx(Op);
    auto *next = reinterpret_cast<void (*)(void *, Extra...)>(o.next.load(std::memory_order_relaxed));
    if (__builtin_expect(next == nullptr, 0)) {
        free(address);
        return;
    }
    if (o.own.load(std::memory_order_relaxed) == 0) {
        next(address, extra...);
        return;
    }
    if (!freeing(address))
        return;
    HeapSlot *const slot = t_state.slot;
    t_state.slot = nullptr;
    __atomic_store_n(&t_state.fast, nullptr, __ATOMIC_RELAXED);
    ++t_state.inCxx;
    next(address, extra...);
    --t_state.inCxx;
    t_state.slot = slot;
}

} // namespace
} // namespace emberline::agent

using namespace emberline::agent;

// The Itanium ABI's names are reserved identifiers by design: these definitions are the runtime's symbols.
// NOLINTBEGIN(bugprone-reserved-identifier)
EMBERLINE_EXPORT void *_Znwm(size_t size)
{
    return cxxNew<OpNew>(size, false);
}
EMBERLINE_EXPORT void *_Znam(size_t size)
{
    return cxxNew<OpNewArray>(size, false);
}
EMBERLINE_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *tag)
{
    return cxxNew<OpNewNothrow>(size, true, tag);
}
EMBERLINE_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *tag)
{
    return cxxNew<OpNewArrayNothrow>(size, true, tag);
}
EMBERLINE_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t alignment)
{
    return cxxNew<OpNewAligned>(size, false, alignment);
}
EMBERLINE_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t alignment)
{
    return cxxNew<OpNewArrayAligned>(size, false, alignment);
}
EMBERLINE_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag)
{
    return cxxNew<OpNewAlignedNothrow>(size, true, alignment, tag);
}
EMBERLINE_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment, const void *tag)
{
    return cxxNew<OpNewArrayAlignedNothrow>(size, true, alignment, tag);
}
EMBERLINE_EXPORT void _ZdlPv(void *address)
{
    cxxDelete<OpDelete>(address);
}
EMBERLINE_EXPORT void _ZdaPv(void *address)
{
    cxxDelete<OpDeleteArray>(address);
}
EMBERLINE_EXPORT void _ZdlPvm(void *address, size_t size)
{
    cxxDelete<OpDeleteSized>(address, size);
}
EMBERLINE_EXPORT void _ZdaPvm(void *address, size_t size)
{
    cxxDelete<OpDeleteArraySized>(address, size);
}
EMBERLINE_EXPORT void _ZdlPvRKSt9nothrow_t(void *address, const void *tag)
{
    cxxDelete<OpDeleteNothrow>(address, tag);
}
EMBERLINE_EXPORT void _ZdaPvRKSt9nothrow_t(void *address, const void *tag)
{
    cxxDelete<OpDeleteArrayNothrow>(address, tag);
}
EMBERLINE_EXPORT void _ZdlPvSt11align_val_t(void *address, size_t alignment)
{
    cxxDelete<OpDeleteAligned>(address, alignment);
}
EMBERLINE_EXPORT void _ZdaPvSt11align_val_t(void *address, size_t alignment)
{
    cxxDelete<OpDeleteArrayAligned>(address, alignment);
}
EMBERLINE_EXPORT void _ZdlPvmSt11align_val_t(void *address, size_t size, size_t alignment)
{
    cxxDelete<OpDeleteSizedAligned>(address, size, alignment);
}
EMBERLINE_EXPORT void _ZdaPvmSt11align_val_t(void *address, size_t size, size_t alignment)
{
    cxxDelete<OpDeleteArraySizedAligned>(address, size, alignment);
}
EMBERLINE_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *address, size_t alignment, const void *tag)
{
    cxxDelete<OpDeleteAlignedNothrow>(address, alignment, tag);
}
EMBERLINE_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *address, size_t alignment, const void *tag)
{
    cxxDelete<OpDeleteArrayAlignedNothrow>(address, alignment, tag);
}
// The same operators by hidden names of their own, for the global offset tables of a running program's modules.
extern "C" {
void *hook_Znwm(size_t) EMBERLINE_HOOK_ALIAS(_Znwm);
void *hook_Znam(size_t) EMBERLINE_HOOK_ALIAS(_Znam);
void *hook_ZnwmRKSt9nothrow_t(size_t, const void *) EMBERLINE_HOOK_ALIAS(_ZnwmRKSt9nothrow_t);
void *hook_ZnamRKSt9nothrow_t(size_t, const void *) EMBERLINE_HOOK_ALIAS(_ZnamRKSt9nothrow_t);
void *hook_ZnwmSt11align_val_t(size_t, size_t) EMBERLINE_HOOK_ALIAS(_ZnwmSt11align_val_t);
void *hook_ZnamSt11align_val_t(size_t, size_t) EMBERLINE_HOOK_ALIAS(_ZnamSt11align_val_t);
void *hook_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *)
    EMBERLINE_HOOK_ALIAS(_ZnwmSt11align_val_tRKSt9nothrow_t);
void *hook_ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *)
    EMBERLINE_HOOK_ALIAS(_ZnamSt11align_val_tRKSt9nothrow_t);
void hook_ZdlPv(void *) EMBERLINE_HOOK_ALIAS(_ZdlPv);
void hook_ZdaPv(void *) EMBERLINE_HOOK_ALIAS(_ZdaPv);
void hook_ZdlPvm(void *, size_t) EMBERLINE_HOOK_ALIAS(_ZdlPvm);
void hook_ZdaPvm(void *, size_t) EMBERLINE_HOOK_ALIAS(_ZdaPvm);
void hook_ZdlPvRKSt9nothrow_t(void *, const void *) EMBERLINE_HOOK_ALIAS(_ZdlPvRKSt9nothrow_t);
void hook_ZdaPvRKSt9nothrow_t(void *, const void *) EMBERLINE_HOOK_ALIAS(_ZdaPvRKSt9nothrow_t);
void hook_ZdlPvSt11align_val_t(void *, size_t) EMBERLINE_HOOK_ALIAS(_ZdlPvSt11align_val_t);
void hook_ZdaPvSt11align_val_t(void *, size_t) EMBERLINE_HOOK_ALIAS(_ZdaPvSt11align_val_t);
void hook_ZdlPvmSt11align_val_t(void *, size_t, size_t) EMBERLINE_HOOK_ALIAS(_ZdlPvmSt11align_val_t);
void hook_ZdaPvmSt11align_val_t(void *, size_t, size_t) EMBERLINE_HOOK_ALIAS(_ZdaPvmSt11align_val_t);
void hook_ZdlPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *)
    EMBERLINE_HOOK_ALIAS(_ZdlPvSt11align_val_tRKSt9nothrow_t);
void hook_ZdaPvSt11align_val_tRKSt9nothrow_t(void *, size_t, const void *)
    EMBERLINE_HOOK_ALIAS(_ZdaPvSt11align_val_tRKSt9nothrow_t);
}
#undef EMBERLINE_HOOK_ALIAS

int emberline::agent::injectedCxxHooks(GotHook *out, int room)
{
    void *const hooks[OpCount] = {
        reinterpret_cast<void *>(hook_Znwm),
        reinterpret_cast<void *>(hook_Znam),
        reinterpret_cast<void *>(hook_ZnwmRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZnamRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZnwmSt11align_val_t),
        reinterpret_cast<void *>(hook_ZnamSt11align_val_t),
        reinterpret_cast<void *>(hook_ZnwmSt11align_val_tRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZnamSt11align_val_tRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZdlPv),
        reinterpret_cast<void *>(hook_ZdaPv),
        reinterpret_cast<void *>(hook_ZdlPvm),
        reinterpret_cast<void *>(hook_ZdaPvm),
        reinterpret_cast<void *>(hook_ZdlPvRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZdaPvRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZdlPvSt11align_val_t),
        reinterpret_cast<void *>(hook_ZdaPvSt11align_val_t),
        reinterpret_cast<void *>(hook_ZdlPvmSt11align_val_t),
        reinterpret_cast<void *>(hook_ZdaPvmSt11align_val_t),
        reinterpret_cast<void *>(hook_ZdlPvSt11align_val_tRKSt9nothrow_t),
        reinterpret_cast<void *>(hook_ZdaPvSt11align_val_tRKSt9nothrow_t),
    };
    int count = 0;
    for (; count < OpCount && count < room; ++count)
        out[count] = GotHook{kCxxNames[count], hooks[count], cxx(count).next.load(std::memory_order_relaxed), GotCxx};
    return count;
}

// NOLINTEND(bugprone-reserved-identifier)
