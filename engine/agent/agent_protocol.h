#pragma once

// The shared-memory ring between the in-process agent (libemberline_agent.so, in the profiled program) and the
// session that reads it. Plain C++ with no library but the compiler's own <atomic> and <cstdint>: the agent
// includes it, and it must not pull in anything that allocates.
//
// One ring per process image: the agent creates `<EMBERLINE_AGENT_DIR>/<pid>-<creation ns>.ring` when the
// program starts (and again in a forked child, and after an exec, which loads the agent anew), maps it shared,
// and writes records; the session finds the file, maps it, unlinks it and reads the records in order.
//
// Layout: a RingHeader (one page), the heap counters (kHeapSlots HeapSlots), then `dataBytes` of records (a power of
// two). Writers reserve space by advancing `head` (many threads, lock-free), write their record and then publish its
// type with a release store; the reader takes records in order while their type is set, clears every byte it consumed
// (a record of the next lap may start anywhere in it; a padding record's body is never written) and advances `tail`. A
// record never wraps: a writer that would cross the end of the window (windowBytes, the part of the ring the writers
// go round while the reader keeps up) pads to the ring's end first. While the reader still reads the lap before, the
// ring past where that lap ended (lapEnd) is free too: a writer that finds no room before the unread records goes on
// there, after a Padding record that ends there (the reader finishes the old lap, then reads the new one in order).
//
// Frees are never lost: an allocation (and any other record but a free) is admitted only while the ring keeps room
// for a free of every tracked allocation after it, in the same window (`tracked` × kFreeRecordBytes), and a tracked
// allocation frees at most once.

#include "engine/agent/agent_tables.h"
#include "engine/agent/identity/agent_file_name.h"

#include "engine/agent/python/agent_python.h"

#include <atomic>
#include <cstdint>

