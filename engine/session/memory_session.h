#pragma once

#include "engine/common/flat_hash.h"
#include "engine/common/result.h"
#include "engine/memory/allocation_weight.h"
#include "engine/memory/heap_tracker.h"
#include "engine/memory/ring_reader.h"
#include "engine/model/stack_table.h"
#include "engine/session/agent_link.h"
#include "engine/session/session_config.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emberline::engine {

class Recorder;
class AllocationUnwinder;

// The memory half of a session (SessionConfig::memory): asks the agent link (AgentLink) for memory profiling in the
// launched program, takes the memory records the session's ring reader hands it (MemoryRecordSink), unwinds each
// sampled allocation with the session's unwinding service (AllocationUnwinder), keeps the live heap (HeapTracker),
// and at each flush hands the recorder what was allocated and what is live, per thread and stack; at the end, what
// each process still held when it ended (its leaks) as the last flush's in-use, beside its allocations. It reads no
// ring and calls nothing of the sampling side but the unwinder: the session orders the reads (ExecBarrier).
//
// Allocation stacks are interned in a table of their own (by the recorder's location ids, which never start over):
// a live block keeps its stack for as long as it lives, across the recorder's stack table starting over.
//
// Thread: the session thread.
class MemorySession final : public MemoryRecordSink {
public:
    // Asks `agent` for memory profiling at the configured interval (before the program is launched). The agent
    // link and the unwinder must outlive it.
    static Result<std::unique_ptr<MemorySession>> create(const SessionConfig &config, AgentLink &agent,
                                                         AllocationUnwinder &unwinder, Recorder &recorder);
    ~MemorySession() override;
    MemorySession(const MemorySession &) = delete;
    MemorySession &operator=(const MemorySession &) = delete;
    // After each read of the rings: learns the stack copy from the stacks unwound, and looks at the live heap for
    // its high-water mark.
    void afterRead();
    // Process `pid` is taking a new program image (exec), named `program`, its old image's records read: the new image
    // should load the agent again (LD_PRELOAD is inherited), and one that does not is told in the summary.
    void onExec(uint32_t pid, std::string_view program);
    // A flush ends at `realNs`: what was allocated since the last flush and what is live now go to the recorder.
    void flush(int64_t realNs);
    // The session ends (the program has ended or been ended) and the rings are read for the last time: ends the
    // images still running, and hands the recorder the session's leaks as the last flush's in-use, beside its
    // allocations. Then the summary is final.
    void finish(int64_t realNs);

    std::shared_ptr<const MemorySummary> summary() const;
    // The modules whose allocation functions the agent's tables left alone (bound elsewhere: RTLD_DEEPBIND, a
    // namespace of their own; an attached program's, or a launched one's library opened with RTLD_DEEPBIND), a line
    // each naming the module, for the summary and the health view.
    std::vector<std::string> moduleEscapes() const;
    // An attached program's modules that call an allocator of their own directly (AgentLink::Attached): said with
    // the escapes.
    void setOwnAllocators(std::vector<std::string> modules) { m_ownAllocators = std::move(modules); }
    // The live heap now (calibrated to the agent's exact heap counts where they are whole: HeapTracker::live), and
    // the half-width of its 95% range.
    HeapTracker::LiveEstimate live() const { return m_heap.live(m_rings.heapLive()); }
    // The in-use snapshot of the last flush: its total and the half-width of its 95% range.
    const HeapTracker::LiveEstimate &flushLive() const { return m_flushLive; }
    // What the program allocated: the hooks' exact count where the agent reported it, else the samples' estimate.
    double allocatedBytes() const;

    void onAllocation(const AgentAllocation &allocation) override;
    void onFree(uint64_t image, uint32_t pid, uint32_t tid, uint64_t timeNs, uint64_t address) override;
    void willTouch(uint64_t image, uint64_t address) override { m_heap.prefetch(image, address); }
    void onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid) override;
    void onImageEnd(uint64_t image, uint32_t pid) override;
    void onTotals(uint64_t image, uint32_t pid, uint32_t tid, uint64_t allocations, uint64_t bytes) override;

private:
    MemorySession(const SessionConfig &config, AgentLink &agent, AllocationUnwinder &unwinder, Recorder &recorder);
    void adaptStackCopy();
    // The stack each sampled allocation copies from now on.
    void setStackCopyBytes(uint32_t bytes);
    void record(const std::vector<HeapTracker::StackMemory> &sites, int64_t realNs, bool allocated, bool leak);

    AllocationUnwinder &m_unwinder;
    Recorder &m_recorder;
    uint64_t m_interval;
    RingReader &m_rings;
    HeapTracker m_heap;
    StackTable m_sites; // allocation stacks, of the recorder's location ids
    // The site of each stack the agent walked, by its hash mixed with the image and the thread (walkSiteKey): an
    // allocation through a stack seen before costs one look-up, not a symbolized walk.
    U64ToU32Map m_walkSites;
    std::vector<uint64_t> m_openImages; // started and not yet ended
    // Per process: the execs the sampler saw (when, and the new program's name) and the images whose agent
    // reported from a start or an exec (not a fork).
    struct ProcessImages {
        std::vector<std::pair<int64_t, std::string>> execs;
        size_t agentImages = 0;
    };
    std::map<uint32_t, ProcessImages> m_processImages;
    std::vector<std::string> m_problems;
    // The files of escaped modules found by moduleEscapes, by process and address (a process may end before the
    // summary is made).
    mutable std::map<std::pair<uint32_t, uint64_t>, std::string> m_escapedFiles;
    std::vector<std::string> m_ownAllocators;
    bool m_finished = false;
    // Per (image, thread) still running, the newest of its totals (AgentAllocation::threadAllocations, threadBytes):
    // they only grow, and what they grew by adds up to the program's exact totals.
    void addTotals(uint64_t image, uint32_t tid, uint64_t allocations, uint64_t bytes);
    std::map<std::pair<uint64_t, uint32_t>, std::pair<uint64_t, uint64_t>> m_threadTotals;
    uint64_t m_totalAllocations = 0;
    uint64_t m_totalBytes = 0;
    // The live heap's high-water mark: the largest seen at a read of the rings or a flush (sampling: calibrated, as
    // flushes are), and when it was last looked at.
    double m_highWater = 0;
    HeapTracker::LiveEstimate m_flushLive;
    uint64_t m_highWaterCheckedNs = 0;
    uint32_t m_stackCopy = 0; // what each sample copies now
    uint64_t m_shortCopiesSeen = 0;
    // The deepest allocation stack unwound (bytes of its copy used), and how many copies were too short.
    uint64_t m_allocationStackUsed = 0;
    uint64_t m_allocationCopiesShort = 0;
};

} // namespace emberline::engine
