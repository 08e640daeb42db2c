#pragma once

// The thread's last walk, kept for the next (agent_walk.cpp's walkStack): its frames from the root and the stack words
// their steps read, the rows it found last, and its last Python chain (agent_python.h's PythonCodeMemo).
//
// Thread: each memo is its thread's own; a walk nested in one that holds it (a signal handler's) goes without.

#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_unwind.h"
#include "engine/agent/python/agent_python.h"

#include <stdint.h>

namespace emberline::agent {

// A thread's last whole walk (a memo), from the root: successive walks of a thread share most of their frames (an
// allocation's stack differs from the last one's in its innermost few). A walk that reaches a frame whose registers are
// the memo's frame's at the same stack pointer has the memo's frames from there to the root, exactly when every stack
// word the memo's steps read (the return addresses, the saved RBPs) still holds what it held: independent loads,
// checked at once, where the walk chains a row lookup and a load from frame to frame. Each frame keeps the sum of the
// frames' hashes from the root, so that the stack's hash is had from the new frames alone. Slots for kMemoSlots
// threads, taken at a thread's first walk (threads past them walk without) and given back as it ends.
constexpr uint32_t kMemoFrames = 128;
struct MemoFrame {
    uint64_t pc, sp, bp;
    uint64_t sum;    // frameHash of the frames from the root to this one
    int8_t rbpSlot;  // its row's: where its step read the caller's RBP (0: not read)
    bool lookupAtPc; // its row was looked up at pc (an interrupted frame's), not at pc - 1
    // Whether the walk from this frame to the root depends on its RBP: a CFA found from RBP before a saved RBP is
    // read. Where it does not (RBP a general register, as in most code built without frame pointers), two walks
    // whose RBPs differ have the same frames.
    bool bpMatters;
    // Every stack word the steps from this frame to the root read lies in the frame that read it (at or above its
    // stack pointer, under its caller's): memoFirstChange checks them all in one pass, bounds checked at its ends.
    bool inOwnFrames;
};
struct ScratchFrame { // a walk's frames as it goes, innermost first
    uint64_t sp;
    uint64_t bp;
    int8_t rbpSlot;
    UnwindKind kind;
};
// The rows this thread's walks found last, direct-mapped by the looked-up address: its own, in its caches, where the
// rows shared by the threads (RowSlot) cost a mix and a load from a quarter of a megabyte at every frame.
constexpr uint32_t kMemoRows = 512;
struct MemoRow {
    uint64_t lookup;
    uint32_t row; // packRow
    uint32_t tag; // IndexView::tag
};
// A stack word the memo's frames were walked through, and what it held: the return addresses and saved RBPs that the
// steps from a frame to the root read (memoFirstChange's first pass reads them in a row).
struct MemoCheck {
    uint64_t address;
    uint64_t value;
};
// A walk's innermost frames kept apart (a leaf), for walks from an allocation's call (a return address): successive
// allocations come from a few dozen calls at a few stack depths (on CPython JSON, the last 16 walks' starts hold 99%
// of the next walk's), each joining the memo's frames a few steps up, where the memo holds the last walk's innermost
// frames only. A walk that starts at a leaf's registers has the leaf's frames exactly when every stack word the leaf's
// steps read still holds what it held (the rows they found are the same: the same pcs under the same tag); it then
// joins the memo at the leaf's joined frame as a walk that stepped there would, where the memo still holds that frame
// (its pc, stack pointer, RBP where it matters, and the sum of the frames from the root) and the stack from there to
// the root (memoFirstChange). In sets by the start's pc and stack pointer, several ways each: the same call at the same
// depth may come through a few paths (callers), each its own leaf. A set's keys share a cache line, looked through
// before any leaf is read.
constexpr uint32_t kLeafFrames = 8;
constexpr uint32_t kLeafSets = 16;
constexpr uint32_t kLeafWays = 8;
struct WalkLeaf {
    uint64_t pc, sp, bp;               // the walk's start (pc a return address; bp compared where bpMatters)
    uint64_t joinPc, joinSp;           // the memo's frame the walk joined, at depth `join`
    uint64_t joinBp;                   // compared where that frame's bpMatters
    uint64_t joinSum;                  // its MemoFrame::sum
    uint64_t sum;                      // the sum of the frames from the root through the leaf's first
    uint32_t tag;                      // IndexView::tag of the rows its steps followed
    uint16_t join;                     // depth of the memo frame joined
    uint8_t frames;                    // the leaf's own frames (0: an empty slot)
    uint8_t checkCount;                // of `checks`
    bool bpMatters;                    // the walk from the start to the root depends on its RBP
    uint64_t pcs[kLeafFrames];         // innermost first, as stepped (pcs[0] the return address itself)
    MemoCheck checks[2 * kLeafFrames]; // the stack words the leaf's steps read, all in [sp, joinSp)
};
// The key of a walk that starts at `pc` and `sp` (a leaf's, in its set's keys), and its set.
inline uint64_t leafKey(uint64_t pc, uint64_t sp)
{
    return (pc ^ (sp << 16) ^ (sp >> 4)) * 0x9E3779B97F4A7C15ull;
}
inline uint32_t leafSet(uint64_t key)
{
    return uint32_t(key >> 60) & (kLeafSets - 1);
}
struct alignas(64) LeafKeys {
    uint64_t key[kLeafWays]; // each way's leaf's leafKey (0: none)
};

struct WalkMemo {
    LeafKeys leafKeys[kLeafSets];
    WalkLeaf leaves[kLeafSets][kLeafWays];
    uint8_t leafNext[kLeafSets]; // the way each set replaces next
    MemoRow rows[kMemoRows];
    uint32_t depth;                // frames held (0: none)
    uint32_t tag;                  // IndexView::tag of the rows its steps followed
    uint64_t endRead;              // where the root's step read a zero return address (0: its row ended the stack)
    MemoFrame frames[kMemoFrames]; // by depth from the root (0: the outermost frame)
    ScratchFrame scratch[kMemoFrames];
    // The words of the steps from frame 1 to the root, by depth: the steps from frames 1..e read checks[0,
    // checkEnd[e]).
    MemoCheck checks[2 * kMemoFrames];
    uint16_t checkEnd[kMemoFrames];
    PythonCodeMemo python; // holdPythonMemo
};

// This thread's memo; null when it has none (no slot, or a walk nested in one that uses it). Only a thread whose end
// gives it back takes one.
WalkMemo *threadMemoSlow();
extern WalkMemo *g_memos; // made at the first thread's first walk, then never changed
inline WalkMemo *threadMemo()
{
    const ThreadState &t = t_state;
    if (__builtin_expect(t.walkMemo != 0 && t.walkMemo != kNoWalkMemo && !t.memoBusy, 1))
        return &g_memos[t.walkMemo - 1];
    return threadMemoSlow();
}
// Whether a step from the frame at `sp` to its caller at `callerSp` reads only inside the frame: its return address
// just under the caller's stack pointer, its saved RBP (rbpSlot words under it) at or above `sp`.
inline bool readsInOwnFrame(uint64_t callerSp, uint64_t sp, int8_t rbpSlot)
{
    if (callerSp < sp + 8)
        return false;
    return rbpSlot == 0 || (rbpSlot < 0 && callerSp - uint64_t(-int64_t(rbpSlot)) * 8 >= sp);
}
// How much of the memo's stack, from the root up to its frame `from`, is still this thread's stack: the first step (by
// depth: the step from frame e to its caller e - 1) whose stack words no longer hold what they held, or lie off the
// stack; -1 when none (the memo's frames from `from` to the root are the stack's), 0 when the root's own end changed.
// A walk may join the memo at a frame under that step's, and there only.
int32_t memoFirstChange(const WalkMemo &memo, uint32_t from, const StackBounds &stack);

} // namespace emberline::agent
