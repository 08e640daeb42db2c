// The records the hooks and the agent's slow paths write (agent_writer.h's writers): an allocation walked with the
// session's tables or copied, a free, a thread's totals, a thread's start and end. Each reserves its record through
// AgentScope (agent_writer.cpp) and publishes it whole. agent_core.cpp calls them.
//
// Thread: every thread of the program, concurrently; lock-free.

#include "engine/agent/agent_heap.h"
#include "engine/agent/agent_pystack.h"
#include "engine/agent/agent_stack.h"
#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_track.h"
#include "engine/agent/agent_walk.h"
#include "engine/agent/agent_writer.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace emberline::agent {

namespace {

// The fields every allocation record carries, walked or copied.
struct AllocFields {
    uint64_t now;
    void *address;
    size_t size;
    bool exact;
    bool wait;
    uint64_t keep;
    uint64_t allocations;
    uint64_t bytes;
};

// The fields an allocation record carries copied or walked.
template <typename Record> void fill(Record &record, const AllocFields &f)
{
    record.tid = currentThreadId();
    record.timeNs = f.now;
    record.address = uint64_t(f.address);
    record.size = f.size;
    record.heapBytes = t_state.notMalloc                    ? f.size
                       : t_state.sampleKind == SampleMarked ? heapBytesOf(markedBlockOf(f.address))
                                                            : heapBytesOf(f.address);
    record.threadAllocations = f.allocations;
    record.threadBytes = f.bytes;
}

void dropAllocation(size_t size)
{
    g_ring->allocsDropped.fetch_add(1, std::memory_order_relaxed);
    g_ring->bytesDropped.fetch_add(size, std::memory_order_relaxed);
}

// The copied form: the registers and the stack from regs[RegSP] (and, for a checked sample, the walk's pcs after it).
void writeAllocCopy(const AllocFields &f, const PythonStack &python, const uint64_t *regs, const uint64_t *pcs,
                    uint32_t frames, WalkFallback because)
{
    uint32_t stackWant = g_ring->stackCopyBytes.load(std::memory_order_relaxed);
    if (stackWant > kMaxStackCopyBytes)
        stackWant = kMaxStackCopyBytes;
    const uint32_t stackPadded = (stackWant + 7) & ~uint32_t(7);
    const uint32_t bytes = uint32_t(sizeof(AllocRecord) + stackPadded + frames * sizeof(uint64_t) + python.bytes());
    AgentScope scope;
    auto *record = scope.reserve<AllocRecord>(bytes, f.keep, f.wait);
    if (!record) {
        if (!f.exact)
            forgetSample(f.address);
        return dropAllocation(f.size);
    }
    if (!f.exact)
        g_ring->tracked.fetch_add(1, std::memory_order_relaxed);
    fill(*record, f);
    record->walkedFrames = frames;
    record->copiedBecause = frames != 0 ? 0 : uint32_t(because) + 1;
    memcpy(record->regs, regs, sizeof record->regs);
    auto *stack = reinterpret_cast<uint8_t *>(record + 1);
    record->stackBytes = copyStack(record->regs[RegSP], stack, stackWant);
    if (frames != 0)
        memcpy(stack + stackPadded, pcs, frames * sizeof(uint64_t));
    putPython(record->python, stack + stackPadded + frames * sizeof(uint64_t), python);
    scope.publish(RecordType::Alloc);
}

// Walks the allocation's stack and writes the walked record (or drops it for want of room); false when the walk could
// not go, and says why in `because` (the copy is written instead). A checked sample writes the copied record with the
// walk in it.
__attribute__((noinline)) bool writeAllocWalked(const AllocFields &f, const PythonStack &python, const uint64_t *regs,
                                                const ProgramCall *call, bool checked, WalkFallback &because)
{
    uint64_t pcs[kMaxWalkFrames];
    const UnwindRegs start =
        call ? UnwindRegs{call->returnAddress, call->sp, call->bp} : UnwindRegs{regs[RegIP], regs[RegSP], regs[RegBP]};
    // A checked sample's walk keeps every pc (the session compares them with its own unwind of the copy).
    StackClaim claim = StackClaim::None;
    const AgentWalk walk =
        walkStack(start, true, pcs, kMaxWalkFrames, checked ? nullptr : &claim, pythonStackHash(python));
    if (!walk.whole) {
        because = walk.reason;
        return false;
    }
    if (checked) {
        writeAllocCopy(f, python, regs, pcs, walk.frames, WalkFallback::NotReady);
        return true;
    }
    const uint64_t hash = walk.hash;
    const uint32_t frames = claim == StackClaim::Known ? 0 : walk.frames;
    const PythonStack &written = pythonWritten(python, claim == StackClaim::Known);
    const uint32_t bytes = uint32_t(sizeof(WalkedAllocRecord) + frames * sizeof(uint64_t) + written.bytes());
    AgentScope scope;
    auto *record = scope.reserve<WalkedAllocRecord>(bytes, f.keep, f.wait);
    if (!record) {
        if (claim == StackClaim::Claimed)
            settleStack(hash, false);
        if (!f.exact)
            forgetSample(f.address);
        dropAllocation(f.size);
        return true;
    }
    if (!f.exact)
        g_ring->tracked.fetch_add(1, std::memory_order_relaxed);
    fill(*record, f);
    record->frames = uint16_t(frames);
    record->flags = uint8_t(walk.flags | (claim == StackClaim::Claimed ? WalkDefines : 0) |
                            (walk.fromLeaf != 0 ? WalkFromLeaf : 0));
    record->reserved = 0;
    record->stackHash = hash;
    if (frames != 0)
        memcpy(reinterpret_cast<uint8_t *>(record + 1), pcs, frames * sizeof(uint64_t));
    putPython(record->python, reinterpret_cast<uint8_t *>(record + 1) + frames * sizeof(uint64_t), written);
    scope.publish(RecordType::AllocWalked);
    if (claim == StackClaim::Claimed)
        settleStack(hash, true);
    return true;
}

} // namespace

