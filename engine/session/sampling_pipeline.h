#pragma once

#include "engine/health/unwind_health.h"
#include "engine/memory/ring_reader.h"
#include "engine/recorder/recorder.h"
#include "engine/sampler/sample_sink.h"
#include "engine/sampler/stack_copy_policy.h"
#include "engine/unwind/module_ids.h"
#include "engine/unwind/process_map.h"
#include "engine/unwind/unwinder.h"

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

class PythonFrames;

// A stack the memory agent copied at an allocation, unwound: the recorder's locations, leaf first, from the
// allocation's caller (the agent's frames left out); valid until the next unwind. `stackUsed` is how much of the copy
// the walk used, and `copyShort` says the copy ended before the walk did: what the memory side learns its copy from.
struct UnwoundAllocation {
    std::span<const uint32_t> locations;
    uint64_t stackUsed = 0;
    bool copyShort = false;
};

// The unwinding service of a session, as the memory side sees it: an allocation's registers and stack copy in, its
// stack out, with the same maps, unwinder and symbols as the CPU samples. An interface, so that the memory side
// knows nothing else of the sampling side (and a test can fake it).
class AllocationUnwinder {
public:
    virtual ~AllocationUnwinder() = default;
    // `walk`: the agent's own walk (the stack itself when `regs` is empty, else a check of the unwind).
    virtual UnwoundAllocation unwindAllocation(uint32_t pid, uint32_t tid, std::span<const uint64_t> regs,
                                               std::span<const uint8_t> stack, uint32_t stackLimit,
                                               const WalkedStack &walk = {}, const PythonFramesView &python = {}) = 0;
};

// The sampling half of the session: takes the sampler's records, keeps each followed process's memory map and
// thread names, unwinds every sample and hands the stack to the recorder; and unwinds the memory side's allocations
// (AllocationUnwinder) with the same maps. It calls nothing of the memory side: an exec it hears of clears the old
// map at once, and whoever must read the old image's allocations first (the session: ExecBarrier) does so before
// handing it the exec.
//
// Thread: the session thread.
class SamplingPipeline final : public SampleSink, public AllocationUnwinder, public ModuleRecordSink {
public:
    explicit SamplingPipeline(Recorder &recorder);

    void onSample(const RawSample &sample) override;
    void onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable, uint64_t inode,
                std::string_view path) override;
    void onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec) override;
    void onFork(uint32_t pid, uint32_t ppid, uint32_t tid) override;
    void onExit(uint32_t pid, uint32_t tid) override;
    void onLost(uint64_t count) override;
    void onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted) override;
    // A module an image's agent listed (where the sampler reports no mappings): placed in the process's map, which it
    // makes without reading /proc (the image the records describe may be gone from there), its path resolved as the
    // kernel's map would name it.
    void onImageModule(uint64_t image, uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff,
                       std::string_view path) override;

    // Off-CPU intervals still open (threads waiting right now) are recorded up to `monotonicNs` and continue
    // from there, so that every flush holds the waiting it covers.
    void closeOffCpuIntervals(uint64_t monotonicNs);

    // Unwinds an allocation the memory agent sampled (its registers, in the sampler's order, and its stack copy)
    // with the same maps, unwinder and symbols as CPU samples. It counts nothing in the unwind health (of CPU
    // samples' stacks only).
    UnwoundAllocation unwindAllocation(uint32_t pid, uint32_t tid, std::span<const uint64_t> regs,
                                       std::span<const uint8_t> stack, uint32_t stackLimit,
                                       const WalkedStack &walk = {}, const PythonFramesView &python = {}) override;
    // Where the agents' Python frames are merged into the native stacks (null: they are not).
    PythonFrames *setPython(const std::unique_ptr<PythonFrames> &python)
    {
        m_python = python.get();
        return m_python;
    }

    // Reads thread names and the memory map of a process we attach to.
    void primeProcess(int pid);
    const ElfCache &elfCache() const { return m_elfCache; }
    uint64_t framePointerFallbacks() const { return m_framePointerFallbacks; }
    UnwinderStats unwinderStats() const { return m_unwinder.stats(); }
    // The user stack copy the sampler asks for: a copy this long that ends under the next frame was too small
    // (a shorter one reached the top of the thread's stack). 0: judged by the longest copy seen.
    void setStackCopyBytes(uint32_t bytes) { m_stackCopyBytes = bytes; }
    // Told what each unwound stack used of its copy, and which ones the copy cut short (null: nobody asks).
    void setStackCopyPolicy(StackCopyPolicy *policy)
    {
        m_stackCopyPolicy = policy;
        m_health.stackCopyLearned = policy != nullptr;
    }
    // Per module id: samples, incomplete stacks ending there and why (cumulative); what the health view reads.
    const UnwindCounters &unwindCounters() const { return m_health; }
    // Distinct modules (file and load address) seen so far: stays put across /proc reloads and forks.
    size_t modulesKnown() const { return m_moduleIds.size(); }
    // The id of the module at `address` in process `pid`'s map as known now; kUnknownModule when none.
    uint32_t moduleIdAt(uint32_t pid, uint64_t address);
    // Threads with per-thread state kept (an open off-CPU interval, a last stack, a pending switch): the
    // exited ones are forgotten, so this stays bounded by the live threads.
    size_t threadsTracked() const;

