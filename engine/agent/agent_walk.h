#pragma once

// The agent's own stack walk (walk/agent_walk.cpp): with the tables the session shares (agent_tables.h: the arena, the
// ring's module index) and agent_unwind.h's step, from the current or interrupted registers to the stack's end, into
// program counters; and the stacks a process image has written out already, so that a stack seen before is written
// as its hash alone.
//
// Thread: every thread of the program, in hooks and in the CPU sampler's signal handler; lock-free, allocates
// nothing, calls nothing but mmap, open and close (the arena's mapping, once per process image).

#include "engine/agent/agent_tables.h"
#include "engine/agent/agent_unwind.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <atomic>

namespace emberline::agent {

struct PythonCodeMemo;

struct AgentWalk {
    uint32_t frames = 0;   // pcs written
    bool whole = false;    // the walk reached the stack's end or its depth limit: the pcs are the stack
    uint8_t flags = 0;     // WalkFlag (agent_protocol.h)
    WalkFallback reason{}; // why not, when not whole
    uint64_t hash = 0;     // the stack's name: a hash of its pcs, flags and Python frames, never 0 (when whole)
    uint32_t fromMemo = 0; // of `frames`, those the thread's last walk gave (checked against the stack, not stepped)
    uint32_t fromLeaf = 0; // of those, the innermost ones a leaf of the thread's earlier walks gave (walk_memo.h)
};

// Walks this thread's stack from `regs` into `pcs` (at most `maxFrames`). `firstIsReturn`: regs.pc is a return
// address (the hooks' captured caller state), looked up at pc - 1 as every caller's and given as pc - 1 (pcs[0]);
// else it is the interrupted instruction (the CPU handler's). Reads nothing outside [regs.sp, the thread's stack top).
// With `claim` (a sample's walk, not a checked one): a whole stack's hash is claimed (claimStack) before the frames
// the memo gave are copied into `pcs`, and where it was written out already (Known) they are not (the sample writes
// the hash alone); walk.frames counts them either way. A non-zero `python` (pythonStackHash: the sample's Python
// frames) goes into the hash: the stack a hash names is then the pcs and those Python frames together.
enum class StackClaim : uint8_t;
AgentWalk walkStack(UnwindRegs regs, bool firstIsReturn, uint64_t *pcs, uint32_t maxFrames, StackClaim *claim = nullptr,
                    uint64_t python = 0);

// Whether the session asked for walks (RingHeader::unwindMode) and this thread can take one now.
bool walkWanted();

// Whether this thread's stack has room below the caller for a walk's pcs (kMaxWalkFrames words and then some: the
// hooks and the handler run on the program's threads' stacks); a thread without copies instead. Its bounds known.
bool roomToWalk();
// Whether this walked sample is one of the checked ones: copied too, for the session to compare (checkEvery).
bool checkedWalk();

// Whether this process image wrote the stack out already (Known: write its hash alone), or whether this thread
// takes it on now (Claimed: write it out with WalkDefines, then settleStack once its record is published, or not
// written); None: write it out without WalkDefines (the set is full, or another thread is writing it out).
enum class StackClaim : uint8_t { None, Known, Claimed };
StackClaim claimStack(uint64_t hash);
void settleStack(uint64_t hash, bool written);

// This thread's memo of the code objects its Python walks met (agent_python.h), kept beside its walk memo. Null where
// the thread has no memo, or where a walk or a gather it interrupted holds it; else held until releasePythonMemo.
PythonCodeMemo *holdPythonMemo();
void releasePythonMemo();

// The stacks this process image wrote out (records/agent_stack_set.cpp) forgotten: a new ring's (walkNewRing).
void forgetWrittenStacks();
// Its pages given back (walkRetire): every slot free again, as in a fresh set.
void giveWrittenStacksBack();

// A new ring (a start, a forked child's): the stacks written out and the remembered rows are forgotten.
void walkNewRing();
// The unwind tables' arena of a session that ended: left to anonymous zero pages at its address while walks may still
// read it (walkRetire), then unmapped (walkForget) so that the next session's arena is mapped at its first walk.
// walkRetire also gives back the pages of what the walks shared (the stacks written out, the remembered rows): zero
// pages again, their state when new, so that a detached program keeps none of them.
void walkRetire();
void walkForget();
// A thread's end gives its walk memo back; a forked child keeps its own thread's alone.
void walkThreadEnd();
void walkForkChild();

// Anonymous pages made once, by whichever thread gets there first; null while another thread makes them (the
// sample then goes without them).
template <typename T> T *makeOnce(std::atomic<int> &state, T *&pointer, size_t bytes)
{
    int seen = state.load(std::memory_order_acquire);
    if (seen == 2)
        return pointer;
    if (seen != 0 || !state.compare_exchange_strong(seen, 1, std::memory_order_acq_rel))
        return nullptr;
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        state.store(3, std::memory_order_release);
        return nullptr;
    }
    pointer = static_cast<T *>(mem);
    state.store(2, std::memory_order_release);
    return pointer;
}

} // namespace emberline::agent
