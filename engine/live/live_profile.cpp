#include "engine/live/live_profile.h"

#include "engine/common/logging.h"
#include "engine/common/vector_room.h"
#include "engine/model/sample_kinds.h"

#include <algorithm>

namespace emberline::engine {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;

struct SampleKeys {
    StringId tid = kNoIndex;
    StringId name = kNoIndex;
    StringId time = kNoIndex;
};

struct SampleLabels {
    int64_t tid = 0;
    std::string_view name;
    int64_t timeNs = 0;
};

SampleLabels readLabels(const Profile &profile, size_t i, const SampleKeys &keys)
{
    SampleLabels out;
    for (const Label &l : profile.sampleLabels(i)) {
        if (l.key == keys.tid && l.str == 0)
            out.tid = l.num;
        else if (l.key == keys.name && l.str != 0)
            out.name = profile.str(l.str);
        else if (l.key == keys.time && l.str == 0)
            out.timeNs = l.num;
    }
    return out;
}

} // namespace

namespace {

ProfileMerger::Options mergeOptions()
{
    ProfileMerger::Options o;
    o.aggregate = true;
    // The timestamps live in the timeline; the thread's name in its LiveThread (the id tells the thread).
    o.dropLabels = {"end_timestamp_ns", "thread name"};
    o.locationsByFunction = true;
    o.latestSnapshots = true; // in-use memory: the newest flush's snapshot, not a sum of every flush's
    return o;
}

} // namespace

LiveProfile::LiveProfile() : m_merger(mergeOptions()) {}

LiveProfile::~LiveProfile() = default;

uint32_t LiveProfile::threadOrdinal(int64_t tid, const std::string &name)
{
    auto [it, inserted] = m_threadByTid.try_emplace(tid, static_cast<uint32_t>(m_threads.size()));
    if (inserted)
        m_threads.push_back(LiveThread{tid, name, 0});
    else if (!name.empty())
        m_threads[it->second].name = name; // threads name themselves after they start: the latest name wins
    return it->second;
}

Status LiveProfile::add(const Flush &flush)
{
    return add(std::make_shared<const Flush>(flush));
}

void LiveProfile::findMemoryTypes(const Profile &profile)
{
    const auto &types = profile.sampleTypes();
    m_memoryTypes.clear();
    m_memorySnapshots.clear();
    m_isSnapshot.assign(types.size(), 0);
    for (size_t t = 0; t < types.size(); ++t) {
        const std::string &name = profile.str(types[t].type);
        if (!isMemorySampleType(name))
            continue;
        m_memoryTypes.push_back(static_cast<int>(t));
        m_memorySnapshots.push_back(isSnapshotSampleType(name) ? 1 : 0);
        m_isSnapshot[t] = m_memorySnapshots.back();
    }
}

// A sample with memory values and nothing else: a memory sample, kept per flush rather than on the timeline.
bool LiveProfile::isMemorySample(std::span<const int64_t> values) const
{
    bool memory = false;
    size_t next = 0; // the next memory type, in m_memoryTypes
    for (size_t t = 0; t < values.size(); ++t) {
        const bool memoryType = next < m_memoryTypes.size() && static_cast<size_t>(m_memoryTypes[next]) == t;
        next += memoryType ? 1 : 0;
        if (values[t] == 0)
            continue;
        if (!memoryType)
            return false;
        memory = true;
    }
    return memory;
}

