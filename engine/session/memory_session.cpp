#include "engine/session/memory_session.h"

#include "engine/agent/agent_protocol.h"
#include "engine/agent/python/agent_pymem.h"
#include "engine/common/clock.h"
#include "engine/common/logging.h"
#include "engine/common/strings.h"
#include "engine/process/proc_files.h"
#include "engine/recorder/location_key.h"
#include "engine/recorder/recorder.h"
#include "engine/session/sampling_pipeline.h" // AllocationUnwinder

#include <algorithm>
#include <cmath>

namespace emberline::engine {
namespace {

// Exact mode keeps every allocation: a larger ring lets the program run on while the session unwinds a burst. A
// sampled burst (a gigabyte allocated in a tenth of a second is some 2,000 samples) fits the default ring.
constexpr uint64_t kExactRingBytes = uint64_t(64) << 20;
constexpr uint64_t kSampledRingBytes = uint64_t(16) << 20;
constexpr uint32_t kMinStackCopyBytes = 2048;
constexpr uint32_t kMaxAllocationCopyBytes = 32768;
constexpr int64_t kRingGraceNs = 2'000'000'000; // an exec'd image's ring appears within this, or never

int64_t rounded(double v)
{
    return static_cast<int64_t>(std::llround(v));
}

// What the memory of the program's CPythons counts (engine/agent/python/agent_pymem.h), from the images' states.
std::vector<std::string> pythonMemoryNotes(const std::array<uint64_t, 5> &images)
{
    using agent::PythonAllocators;
    auto count = [&](PythonAllocators state) { return images[size_t(state)]; };
    auto processes = [](uint64_t n) {
        return std::to_string(n) + (n == 1 ? " CPython process" : " CPython processes");
    };
    std::vector<std::string> notes;
    if (count(PythonAllocators::Arenas) > 0)
        notes.push_back(processes(count(PythonAllocators::Arenas)) +
                        ": objects of up to 512 bytes come from pymalloc's arenas, which CPython maps itself, not from "
                        "malloc: each arena (1 MiB from 3.10, 256 KiB before) counts as one allocation, of the Python "
                        "code whose object needed it, and in the heap; larger objects are counted at malloc "
                        "(--python-allocators counts every object as Python allocates it)");
    if (count(PythonAllocators::Installed) > 0)
        notes.push_back(processes(count(PythonAllocators::Installed)) +
                        ": CPython's own allocators counted at their calls (--python-allocators): every object as "
                        "Python allocates it, and what else reaches malloc; the live heap is the samples' estimate");
    if (count(PythonAllocators::Replaced) > 0)
        notes.push_back(processes(count(PythonAllocators::Replaced)) +
                        " set their allocators themselves as they started (PYTHONMALLOC, -X dev): only what reaches "
                        "malloc is counted there");
    return notes;
}

} // namespace

Result<std::unique_ptr<MemorySession>> MemorySession::create(const SessionConfig &config, AgentLink &agent,
                                                             AllocationUnwinder &unwinder, Recorder &recorder)
{
    return std::unique_ptr<MemorySession>(new MemorySession(config, agent, unwinder, recorder));
}

MemorySession::MemorySession(const SessionConfig &config, AgentLink &agent, AllocationUnwinder &unwinder,
                             Recorder &recorder)
    : m_unwinder(unwinder), m_recorder(recorder), m_interval(std::max<uint64_t>(config.allocInterval, 1)),
      m_rings(agent.rings()), m_heap(m_interval)
{
    agent.askMemory(m_interval, m_interval == 1 ? kExactRingBytes : kSampledRingBytes, config.pythonAllocators);
    setStackCopyBytes(8192);
    // The row of a process image's live heap that no live sample stands for.
    const uint32_t marker = recorder.internLocation(kMarkerModule, uint64_t(MarkerFrame::UnsampledHeap));
    m_heap.setUnsampledStack(m_sites.intern(std::span<const uint32_t>(&marker, 1)));
    if (agent.executableIsStatic())
        m_problems.push_back(agent.executable() +
                             " is statically linked: no dynamic loader runs in it to load the memory agent, so its "
                             "memory is not profiled (the CPU profile goes on)");
}

MemorySession::~MemorySession() = default;

void MemorySession::onExec(uint32_t pid, std::string_view program)
{
    // Counted, to tell an image that did not load the agent again.
    m_processImages[pid].execs.push_back({clockNs(CLOCK_MONOTONIC), std::string(program)});
}

void MemorySession::afterRead()
{
    adaptStackCopy();
    // The high-water mark, as often as a hundred times a second: each look sums the agent's heap slots of every open
    // image.
    const uint64_t now = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC));
    if (m_interval > 1 && now - m_highWaterCheckedNs >= 10'000'000) {
        m_highWaterCheckedNs = now;
        m_highWater = std::max(m_highWater, m_heap.liveBytes(m_rings.heapLive()));
    }
}

