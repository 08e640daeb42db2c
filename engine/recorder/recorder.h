#pragma once

#include "engine/health/unwind_health.h"
#include "engine/model/stack_table.h"
#include "engine/recorder/location_index.h"
#include "engine/recorder/location_key.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

struct ModuleInfo {
    uint32_t id = 0;
    std::string path;
    std::string buildId;
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t pgoff = 0;
};

struct RecordedSample {
    int64_t timeNs = 0; // wall clock, ns since the epoch, at the end of the time the sample stands for
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint32_t stackId = 0;
    int64_t cpuNs = 0;
    int64_t wallNs = 0;
    uint8_t state = 0;   // ThreadState
    bool counted = true; // a CPU or periodic sample (false: an off-CPU interval, not a sample taken)
};

// Memory a stack of one thread holds or allocated, estimated from the sampled allocations (engine/memory): one
// per (process, thread, stack) and flush, and for allocations per lifetime. `leak`: what the process still held when
// it ended: the last flush's in-use values (a flush's in-use values are its snapshot), and the session's profile's.
// `shortLived`: allocations freed within a millisecond (HeapTracker::kShortLivedNs), labelled so in the profile.
struct MemorySample {
    int64_t timeNs = 0; // wall clock, ns since the epoch: the flush's end
    uint32_t pid = 0;
    uint32_t tid = 0;
    uint32_t stackId = 0;
    int64_t allocObjects = 0; // allocated during the flush
    int64_t allocBytes = 0;
    int64_t inuseObjects = 0; // live at the flush's end (a full snapshot), or at the process's end (`leak`)
    int64_t inuseBytes = 0;
    bool leak = false;
    bool shortLived = false;
    int64_t blockBytes = -1; // allocations and leaks: the mean size of the row's blocks (kBlockBytesLabel); -1: none
};

// Everything one flush needs, self-contained: its samples, and only the stacks, locations and modules they
// use (renumbered densely). Built by the recorder on the session thread, consumed by the exporter thread.
struct FlushInput {
    int64_t startNs = 0;
    int64_t endNs = 0;
    bool final = false;
    std::vector<RecordedSample> samples;
    std::vector<MemorySample> memory; // memory profiling only; their stacks are in `stacks` too
    StackTable stacks;                // of indices into `locations`, leaf first
    std::vector<LocationKey> locations;
    // The recorder's ids for the whole session, per location of `locations` and per stack of `stacks`: what
    // lets the live aggregate find a location or stack it has met before without interning it again.
    std::vector<uint32_t> sessionLocations;
    std::vector<uint32_t> sessionStacks;
    // Which numbering of the recorder's stacks `sessionStacks` is in: it starts over when the table grows past
    // its bound (Recorder::kMaxStacks), and the same id then names another stack.
    uint64_t stackGeneration = 0;
    std::vector<ModuleInfo> modules;             // every module a location refers to
    std::map<uint32_t, std::string> threadNames; // by tid
    std::map<uint32_t, uint32_t> processOfThread;
    // Session counters at flush time.
    uint64_t lost = 0;
    uint64_t incomplete = 0;
    std::map<std::string, uint64_t> incompleteByModule;
    // The sampling pipeline's unwind counters at flush time (cumulative), for the health view; may be null.
    std::shared_ptr<const UnwindCounters> unwind;
    // Memory profiling: the half-width of the 95% range sampling leaves the in-use bytes at the flush's end
    // (MemorySummary::liveBytesMargin); 0 when every allocation is recorded, -1 when not told.
    double inUseBytesMargin = -1;
    // What the agent's side says for the flush's health, a line each: memory profiling's modules that escape the
    // agent (an attached program's that bind their allocation functions elsewhere or call their own allocator), the
    // CPython found in each process and how its chains were read.
    std::vector<std::string> agentFaults;
    // Lines of the health view that inform rather than warn (each CPython found, and how its chains were read).
    std::vector<std::string> agentNotes;
    // The names of the flush's Python frames (kPythonModule locations), by their address.
    struct PythonName {
        std::string function;
        std::string file;
        int64_t line = 0;
    };
    std::map<uint64_t, PythonName> pythonNames;
};

