// The heap counters of libemberline_agent.so (agent_protocol.h's HeapSlot): every allocation and free of the program,
// sampled or not, adds the block's heap bytes to its thread's slot in the ring, so that the session knows the live
// heap exactly at every flush, in the allocator's sizes, and can tell how far the sampled estimate of it is off.
//
// The fast path (agent_heap.h) reads the C library's chunk size (else the allocator's malloc_usable_size) and adds to
// the thread's own cache line. Everything else comes here: a thread's first count takes a slot (and has its end
// watched, to give the slot back), the agent's own work and the C++ operators' nested calls count nothing, and an
// ending thread's last calls count in the header.
//
// Thread: every thread of the program, concurrently; lock-free.

#include "engine/agent/agent_heap.h"
#include "engine/agent/agent_core.h"
#include "engine/agent/agent_writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace emberline::agent {

// Where a thread counts when its counts go nowhere: its own (a shared sink would be a cache line that every thread
// writes).
constinit thread_local HeapSlot t_nowhere __attribute__((tls_model("initial-exec")));

namespace {

size_t noUsable(void *)
{
    return 0;
}

// 0: the agent has not started yet (nothing to count in); 1: counting; 2: not counting (memory is not profiled, the
// allocator tells no sizes, or this image has no ring).
std::atomic<int> g_heapState{0};
// Counted up at every start and stop of counting (after g_heapState): a thread that chose to count nowhere under an
// earlier one asks again (ThreadState::heapEpoch).
std::atomic<uint32_t> g_heapEpoch{0};

// Another allocator's malloc_usable_size may allocate (tcmalloc's makes its MallocExtension at its first call): it
// runs as the agent's own work, whose allocations pass through uncounted. The C library's allocates nothing.
UsableFn g_foreignUsable = nullptr;
size_t guardedUsable(void *address)
{
    const InternalWork work;
    return g_foreignUsable(address);
}

// The thread that holds each slot (kept here, not in the ring: the session has no use for it), so that a retired
// agent can send every counting thread back to the slow path (heapResetThreads).
std::atomic<ThreadState *> g_slotThreads[kHeapSlots];

HeapSlot *claimSlot(uint32_t tid)
{
    HeapSlot *slots = heapSlots(g_ring);
    // From a place of the thread's own, so that threads starting together do not race for the same slots.
    const uint32_t first = (tid * 2654435761u) % uint32_t(kHeapSlots);
    for (uint32_t i = 0; i < uint32_t(kHeapSlots); ++i) {
        HeapSlot &slot = slots[(first + i) % uint32_t(kHeapSlots)];
        uint32_t free = 0;
        if (slot.owner.load(std::memory_order_relaxed) == 0 &&
            slot.owner.compare_exchange_strong(free, tid, std::memory_order_acq_rel))
            return &slot;
    }
    return nullptr;
}

} // namespace

UsableFn g_usable = noUsable;
bool g_chunkSizes = false;

namespace {
UsableFn g_resolvedUsable = noUsable; // what resolveUsable found, kept while counting is off (a test's next start)
} // namespace

namespace {

// Whether the C library's chunks carry their size where heapBytesOf reads it: small and large blocks agree with
// malloc_usable_size, less the chunk's header (a mapped chunk, flag 2, has two words of it; none is made here: the
// free of one would raise the C library's threshold for mapping blocks, and change the program's heap). And whether
// its rules are the ones predictedChunk follows: each block is the predicted chunk, or one handed out whole (16 bytes
// more), or, for the largest, a mapped one.
bool chunkSizesAgree(UsableFn usable, void *(*realMalloc)(size_t), void (*realFree)(void *))
{
    bool agree = true;
    for (const size_t size : {size_t(1), size_t(24), size_t(100), size_t(1000), size_t(40000)}) {
        void *p = realMalloc(size);
        if (!p)
            return false;
        const uint64_t field = reinterpret_cast<const uint64_t *>(p)[-1];
        const uint64_t header = (field & 2) != 0 ? 16 : 8;
        const uint64_t chunk = field & ~uint64_t(7);
        const bool predicted =
            size >= kPredictedBelow || chunk == predictedChunk(size) || chunk == predictedChunk(size) + 16;
        agree = agree && chunk == usable(p) + header && usable(p) >= size && predicted && (field & kMarkedBit) == 0;
        realFree(p);
    }
    return agree;
}

} // namespace