void MemorySession::adaptStackCopy()
{
    // The stack each sample copies is most of its record: learned from the allocation stacks themselves, it
    // shrinks to what the deepest needed (with room to spare) and doubles when one was cut short. A smaller
    // record lets the ring hold more samples of a burst.
    const uint64_t shortCopies = m_allocationCopiesShort;
    uint32_t next = m_stackCopy;
    if (shortCopies > m_shortCopiesSeen)
        next = std::min<uint32_t>(m_stackCopy * 2, kMaxAllocationCopyBytes);
    else if (m_allocationStackUsed > 0 && m_heap.counters().allocations >= 64)
        next = std::clamp<uint32_t>(static_cast<uint32_t>((m_allocationStackUsed * 3 / 2 + 1023) & ~uint64_t(1023)),
                                    kMinStackCopyBytes, m_stackCopy);
    m_shortCopiesSeen = shortCopies;
    if (next != m_stackCopy)
        setStackCopyBytes(next);
}

void MemorySession::setStackCopyBytes(uint32_t bytes)
{
    m_stackCopy = bytes;
    m_rings.setStackCopyBytes(bytes);
}

namespace {

uint64_t walkSiteKey(const AgentAllocation &a)
{
    uint64_t k = (a.image << 32 | a.tid) * 0x9E3779B97F4A7C15ull;
    k ^= k >> 29;
    // The Python frames are the site's too (its lines from the instructions).
    for (const agent::PythonFrame &frame : a.python.frames) {
        k = (k ^ frame.code ^ (uint64_t(uint32_t(frame.instruction)) << 40)) * 0xBF58476D1CE4E5B9ull;
        k ^= k >> 31;
    }
    const uint64_t key = a.walk.hash ^ k;
    return key == U64ToU32Map::kEmpty ? 0 : key;
}

} // namespace

void MemorySession::onAllocation(const AgentAllocation &a)
{
    const bool walked = a.regs.empty() && a.walk.hash != 0;
    if (walked) {
        if (const uint32_t *site = m_walkSites.find(walkSiteKey(a))) {
            m_heap.allocate(a.image, a.pid, a.tid, a.address, a.size, *site, a.timeNs, a.heapBytes);
            addTotals(a.image, a.tid, a.threadAllocations, a.threadBytes);
            return;
        }
    }
    const UnwoundAllocation unwound =
        m_unwinder.unwindAllocation(a.pid, a.tid, a.regs, a.stack, a.stackLimit, a.walk, a.python);
    m_allocationStackUsed = std::max(m_allocationStackUsed, unwound.stackUsed);
    m_allocationCopiesShort += unwound.copyShort ? 1 : 0;
    const uint32_t site = m_sites.intern(unwound.locations);
    if (walked) {
        bool inserted = false;
        m_walkSites.findOrInsert(walkSiteKey(a), site, inserted);
    }
    m_heap.allocate(a.image, a.pid, a.tid, a.address, a.size, site, a.timeNs, a.heapBytes);
    addTotals(a.image, a.tid, a.threadAllocations, a.threadBytes);
}