// Interns locations (module, address) and stacks, and keeps the samples of the current flush. At a flush it
// swaps its sample buffer for an empty one and packs what the exporter needs, so sampling never waits for
// symbolization or serialization.
//
// Thread: the session thread.
class Recorder {
public:
    // The stack table starts over at a flush once it holds more stacks than this: a program with millions of
    // distinct call paths (at the address level: a busy leaf hit at many addresses multiplies them) would
    // otherwise grow it for the whole session, at about 80 bytes a stack. Locations are bounded by the code's
    // addresses and stay. A table that starts over costs the next flush an intern of each stack it holds, as
    // new stacks cost, and the live aggregate a lookup of each by content instead of by id: a few milliseconds
    // a start. 65,536 stacks (about 5 MB) hold the working set of most programs, so that those never start
    // over; a program with hundreds of thousands of call paths starts over every few flushes instead of
    // holding 20 MB more for the session.
    static constexpr size_t kMaxStacks = size_t(1) << 16;

    explicit Recorder(size_t maxStacks = kMaxStacks) : m_maxStacks(maxStacks) {}

    void registerModule(const ModuleInfo &module);
    void setThreadName(uint32_t pid, uint32_t tid, std::string name);
    const std::string &threadName(uint32_t tid) const;

    uint32_t internLocation(uint32_t moduleId, uint64_t address);
    uint32_t locationModule(uint32_t location) const { return m_locations[location].moduleId; }
    uint64_t locationAddress(uint32_t location) const { return m_locations[location].address; }
    size_t locationsInterned() const { return m_locations.size(); }
    size_t modulesRegistered() const { return m_modules.size(); }
    void record(int64_t timeNs, uint32_t pid, uint32_t tid, int64_t cpuNs, std::span<const uint32_t> locations);
    // A sample with wall time and thread state; `counted` false for an off-CPU interval.
    void recordTimed(int64_t timeNs, uint32_t pid, uint32_t tid, int64_t cpuNs, int64_t wallNs, uint8_t state,
                     bool counted, std::span<const uint32_t> locations);
    // Memory of one stack (`sample.stackId` is ignored: the stack is `locations`).
    void recordMemory(const MemorySample &sample, std::span<const uint32_t> locations);
    void countLost(uint64_t n) { m_lost += n; }
    void countIncomplete(const std::string &module);

    FlushInput takeFlush(int64_t startNs, int64_t endNs, bool final);

    uint64_t totalSamples() const { return m_totalSamples; }
    int64_t totalCpuNs() const { return m_totalCpuNs; }
    const std::map<std::string, uint64_t> &incompleteByModule() const { return m_incompleteByModule; }
    uint64_t lost() const { return m_lost; }
    uint64_t incomplete() const { return m_incomplete; }
    size_t pendingSamples() const { return m_samples.size() + m_memory.size(); }
    size_t uniqueStacks() const { return m_stacks.size(); }
    uint64_t stackGeneration() const { return m_stackGeneration; }

private:
    std::unordered_map<uint64_t, ModuleInfo> m_modules;
    std::vector<LocationKey> m_locations;
    LocationIndex m_locationIds;
    StackTable m_stacks;
    size_t m_maxStacks = kMaxStacks;
    uint64_t m_stackGeneration = 0;
    std::vector<RecordedSample> m_samples;
    std::vector<MemorySample> m_memory;
    // While a flush is packed: the flush's index of each session stack and location it uses (UINT32_MAX
    // otherwise, and again once packed).
    std::vector<uint32_t> m_flushStack;
    std::vector<uint32_t> m_flushLocation;
    // Packs session stack `id` into `flush` (once per flush); returns its index there.
    std::vector<uint32_t> m_frames; // packStack()'s scratch
    uint32_t packStack(FlushInput &flush, uint32_t id, std::unordered_map<uint32_t, uint32_t> &moduleMap);
    std::map<uint32_t, std::string> m_threadNames;
    std::map<uint32_t, uint32_t> m_processOfThread;
    uint64_t m_totalSamples = 0;
    int64_t m_totalCpuNs = 0;
    uint64_t m_lost = 0;
    uint64_t m_incomplete = 0;
    std::map<std::string, uint64_t> m_incompleteByModule;
};

} // namespace emberline::engine
