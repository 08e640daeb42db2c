#include "engine/live/live_snapshot.h"

#include <algorithm>

namespace emberline::engine {

std::string LiveThread::displayName() const
{
    if (name.empty())
        return "thread " + std::to_string(tid);
    return name + " (" + std::to_string(tid) + ")";
}

size_t LiveSnapshot::timelineSamples() const
{
    size_t n = 0;
    for (const auto &chunk : chunks)
        n += chunk->entryCount();
    return n;
}

size_t LiveSnapshot::timelineBytes() const
{
    size_t n = 0;
    for (const auto &chunk : chunks)
        n += chunk->memoryBytes();
    return n;
}

namespace {

const LiveSampleColumns &noColumns()
{
    static const LiveSampleColumns kNone;
    return kNone;
}

} // namespace

const ChunkedColumn<uint32_t> &LiveSnapshot::sampleThread() const
{
    return (columns ? *columns : noColumns()).thread;
}

int64_t LiveSnapshot::sampleCpuNs(size_t i) const
{
    if (!profile || cpuType < 0 || i >= profile->sampleCount())
        return 0;
    return profile->sampleValues(i)[static_cast<size_t>(cpuType)];
}

std::shared_ptr<const std::vector<int64_t>> LiveSnapshot::sharedStackValues(int sampleType) const
{
    if (!columns || sampleType < 0 || static_cast<size_t>(sampleType) >= columns->stackValues.size())
        return nullptr;
    return columns->stackValues[static_cast<size_t>(sampleType)];
}

std::span<const int64_t> LiveSnapshot::stackValues(int sampleType) const
{
    const auto values = sharedStackValues(sampleType);
    return values ? std::span<const int64_t>(*values) : std::span<const int64_t>{};
}

int LiveSnapshot::memoryColumn(int sampleType) const
{
    const auto it = std::find(memoryTypes.begin(), memoryTypes.end(), sampleType);
    return it == memoryTypes.end() ? -1 : static_cast<int>(it - memoryTypes.begin());
}

std::vector<uint32_t> LiveSnapshot::stacksChangedSince(uint32_t from) const
{
    std::vector<uint32_t> stacks;
    if (!profile || from >= chunks.size())
        return stacks;
    const auto add = [&](uint32_t agg) {
        if (agg < profile->sampleCount())
            stacks.push_back(profile->sampleStackId(agg));
    };
    for (size_t c = from; c < chunks.size(); ++c) {
        chunks[c]->forEach([&](int64_t, uint32_t agg) { add(agg); });
        chunks[c]->memory.forEach([&](uint32_t agg, std::span<const int64_t>) { add(agg); });
    }
    if (from > 0)
        chunks[from - 1]->memory.forEach([&](uint32_t agg, std::span<const int64_t>) { add(agg); });
    std::sort(stacks.begin(), stacks.end());
    stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
    return stacks;
}

} // namespace emberline::engine
