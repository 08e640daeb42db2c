// The agent's own stack walk with the session's tables (agent_tables.h), and the stacks a process image has written
// out already.
//
// - The arena is mapped once per process image, read-only, at the first walk that finds an index (a forked child
//   keeps its parent's mapping: the same file). The index is read under its sequence lock: a walk that saw the
//   sequence move is thrown away (the sample takes the copy).
// - Rows the walk found are remembered in a table shared by the threads, keyed by the looked-up address and tagged
//   with the index's sequence and the ring's serial (a row of another index never answers). An entry is two words,
//   the key XOR the value and the value, so that a torn entry (two threads writing it at once) fails its check
//   instead of answering with another address's row (the lock-free hashing of chess engines' tables). CPython's
//   allocation stacks go through a few hundred return addresses: after the first few thousand allocations every
//   row comes from this table, not from a binary search over tens of thousands of rows.
// - The stacks written out are records/agent_stack_set.cpp's.
//
// Thread: every thread of the program, in hooks and in the CPU sampler's signal handler; lock-free.

#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_protocol.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_writer.h"
#include "engine/agent/python/agent_python.h"
#include "engine/agent/walk/agent_walk_memo.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace emberline::agent {
namespace {

// The arena's mapping: 0 not tried, 1 being mapped, 2 mapped, 3 not there yet (tried again after kArenaRetryNs).
std::atomic<int> g_arenaState{0};
std::atomic<uint64_t> g_arenaRetryNs{0};
const uint8_t *g_arena = nullptr;
constexpr uint64_t kArenaRetryNs = 50'000'000;

// A serial per ring of this process, part of every remembered row's tag.
std::atomic<uint32_t> g_ringSerial{1};

constexpr uint32_t kRowCacheSlots = 16384; // 256 KiB
struct RowSlot {
    std::atomic<uint64_t> check; // key ^ value
    std::atomic<uint64_t> value; // tag << 32 | the row's rule (cfaOffset, kind, rbpSlot)
};
RowSlot *g_rows = nullptr;
std::atomic<int> g_rowsState{0}; // 0 not made, 1 being made, 2 made, 3 could not be made

const uint8_t *arena()
{
    int seen = g_arenaState.load(std::memory_order_acquire);
    if (seen == 2)
        return g_arena;
    if (seen == 1 || (seen == 3 && nowNs() < g_arenaRetryNs.load(std::memory_order_relaxed)))
        return nullptr;
    if (!g_arenaState.compare_exchange_strong(seen, 1, std::memory_order_acq_rel))
        return nullptr;
    char path[600];
    const size_t length = strnlen(g_directory, sizeof g_directory);
    const size_t nameLength = strlen(kUnwindArenaName);
    if (length + 1 + nameLength + 1 > sizeof path) {
        g_arenaState.store(3, std::memory_order_release);
        g_arenaRetryNs.store(UINT64_MAX, std::memory_order_relaxed);
        return nullptr;
    }
    memcpy(path, g_directory, length);
    path[length] = '/';
    memcpy(path + length + 1, kUnwindArenaName, nameLength + 1);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    void *mem = MAP_FAILED;
    if (fd >= 0) {
        mem = mmap(nullptr, kUnwindArenaReserve, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
        close(fd);
    }
    if (mem == MAP_FAILED) {
        g_arenaRetryNs.store(nowNs() + kArenaRetryNs, std::memory_order_relaxed);
        g_arenaState.store(3, std::memory_order_release);
        return nullptr;
    }
    g_arena = static_cast<const uint8_t *>(mem);
    g_arenaState.store(2, std::memory_order_release);
    return g_arena;
}

uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

uint32_t packRow(const UnwindRow &row)
{
    return uint32_t(row.cfaOffset) | uint32_t(uint8_t(row.kind)) << 16 | uint32_t(uint8_t(row.rbpSlot)) << 24;
}

UnwindRow unpackRow(uint32_t packed)
{
    UnwindRow row{};
    row.cfaOffset = uint16_t(packed);
    row.kind = static_cast<UnwindKind>(uint8_t(packed >> 16));
    row.rbpSlot = int8_t(uint8_t(packed >> 24));
    return row;
}

// What one walk reads of the index, once.
struct IndexView {
    const ModuleIndex *index = nullptr;
    const uint8_t *arena = nullptr;
    uint64_t arenaBytes = 0;
    uint32_t count = 0;
    uint32_t tag = 0;
    RowSlot *rows = nullptr;  // the remembered rows (null while another thread makes them)
    WalkMemo *memo = nullptr; // this thread's (null: none)
};

// The row for runtime address `lookup`, from the remembered rows or the index; false: no tabled module holds it.
bool sharedRowFor(const IndexView &view, uint64_t lookup, UnwindRow &row, bool &bad)
{
    RowSlot *slot = view.rows ? &view.rows[mix(lookup) & (kRowCacheSlots - 1)] : nullptr;
    if (slot) {
        const uint64_t value = slot->value.load(std::memory_order_relaxed);
        if ((slot->check.load(std::memory_order_relaxed) ^ value) == lookup && uint32_t(value >> 32) == view.tag) {
            row = unpackRow(uint32_t(value));
            return true;
        }
    }
    // The module: the last entry starting at or below the address.
    uint32_t low = 0;
    uint32_t high = view.count;
    while (low < high) {
        const uint32_t mid = low + (high - low) / 2;
        if (view.index->entries[mid].start <= lookup)
            low = mid + 1;
        else
            high = mid;
    }
    if (low == 0)
        return false;
    const ModuleEntry &entry = view.index->entries[low - 1];
    if (lookup >= entry.end)
        return false;
    const uint64_t offset = entry.tableOffset;
    UnwindTable table;
    if (offset % 8 != 0 || offset >= view.arenaBytes ||
        !unwindTableFromBytes(view.arena + offset, view.arenaBytes - offset, table)) {
        bad = true; // an index read across a change, or a table the walk cannot trust
        return false;
    }
    const UnwindRow *found = findUnwindRow(table, lookup - entry.bias);
    if (!found) {
        row = UnwindRow{0, 0, UnwindKind::NoFde, 0};
    } else {
        row = *found;
    }
    if (slot) {
        const uint64_t value = uint64_t(view.tag) << 32 | packRow(row);
        slot->value.store(value, std::memory_order_relaxed);
        slot->check.store(lookup ^ value, std::memory_order_relaxed);
    }
    return true;
}

// sharedRowFor, through this thread's own rows first.
bool rowFor(const IndexView &view, uint64_t lookup, UnwindRow &row, bool &bad)
{
    MemoRow *mine = view.memo ? &view.memo->rows[(lookup ^ lookup >> 9) & (kMemoRows - 1)] : nullptr;
    if (mine && mine->lookup == lookup && mine->tag == view.tag) {
        row = unpackRow(mine->row);
        return true;
    }
    if (!sharedRowFor(view, lookup, row, bad))
        return false;
    if (mine)
        *mine = MemoRow{lookup, packRow(row), view.tag};
    return true;
}

// A pc in no tabled module: the session is asked to read the maps again, at most every 200 ms.
void noteModuleMissed()
{
    const uint64_t now = nowNs();
    uint64_t last = g_ring->moduleMissedNs.load(std::memory_order_relaxed);
    if (now - last > 200'000'000)
        g_ring->moduleMissedNs.compare_exchange_strong(last, now, std::memory_order_relaxed);
}

WalkFallback fallbackOf(UnwindKind kind)
{
    return static_cast<WalkFallback>(uint8_t(kind) - uint8_t(UnwindKind::Expression));
}

// A frame's share of its stack's hash: its pc mixed with its depth from the root, so that the root's part of a stack
// is the same whatever frames are under it.
uint64_t frameHash(uint64_t pc, uint32_t depth)
{
    return mix(pc + uint64_t(depth + 1) * 0x9E3779B97F4A7C15ull);
}

// The hash of a whole walk's frames (their sum from the root), flags and Python frames; never 0.
uint64_t walkHash(uint64_t sum, uint32_t frames, uint8_t flags, bool firstIsReturn, uint64_t python)
{
    uint64_t hash = mix(sum ^ (uint64_t(frames) << 8 | flags | uint64_t(firstIsReturn) << 40));
    if (python != 0)
        hash = mix(hash ^ python);
    return hash == 0 ? 1 : hash;
}

// Whether the walk that starts at `regs` has `leaf`'s frames and joins the memo where it did (see WalkLeaf).
bool leafHolds(const WalkMemo &memo, const WalkLeaf &leaf, uint32_t tag, UnwindRegs regs, const StackBounds &stack,
               uint32_t maxFrames)
{
    if (leaf.frames == 0 || leaf.pc != regs.pc || leaf.sp != regs.sp || (leaf.bpMatters && leaf.bp != regs.bp) ||
        leaf.tag != tag || leaf.join >= memo.depth)
        return false;
    const MemoFrame &joined = memo.frames[leaf.join];
    if (joined.pc != leaf.joinPc || joined.sp != leaf.joinSp || joined.sum != leaf.joinSum || joined.lookupAtPc ||
        (joined.bpMatters && joined.bp != leaf.joinBp))
        return false;
    if (leaf.frames + uint32_t(leaf.join) + 1 > maxFrames || !stack.holds(leaf.joinSp - 8, 8))
        return false;
    // The leaf's words lie in [sp, joinSp): on the stack.
    const OwnStackReader read;
    uint64_t value = 0;
    for (uint32_t i = 0; i < leaf.checkCount; ++i) {
        read(leaf.checks[i].address, value);
        if (value != leaf.checks[i].value)
            return false;
    }
    const int32_t change = memoFirstChange(memo, leaf.join, stack);
    return change < 0 || uint32_t(change) > leaf.join;
}

// A walk from an allocation's call that starts at one of the thread's leaves (WalkLeaf): true when it went, `walk`
// and `pcs` then as walkStack gives them; false to walk by steps.
bool walkFromLeaf(const WalkMemo &memo, uint32_t tag, UnwindRegs regs, const StackBounds &stack, uint64_t *pcs,
                  uint32_t maxFrames, StackClaim *claim, uint64_t python, AgentWalk &walk)
{
    const uint64_t key = leafKey(regs.pc, regs.sp);
    const uint32_t set = leafSet(key);
    const WalkLeaf *leaf = nullptr;
    for (uint32_t way = 0; way < kLeafWays && !leaf; ++way)
        if (memo.leafKeys[set].key[way] == key && leafHolds(memo, memo.leaves[set][way], tag, regs, stack, maxFrames))
            leaf = &memo.leaves[set][way];
    if (!leaf)
        return false;
    const uint32_t join = leaf->join;
    const uint32_t frames = leaf->frames + join + 1;
    walk.frames = frames;
    walk.whole = true;
    walk.flags = 0;
    walk.fromMemo = frames;
    walk.fromLeaf = leaf->frames;
    walk.hash = walkHash(leaf->sum, frames, 0, true, python);
    bool copy = true;
    if (claim) {
        *claim = claimStack(walk.hash);
        copy = *claim != StackClaim::Known;
    }
    if (copy) {
        uint32_t at = 0;
        for (; at < leaf->frames; ++at)
            pcs[at] = leaf->pcs[at];
        for (int32_t e = int32_t(join); e >= 0; --e)
            pcs[at++] = memo.frames[e].pc;
        pcs[0] -= 1;
    }
    return true;
}

// A walk from an allocation's call that stepped `fresh` frames (pcs[0..fresh), the start's first) before it joined
// the memo at depth `joined`, the memo now holding its frames: kept as the leaf of its start, where its steps' words
// all lie in [start.sp, the joined frame's sp).
void keepLeaf(WalkMemo &memo, UnwindRegs start, const uint64_t *pcs, uint32_t fresh, uint32_t joined, uint32_t tag)
{
    const uint32_t frames = fresh + joined + 1;
    const MemoFrame &joinedFrame = memo.frames[joined];
    const MemoFrame &first = memo.frames[frames - 1];
    const uint32_t from = memo.checkEnd[joined];
    const uint32_t to = memo.checkEnd[frames - 1];
    if (fresh == 0 || fresh > kLeafFrames || to - from > 2 * kLeafFrames || joined > UINT16_MAX)
        return;
    for (uint32_t i = from; i < to; ++i)
        if (memo.checks[i].address < start.sp || memo.checks[i].address + 8 > joinedFrame.sp)
            return;
    const uint64_t key = leafKey(start.pc, start.sp);
    const uint32_t set = leafSet(key);
    const uint32_t way = memo.leafNext[set]++ % kLeafWays;
    memo.leafKeys[set].key[way] = 0;
    WalkLeaf &leaf = memo.leaves[set][way];
    leaf.frames = 0;
    leaf.pc = start.pc;
    leaf.sp = start.sp;
    leaf.bp = start.bp;
    leaf.joinPc = joinedFrame.pc;
    leaf.joinSp = joinedFrame.sp;
    leaf.joinBp = joinedFrame.bp;
    leaf.joinSum = joinedFrame.sum;
    leaf.sum = first.sum;
    leaf.tag = tag;
    leaf.join = uint16_t(joined);
    leaf.bpMatters = first.bpMatters;
    leaf.checkCount = uint8_t(to - from);
    for (uint32_t i = 0; i < fresh; ++i)
        leaf.pcs[i] = pcs[i];
    for (uint32_t i = from; i < to; ++i)
        leaf.checks[i - from] = memo.checks[i];
    leaf.frames = uint8_t(fresh);
    memo.leafKeys[set].key[way] = key;
}

} // namespace

// The room a walk's pcs take, and then some for the frames under it.
constexpr uint64_t kWalkStackRoom = uint64_t(32) << 10;

__attribute__((noinline)) bool roomToWalk()
{
    const uint64_t sp = reinterpret_cast<uint64_t>(__builtin_frame_address(0));
    return t_state.stackHigh != 0 && sp > t_state.stackLow && sp - t_state.stackLow > kWalkStackRoom;
}

bool checkedWalk()
{
    const uint32_t every = g_ring->checkEvery.load(std::memory_order_relaxed);
    if (every == 0)
        return false;
    uint32_t &left = t_state.walks; // a countdown: a division at every walk cost it 0.4% of a CPython program
    if (left == 0 || left > every)
        left = every;
    return --left == 0;
}

bool walkWanted()
{
    return g_ring && g_ring->unwindMode.load(std::memory_order_relaxed) == uint32_t(UnwindMode::Walk);
}

AgentWalk walkStack(UnwindRegs regs, bool firstIsReturn, uint64_t *pcs, uint32_t maxFrames, StackClaim *claim,
                    uint64_t python)
{
    AgentWalk walk;
    walk.reason = WalkFallback::NotReady;
    const ThreadState &t = t_state;
    // The live stack only: from the stack pointer up (the main thread's stack below it may not be mapped).
    if (regs.sp < t.stackLow || regs.sp >= t.stackHigh) {
        walk.reason = t.stackHigh == 0 ? WalkFallback::NotReady : WalkFallback::OutOfBounds;
        return walk;
    }
    const ModuleIndex *index = moduleIndex(g_ring);
    const uint32_t sequence = index->sequence.load(std::memory_order_acquire);
    if (sequence == 0 || (sequence & 1) != 0 ||
        index->mapsChanges != g_ring->mapsChanges.load(std::memory_order_acquire))
        return walk;
    IndexView view;
    view.index = index;
    view.arena = arena();
    view.arenaBytes = index->arenaBytes;
    view.count = index->count < kModuleSlots ? index->count : kModuleSlots;
    view.tag = sequence * 2654435761u ^ g_ringSerial.load(std::memory_order_relaxed);
    if (!view.arena || view.arenaBytes > kUnwindArenaReserve || view.count == 0)
        return walk;
    view.rows = makeOnce(g_rowsState, g_rows, sizeof(RowSlot) * kRowCacheSlots);
    WalkMemo *memo = threadMemo();
    view.memo = memo;
    if (memo) {
        t_state.memoBusy = true;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (memo->tag != view.tag)
            memo->depth = 0;
    }
    const StackBounds stack{regs.sp, t.stackHigh};
    if (memo && firstIsReturn && walkFromLeaf(*memo, view.tag, regs, stack, pcs, maxFrames, claim, python, walk)) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        t_state.memoBusy = false;
        return walk;
    }
    const UnwindRegs start = regs;
    const OwnStackReader read;
    int32_t cursor = memo ? int32_t(memo->depth) - 1 : -1; // the memo's frame at or under the walk's stack pointer
    int32_t joined = -1;                                   // the memo's frame the walk joined
    int32_t joinBelow = -1; // once the memo's stack was checked: a join at a frame under this depth needs no more
    bool checked = false;
    uint64_t endRead = 0;
    bool stopped = false; // before the depth limit
    while (walk.frames < maxFrames) {
        const bool atPc = walk.frames == 0 && !firstIsReturn;
        while (cursor >= 0 && memo->frames[cursor].sp < regs.sp)
            --cursor;
        if (cursor >= 0) {
            const MemoFrame &m = memo->frames[cursor];
            if (m.sp == regs.sp && m.pc == regs.pc && (m.bp == regs.bp || !m.bpMatters) && m.lookupAtPc == atPc &&
                walk.frames + uint32_t(cursor) < maxFrames) {
                if (!checked) {
                    // One check a walk: the memo's stack from here to the root, or how far toward it it still holds.
                    checked = true;
                    const int32_t change = memoFirstChange(*memo, uint32_t(cursor), stack);
                    joinBelow = change < 0 ? cursor + 1 : change;
                }
                if (cursor < joinBelow) {
                    joined = cursor;
                    stopped = true;
                    break;
                }
            }
        }
        pcs[walk.frames] = regs.pc;
        const uint64_t lookup = atPc ? regs.pc : regs.pc - 1;
        ++walk.frames;
        UnwindRow row{};
        bool bad = false;
        stopped = true;
        if (!rowFor(view, lookup, row, bad)) {
            walk.reason = bad ? WalkFallback::NotReady : WalkFallback::NoModule;
            if (!bad)
                noteModuleMissed();
            break;
        }
        if (memo && walk.frames <= kMemoFrames)
            memo->scratch[walk.frames - 1] = ScratchFrame{regs.sp, regs.bp, row.rbpSlot, row.kind};
        const UnwindStep step = unwindStepWithRow(row, stack, regs, read);
        if (step.status == UnwindStatus::Stepped) {
            stopped = false;
            continue;
        }
        if (step.status == UnwindStatus::End) {
            walk.whole = true;
            if (row.kind != UnwindKind::End) // a zero return address, read just under the CFA
                endRead = (row.kind == UnwindKind::CfaRsp ? regs.sp : regs.bp) + row.cfaOffset - 8;
        } else if (step.status == UnwindStatus::Fallback) {
            walk.reason = fallbackOf(step.kind);
        } else {
            walk.reason = step.status == UnwindStatus::BadFrame ? WalkFallback::BadFrame : WalkFallback::OutOfBounds;
        }
        break;
    }
    const uint32_t fresh = walk.frames; // the frames this walk stepped through itself
    if (joined >= 0) {
        walk.frames += uint32_t(joined) + 1; // their pcs copied at the end, where wanted
        walk.fromMemo = uint32_t(joined) + 1;
        walk.whole = true;
    } else if (!stopped) { // the depth limit
        walk.whole = true;
        walk.flags |= WalkTruncated;
    }
    // Read across a change of the index: not to be trusted.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (walk.whole && index->sequence.load(std::memory_order_relaxed) != sequence) {
        walk.whole = false;
        walk.flags = 0;
        walk.reason = WalkFallback::NotReady;
    }
    if (walk.whole) {
        // The hash from the root: the memo's part, then this walk's frames (whose steps the memo takes in, with the
        // stack words each step read: memoFirstChange's checks). The caller of each new frame is held in registers.
        const uint32_t frames = walk.frames;
        const bool keep = memo && frames <= kMemoFrames && (walk.flags & WalkTruncated) == 0;
        uint64_t sum = 0;
        MemoFrame caller{}; // the frame under the one being kept (its caller), once there is one
        if (joined >= 0) {
            caller = memo->frames[joined];
            sum = caller.sum;
        }
        uint32_t at = keep && joined >= 0 ? memo->checkEnd[joined] : 0;
        for (uint32_t i = fresh; i-- > 0;) {
            const uint32_t depth = frames - 1 - i;
            sum += frameHash(pcs[i], depth);
            if (!keep)
                continue;
            const ScratchFrame &f = memo->scratch[i];
            // The root's step reads nothing when its row ended the stack.
            const bool ended = depth == 0 && endRead == 0;
            const bool bpMatters = !ended && (f.kind == UnwindKind::CfaRbp || (f.rbpSlot == 0 && caller.bpMatters));
            const bool inOwnFrames = depth == 0 || (caller.inOwnFrames && readsInOwnFrame(caller.sp, f.sp, f.rbpSlot));
            const MemoFrame frame{pcs[i], f.sp, f.bp, sum, f.rbpSlot, i == 0 && !firstIsReturn, bpMatters, inOwnFrames};
            memo->frames[depth] = frame;
            if (depth > 0) {
                memo->checks[at++] = MemoCheck{caller.sp - 8, caller.pc};
                if (f.rbpSlot != 0 && caller.bpMatters)
                    memo->checks[at++] = MemoCheck{caller.sp - uint64_t(-int64_t(f.rbpSlot)) * 8, caller.bp};
            }
            memo->checkEnd[depth] = uint16_t(at);
            caller = frame;
        }
        if (keep) {
            if (joined < 0)
                memo->endRead = endRead;
            memo->depth = frames;
            memo->tag = view.tag;
            if (firstIsReturn && joined >= 0)
                keepLeaf(*memo, start, pcs, fresh, uint32_t(joined), view.tag);
        }
        // A walk from a return address gives its call's address (the return address - 1, inside the call
        // instruction) as its first pc, as the session takes a caller frame's; its hash says so, apart from an
        // interrupted pc that happened to be at a return address.
        walk.hash = walkHash(sum, frames, walk.flags, firstIsReturn, python);
        // A stack written out already is written as its hash alone: the memo's pcs are not needed.
        bool memoPcs = joined >= 0;
        if (claim) {
            *claim = claimStack(walk.hash);
            memoPcs &= *claim != StackClaim::Known;
        }
        if (memoPcs)
            for (int32_t e = joined, at = int32_t(fresh); e >= 0; --e)
                pcs[at++] = memo->frames[e].pc;
        if (firstIsReturn && (fresh > 0 || memoPcs))
            pcs[0] -= 1;
    }
    if (memo) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        t_state.memoBusy = false;
    }
    return walk;
}

void walkNewRing()
{
    g_ringSerial.fetch_add(1, std::memory_order_relaxed);
    forgetWrittenStacks();
}

void walkRetire()
{
    // Should it fail, the arena stays mapped until walkForget: walks read it as before.
    if (g_arenaState.load(std::memory_order_acquire) == 2)
        (void)mmap(const_cast<uint8_t *>(g_arena), kUnwindArenaReserve, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    // A walk still under way reads a zero slot as an empty one. (The threads' memos stay: a few are touched, and a
    // walk holds its own while it runs.)
    giveWrittenStacksBack();
    if (g_rowsState.load(std::memory_order_acquire) == 2)
        madvise(g_rows, sizeof(RowSlot) * kRowCacheSlots, MADV_DONTNEED);
}

void walkForget()
{
    if (g_arenaState.load(std::memory_order_acquire) == 2) {
        munmap(const_cast<uint8_t *>(g_arena), kUnwindArenaReserve);
        g_arena = nullptr;
    }
    g_arenaRetryNs.store(0, std::memory_order_relaxed);
    g_arenaState.store(0, std::memory_order_release);
}

} // namespace emberline::agent