void MemorySession::onTotals(uint64_t image, uint32_t pid, uint32_t tid, uint64_t allocations, uint64_t bytes)
{
    (void)pid;
    addTotals(image, tid, allocations, bytes);
    // The thread has ended: its totals are in. Another thread may get its id later, and counts from 0.
    m_threadTotals.erase({image, tid});
}

void MemorySession::addTotals(uint64_t image, uint32_t tid, uint64_t allocations, uint64_t bytes)
{
    auto &[a, b] = m_threadTotals[{image, tid}];
    if (allocations > a) {
        m_totalAllocations += allocations - a;
        a = allocations;
    }
    if (bytes > b) {
        m_totalBytes += bytes - b;
        b = bytes;
    }
}

double MemorySession::allocatedBytes() const
{
    return m_totalAllocations > 0 ? static_cast<double>(m_totalBytes) : m_heap.counters().allocatedBytes;
}

void MemorySession::onFree(uint64_t image, uint32_t pid, uint32_t tid, uint64_t timeNs, uint64_t address)
{
    (void)pid, (void)tid;
    m_heap.free(image, address, timeNs);
}

void MemorySession::onImageStart(uint64_t image, uint32_t pid, uint32_t parentPid)
{
    if (parentPid == 0)
        ++m_processImages[pid].agentImages; // the program's start or an exec, not a fork
    qCDebug(lcSession, "memory agent in process %u (image %llu, forked from %u)", pid,
            static_cast<unsigned long long>(image), parentPid);
    m_openImages.push_back(image);
    m_heap.startImage(image, pid);
}

void MemorySession::onImageEnd(uint64_t image, uint32_t pid)
{
    (void)pid;
    // Its leaks calibrated, as its flushes' in-use snapshots were, to what its heap counts held at its end.
    const std::optional<int64_t> exact = m_rings.heapLive(image);
    qCDebug(lcSession, "memory image %llu ended holding %lld heap bytes (exact)",
            static_cast<unsigned long long>(image), static_cast<long long>(exact.value_or(-1)));
    // What the program held as it ended may be its largest heap (one that only grows): the high-water mark sees it
    // first.
    if (m_interval > 1)
        m_highWater = std::max(m_highWater, m_heap.liveBytes(m_rings.heapLive()));
    m_heap.endImage(image, exact);
    std::erase(m_openImages, image);
    // Threads that ended without their last totals (killed, or still running at the end) count as last reported.
    m_threadTotals.erase(m_threadTotals.lower_bound({image, 0}), m_threadTotals.lower_bound({image + 1, 0}));
}

void MemorySession::record(const std::vector<HeapTracker::StackMemory> &sites, int64_t realNs, bool allocated,
                           bool leak)
{
    for (const HeapTracker::StackMemory &m : sites) {
        MemorySample s;
        s.timeNs = realNs;
        s.pid = m.pid;
        s.tid = m.tid;
        s.leak = leak;
        s.shortLived = m.shortLived;
        if ((allocated || leak) && m.objects > 0)
            s.blockBytes = static_cast<int64_t>(std::llround(m.bytes / m.objects)); // in the row's size class
        (allocated ? s.allocObjects : s.inuseObjects) = rounded(m.objects);
        (allocated ? s.allocBytes : s.inuseBytes) = rounded(m.bytes);
        if (s.allocObjects == 0 && s.allocBytes == 0 && s.inuseObjects == 0 && s.inuseBytes == 0)
            continue;
        m_recorder.recordMemory(s, m_sites.stack(m.stack));
    }
}