void resolveUsable(void *(*realMalloc)(size_t), void (*realFree)(void *), void *lookIn)
{
    // The allocator that serves malloc must be the one asked for sizes: another's malloc_usable_size would read a
    // block it never made.
    void *usable = dlsym(lookIn, "malloc_usable_size");
    ModuleOfAddress mallocModule;
    ModuleOfAddress usableModule;
    if (usable && realMalloc && realFree && moduleOfAddress(reinterpret_cast<void *>(realMalloc), mallocModule) &&
        moduleOfAddress(usable, usableModule) && mallocModule.start == usableModule.start) {
        if (strstr(usableModule.path, "/libc.so")) {
            g_usable = reinterpret_cast<UsableFn>(usable);
            g_chunkSizes = chunkSizesAgree(g_usable, realMalloc, realFree);
            g_resolvedUsable = g_usable;
        } else {
            g_foreignUsable = reinterpret_cast<UsableFn>(usable);
            g_usable = guardedUsable;
            g_resolvedUsable = g_usable;
        }
    }
}

// Whether the C library has free_sized (glibc 2.39 on), asked by its version: a dlsym of a name it lacks allocates its
// error message, through malloc, while the look-ups are under way.
bool libcHasFreeSized()
{
    const char *version = gnu_get_libc_version();
    unsigned major = 0, minor = 0;
    for (; *version >= '0' && *version <= '9'; ++version)
        major = major * 10 + unsigned(*version - '0');
    if (*version == '.')
        for (++version; *version >= '0' && *version <= '9'; ++version)
            minor = minor * 10 + unsigned(*version - '0');
    return major > 2 || (major == 2 && minor >= 39);
}

void forgetLookupError()
{
    dlerror(); // the text, formatted and marked as read
    dlerror(); // once read: the text and the record freed
}

bool moduleOfAddress(const void *address, ModuleOfAddress &module)
{
    dl_find_object found{};
    if (!address || _dl_find_object(const_cast<void *>(address), &found) != 0)
        return false;
    module.start = reinterpret_cast<uintptr_t>(found.dlfo_map_start);
    module.path = found.dlfo_link_map && found.dlfo_link_map->l_name ? found.dlfo_link_map->l_name : "";
    return true;
}

bool heapSizesKnown()
{
    return g_resolvedUsable != noUsable;
}

namespace {
void stopAttachedMarks();
} // namespace

namespace {

// The fast paths' pointer (ThreadState::fast) is set by its thread and cleared by whoever raises a flag, without a
// fence on the thread's side: the raiser's membarrier (private, expedited) puts a full barrier in every running thread
// of the process between the flag's store and its clearing, so that a thread that set its pointer either sees the
// flag when it looks again or has its pointer cleared (refreshFast). Registered once per process image, before
// counting starts; where it is not (a kernel older than 4.14, a seccomp filter), no thread takes the fast pointer and
// every malloc and free reads the flags (some five instructions more a malloc and free).
// 0: not asked yet; 1: registered; 2: refused.
std::atomic<int> g_fastPaths{0};

void registerFastPaths()
{
    if (g_fastPaths.load(std::memory_order_acquire) != 0)
        return;
    const int savedErrno = errno;
    // Not asked under a seccomp filter, which may kill the process for a system call it does not allow (systemd's
    // filters do by default): there the hooks read the flags on every call.
    const bool registered = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0 &&
                            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    errno = savedErrno;
    g_fastPaths.store(registered ? 1 : 2, std::memory_order_release);
}

// A full barrier in every thread of the process that runs now (false: none could be made).
bool barrierInEveryThread()
{
    if (g_fastPaths.load(std::memory_order_acquire) != 1)
        return false;
    const int savedErrno = errno;
    const bool done = syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    errno = savedErrno;
    return done;
}

// Every thread that holds a slot sent off the fast paths (after a flag was raised, or counting stopped).
void clearFastPointers()
{
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!barrierInEveryThread() && g_fastPaths.load(std::memory_order_acquire) == 1)
        g_fastPaths.store(2, std::memory_order_release); // no barrier: no thread takes the pointer again
    for (std::atomic<ThreadState *> &entry : g_slotThreads)
        if (ThreadState *t = entry.load(std::memory_order_acquire))
            __atomic_store_n(&t->fast, nullptr, __ATOMIC_RELAXED);
}

} // namespace

void refreshFast()
{
    ThreadState &t = t_state;
    HeapSlot *slot = t.slot;
    if (slot == nullptr || slot == &t_nowhere || t.internal != 0 || t.inCxx != 0 ||
        g_fastPaths.load(std::memory_order_relaxed) != 1)
        return;
    __atomic_store_n(&t.fast, slot, __ATOMIC_RELAXED);
    // A compiler barrier only: the raiser's membarrier orders the store before the loads below (clearFastPointers).
    asm volatile("" ::: "memory");
    if (hookFlagsSet() != 0 || g_heapState.load(std::memory_order_relaxed) != 1 ||
        g_fastPaths.load(std::memory_order_relaxed) != 1 || t.slot != slot)
        __atomic_store_n(&t.fast, nullptr, __ATOMIC_RELAXED);
}