namespace emberline::agent {

inline constexpr uint32_t kRingMagic = 0x52424d45; // "EMBR"
inline constexpr uint32_t kRingVersion = 17;
// The unwind tables the session shares with the agent are versioned apart, beside their rows: agent_unwind.h's
// kUnwindTableVersion; how they are delivered (the arena, the module index in the ring) is agent_tables.h's.
// The header page, then the heap counters' slots (HeapSlot), then the module index (ModuleIndex, written by the
// session): the records start after them.
inline constexpr int kHeapSlots = 256;
inline constexpr uint64_t kHeapSlotsOffset = 4096;
inline constexpr uint64_t kModuleIndexOffset = kHeapSlotsOffset + uint64_t(kHeapSlots) * 64;
inline constexpr uint64_t kRingHeaderBytes = kModuleIndexOffset + ((sizeof(ModuleIndex) + 4095) & ~uint64_t(4095));
inline constexpr uint64_t kDefaultRingDataBytes = uint64_t(4) << 20;
// The data bytes a new ring reserves in the program (the file system's pages, made and cleared by the program
// itself) before the session finds the ring and reserves the rest on its own time; a program whose records get
// there first reserves more itself, a chunk at a time. A short-lived process (a compiler driver, a shell's child)
// pays for what it writes, not for a whole ring: room for three first samples at the initial stack copy. (Each page
// reserved here costs every process image, a forked child's too, its making and mapping: 128 KiB of them were a
// quarter of what a shell's fork and exec of /bin/true paid for the agent.)
inline constexpr uint64_t kAgentReservedBytes = uint64_t(32) << 10;
// The stack copies a new ring starts with, until the session finds it and sets the learned ones: an allocation's,
// and a CPU sample's (as much as the perf sampler starts with, so that the first samples' stacks are whole).
// A process image that could not make its ring leaves an empty file "PID-CREATED-ERRNO" with this suffix instead.
inline constexpr const char *kNoRingSuffix = ".noring";
inline constexpr uint32_t kInitialAllocStackBytes = 8192;
inline constexpr uint32_t kInitialCpuStackBytes = 32768;

// The environment the session gives a launched program (inherited across fork and exec).
inline constexpr const char *kEnvDirectory = "EMBERLINE_AGENT_DIR";          // where rings are created
inline constexpr const char *kEnvAllocInterval = "EMBERLINE_ALLOC_INTERVAL"; // mean bytes between samples
inline constexpr const char *kEnvRingBytes = "EMBERLINE_AGENT_RING_BYTES";   // data bytes of each ring
// The in-process sampler: CPU time between samples of each thread, in ns (absent: the agent does not sample CPU).
inline constexpr const char *kEnvCpuPeriod = "EMBERLINE_CPU_PERIOD_NS";
// "perf": time the in-process sampler's samples with a cpu-clock perf event per thread where perf events are allowed
// (the asked rate; a signal raised while the thread runs may land as it enters a blocking call, which then fails with
// EINTR: asked for programs that retry, as CPython does); absent: POSIX CPU timers (the kernel's tick, raised on the
// way back to user mode only).
inline constexpr const char *kEnvCpuClock = "EMBERLINE_CPU_CLOCK";
// "1": CPython's own allocators counted at their calls (agent_pymem.h), with memory.
inline constexpr const char *kEnvPythonAllocators = "EMBERLINE_PYTHON_ALLOCATORS";

// The user registers an allocation sample carries, in the order of the perf sampler's kPerfRegsMask (AX..IP,
// then R8..R15): the session unwinds them with the same unwinder. Registers the agent does not capture are 0.
inline constexpr int kRegisterCount = 17;
enum Register : int { RegBX = 1, RegBP = 6, RegSP = 7, RegIP = 8, RegR12 = 13, RegR13 = 14, RegR14 = 15, RegR15 = 16 };

// How the in-process sampler times each thread's samples: not chosen yet, a POSIX CPU timer per thread (it fires at
// the kernel's tick, whatever rate is asked), or a cpu-clock perf event per thread that signals its own thread at
// the asked rate (where perf events are allowed).
enum class CpuClock : uint32_t { NotChosen = 0, Timers = 1, PerfEvents = 2 };

// Problems the agent found in the program, for the session to say (bit flags in RingHeader::problems).
enum Problem : uint32_t {
    ProblemDeepBind = 1u << 0,  // a library was opened with RTLD_DEEPBIND: its calls bypass the hooks
    ProblemTableFull = 1u << 1, // a sampled allocation found no slot to be tracked in (counted as dropped)
    ProblemStackCopy = 1u << 2, // the stack could not be copied (process_vm_readv refused)
    // The in-process sampler:
    ProblemNoSignal = 1u << 3,    // every real-time signal has a handler of the program's: CPU is not sampled
    ProblemSignalTaken = 1u << 4, // the program installed a handler for the sampler's signal: sampling stopped
    ProblemTimer = 1u << 5,       // a thread's CPU timer could not be created (timer_create refused)
};

enum class RecordType : uint32_t {
    Empty = 0,   // not yet published
    Padding = 1, // skip `bytes` (to the ring's end, or past the last lap's end: RingHeader::lapEnd); only its header
                 // is written
    Alloc = 2,   // AllocRecord
    Free = 3,    // FreeRecord
    Cpu = 4,     // CpuRecord
    Thread = 5,  // ThreadRecord
    Totals = 6,  // TotalsRecord
    AllocWalked = 7, // WalkedAllocRecord
    CpuWalked = 8,   // WalkedCpuRecord
    PythonCode = 9,  // PythonCodeRecord
    Module = 10,     // ModuleRecord
};

struct RecordHeader {
    std::atomic<uint32_t> type; // RecordType, stored last (release)
    uint32_t bytes;             // the whole record, header included; a multiple of 8
};

// Every sample record (AllocRecord, WalkedAllocRecord, CpuRecord, WalkedCpuRecord) ends with the Python frames the
// thread was running, when the session found a CPython in the process image (RingHeader::pythonState): `pythonFrames`
// PythonFrame (agent_python.h), leaf first, after everything else the record holds, and `pythonFlags` the walk's
// PythonWalkFlag bits. A code object's names come once, in a PythonCodeRecord written before the first sample of the
// thread that met it; a sample of another thread may name it before that record is read (the session then names it
// when the record comes).
struct PythonFields {
    uint16_t pythonFrames;
    uint16_t pythonFlags;
    uint32_t pythonReserved;
};

// What names a code object (agent_python.h's PythonCodeFacts, then its name's, file's and line table's bytes).
struct PythonCodeRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t reserved;
    uint64_t timeNs; // CLOCK_MONOTONIC (every record but a padding has its time here)
    PythonCodeFacts facts;
    // uint8_t name[facts.nameBytes], file[facts.fileBytes], lineTable[facts.lineTableBytes] follow
};

