// The stacks a process image has written out into its ring (agent_walk.h's claimStack and settleStack): a set of
// their hashes shared by the threads (open addressing, a few probes, never emptied but by a new ring), so that a stack
// seen before is written as its hash alone. A full set only means stacks are written out again.
//
// Thread: every thread of the program, in hooks and in the CPU sampler's signal handler; lock-free.

#include "engine/agent/agent_walk.h"

#include <sys/mman.h>

#include <atomic>

namespace emberline::agent {
namespace {

constexpr uint32_t kStackSetSlots = 65536; // 512 KiB
constexpr uint32_t kStackProbes = 8;
std::atomic<uint64_t> *g_stacks = nullptr;
std::atomic<int> g_stacksState{0};

} // namespace

// A slot holds 0 (free), a stack's hash (written out and published) or the hash ^ 1 (claimed by a thread that is
// writing it out: another thread that meets it writes the stack out in full too, never a reference that the ring
// could hold before the stack itself).
StackClaim claimStack(uint64_t hash)
{
    std::atomic<uint64_t> *set = makeOnce(g_stacksState, g_stacks, sizeof(uint64_t) * kStackSetSlots);
    if (!set)
        return StackClaim::None;
    const uint32_t first = uint32_t(hash) & (kStackSetSlots - 1);
    for (uint32_t i = 0; i < kStackProbes; ++i) {
        std::atomic<uint64_t> &slot = set[(first + i) & (kStackSetSlots - 1)];
        uint64_t seen = slot.load(std::memory_order_acquire);
        // A slot taken meanwhile by another thread is judged again as it now is (it may be this stack's).
        if (seen == 0 && slot.compare_exchange_strong(seen, hash ^ 1, std::memory_order_acquire))
            return StackClaim::Claimed;
        if (seen == hash)
            return StackClaim::Known;
        if (seen == (hash ^ 1))
            return StackClaim::None;
    }
    return StackClaim::None;
}

void settleStack(uint64_t hash, bool written)
{
    std::atomic<uint64_t> *set = g_stacksState.load(std::memory_order_acquire) == 2 ? g_stacks : nullptr;
    if (!set)
        return;
    const uint32_t first = uint32_t(hash) & (kStackSetSlots - 1);
    for (uint32_t i = 0; i < kStackProbes; ++i) {
        std::atomic<uint64_t> &slot = set[(first + i) & (kStackSetSlots - 1)];
        uint64_t claimed = hash ^ 1;
        // Published: the record that wrote the stack out is in the ring before any reference can be reserved.
        if (slot.compare_exchange_strong(claimed, written ? hash : 0, std::memory_order_release))
            return;
    }
}

void giveWrittenStacksBack()
{
    if (g_stacksState.load(std::memory_order_acquire) == 2)
        madvise(g_stacks, sizeof(uint64_t) * kStackSetSlots, MADV_DONTNEED);
}

void forgetWrittenStacks()
{
    // A forked child's set is its parent's: its stacks were written to the parent's ring, not this one. Only the
    // forking thread runs here, and no walk of this process has begun.
    if (g_stacksState.load(std::memory_order_acquire) == 2) {
        munmap(g_stacks, sizeof(uint64_t) * kStackSetSlots);
        g_stacks = nullptr;
        g_stacksState.store(0, std::memory_order_release);
    }
}

} // namespace emberline::agent
