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
// - The stacks written out are a set of hashes shared by the threads (open addressing, a few probes, never
//   emptied but by a new ring): a full set only means stacks are written out again.
//
// Thread: every thread of the program, in hooks and in the CPU sampler's signal handler; lock-free.

#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_protocol.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_writer.h"

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

constexpr uint32_t kStackSetSlots = 65536; // 512 KiB
constexpr uint32_t kStackProbes = 8;
std::atomic<uint64_t> *g_stacks = nullptr;
std::atomic<int> g_stacksState{0};

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
    RowSlot *rows = nullptr; // the remembered rows (null while another thread makes them)
};

// The row for runtime address `lookup`, from the remembered rows or the index; false: no tabled module holds it.
bool rowFor(const IndexView &view, uint64_t lookup, UnwindRow &row, bool &bad)
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
    return every != 0 && ++t_state.walks % every == 0;
}

bool walkWanted()
{
    return g_ring && g_ring->unwindMode.load(std::memory_order_relaxed) == uint32_t(UnwindMode::Walk);
}

AgentWalk walkStack(UnwindRegs regs, bool firstIsReturn, uint64_t *pcs, uint32_t maxFrames)
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
    // The hash is taken as the walk goes: it does not hold up the chain of loads from one frame to the next.
    uint64_t hash = 0x9E3779B97F4A7C15ull;
    const StackBounds stack{regs.sp, t.stackHigh};
    const OwnStackReader read;
    while (walk.frames < maxFrames) {
        pcs[walk.frames] = regs.pc;
        hash = mix(hash ^ regs.pc) + 0x9E3779B97F4A7C15ull;
        const uint64_t lookup = walk.frames == 0 && !firstIsReturn ? regs.pc : regs.pc - 1;
        ++walk.frames;
        UnwindRow row{};
        bool bad = false;
        if (!rowFor(view, lookup, row, bad)) {
            walk.reason = bad ? WalkFallback::NotReady : WalkFallback::NoModule;
            if (!bad)
                noteModuleMissed();
            return walk;
        }
        const UnwindStep step = unwindStepWithRow(row, stack, regs, read);
        if (step.status == UnwindStatus::End) {
            walk.whole = true;
            break;
        }
        if (step.status == UnwindStatus::Fallback) {
            walk.reason = fallbackOf(step.kind);
            return walk;
        }
        if (step.status == UnwindStatus::OutOfBounds) {
            walk.reason = WalkFallback::OutOfBounds;
            return walk;
        }
        if (step.status == UnwindStatus::BadFrame) {
            walk.reason = WalkFallback::BadFrame;
            return walk;
        }
    }
    if (!walk.whole) { // the depth limit
        walk.whole = true;
        walk.flags |= WalkTruncated;
    }
    walk.hash = mix(hash ^ (uint64_t(walk.frames) << 8 | walk.flags));
    if (walk.hash == 0)
        walk.hash = 1;
    // Read across a change of the index: not to be trusted.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (index->sequence.load(std::memory_order_relaxed) != sequence) {
        walk.whole = false;
        walk.flags = 0;
        walk.reason = WalkFallback::NotReady;
    }
    return walk;
}

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

void walkNewRing()
{
    g_ringSerial.fetch_add(1, std::memory_order_relaxed);
    // A forked child's set is its parent's: its stacks were written to the parent's ring, not this one. Only the
    // forking thread runs here, and no walk of this process has begun.
    if (g_stacksState.load(std::memory_order_acquire) == 2) {
        munmap(g_stacks, sizeof(uint64_t) * kStackSetSlots);
        g_stacks = nullptr;
        g_stacksState.store(0, std::memory_order_release);
    }
}

void walkRetire()
{
    // Should it fail, the arena stays mapped until walkForget: walks read it as before.
    if (g_arenaState.load(std::memory_order_acquire) == 2)
        (void)mmap(const_cast<uint8_t *>(g_arena), kUnwindArenaReserve, PROT_READ,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
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