void MemorySession::flush(int64_t realNs)
{
    record(m_heap.takeAllocated(), realNs, true, false);
    const HeapTracker::ExactHeapBytes exact = m_rings.heapLive();
    record(m_heap.inUse(exact), realNs, false, false);
    m_flushLive = m_heap.live(exact); // the snapshot's own total and range, from the same counts
    m_highWater = std::max(m_highWater, m_flushLive.bytes);
}

void MemorySession::finish(int64_t realNs)
{
    if (m_finished)
        return;
    m_finished = true;
    // Processes of the program still running when the session ends (ones that left the launched process's
    // tree, or that ignored the end): what they hold now is what they held at the session's end.
    for (uint64_t image : std::vector<uint64_t>(m_openImages))
        onImageEnd(image, 0);
    record(m_heap.takeAllocated(), realNs, true, false);
    record(m_heap.leaks(), realNs, false, true);
}

std::shared_ptr<const MemorySummary> MemorySession::summary() const
{
    auto s = std::make_shared<MemorySummary>();
    const HeapTracker::Counters &heap = m_heap.counters();
    const RingCounters rings = m_rings.counters();
    s->interval = m_interval;
    // The totals are the hooks' own counts (exact); what the profile holds per stack is the samples' estimate.
    s->allocatedExact = m_totalAllocations > 0;
    s->allocatedBytes = s->allocatedExact ? static_cast<double>(m_totalBytes) : heap.allocatedBytes;
    s->allocatedObjects = s->allocatedExact ? static_cast<double>(m_totalAllocations) : heap.allocatedObjects;
    s->sampledAllocatedBytes = heap.allocatedBytes;
    s->sampledAllocatedObjects = heap.allocatedObjects;

    s->leakedBytes = heap.leakedBytes;
    s->leakedObjects = heap.leakedObjects;
    const HeapTracker::LiveEstimate live = m_heap.live(m_rings.heapLive());
    s->liveBytes = live.bytes;
    // Sampling: the largest calibrated live heap of the polls and flushes; exact mode: the largest of every record.
    s->highWaterBytes = m_interval > 1 ? std::max(m_highWater, live.bytes) : heap.highWaterBytes;
    s->allocatedBytesMargin = s->allocatedExact ? 0 : samplingMargin(heap.allocatedBytesVariance);
    s->sampledAllocatedBytesMargin = samplingMargin(heap.allocatedBytesVariance);
    s->liveBytesMargin = samplingMargin(live.variance);
    s->leakedBytesMargin = samplingMargin(heap.leakedBytesVariance);
    s->samples = rings.allocations;
    s->frees = rings.frees;
    s->unknownFrees = heap.unknownFrees;
    s->allocsDropped = rings.allocsDropped;
    s->bytesDropped = rings.bytesDropped;
    s->waitNs = rings.waitNs;
    s->processes = rings.rings;
    s->problems = m_problems;
    s->notes = pythonMemoryNotes(rings.pythonAllocators);
    for (std::string &line : moduleEscapes())
        s->problems.push_back(std::move(line));
    if (rings.problems & agent::ProblemDeepBind)
        s->problems.push_back("a library was opened with RTLD_DEEPBIND: its allocation functions bind to the C "
                              "library around the memory agent until the agent takes its tables over, right after it "
                              "is loaded (what it allocated before, in its initializers, is not profiled)");
    if (rings.problems & agent::ProblemStackCopy)
        s->problems.push_back("some allocation stacks could not be copied (their stacks end with the allocation)");
    if (rings.badRings)
        s->problems.push_back(std::to_string(rings.badRings) + " ring(s) of the memory agent were unreadable "
                                                               "(another version of Emberline's agent?)");
    // A process image the sampler saw start by exec whose agent never reported: its LD_PRELOAD was replaced (`env
    // LD_PRELOAD=... prog`), or it is set-user-ID or statically linked. Judged once its ring had time to appear.
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    std::vector<std::string> without;
    for (const auto &[pid, images] : m_processImages) {
        const size_t missing = images.execs.size() > images.agentImages ? images.execs.size() - images.agentImages : 0;
        if (missing == 0 || (!m_finished && now - images.execs.back().first < kRingGraceNs))
            continue;
        const std::string &name = images.execs.back().second;
        without.push_back((name.empty() ? std::string("a program") : name) + " (pid " + std::to_string(pid) + ")");
    }
    if (rings.ringFailures > 0)
        s->problems.push_back(std::to_string(rings.ringFailures) +
                              " process image(s) could not make the memory agent's ring (" + rings.ringFailure +
                              "): their memory is not profiled; the program ran on unharmed");
    if (rings.ringsNotReserved > 0)
        s->problems.push_back(std::to_string(rings.ringsNotReserved) + " memory ring(s) could not be reserved whole (" +
                              rings.ringNotReserved +
                              "): each wrote within what it had while the file system had "
                              "no room, and the samples that did not fit are counted as lost");
    if (!without.empty() && rings.rings > 0 && rings.ringFailures == 0) {
        std::string list;
        for (size_t i = 0; i < without.size() && i < 5; ++i)
            list += (i ? ", " : "") + without[i];
        if (without.size() > 5)
            list += " and " + std::to_string(without.size() - 5) + " more";
        s->problems.push_back(
            list + " ran without the memory agent: its memory is not profiled (its LD_PRELOAD was replaced, as "
                   "`env LD_PRELOAD=... program` does, or it is set-user-ID or statically linked)");
    }
    // The agent ran but nothing allocated through it: a runtime with a heap of its own (Go's), or a program that
    // allocates nothing. Said so, rather than leaving a profile of 0 B to puzzle over.
    if (m_finished && rings.rings > 0 && rings.allocations == 0 && m_totalAllocations == 0)
        s->problems.push_back(
            "the program made no allocation through malloc or operator new: a runtime with a heap of its own (Go's, "
            "a JVM's Java heap) allocates around the C library, where the memory agent cannot see it (Go's own heap "
            "profiles, from runtime/pprof, open in Emberline)");
    if (m_finished && rings.rings == 0 && rings.ringFailures == 0 && m_problems.empty())
        s->problems.push_back(
            "no process of the program loaded the memory agent (LD_PRELOAD was cleared, or the program is "
            "set-user-ID or statically linked): its memory is not profiled");
    return s;
}

