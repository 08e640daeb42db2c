#pragma once

// The agent's per-thread state, all of it in one struct (static TLS), and the one scoped guard that every slow path
// and every handler of the agent enters. engine/agent/DESIGN.md's rules table says what each context (a hook's fast
// path, its slow path, the CPU signal handler, a forked child, before main) may do; the fields below are how those
// rules are held.
//
// Thread: each thread its own (initial-exec TLS: no allocation, usable from the first malloc of a thread however it
// was made, and from a signal handler).

#include "engine/agent/agent_protocol.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// The count bits of ThreadState::state (see there).
constexpr int kCountBits = 24;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;
constexpr int64_t kArmedNow = -1;
constexpr int64_t kStateNow = int64_t(uint64_t(kArmedNow) << kCountBits);

inline constexpr int kPythonKnownCodes = 64;
inline constexpr uint8_t kNoWalkMemo = 0xff;

struct ThreadState {
    // --- Counting (the fast path's; agent_core.h) ---
    // The countdown to the thread's next sample, in bytes, above kCountBits bits that count its allocations since
    // the slow path last took them into `allocations` (all but their residue modulo malloc's probe interval:
    // agent_core.h's arm): each allocation adds 1 - (size << kCountBits), one add for
    // both (the count cannot reach the countdown's bits before the slow path takes it: that takes 16 million
    // allocations without a byte between two samples). The thread's totals are exact: `allocations` plus the count
    // bits, and `bytes + (armed - countdown)` bytes. A countdown armed at kArmedNow (a new thread's, and exact
    // mode's after every allocation) sends every allocation to the slow path, malloc(0) too.
    int64_t state;
    uint64_t allocations; // made by this thread in this process image, less the count in `state`
    int64_t armed;        // the countdown as the agent last set it
    uint64_t bytes;       // allocated up to the last time `armed` was set
    uint64_t rng;         // xorshift state of the sampling draws (0: not seeded: the thread's first point is drawn)
    // Where the fast path counts the thread's heap (agent_heap.h). Null is the "go slow" sign: no slot taken yet,
    // the agent's own work (InternalWork), an allocator's C++ operator at work, another allocator's sizes.
    HeapSlot *slot;
    // The slot again, for malloc's and free's fast paths alone: set only while no hook flag is set (agent_heap.h's
    // HookFlags), so that those paths test this one pointer and no flag. Null sends them to their other path, which
    // reads the flags and sets it again when it may (agent_heap.h: refreshFast); whoever raises a flag clears it in
    // every thread that holds a slot (hookFlagsRaised). Written by other threads too: read and written atomically.
    HeapSlot *fast;
    // Malloc's probe clock (agent_heap.h: probeNow): kProbeEvery ticks a turn, one at every allocation the fast path
    // predicts; never reset, so that every probe stands for the kProbeEvery - 1 predicted since the one before.
    uint8_t probeTick;
    HeapSlot *ownSlot;  // the thread's slot (or one that counts nowhere); null: none taken yet
    uint32_t heapEpoch; // the start of counting (agent_heap.cpp: g_heapEpoch) under which ownSlot was chosen
    uint32_t tid;       // the thread's id, cached (0: not known yet, and after fork)

    // --- Where the thread is (the rules' flags) ---
    uint32_t depth;     // AgentScopes entered and not left: > 0 inside the agent (> 1: a handler nested in it)
    uint32_t internal;  // > 0 while the agent makes calls that allocate (InternalWork): their allocations are the
                        // agent's own, passed through uncounted and unrecorded
    uint32_t inCxx;     // > 0 while an allocator's own operator new or delete runs: what it allocates or frees
                        // through the hooked C functions is the operator's one call, counted by the operator
    bool holding;       // holds a reserved record not yet published: the reader waits for it in order, so nothing
                        // nested here (a signal handler's record) may wait for room
    bool trackLocked;   // holds the tracking table's lock: a nested handler neither tracks nor waits for it
    bool noPages;       // the last reserve found no room because the file system gave no pages: waiting won't help
    bool totalsKeySet;  // the thread's totals are written when it ends (a thread-specific key's destructor)
    bool slotGiven;     // the thread has ended and given its heap slot back
    bool notMalloc;     // the allocation being sampled is no malloc block (CPython's): its heap bytes are its size
    uint8_t sampleKind; // how the allocation being sampled is told at its free (SampleKind, agent_core.h)
    int *errnoAt;       // the thread's errno (the C library's, asked once: every AgentScope keeps it)

    // --- Its stack (agent_stack.cpp) ---
    bool stackAsked;    // its bounds were looked up (outside handlers: the look-up allocates)
    uint64_t stackLow;  // its bounds, 0 when unknown or not a pthread stack (a bare clone's, an alternate signal
    uint64_t stackHigh; // stack): copies then go through process_vm_readv, which cannot fault
    uint32_t walks;     // walks to go until one is copied too (every RingHeader::checkEvery-th: walk/agent_walk.cpp)
    uint8_t walkMemo;   // its last walk's memo (walk/agent_walk_memo.cpp): 0 none yet, kNoWalkMemo none to have, else
                        // slot + 1
    bool memoBusy;      // a walk uses the memo: a handler's walk nested in it goes without