void LiveProfile::addToColumns(const Profile &taken, const std::vector<uint32_t> &destination,
                               const std::vector<uint32_t> &threadOf, const std::vector<uint32_t> &entries)
{
    const Profile &merged = m_merger.result();
    LiveSampleColumns &columns = m_columns;
    const size_t types = taken.sampleTypes().size();
    if (m_stackValues.size() < types)
        m_stackValues.resize(types);
    const size_t stacks = merged.stacks().size();
    std::vector<int64_t *> perType(types);
    for (size_t t = 0; t < types; ++t) {
        std::shared_ptr<std::vector<int64_t>> &values = m_stackValues[t];
        const size_t size = std::max(stacks, values ? values->size() : 0);
        if (!values || !chunked::exclusive(values)) {
            auto copy = std::make_shared<std::vector<int64_t>>();
            reserveWithRoom(*copy, size);
            if (values)
                copy->assign(values->begin(), values->end());
            values = std::move(copy);
        }
        reserveWithRoom(*values, size);
        values->resize(size, 0);
        perType[t] = values->data();
    }
    // A snapshot type's values are replaced: what the previous flush's snapshot held goes first.
    for (size_t t = 0; t < types && t < m_isSnapshot.size(); ++t) {
        if (m_isSnapshot[t]) {
            for (const uint32_t stack : m_snapshotStacks)
                perType[t][stack] = 0;
        }
    }
    m_snapshotStacks.clear();
    for (size_t i = 0; i < destination.size() && i < taken.sampleCount(); ++i) {
        const uint32_t stack = merged.sampleStackId(destination[i]);
        const auto values = taken.sampleValues(i);
        bool snapshot = false;
        for (size_t t = 0; t < types && t < values.size(); ++t) {
            perType[t][stack] += values[t];
            snapshot = snapshot || (values[t] != 0 && t < m_isSnapshot.size() && m_isSnapshot[t]);
        }
        if (snapshot)
            m_snapshotStacks.push_back(stack);
    }

    // Samples new to the aggregate take their thread now; a sample's thread never changes (it is in its key).
    const size_t aggregated = merged.sampleCount();
    std::vector<uint32_t> newThread(aggregated - columns.thread.rows(), kNoIndex);
    for (size_t i = 0; i < destination.size(); ++i) {
        if (destination[i] >= columns.thread.rows())
            newThread[destination[i] - columns.thread.rows()] = threadOf[i];
    }
    for (uint32_t t : newThread)
        columns.thread.push_back(t);
    reserveWithRoom(m_hits, aggregated);
    m_hits.resize(aggregated, 0);
    for (const uint32_t i : entries)
        m_hits[destination[i]]++;
}

Status LiveProfile::add(const std::shared_ptr<const Flush> &flushPtr)
{
    if (!flushPtr || !flushPtr->profile)
        return makeError(Error::Code::Invalid, "a flush without a profile");
    const Flush &flush = *flushPtr;
    const Profile &profile = *flush.profile;
    std::vector<uint32_t> destination;
    // A recorder's flush carries its session ids: what the aggregate has met before is found by id.
    const Status merged =
        flush.sessionIds ? m_merger.add(profile, *flush.sessionIds, &destination) : m_merger.add(profile, &destination);
    if (!merged)
        return merged.error();
    m_snapshot.reset();
    if (m_flushes == 0)
        findMemoryTypes(profile);

    const SampleKeys keys{profile.findString("thread id"), profile.findString("thread name"),
                          profile.findString("end_timestamp_ns")};
    const int cpuType = profile.sampleTypeIndex("cpu-time");
    auto chunk = std::make_shared<TimelineChunk>();
    chunk->sequence = flush.sequence;
    chunk->inUseBytesMargin = flush.inUseBytesMargin >= 0 ? flush.inUseBytesMargin : inUseMarginOf(*flush.profile);
    chunk->final = flush.final;
    chunk->startNs = flush.startNs;
    chunk->endNs = std::max(flush.endNs, flush.startNs);
    chunk->lost = flush.lost >= m_lastLost ? flush.lost - m_lastLost : flush.lost;
    std::string name;
    std::vector<uint32_t> threadOf(profile.sampleCount());
    // The samples that are timeline entries (all but memory samples), and their threads and CPU time.
    std::vector<uint32_t> entries, entryThread;
    std::vector<int64_t> entryCpu;
    entries.reserve(profile.sampleCount());
    SampleOverlayBuilder memory(m_memoryTypes);
    std::vector<int64_t> memoryValues(m_memoryTypes.size());
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        const SampleLabels labels = readLabels(profile, i, keys);
        name.assign(labels.name);
        const uint32_t thread = threadOrdinal(labels.tid, name);
        threadOf[i] = thread;
        const auto values = profile.sampleValues(i);
        if (!m_memoryTypes.empty()) {
            for (size_t c = 0; c < m_memoryTypes.size(); ++c)
                memoryValues[c] = values[static_cast<size_t>(m_memoryTypes[c])];
            memory.add(destination[i], memoryValues);
            if (isMemorySample(values))
                continue;
        }
        m_threads[thread].hits++;
        entries.push_back(static_cast<uint32_t>(i));
        entryThread.push_back(thread);
        entryCpu.push_back(cpuType >= 0 ? values[static_cast<size_t>(cpuType)] : 0);
        const int64_t time = labels.timeNs != 0 ? labels.timeNs : chunk->endNs;
        const int64_t offset = std::clamp<int64_t>((time - chunk->startNs) / kNsPerMs, 0, UINT16_MAX);
        chunk->append(static_cast<uint16_t>(offset), destination[i]);
    }
    if (!m_memoryTypes.empty())
        chunk->memory = FlushMemory(memory.finish());
    if (m_flushes == 0)
        m_startNs = flush.startNs;
    m_endNs = std::max(m_endNs, chunk->endNs);
    m_lastLost = flush.lost;
    chunk->finish();
    addBins(*chunk, entryThread, entryCpu);
    chunk->samples = chunk->entryCount(); // what this flush holds, whatever the flush's counters mean
    m_chunks.push_back(std::move(chunk));
    const std::vector<int64_t> flushTotals = profile.totals();
    m_totals.resize(std::max(m_totals.size(), flushTotals.size()), 0);
    for (size_t t = 0; t < flushTotals.size(); ++t) {
        const bool snapshot = t < m_isSnapshot.size() && m_isSnapshot[t];
        m_totals[t] = snapshot ? flushTotals[t] : m_totals[t] + flushTotals[t];
    }
    ++m_flushes;
    addToColumns(profile, destination, threadOf, entries);
    return Ok{};
}