private:
    // A thread that left the CPU: where it waits, since when, and why.
    struct OffCpu {
        uint32_t pid = 0;
        uint64_t sinceNs = 0;
        bool preempted = false;
        std::vector<uint32_t> locations;
        size_t kernelFrames = 0; // leading kernel frames of `locations` (the path into the switch)
    };
    // A thread's latest periodic stack, which a sample of a thread that has not run since repeats.
    struct LastStack {
        std::vector<uint32_t> locations;
        std::string incompleteModule;        // empty when the stack was complete
        uint32_t endModule = kUnknownModule; // where an incomplete stack ended, and why
        UnwindCause cause = UnwindCause::Other;
    };
    ProcessMap &processMap(uint32_t pid);
    // Reads process `pid`'s map from /proc again unless that was done moments ago; true when it was read.
    bool reloadMap(uint32_t pid, ProcessMap &map);
    // What a stack is unwound for: a CPU or off-CPU sample (counted in the unwind health and the stack copy's
    // policy), or an allocation (its stack from the allocation's caller, counted nowhere here).
    enum class StackOf : uint8_t { Sample, Allocation };
    // Unwinds a sample into m_locations (m_unwound holds the walk); returns the module where an incomplete sample
    // stack stopped, else "".
    std::string unwindInto(const RawSample &sample, ProcessMap &map, StackOf of = StackOf::Sample);
    // A sample taken in the kernel: its kernel callchain under [kernel.kallsyms], or one [kernel] frame.
    void addKernelFrames(const RawSample &sample);
    void recordOffCpu(uint32_t tid, const OffCpu &interval, uint64_t untilNs);
    uint32_t moduleIdFor(const MappedModule &module);
    // Health counters: a sample's frame in module `id` (once per sample), and how an incomplete stack ended.
    void countModuleSample(uint32_t id);
    void countIncompleteEnd(uint32_t id, UnwindCause cause, uint64_t neededBytes, bool neededExact = false);
    UnwindCause classifyIncomplete(const UnwindOutput &out, const MappedModule *last, bool copyEnded) const;
    // The copy the stack needed: exact (`exact` set) for the main thread, else how far the walk reached.
    uint64_t stackNeeded(const RawSample &sample, ProcessMap &map, uint64_t reached, bool &exact) const;
    void countRepeatedStack(const LastStack &stack);
    void allocationStack(const UnwindOutput &out, ProcessMap &map);
    // The agent's walk as the unwinder's output (callers' return addresses moved back by one, as it does).
    void takeWalk(const WalkedStack &walk, UnwindOutput &out) const;
    // A checked sample: the session's unwind of the copy against the agent's walk (UnwindCounters::walk*).
    void checkWalk(const WalkedStack &walk, const UnwindOutput &out, ProcessMap &map);
    // How many of the stack's leading frames are the agent's own (the hook and what it called to take the sample).
    static size_t leadingAgentFrames(const std::vector<uint64_t> &ips, ProcessMap &map);

    Recorder &m_recorder;
    PythonFrames *m_python = nullptr;
    ElfCache m_elfCache;
    Unwinder m_unwinder;
    ModuleIds m_moduleIds{kFirstModuleId};
    UnwindCounters m_health;
    uint64_t m_sampleSerial = 0;
    uint32_t m_stackCopyBytes = 0;
    StackCopyPolicy *m_stackCopyPolicy = nullptr;
    uint32_t m_lastEnd = kUnknownModule; // of the last incomplete stack unwound
    UnwindCause m_lastCause = UnwindCause::Other;
    std::map<uint32_t, std::unique_ptr<ProcessMap>> m_processes;
    std::map<uint32_t, int64_t> m_lastReload; // pid -> monotonic ns of the last /proc reload
    std::map<uint32_t, int64_t> m_execAt;     // pid -> monotonic ns of its latest exec
    std::map<std::string, std::string, std::less<>>
        m_resolvedPaths;            // a module's path as named -> as the kernel names it
    int64_t m_realtimeOffsetNs = 0; // CLOCK_REALTIME - CLOCK_MONOTONIC
    UnwindOutput m_unwound;
    UnwindOutput m_fpUnwound;
    std::vector<uint32_t> m_locations;
    size_t m_kernelFrames = 0; // leading kernel frames of m_locations
    uint64_t m_framePointerFallbacks = 0;
    bool m_kernelModuleRegistered = false;
    std::map<uint32_t, OffCpu> m_offCpu;          // by tid
    std::map<uint32_t, uint64_t> m_earlySwitchIn; // switch-ins read before their switch-out sample
    std::map<uint32_t, bool> m_lastPreempted;     // from the switch-out record, by tid
    std::map<uint32_t, LastStack> m_lastStacks;   // periodic samples only, by tid
};

} // namespace emberline::engine
