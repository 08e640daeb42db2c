#pragma once

#include "engine/agent/agent_protocol.h"
#include "engine/unwind/walked_stack.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

class DirectoryWatch;
class UnwindTableServer;
struct UnwindServerStats;

// A stack the agent walked itself (sample_sink.h's WalkedStack): a walked sample has its pcs and no registers or
// copy; a checked one (one in RingHeader::checkEvery) has both, for the session to compare its own unwind of the
// copy with the walk.
using AgentStack = WalkedStack;

// One allocation the agent sampled (or, in exact mode, every allocation), as read from a ring: valid only during
// the callback (the registers and the stack point into the ring).
struct AgentAllocation {
    uint64_t image = 0; // the process image (ring) it came from: a serial number of the session
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint64_t timeNs = 0; // CLOCK_MONOTONIC
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t heapBytes =
        0; // the heap bytes the block takes: the C library's chunk size, header included (0: not known)
    // Every allocation the thread made in this image so far, this one included, and their bytes (exact: counted by
    // the hooks, sampled or not).
    uint64_t threadAllocations = 0;
    uint64_t threadBytes = 0;
    std::span<const uint64_t> regs; // kPerfRegsMask order, as the unwinder takes them
    std::span<const uint8_t> stack; // copied from regs[SP]
    uint32_t stackLimit = 0;        // the copy asked for
    AgentStack walk;                // the agent's own walk (agent_tables.h), when it made one
    PythonFramesView python;        // the Python frames it was running (none outside a CPython)
};

// A CPU sample of the in-process sampler, as read from a ring: valid only during the callback.
struct AgentCpuSample {
    uint64_t image = 0;
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint64_t timeNs = 0;   // CLOCK_MONOTONIC
    uint64_t periodNs = 0; // the thread's CPU time it stands for
    std::span<const uint64_t> regs;
    std::span<const uint8_t> stack;
    uint32_t stackLimit = 0;
    AgentStack walk;
    PythonFramesView python;
};

// Where the memory records of the rings go (allocations, frees, thread totals), with the process images they
// belong to: the memory half of a session. Called on the thread that polls the rings.
class MemoryRecordSink {
public:
    virtual ~MemoryRecordSink() = default;
    virtual void onAllocation(const AgentAllocation &allocation) = 0;
    virtual void onFree(uint64_t image, uint32_t pid, uint32_t tid, uint64_t timeNs, uint64_t address) = 0;
    // A block the records a little further on allocate or free: what the sink will look up for it may be fetched
    // ahead (the reader calls this some records before their onAllocation or onFree).
    virtual void willTouch(uint64_t image, uint64_t address) { (void)image, (void)address; }
    // A process image started: its ring appeared (`parentPid` when it was forked from a process of the program,
    // 0 for the first image and after an exec). Every record of the image comes between its start and its end.
    virtual void onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid)
    {
        (void)image, (void)pid, (void)parentPid;
    }
    // A process image ended (exit, exec into a new image, or the process is gone): what it still held was live
    // at its end.
    virtual void onImageEnd(uint64_t image, uint32_t pid) { (void)image, (void)pid; }
    // A thread's totals as it or its image ended (AgentAllocation::threadAllocations, threadBytes).
    virtual void onTotals(uint64_t image, uint32_t pid, uint32_t tid, uint64_t allocations, uint64_t bytes)
    {
        (void)image, (void)pid, (void)tid, (void)allocations, (void)bytes;
    }
};

// Where the CPU records of the rings go (the in-process sampler's samples and thread timers), with the process
// images' starts (a fork or an exec the sampler side must tell its pipeline of). Called on the thread that polls
// the rings.
class CpuRecordSink {
public:
    virtual ~CpuRecordSink() = default;
    virtual void onCpuSample(const AgentCpuSample &sample) = 0;
    // A thread whose CPU timer started (or could not be made).
    virtual void onThreadTimer(uint64_t image, uint32_t pid, uint32_t tid, bool started) = 0;
    // As MemoryRecordSink::onImageStart; called before the memory side hears of the image.
    virtual void onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid) = 0;
};

// Where the Python side of the rings goes: each process image as it starts (to find its CPython and tell its agent:
// RingReader::setPythonTarget) and the code objects its agent describes (agent_protocol.h's PythonCodeRecord; `bytes`
// the name's, file's and line table's, valid during the call).
class PythonCodeSink {
public:
    virtual ~PythonCodeSink() = default;
    virtual void onPythonImage(uint64_t image, uint32_t pid) = 0;
    virtual void onPythonCode(uint64_t image, uint32_t pid, const agent::PythonCodeFacts &facts,
                              std::span<const uint8_t> bytes) = 0;
};

// Where the modules each process image's agent lists as its ring is made go (agent_protocol.h's ModuleRecord: an
// executable segment of a module, `path` as the dynamic linker named it): before the image's samples, so that they are
// placed in that image's map even where the image was gone from /proc before its ring was read.
class ModuleRecordSink {
public:
    virtual ~ModuleRecordSink() = default;
    virtual void onImageModule(uint64_t image, uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff,
                               std::string_view path) = 0;
};