// A sampled allocation (every allocation in exact mode, interval 1). The stack copy follows the record.
// `size` is what the program asked for; the session weighs the sample by the interval (the agent never does).
// `threadAllocations` and `threadBytes`: every allocation the thread made in this process image so far, this one
// included, and their bytes (counted by the hooks, sampled or not): the session's exact totals.
struct AllocRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t stackBytes; // bytes of stack copied from regs[RegSP]
    uint64_t timeNs;     // CLOCK_MONOTONIC
    uint64_t address;
    uint64_t size;
    uint64_t heapBytes; // the heap bytes the block takes, in the heap counts' measure (HeapSlot: the C library's chunk
                        // size, header included, or another allocator's malloc_usable_size)
    uint64_t threadAllocations;
    uint64_t threadBytes;
    uint32_t walkedFrames;  // a checked sample (RingHeader::checkEvery): the agent's own walk, after the stack copy
    uint32_t copiedBecause; // not checked: why the stack was copied, not walked (WalkFallback + 1); 0 when checked
    PythonFields python;
    uint64_t regs[kRegisterCount];
    // uint8_t stack[stackBytes] follows, padded to 8, then uint64_t pcs[walkedFrames], then the Python frames
};

// The stack the agent walked with the session's tables (agent_tables.h), as the walked records carry it: its program
// counters, leaf first (the interrupted one, or the call's address - the return address - 1 - of an allocation's
// walk, which starts at the program's call; then return addresses), written in full the first time
// a stack is seen in the process image (with WalkDefines) and named by its hash after that: `frames` 0 and only the
// hash. A reference always comes after the record that wrote the stack out, in ring order. The hash covers the pcs,
// the WalkTruncated flag and the sample's Python frames and flags (PythonFields): a reference carries no Python frames
// of its own (its PythonFields are zero), they are the ones the record that wrote the stack out carried.
enum WalkFlag : uint8_t {
    WalkTruncated = 1u << 0, // the walk stopped at its depth limit (kMaxWalkFrames): the outermost frames are missing
    WalkDefines = 1u << 1,   // the stack is written out for later references: the session keeps it for the ring's life
                             // (without it, a stack written out is not referred to again)
    WalkFromLeaf = 1u << 2,  // its innermost frames came from a leaf of the thread's earlier walks (agent_walk_memo.h),
                             // not stepped: counted by the session; not in the hash
};
inline constexpr uint32_t kMaxWalkFrames = 512;

// A sampled allocation whose stack the agent walked (AllocRecord's fields, and the stack as program counters).
struct WalkedAllocRecord {
    RecordHeader header;
    uint32_t tid;
    uint16_t frames; // pcs that follow; 0: the stack was written out before, `stackHash` names it
    uint8_t flags;   // WalkFlag
    uint8_t reserved;
    uint64_t timeNs;
    uint64_t address;
    uint64_t size;
    uint64_t heapBytes;
    uint64_t threadAllocations;
    uint64_t threadBytes;
    uint64_t stackHash;
    PythonFields python;
    // uint64_t pcs[frames] follows, then the Python frames
};

// A CPU sample whose stack the agent walked (CpuRecord's fields, the stack as program counters).
struct WalkedCpuRecord {
    RecordHeader header;
    uint32_t tid;
    uint16_t frames;
    uint8_t flags;
    uint8_t reserved;
    uint64_t timeNs;
    uint64_t periodNs;
    uint64_t stackHash;
    PythonFields python;
    // uint64_t pcs[frames] follows, then the Python frames
};