void hookFlagsRaised()
{
    if (hookFlagsSet() != 0)
        clearFastPointers();
}

void startHeapCounting(bool counting)
{
    if (counting)
        registerFastPaths();
    // Not counting (the agent may run for CPU alone): counts go nowhere, and another allocator is not asked.
    g_usable = counting ? g_resolvedUsable : noUsable;
    if (!counting)
        stopAttachedMarks();
    g_heapState.store(counting ? 1 : 2, std::memory_order_release);
    g_heapEpoch.fetch_add(1, std::memory_order_acq_rel);
}

void heapRecheck()
{
    ThreadState &t = t_state;
    if (t.ownSlot == &t_nowhere && t.heapEpoch != g_heapEpoch.load(std::memory_order_acquire)) {
        t.slot = nullptr;
        t.ownSlot = nullptr;
    }
}

std::atomic<uint8_t *> g_markTables[kMarkTables];
// Pass through until the agent has started: the first allocation's countdown starts it.
HookFlags g_hookFlags = {.passThrough = 0, .markNow = 0, .filtered = 1, .reserved = 0};

namespace {

constexpr size_t kMarkTableBytes = size_t(1) << (kMarkTableShift - kMarkGranuleShift);
uint8_t g_lastMark = 0;

void forEachMarkTable(void (*each)(uint8_t *))
{
    for (std::atomic<uint8_t *> &table : g_markTables)
        if (uint8_t *marks = table.load(std::memory_order_acquire))
            each(marks);
}

void giveMarksBack(uint8_t *marks)
{
    madvise(marks, kMarkTableBytes, MADV_DONTNEED); // zeros when touched again
}

void stopAttachedMarks()
{
    if (__atomic_load_n(&g_markNow, __ATOMIC_RELAXED) == 0)
        return;
    __atomic_store_n(&g_markNow, uint8_t(0), __ATOMIC_RELEASE);
    forEachMarkTable(giveMarksBack);
}

} // namespace

uint8_t *makeMarkTable(uint64_t table)
{
    // Called from a hook's fast path, outside any AgentScope: a failed mmap's errno is not the program's to see.
    const int savedErrno = errno;
    void *memory =
        mmap(nullptr, kMarkTableBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) {
        errno = savedErrno;
        if (g_ring)
            g_ring->heapCounted.store(0, std::memory_order_release);
        return nullptr;
    }
    uint8_t *expected = nullptr;
    if (g_markTables[table].compare_exchange_strong(expected, static_cast<uint8_t *>(memory),
                                                    std::memory_order_acq_rel))
        return static_cast<uint8_t *>(memory);
    munmap(memory, kMarkTableBytes); // another thread's came first
    return expected;
}

bool startAttachedMarks()
{
    if (!g_chunkSizes)
        return false;
    // A mark no table holds: after 127 sessions the tables are cleared (a mark is below kMarkSampled).
    if (++g_lastMark == kMarkSampled) {
        forEachMarkTable(giveMarksBack);
        g_lastMark = 1;
    }
    __atomic_store_n(&g_markNow, g_lastMark, __ATOMIC_RELEASE);
    hookFlagsRaised();
    return true;
}

bool attachedMarksOn()
{
    return __atomic_load_n(&g_markNow, __ATOMIC_ACQUIRE) != 0;
}