// The sides a poll hands the records to, each the kinds it takes; a side left null is not profiled (its records are
// read and counted, and go nowhere).
struct RingSinks {
    MemoryRecordSink *memory = nullptr;
    CpuRecordSink *cpu = nullptr;
    PythonCodeSink *python = nullptr;
    ModuleRecordSink *modules = nullptr;
};

// Counters over every ring of the session.
struct RingCounters {
    uint64_t rings = 0;         // process images seen
    uint64_t allocations = 0;   // allocation records read
    uint64_t frees = 0;         // free records read
    uint64_t allocsDropped = 0; // sampled allocations the agent could not report (full ring or table)
    uint64_t bytesDropped = 0;
    uint64_t waitNs = 0;           // exact mode: the programs' time spent waiting for room
    uint32_t problems = 0;         // agent::Problem bits of any ring
    uint64_t badRings = 0;         // files in the directory that were not a ring of this version
    uint64_t cpuSamples = 0;       // CPU samples read
    uint64_t cpuDropped = 0;       // CPU samples the agent could not write (a full ring)
    uint32_t cpuSignal = 0;        // the in-process sampler's signal in the latest ring (0: none)
    uint64_t ringFailures = 0;     // process images that could not make their ring (kNoRingSuffix markers)
    std::string ringFailure;       // the first of them: "process PID: REASON"
    uint64_t ringsNotReserved = 0; // rings the session could not reserve whole (a full file system)
    std::string ringNotReserved;   // the first of them: "process PID: REASON"
    uint64_t widestWindow = 0;     // the widest window a ring's writers went round (RingHeader::windowBytes)
    uint64_t laps = 0;             // times a ring's writers went back to its start (padding records read)
    uint64_t detours = 0;          // records placed past the lap before's end while the session still read it
    // The agent's own stack walks (agent_tables.h): samples written walked, of them written as a reference to a
    // stack written before, the checked ones (walked and copied), the samples copied instead by
    // agent::WalkFallback, and references to a stack the ring never wrote out (a damaged ring: dropped).
    uint64_t walked = 0;
    uint64_t stackRefs = 0;
    uint64_t leafWalks = 0; // of the walked, those whose innermost frames a leaf of the thread's earlier walks gave
    uint64_t checked = 0;
    std::array<uint64_t, agent::kWalkFallbackCount> walkFallbacks{};
    uint64_t unknownStackRefs = 0;
    // The in-process sampler's handler times (agent::RingHeader::cpuHandlerNs, in agent::handlerBucket's buckets).
    std::array<uint64_t, agent::kHandlerBuckets> cpuHandlerNs{};
    // The handler's walks of Python frames (agent::RingHeader::pythonWalkNs), and the frames they gave.
    std::array<uint64_t, agent::kHandlerBuckets> pythonWalkNs{};
    uint64_t pythonWalkFrames = 0;
    // The walks of Python frames that gave a thread's last chain again, checked against a walk anew
    // (agent::RingHeader::pythonRepeatChecks), and those that differed.
    uint64_t pythonRepeatChecks = 0;
    uint64_t pythonRepeatDiffers = 0;
    // Modules an attached agent's tables left alone (their allocation functions bound elsewhere: RTLD_DEEPBIND, a
    // namespace of their own), by process and lowest address; escapedUnlisted counts those past the list's room.
    struct Escaped {
        uint32_t pid = 0;
        uint64_t address = 0;
        uint32_t kinds = 0; // agent::EscapedModule::kinds
    };
    std::vector<Escaped> escaped;
    uint64_t escapedUnlisted = 0;
    // Process images by how their agent counted CPython's memory (agent::PythonAllocators, engine/agent/python/
    // agent_pymem.h).
    std::array<uint64_t, 5> pythonAllocators{};
};

// The session's one reader of the agent's rings (engine/agent/agent_protocol.h; the agent writes them): finds the
// rings that the launched program's processes create in the session's agent folder, maps each and removes its file,
// visits every ring on each poll (the heartbeat that keeps the agent sampling), hands each record in ring order to
// the side that takes its kind (CPU records to the sampler side, memory records to the memory side: RingSinks), and
// says when a process image has ended and its ring is drained. detach() tells every agent to pass everything
// through from now on.
//
// Thread: one thread polls (the session thread); not shared.
class RingReader {
public:
    // `directory` must exist and be private to the session.
    explicit RingReader(std::string directory);
    ~RingReader();
    RingReader(const RingReader &) = delete;
    RingReader &operator=(const RingReader &) = delete;

