#pragma once

// The injected front end's redirection (agent_attach.cpp): in a running program, where LD_PRELOAD's interposition is
// past, the agent's hooks replace the addresses that each loaded module's global offset table holds for the
// allocation functions, as the dynamic linker wrote them; every rewritten entry is kept with its old value, to be put
// back at the detach.
//
// What it cannot redirect: a call that never goes through a module's table (an allocator linked statically into the
// program, a module that calls its own definition directly), the dynamic linker's own allocations (it calls the
// allocator through pointers of its own), and a module opened with RTLD_DEEPBIND whose dependencies bring their own
// allocator (its entries of each kind bound there are left alone, with those of the same kind not bound yet: its
// blocks stay its allocator's; the module is named as escaping). The modules whose tables held no allocation function
// are counted. A pointer to an allocation function that the program stored before the attach holding the definition's
// own address calls it around the hooks; one holding the program's canonical stub (pltStubEntry) goes through the
// program's table, and is redirected.
//
// Thread: the callers take g_gotLock (gotHook, gotRestore); a signal handler never calls them.

#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// A hook's second name, hidden: loaded into a running program, the agent is not in the global scope, and a
// reference to `malloc` from inside it would bind to the program's. The tables get the hooks by these names.
#if defined(__clang__)
#define EMBERLINE_HOOK_ALIAS(name) __attribute__((visibility("hidden"), alias(#name)))
#else // GCC wants the target's attributes on the alias too (-Wmissing-attributes)
#define EMBERLINE_HOOK_ALIAS(name) __attribute__((visibility("hidden"), alias(#name), copy(name)))
#endif

// The exec functions the front end hooks (agent_exec.cpp), by the next definitions agent_preload.cpp resolves for them
// with the others: nextExec(f) is kExecNames[f]'s.
enum ExecFunction : int { NextExecve, NextExecv, NextExecvp, NextExecvpe, NextFexecve, kExecFunctions };
inline constexpr const char *kExecNames[kExecFunctions] = {"execve", "execv", "execvp", "execvpe", "fexecve"};
void *nextExec(int which);

// What a hooked function is, for saying what a module's calls escape.
enum GotKind : uint8_t {
    GotOther = 0,      // dlopen, dlclose, sigaction, signal, pthread_create
    GotAllocation = 1, // the C library's allocation functions
    GotCxx = 2,        // C++'s operators new and delete
};

// One function to redirect: its symbol name, the hook that replaces it, and the definition the hook passes the call
// on to (null: not known, every entry is taken).
struct GotHook {
    const char *name;
    void *hook;
    void *definition;
    GotKind kind;
};

// A module whose entries are bound to other definitions than those the hooks pass the call on to (a module opened
// with RTLD_DEEPBIND whose dependencies bring their own allocator, one in a namespace of its own): taking them would
// hand its blocks to another allocator, so they are left alone, and its calls escape the agent. Named by its lowest
// mapped address; `kinds` holds a bit (1 << GotKind) for each kind of function left alone.
struct GotEscape {
    uint64_t address;
    uint32_t kinds;
};
inline constexpr int kMaxGotEscapes = 16;

struct GotCounts {
    uint32_t modules = 0;    // modules looked at (the agent's own and the dynamic linker left out)
    uint32_t redirected = 0; // modules with at least one entry rewritten
    uint32_t entries = 0;    // entries rewritten, in all
    uint32_t full = 0;       // entries left alone: no room left to remember them
    uint32_t escapes = 0;    // modules with an allocation function bound elsewhere (the first kMaxGotEscapes listed)
    GotEscape escaped[kMaxGotEscapes] = {};
};

// Rewrites the entries of every module loaded since the last call (all of them at the first); `self` is an address
// inside the agent (its own table is left alone). An entry already bound (it leads outside its module) to another
// definition than the hook's is left alone (GotEscape); one not bound yet (lazy binding) is taken. Adds to `counts`.
// Returns the modules left for a later call: listed by the dynamic linker but not relocated yet (a dlopen under way on
// another thread), told without a lock by _dl_find_object, which finds a module only once it is relocated. Its table
// is not read meanwhile (what it holds is not yet what it will) nor written (the dynamic linker still writes there, its
// read-only pages writable until it is done).
int gotHook(const GotHook *hooks, int hookCount, const void *self, GotCounts &counts);
// Puts every rewritten entry of the modules still loaded back as it was (an entry that someone else rewrote since is
// left to them), and forgets them all.
void gotRestore();
// Whether any entry is rewritten now.
bool gotHooked();
// Whether `address` is the dynamic linker's code. A hook called from there may be inside a dlopen on this thread: the
// new module is in the list before it is relocated, and its table must not be read yet.
bool linkerCode(uint64_t address);

// Where a PLT stub at `code` jumps through (`jmp *rel32(%rip)`, after an `endbr64` and a `bnd` prefix where the
// program was built with them): the table entry it reads; null when `code` is no such stub. A program built without
// position independence that takes a function's address in code owns the function's canonical address: such a stub in
// its PLT, which every other module's entry for the function holds too (so that pointers to it compare equal).
void *const *pltStubEntry(const void *code);

// The definition of `name` in the running program the agent was loaded into (got/agent_definition.cpp): the global
// scope's, behind the program's canonical PLT stub where it owns one; null where only the agent defines it.
void *programDefinition(const char *name);

} // namespace emberline::agent