void countHeapSlow(void *address, bool freed, uint64_t bytes)
{
    ThreadState &t = t_state;
    // The agent's own work and what an allocator's C++ operator calls inside it count nothing (the operator's call
    // counts); a failed allocation and free(nullptr) have no block.
    if (address == nullptr || t.internal != 0 || t.inCxx != 0)
        return;
    const int state = g_heapState.load(std::memory_order_acquire);
    if (state == 0)
        return; // before the agent starts (it starts at the first allocation, before this one is counted)
    // An attached program's calls: the blocks allocated since the attach only.
    if (const uint8_t mark = __atomic_load_n(&g_markNow, __ATOMIC_RELAXED);
        mark != 0 && !markedCall(address, freed, mark))
        return;
    if (t.slotGiven) {
        // The thread has ended and given its slot back: its last calls count in the header.
        if (state == 1 && g_ring)
            (freed ? g_ring->lateFreed : g_ring->lateAllocated)
                .fetch_add(bytes ? bytes : heapBytesOf(address), std::memory_order_relaxed);
        return;
    }
    // Read once: a detach on another thread (heapResetThreads) may clear the thread's slot meanwhile, and the
    // count then goes to the slot it had, in the retired ring.
    HeapSlot *own = t.ownSlot;
    const uint32_t epoch = g_heapEpoch.load(std::memory_order_acquire);
    if (own == &t_nowhere && t.heapEpoch != epoch)
        own = nullptr; // chosen while counting was off: counting may have started since
    if (own == nullptr) {
        const AgentScope scope; // watchThreadEnd may allocate, as the agent's own work
        if (state == 2 || !g_ring) {
            own = &t_nowhere;
        } else if (HeapSlot *slot = claimSlot(currentThreadId())) {
            watchThreadEnd(); // gives the slot back when the thread ends
            own = slot;
            g_slotThreads[slot - heapSlots(g_ring)].store(&t, std::memory_order_release);
        } else {
            // More threads than slots at once: the counts are no longer whole, and the session says nothing from them.
            g_ring->heapCounted.store(0, std::memory_order_release);
            own = &t_nowhere;
        }
        t.ownSlot = own;
        t.heapEpoch = epoch;
    }
    // Where the C library's chunk sizes are read, the fast path counts from now on (with the marks, in an attached
    // program); another allocator's sizes are asked for here, every time. A detach on another thread stops the
    // counting, then sends every counting thread back here (heapResetThreads): a slot kept after that would outlive
    // its ring. Either the detach sees the slot kept here and clears it, or this sees the counting stopped. A thread
    // that counts nowhere keeps its own sink in the fast path too (the agent off, or running for CPU alone: a fence
    // at every malloc and free there cost a CPython program a fifth of its time); a later start of counting sends it
    // back here (heapRecheck, and the marks' fast path).
    if (g_chunkSizes) {
        t.slot = own;
        if (own != &t_nowhere) {
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (g_heapState.load(std::memory_order_relaxed) != 1)
                t.slot = nullptr;
        }
    }
    addToSum(freed ? own->freed : own->allocated, bytes ? bytes : heapBytesOf(address));
}

void countPredictionMisses(void *address, size_t size)
{
    // Only where the fast path predicts: a slot, the C library's chunk sizes, no marks.
    HeapSlot *slot = t_state.slot;
    if (slot == nullptr || hookFlagsSet() != 0)
        return;
    const uint64_t predicted = predictedChunk(size);
    const uint64_t given = address ? chunkSize(address) : 0;
    if (given > predicted)
        addToSum(slot->allocated, (given - predicted) * uint64_t(kProbeEvery - 1));
    else if (given < predicted)
        addToSum(slot->freed, (predicted - given) * uint64_t(kProbeEvery - 1));
}

void giveHeapSlotBack()
{
    ThreadState &t = t_state;
    if (t.ownSlot && t.ownSlot != &t_nowhere && g_ring) {
        const ptrdiff_t index = t.ownSlot - heapSlots(g_ring);
        if (index >= 0 && index < kHeapSlots) {
            ThreadState *self = &t;
            g_slotThreads[index].compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
        }
    }
    if (t.ownSlot && t.ownSlot != &t_nowhere)
        t.ownSlot->owner.store(0, std::memory_order_release);
    t.slot = nullptr;
    __atomic_store_n(&t.fast, nullptr, __ATOMIC_RELAXED);
    t.ownSlot = nullptr;
    t.slotGiven = true;
}

void heapResetThreads()
{
    std::atomic_thread_fence(std::memory_order_seq_cst); // after the counting stopped (countHeapSlow's other half)
    clearFastPointers();                                 // refreshFast's other half
    for (std::atomic<ThreadState *> &entry : g_slotThreads) {
        ThreadState *t = entry.exchange(nullptr, std::memory_order_acq_rel);
        if (!t)
            continue;
        // The thread is not inside a hook any more (the tables point past them): its next allocation through a
        // hook takes the slow path, which arms it for the next session, and takes a slot in that session's ring.
        // Its counts start anew too: the next session's totals are its own (a thread's running count, which its
        // samples carry, is what the session sums).
        t->state = kStateNow;
        t->armed = kArmedNow;
        t->allocations = 0;
        t->bytes = 0;
        t->slot = nullptr;
        __atomic_store_n(&t->fast, nullptr, __ATOMIC_RELAXED);
        t->ownSlot = nullptr;
    }
}

void heapForkChild()
{
    // The parent's slots stay in the parent's ring; the child counts in its own (which says the counts are not
    // whole: the child frees blocks that its parent allocated).
    t_state.slot = nullptr;
    __atomic_store_n(&t_state.fast, nullptr, __ATOMIC_RELAXED);
    t_state.ownSlot = nullptr;
    t_state.slotGiven = false;
    // Whether the kernel keeps the parent's registration for the child or not, the child asks for its own.
    g_fastPaths.store(0, std::memory_order_release);
    registerFastPaths();
}

} // namespace emberline::agent