    // Picks up new rings, drains every ring into `sinks`, writes the heartbeat; returns the records read. Records
    // stamped after `upToNs` (CLOCK_MONOTONIC) stay for a later poll, with every record after them in their ring.
    size_t poll(const RingSinks &sinks, uint64_t upToNs = UINT64_MAX);
    // Drains the rings of process `pid` made before `createdBeforeNs` (CLOCK_MONOTONIC: the time of the process's
    // exec), new ones looked for first: before the exec is handled, its old image's records are read while its old
    // map holds, its ring found even where it appeared since the last poll (a shell that execs its command at once);
    // the new image's ring, which may be there already, is read at the next poll with the new map. Without a time
    // (0: the sampler does not know when the exec was), the rings already found alone, as those of the old image.
    size_t pollProcess(const RingSinks &sinks, uint32_t pid, uint64_t createdBeforeNs = 0);
    // The live heap of process image `image` now, in heap bytes (chunk sizes, headers included), exactly (the agent's
    // heap counters: agent_protocol.h's HeapSlot); nothing when the image's ring is closed or its counts are not whole.
    // An image's sink callbacks (onImageEnd too) come while its ring is open.
    std::optional<int64_t> heapLive(uint64_t image) const;
    // The same for every open image whose counts are whole.
    std::unordered_map<uint64_t, int64_t> heapLive() const;
    // The stack each sample copies from now on (the learned copy).
    void setStackCopyBytes(uint32_t bytes);
    // The in-process sampler's signal in process `pid`'s newest ring (0: none, or no open ring).
    uint32_t cpuSignal(uint32_t pid) const;
    // How the newest open ring that has chosen times its CPU samples (per-thread perf events or timers); the last
    // one seen once the rings have closed.
    agent::CpuClock cpuClock() const;
    // How the agents take their samples' stacks from now on (walk with the session's tables, or copy), and every
    // how many walked samples of a thread are copied too for the check (0: none).
    void setUnwindMode(agent::UnwindMode mode, uint32_t checkEvery);
    // Tells the agent of process image `image` where its CPython's structures are: its samples carry their Python
    // frames from then on. False when the image has no open ring.
    bool setPythonTarget(uint64_t image, const agent::PythonTarget &target);
    // The stack each CPU sample copies from now on (the in-process sampler's learned copy).
    void setCpuStackCopyBytes(uint32_t bytes);
    uint32_t cpuStackCopyBytes() const { return m_cpuStackCopyBytes; }
    // Asks the agent of process `pid` to start a CPU timer on thread `tid` (one it has not reported); false when
    // the process has no open ring or its requests are all taken.
    bool requestTimer(uint32_t pid, uint32_t tid);
    // The session is ending: drains once more, then every agent passes everything through.
    void detach(const RingSinks &sinks);

    const std::string &directory() const { return m_directory; }
    // Readable when a file was made in the rings' directory since the last poll (a new ring, most often): a reader
    // that naps may wait on it to read a new process's ring at once. -1 where the kernel cannot watch the directory.
    int changeFd() const;
    RingCounters counters() const;
    // The unwind tables served to the agents (walk mode), for the health view; nothing in copy mode.
    std::optional<UnwindServerStats> tableStats() const;
    // How full the fullest ring was when the last poll came to it (0 to 1): a reader that naps reads sooner.
    double lastFill() const { return m_lastFill; }
    // Where the writers and the reader of process `pid`'s newest ring are (agent_protocol.h's RingHeader), when it
    // has an open ring: whether the writers are a lap ahead of the reader.
    struct Position {
        uint64_t head = 0, tail = 0, dataBytes = 0;
    };
    std::optional<Position> position(uint32_t pid) const;
    size_t openRings() const { return m_rings.size(); }

private:
    struct Ring;
    void scan();
    void noteRingFailure(const char *name);
    void reserveMore(Ring &ring);
    size_t drain(Ring &ring, const RingSinks &sinks, uint64_t upToNs);
    // Counts a copied record: checked (walked too), or why it was copied (its copiedBecause).
    void countCopy(uint32_t copiedBecause, bool checked);
    // A walked record's stack from the ring's written stacks (WalkedStacks), counted; false for a reference to a stack
    // the ring never wrote out.
    bool walkedStack(Ring &ring, uint64_t hash, uint8_t flags, std::span<const uint64_t> pcs, AgentStack &stack,
                     PythonFramesView &python);
    size_t visit(const RingSinks &sinks, uint32_t onlyPid, uint64_t upToNs, uint64_t createdBeforeNs = UINT64_MAX);

    std::string m_directory;
    std::unique_ptr<DirectoryWatch> m_made; // what was made in m_directory: listed only then
    std::vector<std::unique_ptr<Ring>> m_rings;
    // The agents' unwind tables (walk mode): made with the first walk asked for, gone before any ring is unmapped.
    std::unique_ptr<UnwindTableServer> m_tables;
    uint32_t m_stackCopyBytes = 8192;
    uint32_t m_cpuStackCopyBytes = 32768;
    agent::UnwindMode m_unwindMode = agent::UnwindMode::Copy;
    uint32_t m_checkEvery = 0;
    RingCounters m_counters;
    RingCounters m_closed; // counters of rings already closed
    uint64_t m_images = 0;
    bool m_visiting = false; // a poll is under way (a sink's callback must not start another)
    double m_lastFill = 0;
    mutable agent::CpuClock m_cpuClock = agent::CpuClock::NotChosen;
};

} // namespace emberline::engine