void LiveProfile::addBins(TimelineChunk &chunk, const std::vector<uint32_t> &threadOf,
                          const std::vector<int64_t> &cpuOf) const
{
    constexpr int64_t bin = TimelineChunk::kActivityBinNs;
    const auto binOf = [&](int64_t t) { return static_cast<size_t>(std::max<int64_t>(t - m_startNs, 0) / bin); };
    chunk.firstBin = binOf(chunk.startNs);
    chunk.binCount = binOf(chunk.endNs) - chunk.firstBin + 1;
    chunk.binThreads = m_threads.size();
    chunk.binCpuNs.assign(chunk.binThreads * chunk.binCount, 0);
    chunk.binSamples.assign(chunk.binThreads * chunk.binCount, 0);
    size_t i = 0; // the entries, in order
    chunk.forEach([&](int64_t timeNs, uint32_t) {
        const size_t b = std::min(binOf(timeNs) - std::min(binOf(timeNs), chunk.firstBin), chunk.binCount - 1);
        const size_t cell = threadOf[i] * chunk.binCount + b;
        chunk.binCpuNs[cell] += cpuOf[i];
        chunk.binSamples[cell]++;
        ++i;
    });
}

std::shared_ptr<const LiveSnapshot> LiveProfile::snapshot(int stackValuesType) const
{
    if (m_snapshot && m_snapshotType == stackValuesType)
        return m_snapshot;
    auto snap = std::make_shared<LiveSnapshot>();
    snap->flushes = m_flushes;
    snap->startNs = m_startNs;
    snap->endNs = m_endNs;
    // The copy shares the aggregate's sample chunks; the next flush copies those it changes.
    snap->profile = std::make_shared<const Profile>(m_merger.result());
    snap->cpuType = snap->profile->sampleTypeIndex("cpu-time");
    auto columns = std::make_shared<LiveSampleColumns>();
    columns->thread = m_columns.thread;
    const int kept =
        stackValuesType == kDefaultType ? std::max(0, snap->profile->defaultSampleTypeIndex()) : stackValuesType;
    columns->stackValues.resize(m_stackValues.size());
    for (size_t t = 0; t < m_stackValues.size(); ++t) {
        if (kept == kAllTypes || static_cast<size_t>(kept) == t)
            columns->stackValues[t] = m_stackValues[t];
    }
    snap->columns = std::move(columns);
    snap->totals = m_totals;
    snap->threads = m_threads;
    snap->chunks = m_chunks;
    snap->memoryTypes = m_memoryTypes;
    snap->memorySnapshots = m_memorySnapshots;
    m_snapshot = std::move(snap);
    m_snapshotType = stackValuesType;
    return m_snapshot;
}

} // namespace emberline::engine
