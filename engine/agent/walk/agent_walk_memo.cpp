// The threads' walk memos (agent_walk_memo.h): slots for kMemoSlots threads, taken at a thread's first walk (threads
// past them walk without) and given back as it ends; the memo's check of the stack words its steps read.
//
// Thread: every thread of the program, in hooks and in the CPU sampler's signal handler; lock-free.

#include "engine/agent/walk/agent_walk_memo.h"

#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_walk.h"

#include <atomic>

namespace emberline::agent {
namespace {

constexpr uint32_t kMemoSlots = 128;
std::atomic<int> g_memosState{0};
std::atomic<uint64_t> g_memoUsed[kMemoSlots / 64];

} // namespace

WalkMemo *g_memos = nullptr;

WalkMemo *threadMemoSlow()
{
    ThreadState &t = t_state;
    if (t.memoBusy || t.walkMemo == kNoWalkMemo || (t.walkMemo == 0 && !t.totalsKeySet))
        return nullptr;
    WalkMemo *memos = makeOnce(g_memosState, g_memos, sizeof(WalkMemo) * kMemoSlots);
    if (!memos)
        return nullptr;
    if (t.walkMemo == 0) {
        t.walkMemo = kNoWalkMemo;
        for (uint32_t word = 0; word < kMemoSlots / 64 && t.walkMemo == kNoWalkMemo; ++word) {
            uint64_t used = g_memoUsed[word].load(std::memory_order_relaxed);
            while (~used != 0) {
                const uint32_t bit = uint32_t(__builtin_ctzll(~used));
                if (g_memoUsed[word].compare_exchange_weak(used, used | uint64_t(1) << bit,
                                                           std::memory_order_acq_rel)) {
                    t.walkMemo = uint8_t(word * 64 + bit + 1);
                    memos[t.walkMemo - 1].depth = 0;
                    for (LeafKeys &set : memos[t.walkMemo - 1].leafKeys)
                        for (uint64_t &key : set.key)
                            key = 0;
                    break;
                }
            }
        }
        if (t.walkMemo == kNoWalkMemo)
            return nullptr;
    }
    return &memos[t.walkMemo - 1];
}

int32_t memoFirstChange(const WalkMemo &memo, uint32_t from, const StackBounds &stack)
{
    const OwnStackReader read;
    uint64_t value = 0;
    if (memo.endRead != 0) {
        const int8_t rbpSlot = memo.frames[0].rbpSlot;
        if (!stack.holds(memo.endRead, 8) ||
            (rbpSlot != 0 && !stack.holds(memo.endRead + 8 - uint64_t(-int64_t(rbpSlot)) * 8, 8)))
            return 0;
        read(memo.endRead, value);
        if (value != 0)
            return 0;
    }
    if (memo.frames[from].inOwnFrames && from > 0 && memo.frames[from].sp >= stack.low &&
        stack.holds(memo.frames[0].sp - 8, 8)) {
        // The common case: one pass of loads, no bounds to check between (each read lies in [frames[from].sp,
        // frames[0].sp)). The checks are in the order of the steps from the root: the first that differs names the
        // step (the first depth e whose checks reach past it).
        const MemoCheck *const begin = memo.checks;
        const MemoCheck *const end = begin + memo.checkEnd[from];
        const MemoCheck *check = begin;
        for (; check != end; ++check) {
            read(check->address, value);
            if (value != check->value)
                break;
        }
        if (check == end)
            return -1;
        const uint32_t index = uint32_t(check - begin);
        uint32_t e = 1;
        while (memo.checkEnd[e] <= index)
            ++e;
        return int32_t(e);
    }
    for (uint32_t e = 1; e <= from; ++e) {
        const MemoFrame &frame = memo.frames[e];
        const MemoFrame &caller = memo.frames[e - 1];
        if (!stack.holds(caller.sp - 8, 8))
            return int32_t(e);
        read(caller.sp - 8, value);
        bool same = value == caller.pc;
        if (frame.rbpSlot != 0) {
            const uint64_t slot = caller.sp - uint64_t(-int64_t(frame.rbpSlot)) * 8;
            if (!stack.holds(slot, 8))
                return int32_t(e);
            if (caller.bpMatters) {
                read(slot, value);
                same &= value == caller.bp;
            }
        }
        if (!same)
            return int32_t(e);
    }
    return -1;
}

PythonCodeMemo *holdPythonMemo()
{
    WalkMemo *memo = threadMemo();
    if (!memo)
        return nullptr;
    t_state.memoBusy = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return &memo->python;
}

void releasePythonMemo()
{
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_state.memoBusy = false;
}

void walkThreadEnd()
{
    ThreadState &t = t_state;
    const uint8_t slot = t.walkMemo;
    t.walkMemo = kNoWalkMemo; // its last calls walk without
    if (slot != 0 && slot != kNoWalkMemo)
        g_memoUsed[(slot - 1) / 64].fetch_and(~(uint64_t(1) << ((slot - 1) % 64)), std::memory_order_release);
}

void walkForkChild()
{
    // The parent's other threads are not the child's: their slots are free here. (The memo's rows are the parent
    // ring's: a new ring's tag never matches them.)
    const uint8_t slot = t_state.walkMemo;
    for (auto &word : g_memoUsed)
        word.store(0, std::memory_order_relaxed);
    if (slot != 0 && slot != kNoWalkMemo)
        g_memoUsed[(slot - 1) / 64].store(uint64_t(1) << ((slot - 1) % 64), std::memory_order_relaxed);
}

} // namespace emberline::agent