std::vector<std::string> MemorySession::moduleEscapes() const
{
    const RingCounters rings = m_rings.counters();
    std::vector<std::string> lines;
    for (const RingCounters::Escaped &e : rings.escaped) {
        auto [it, added] = m_escapedFiles.try_emplace({e.pid, e.address});
        uint64_t start = 0;
        uint64_t end = 0;
        if (added || it->second.empty())
            findMapping(int(e.pid), e.address, start, end, &it->second);
        std::string module = it->second.empty() ? "a module at " + hexAddress(e.address) : it->second;
        std::string what = (e.kinds & (1u << 1)) && (e.kinds & (1u << 2)) ? "malloc and operator new"
                           : (e.kinds & (1u << 2))                        ? "operator new"
                                                                          : "malloc";
        std::string line = std::move(module);
        line.append(" (pid ").append(std::to_string(e.pid)).append(") binds ").append(what);
        line.append(" to an allocator other than the program's (opened with RTLD_DEEPBIND, or in a namespace of its "
                    "own): its tables are left alone, and that allocator's blocks escape the agent");
        lines.push_back(std::move(line));
    }
    if (rings.escapedUnlisted > 0)
        lines.push_back(std::to_string(rings.escapedUnlisted) +
                        " more module(s) bind their allocation functions elsewhere and escape the agent");
    for (const std::string &module : m_ownAllocators)
        lines.push_back(module + " brings its own allocator and calls it directly: its allocations escape the agent "
                                 "loaded into the running program (launch the program with Emberline to see them)");
    return lines;
}

} // namespace emberline::engine