// The heap counters: every block the program allocates and frees, sampled or not, counted by the size the allocator
// gave it (the C library's chunk size, header included, or the usable size that another allocator's
// malloc_usable_size tells: agent_heap.h's heapBytesOf), so that their difference is the live heap in the allocator's
// sizes at any moment, exactly (in a launched program at an interval, malloc's fast path counts the chunk its request
// gets by the C library's rules, before its call, and its probes estimate what the rules missed: agent_heap.h's
// predictedChunk; the estimate's error is some KB where the misses are some 100 KB). Each thread adds to a slot of
// its own (one cache line, never shared
// while it is the owner's), with single add instructions that a signal handler on the same thread cannot split; the
// session sums every slot and the header's late counts. A thread that ends gives its slot back (owner 0) with its
// sums in it: the next owner adds on. `allocated` and `freed` only grow (modulo 2^64: their difference is what counts).
struct alignas(64) HeapSlot {
    std::atomic<uint32_t> owner{0}; // the thread id holding the slot; 0: free
    uint32_t reserved = 0;
    uint64_t allocated = 0; // heap bytes allocated by the slot's threads
    uint64_t freed = 0;     // heap bytes freed by them
};
static_assert(sizeof(HeapSlot) == 64);

// A free of an allocation that an AllocRecord reported (any free in exact mode). A realloc that moves a block
// is a free of the old address and an allocation of the new one, as heaptrack counts it.
struct FreeRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t reserved;
    uint64_t timeNs;
    uint64_t address;
};

inline constexpr uint64_t kFreeRecordBytes = sizeof(FreeRecord);

// A CPU sample of the in-process sampler: the thread's CPU timer fired and the signal handler copied the
// interrupted registers (all of them, kPerfRegsMask order) and the stack from regs[RegSP]. `periodNs` is the CPU
// time it stands for (the timer's period times one plus the overruns the kernel counted).
struct CpuRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t stackBytes;
    uint64_t timeNs;
    uint64_t periodNs;
    uint32_t walkedFrames;  // as AllocRecord's
    uint32_t copiedBecause; // as AllocRecord's
    PythonFields python;
    uint64_t regs[kRegisterCount];
    // uint8_t stack[stackBytes] follows, padded to 8, then uint64_t pcs[walkedFrames], then the Python frames
};

// A module of the process image, as the dynamic linker lists it when the image's ring is made (a forked child's too):
// one record for each executable segment, before the image's first sample. The session places the image's modules
// from these where it has no mapping records of its own (the in-process and ptrace samplers read /proc/PID/maps, which
// an image that execs or ends within milliseconds, a shell running its command, is gone from before it is read).
// `path`: as the linker opened the file (the program's own from /proc/self/exe; "[vdso]" for the kernel's).
struct ModuleRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t pathBytes;
    uint64_t timeNs;
    uint64_t start; // the segment's mapping, [start, start + length), from file offset `pgoff`
    uint64_t length;
    uint64_t pgoff;
    // char path[pathBytes] follows (no terminating zero), padded to 8
};

// A thread's CPU timer started (`started` 1) or could not be created (0): the session asks, through the header's
// timer requests, for a timer on every thread it finds without one.
struct ThreadRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t started;
    uint64_t timeNs;
};

// A thread's last totals (as AllocRecord's), when it ends or its process image does: what it allocated since its
// last sampled allocation counts too. Best effort: a full ring leaves the totals of the last AllocRecord.
struct TotalsRecord {
    RecordHeader header;
    uint32_t tid;
    uint32_t reserved;
    uint64_t timeNs;
    uint64_t threadAllocations;
    uint64_t threadBytes;
};

inline constexpr int kTimerRequests = 32;

// The buckets of RingHeader::cpuHandlerNs: four per octave from 64 ns (bucket 0 holds everything below 76 ns, the last
// everything from 64 ns << (kHandlerBuckets / 4) on).
inline constexpr int kHandlerBuckets = 64;
inline int handlerBucket(uint64_t ns)
{
    if (ns < 64)
        return 0;
    const int octave = 63 - __builtin_clzll(ns); // 6 for 64..127
    const int quarter = int((ns >> (octave - 2)) & 3);
    const int bucket = (octave - 6) * 4 + quarter;
    return bucket < kHandlerBuckets ? bucket : kHandlerBuckets - 1;
}
// The lower bound of a bucket, in ns.
inline uint64_t handlerBucketStart(int bucket)
{
    const int octave = bucket / 4 + 6;
    return (uint64_t(4 + bucket % 4)) << (octave - 2);
}

