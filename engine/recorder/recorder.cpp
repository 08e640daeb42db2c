#include "engine/recorder/recorder.h"

#include "engine/model/thread_state.h"

#include <unordered_map>

namespace emberline::engine {
namespace {

const std::string kNoName;
constexpr uint32_t kNotInFlush = UINT32_MAX;

} // namespace

void Recorder::registerModule(const ModuleInfo &module)
{
    m_modules.try_emplace(module.id, module);
}

void Recorder::setThreadName(uint32_t pid, uint32_t tid, std::string name)
{
    m_threadNames[tid] = std::move(name);
    m_processOfThread[tid] = pid;
}

const std::string &Recorder::threadName(uint32_t tid) const
{
    auto it = m_threadNames.find(tid);
    return it == m_threadNames.end() ? kNoName : it->second;
}

uint32_t Recorder::internLocation(uint32_t moduleId, uint64_t address)
{
    const LocationKey key{moduleId, address};
    bool inserted = false;
    const uint32_t id = m_locationIds.findOrInsert(key, static_cast<uint32_t>(m_locations.size()), inserted);
    if (inserted)
        m_locations.push_back(key);
    return id;
}

void Recorder::record(int64_t timeNs, uint32_t pid, uint32_t tid, int64_t cpuNs, std::span<const uint32_t> locations)
{
    recordTimed(timeNs, pid, tid, cpuNs, cpuNs, static_cast<uint8_t>(ThreadState::Running), true, locations);
}

void Recorder::recordTimed(int64_t timeNs, uint32_t pid, uint32_t tid, int64_t cpuNs, int64_t wallNs, uint8_t state,
                           bool counted, std::span<const uint32_t> locations)
{
    m_samples.push_back(RecordedSample{timeNs, pid, tid, m_stacks.intern(locations), cpuNs, wallNs, state, counted});
    m_processOfThread.try_emplace(tid, pid);
    if (counted)
        ++m_totalSamples;
    m_totalCpuNs += cpuNs;
}

void Recorder::recordMemory(const MemorySample &sample, std::span<const uint32_t> locations)
{
    MemorySample &s = m_memory.emplace_back(sample);
    s.stackId = m_stacks.intern(locations);
    m_processOfThread.try_emplace(s.tid, s.pid);
}

void Recorder::countIncomplete(const std::string &module)
{
    ++m_incomplete;
    ++m_incompleteByModule[module];
}

uint32_t Recorder::packStack(FlushInput &flush, uint32_t id, std::unordered_map<uint32_t, uint32_t> &moduleMap)
{
    uint32_t &stack = m_flushStack[id];
    if (stack != kNotInFlush)
        return stack;
    m_frames.clear();
    for (uint32_t loc : m_stacks.stack(id)) {
        uint32_t &location = m_flushLocation[loc];
        if (location == kNotInFlush) {
            location = static_cast<uint32_t>(flush.locations.size());
            LocationKey key = m_locations[loc];
            if (key.moduleId >= kKernelSymbolsModule && moduleMap.try_emplace(key.moduleId, 0).second) {
                if (auto m = m_modules.find(key.moduleId); m != m_modules.end())
                    flush.modules.push_back(m->second);
            }
            flush.locations.push_back(key);
            flush.sessionLocations.push_back(loc);
        }
        m_frames.push_back(location);
    }
    stack = flush.stacks.intern(m_frames); // new: distinct session stacks have distinct frames
    flush.sessionStacks.push_back(id);
    return stack;
}

FlushInput Recorder::takeFlush(int64_t startNs, int64_t endNs, bool final)
{
    FlushInput flush;
    flush.startNs = startNs;
    flush.endNs = endNs;
    flush.final = final;
    flush.samples.swap(m_samples);
    m_samples.reserve(flush.samples.size());

    flush.memory.swap(m_memory);

    // Renumber the stacks, locations and modules this flush uses, and keep their session ids beside.
    m_flushStack.resize(m_stacks.size(), kNotInFlush);
    m_flushLocation.resize(m_locations.size(), kNotInFlush);
    std::unordered_map<uint32_t, uint32_t> moduleMap;
    auto packThread = [&](uint32_t pid, uint32_t tid) {
        if (auto name = m_threadNames.find(tid); name != m_threadNames.end())
            flush.threadNames.try_emplace(tid, name->second);
        flush.processOfThread.try_emplace(tid, pid);
    };
    for (RecordedSample &s : flush.samples) {
        s.stackId = packStack(flush, s.stackId, moduleMap);
        packThread(s.pid, s.tid);
    }
    for (MemorySample &s : flush.memory) {
        s.stackId = packStack(flush, s.stackId, moduleMap);
        packThread(s.pid, s.tid);
    }
    for (uint32_t id : flush.sessionStacks)
        m_flushStack[id] = kNotInFlush;
    for (uint32_t id : flush.sessionLocations)
        m_flushLocation[id] = kNotInFlush;
    flush.stackGeneration = m_stackGeneration;
    // Every stack id in use is in this flush now (the sample buffer is empty): the table may start over.
    if (m_stacks.size() > m_maxStacks) {
        m_stacks = StackTable();
        m_flushStack = {};
        ++m_stackGeneration;
    }
    flush.lost = m_lost;
    flush.incomplete = m_incomplete;
    flush.incompleteByModule = m_incompleteByModule;
    return flush;
}

} // namespace emberline::engine