    // --- The in-process sampler (agent_cpu.cpp) ---
    int timer; // the kernel id of the thread's CPU timer; -1: none
    // Its perf clock's count at its last sample (0: none yet since the clock was made), and the xorshift state of its
    // periods' draws (0: not seeded) (agent_cpu_clock.cpp).
    uint64_t cpuCountNs;
    uint64_t cpuJitter;

    // --- Its records' clock (agent_liveness.cpp: recordNs) ---
    uint64_t clockTsc;  // the time-stamp counter at its anchor (0: none)
    uint64_t clockNs;   // CLOCK_MONOTONIC then
    uint64_t clockRate; // nanoseconds per tick, 32.32 fixed point (0: not measured yet)

    // --- Its Python frames (agent_pystack.cpp) ---
    PythonThreadCache python; // its PyThreadState, once found
    // The code objects this thread found described already, by their keys (agent_pystack.cpp: address, fingerprint
    // and ring serial mixed, so a new ring's keys never match an old one's), direct-mapped: a sample's frames ask the
    // process-wide table only for a code this thread has not met.
    uint64_t pythonKnown[kPythonKnownCodes];
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// This thread's id (cached in t_state; async-signal-safe).
uint32_t currentThreadId();
// The next draw of one of the thread's xorshift streams (`state`: ThreadState::rng or cpuJitter), seeded from the
// clock and the thread's id when it is 0 (agent_core.cpp).
uint64_t nextRandom(uint64_t &state);

// The thread's errno, its address asked of the C library once.
inline int *errnoOf(ThreadState &t)
{
    if (__builtin_expect(t.errnoAt == nullptr, 0))
        t.errnoAt = &errno;
    return t.errnoAt;
}

// The one guard of the agent: every hook's slow path, every handler and every record writer enters it. It keeps the
// program's errno (the slow paths make system calls that may fail: an allocation or a free must leave errno as the
// program set it), marks the thread as inside the agent, and holds a reserved record until it is published: a
// record reserved through the guard is never left unpublished (the guard's end publishes it as padding), and while
// it is held, a record nested in it (a signal handler's) never waits for room that only this thread could make.
class AgentScope {
public:
    AgentScope() : m_errno(*errnoOf(t_state)), m_wasHolding(t_state.holding) { ++t_state.depth; }
    ~AgentScope()
    {
        if (m_record)
            publish(RecordType::Padding);
        --t_state.depth;
        *errnoOf(t_state) = m_errno;
    }
    AgentScope(const AgentScope &) = delete;
    AgentScope &operator=(const AgentScope &) = delete;

    // Reserves a record of `bytes` (a multiple of 8) keeping `keep` bytes free after it (agent_writer.cpp); waits
    // for room only when `wait` and this thread holds no other record. Null when there is no room; else the record
    // is held (its header's size set) until publish(): from before the ring's head moves, so that a signal handler
    // landing anywhere in between nests in it.
    RecordHeader *reserve(uint32_t bytes, uint64_t keep, bool wait);
    template <typename Record> Record *reserve(uint32_t bytes, uint64_t keep, bool wait)
    {
        return reinterpret_cast<Record *>(reserve(bytes, keep, wait));
    }
    // Publishes the held record as `type` (stored last, with release): the reader may take it from now on.
    void publish(RecordType type);

private:
    int m_errno;
    bool m_wasHolding;
    RecordHeader *m_record = nullptr;
};

// Brackets the agent's own calls that allocate (the dynamic linker's lookups, pthread_getattr_np, pthread keys):
// their allocations pass through untraced, the thread's countdown and count of allocations are put back as they
// were, and its heap counts nothing meanwhile (the program's totals leave the agent's own allocations out; one that
// a signal handler makes meanwhile is left out with them).
class InternalWork {
public:
    InternalWork() : m_countdown(t_state.state), m_allocations(t_state.allocations), m_slot(t_state.slot)
    {
        ++t_state.internal;
        t_state.slot = nullptr; // the slow path, which counts nothing while `internal` is up
        __atomic_store_n(&t_state.fast, nullptr, __ATOMIC_RELAXED); // set again by the next hook's other path
    }
    ~InternalWork()
    {
        --t_state.internal;
        t_state.state = m_countdown;
        t_state.allocations = m_allocations;
        t_state.slot = m_slot;
    }
    InternalWork(const InternalWork &) = delete;
    InternalWork &operator=(const InternalWork &) = delete;

private:
    int64_t m_countdown; // with the count bits
    uint64_t m_allocations;
    HeapSlot *m_slot;
};

} // namespace emberline::agent