void writeAlloc(void *address, size_t size, bool exact, bool wait, uint64_t allocations, uint64_t allocatedBytes,
                const ProgramCall *call)
{
    const uint64_t now = recordNs();
    if (g_ring->detached.load(std::memory_order_relaxed))
        return;
    if (!sessionAlive(now))
        return dropAllocation(size);
    if (!exact && !trackSample(address)) {
        g_ring->problems.fetch_or(ProblemTableFull, std::memory_order_relaxed);
        return dropAllocation(size);
    }
    // Keep room for the free of every tracked allocation, this one included.
    const uint64_t keep =
        exact ? 0 : g_ring->tracked.load(std::memory_order_relaxed) * kFreeRecordBytes + kFreeRecordBytes;
    const AllocFields fields{now, address, size, exact, wait, keep, allocations, allocatedBytes};
    // The registers of this frame, for a copy of the stack from here (or a walk from here, where the hook saw no call
    // of the program's): taken only where a copy or such a walk may be written.
    uint64_t regs[kRegisterCount];
    bool captured = false;
    PythonStack python;
    gatherPython(python, wait);
    WalkFallback because = WalkFallback::Disabled;
    if (walkWanted()) {
        if (!t_state.stackAsked)
            learnThreadStack();
        because = WalkFallback::NotReady;
        // A walk writes pcs alone: the modules they lie in must have their records before them.
        if (modulesListedForIndex(fields.now) && roomToWalk()) {
            const bool checked = checkedWalk();
            if (checked || !call) {
                memset(regs, 0, sizeof regs);
                captureRegisters(regs);
                captured = true;
            }
            if (writeAllocWalked(fields, python, regs, call, checked, because))
                return;
        }
    }
    if (!captured) {
        memset(regs, 0, sizeof regs);
        captureRegisters(regs);
    }
    // A copied stack may run in a module loaded since the last listing (the walk's tables not there yet, the modules
    // changing, a pc in none, or no walk asked for): the module's record goes first, so that the copy is unwound with
    // it in the map.
    writeNewModules();
    writeAllocCopy(fields, python, regs, nullptr, 0, because);
}

void writeFree(void *address, bool exact, bool wait)
{
    AgentScope scope;
    auto *record = scope.reserve<FreeRecord>(sizeof(FreeRecord), 0, wait);
    if (!record) {
        // Not possible for a tracked allocation (its room is kept); an exact-mode free when the session is gone.
        g_ring->untrackedFrees.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (!exact)
        g_ring->tracked.fetch_sub(1, std::memory_order_relaxed);
    record->tid = currentThreadId();
    record->reserved = 0;
    record->timeNs = recordNs();
    record->address = uint64_t(address);
    scope.publish(RecordType::Free);
}

void writeTotals(uint64_t allocations, uint64_t bytes)
{
    if (!g_ring || g_ring->detached.load(std::memory_order_relaxed))
        return;
    AgentScope scope;
    auto *record = scope.reserve<TotalsRecord>(sizeof(TotalsRecord), keptForFrees(), false);
    if (!record)
        return;
    record->tid = currentThreadId();
    record->reserved = 0;
    record->timeNs = nowNs();
    record->threadAllocations = allocations;
    record->threadBytes = bytes;
    scope.publish(RecordType::Totals);
}

void writeThread(uint32_t tid, bool started)
{
    if (!g_ring)
        return;
    AgentScope scope;
    auto *record = scope.reserve<ThreadRecord>(sizeof(ThreadRecord), keptForFrees(), false);
    if (!record)
        return;
    record->tid = tid;
    record->started = started ? 1 : 0;
    record->timeNs = nowNs();
    scope.publish(RecordType::Thread);
}

} // namespace emberline::agent