// A module whose allocation functions an attached agent left alone (agent_got.h's GotEscape): its lowest mapped
// address, and bit 1 (the C functions) and bit 2 (C++'s operators) for what it left.
struct EscapedModule {
    uint64_t address;
    uint32_t kinds;
    uint32_t reserved;
};
inline constexpr int kEscapedModules = 16;

struct alignas(64) RingHeader {
    // Written once by the agent before the file gets its final name.
    uint32_t magic;
    uint32_t version;
    uint32_t pid;
    uint32_t parentPid;     // the process this one was forked from (0 when it was not: a start or an exec)
    uint64_t dataBytes;     // a power of two
    uint64_t allocInterval; // mean bytes between samples; 1: every allocation (exact mode)
    uint64_t createdNs;     // CLOCK_MONOTONIC
    uint64_t cpuPeriodNs;   // the in-process sampler's period (0: CPU is not sampled)
    uint32_t cpuSignal;     // the signal its timers send (0: none)
    uint32_t cpuClock;      // CpuClock: how the in-process sampler's samples are timed (set at its first thread's)
    uint64_t attachedNs;    // CLOCK_MONOTONIC when the agent was loaded into the running program (0: it was launched)
    // Written by the session.
    alignas(64) std::atomic<uint64_t> heartbeatNs; // CLOCK_MONOTONIC of the session's last visit
    std::atomic<uint32_t> sessionPid;              // the process that reads the ring: when its visits stop, the
                                                   // agent asks whether it still exists (slow) or not (gone)
    std::atomic<uint32_t> stackCopyBytes;          // the stack each sampled allocation copies (the learned copy)
    std::atomic<uint32_t> cpuStackCopyBytes;       // the stack each CPU sample copies (the learned copy)
    std::atomic<uint32_t> detached;                // 1: the session has ended; pass everything through
    // Data bytes from the start that the file system holds pages for: the agent reserves the first
    // kAgentReservedBytes (and more while its records get there before the session), the session the rest. A
    // record never ends past it (a page the file system could not give later, on a full disk or tmpfs, would end
    // the program with SIGBUS at its first write). Written by both; it only grows.
    std::atomic<uint64_t> reservedBytes;
    // Threads the session found without a CPU timer (made by a bare clone, not pthread_create): a slot holds a
    // thread id until the agent's next sample on any thread takes it (0) and starts that thread's timer.
    std::atomic<uint32_t> timerRequests[kTimerRequests];
    std::atomic<uint32_t> unwindMode; // agent_tables.h's UnwindMode (Copy until the session says otherwise)
    // Every checkEvery-th walked sample of a thread is copied too (AllocRecord::walkedFrames), for the session to
    // compare its own unwind with the walk; 0: none.
    std::atomic<uint32_t> checkEvery;
    // The CPython the session found in the process image: `python` is written first, then pythonState 1 (release);
    // 0 until then (or for good: not a Python, or a version without a known layout). Samples walk its frames once
    // it is 1.
    std::atomic<uint32_t> pythonState;
    PythonTarget python;
    alignas(64) std::atomic<uint64_t> tail; // bytes consumed by the session
    // Written by the agent.
    alignas(64) std::atomic<uint64_t> head;    // bytes reserved by writers
    alignas(64) std::atomic<uint64_t> tracked; // tracked allocations whose free may still come
    std::atomic<uint64_t> allocsDropped;       // sampled allocations not reported (no room, no slot)
    std::atomic<uint64_t> bytesDropped;        // their sizes
    std::atomic<uint64_t> waitNs;              // exact mode: time spent waiting for room
    std::atomic<uint64_t> untrackedFrees;      // frees passed on without a record (the session was gone)
    std::atomic<uint64_t> cpuDropped;          // CPU samples not written: no room in the ring
    std::atomic<uint32_t> problems;            // Problem bits
    std::atomic<uint32_t> finished;            // 1: the process image ended (exit or exec) and flushed
    // The heap counters (HeapSlot): 1 while their sums hold every block the image allocated and freed; 0 when they
    // do not: the allocator has no malloc_usable_size, a forked child (it frees blocks its parent allocated), a thread
    // found no free slot, or memory is not profiled.
    std::atomic<uint32_t> heapCounted;
    // The part of the ring from its start that the writers go round (the agent's window, agent_writer.cpp): a record
    // that would pass it starts the next lap after a Padding record to the ring's end, whose body is never written.
    // It only grows (a burst, a slow session). The session reserves pages for it and a little more.
    std::atomic<uint32_t> windowBytes;
    // Heap bytes allocated and freed by threads that had given their slot back (an ending thread's last calls).
    std::atomic<uint64_t> lateAllocated;
    std::atomic<uint64_t> lateFreed;
    // Where the writers' last lap ended, tagged with its number: lap << 32 | the offset just past the header of its
    // Padding record to the ring's end. While the session still reads that lap, the ring past that offset is free in
    // the next one too: a writer that finds no room before the unread records goes on there, after a Padding record
    // that ends there. ~0 before the first lap.
    std::atomic<uint64_t> lapEnd;
    // The stack walk (agent_tables.h): the program's dlopen and dlclose calls, counted as each begins. (How many
    // samples were walked, checked or copied and why, the session counts from the records themselves: a counter here
    // would be one more locked add per sample on a line the session reads.)
    alignas(64) std::atomic<uint64_t> mapsChanges;
    // CLOCK_MONOTONIC of a walk that met a pc in no tabled module (at most every 200 ms): a module the index missed
    // (mapped while the session read the maps, or without dlopen) is looked for again.
    std::atomic<uint64_t> moduleMissedNs;
    // The in-process sampler's handler: how long each sample took in the program (from the signal's arrival in the
    // handler to its record's publication), counted in buckets of a quarter octave from 64 ns (handlerBucket).
    std::atomic<uint32_t> cpuHandlerNs[kHandlerBuckets];
    // An agent loaded into a running program: the modules whose tables it left alone (EscapedModule), as of its last
    // look at the loaded modules. escapedModules counts them all; the first kEscapedModules are listed, each written
    // before the count that takes it in.
    std::atomic<uint32_t> escapedModules;
    EscapedModule escaped[kEscapedModules];
    // agent_pymem.h's PythonAllocators: CPython's own allocators counted at their calls, or why not (as the image
    // started, and again as it ended: Replaced when the program set its own).
    std::atomic<uint32_t> pythonAllocators;
    // The CPU handler's walks of its thread's Python frames (a process image whose CPython the session named), timed
    // as the handler is, and the frames they gave: the walk's own share of the handler's time.
    std::atomic<uint32_t> pythonWalkNs[kHandlerBuckets];
    std::atomic<uint64_t> pythonWalkFrames;
    // The Python walks that gave a thread's last chain again from the words it kept (agent_python.h's
    // PythonCodeMemo): every checkEvery-th of a thread's was walked anew too and the two compared (checks), and how
    // many of those gave other frames (differs).
    std::atomic<uint64_t> pythonRepeatChecks;
    std::atomic<uint64_t> pythonRepeatDiffers;
};
static_assert(sizeof(RingHeader) <= kHeapSlotsOffset);

// The offset where lap `lap`'s data ended (just past its padding's header), from a value of RingHeader::lapEnd; -1
// when that value tells another lap's end (or none yet).
inline int64_t lapDataEnd(uint64_t lapEnd, uint64_t lap)
{
    return (lapEnd >> 32) == (lap & 0xffffffffu) ? int64_t(lapEnd & 0xffffffffu) : -1;
}

inline HeapSlot *heapSlots(RingHeader *ring)
{
    return reinterpret_cast<HeapSlot *>(reinterpret_cast<char *>(ring) + kHeapSlotsOffset);
}
inline const HeapSlot *heapSlots(const RingHeader *ring)
{
    return reinterpret_cast<const HeapSlot *>(reinterpret_cast<const char *>(ring) + kHeapSlotsOffset);
}
inline ModuleIndex *moduleIndex(RingHeader *ring)
{
    return reinterpret_cast<ModuleIndex *>(reinterpret_cast<char *>(ring) + kModuleIndexOffset);
}

} // namespace emberline::agent
