#include "engine/analysis/heap_summary.h"

#include "engine/agent/agent_protocol.h"

#include "engine/model/sample_filter.h"
#include "engine/model/sample_kinds.h"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

namespace emberline::engine {

int memoryTypeIndex(const Profile &profile, std::string_view dashed, std::string_view underscored)
{
    const int i = profile.sampleTypeIndex(dashed);
    return i >= 0 ? i : profile.sampleTypeIndex(underscored);
}

int inUseBytesColumn(const LiveSnapshot &snapshot)
{
    return snapshot.profile ? snapshot.memoryColumn(memoryTypeIndex(*snapshot.profile, "inuse-space", "inuse_space"))
                            : -1;
}

namespace {

std::vector<int64_t> perStackOf(const Profile &profile, int type, const std::atomic<bool> *cancel)
{
    return type >= 0 ? valuesPerStack(profile, type, {}, cancel) : std::vector<int64_t>{};
}

int64_t at(const std::vector<int64_t> &values, size_t i)
{
    return i < values.size() ? values[i] : 0;
}

int64_t sum(const std::vector<int64_t> &values)
{
    int64_t total = 0;
    for (const int64_t v : values)
        total += v;
    return total;
}

// Per function (by the frame each stack is blamed on), the totals every list shows, and the stacks blamed on it.
class Blame {
public:
    Blame(const Profile &profile, const FrameTable &frames) : m_profile(profile), m_frames(frames) {}

    // The leaf-most frame of a stack that is not an allocator's (its leaf frame when every frame is one).
    uint32_t frameOf(uint32_t stack)
    {
        const auto locations = m_profile.stacks().stack(stack);
        uint32_t leaf = kNoIndex;
        for (const uint32_t location : locations) {
            for (const uint32_t frame : m_frames.locationFrames(location)) {
                leaf = leaf == kNoIndex ? frame : leaf;
                if (!allocator(frame))
                    return frame;
            }
        }
        return leaf;
    }
    // The blamed frame's name and its callers' outward, from a stack.
    std::vector<std::string> path(uint32_t stack, uint32_t blamed) const
    {
        std::vector<std::string> names;
        bool found = false;
        for (const uint32_t location : m_profile.stacks().stack(stack)) {
            for (const uint32_t frame : m_frames.locationFrames(location)) {
                found = found || frame == blamed;
                if (found && names.size() < HeapSummaryRow::kPathFrames)
                    names.push_back(m_frames.frame(frame).name);
            }
        }
        return names;
    }

private:
    bool allocator(uint32_t frame)
    {
        if (m_allocator.size() < m_frames.size())
            m_allocator.assign(m_frames.size(), -1);
        int8_t &known = m_allocator[frame];
        if (known < 0)
            known = isAllocatorFrame(m_frames.frame(frame)) ? 1 : 0;
        return known == 1;
    }

    const Profile &m_profile;
    const FrameTable &m_frames;
    std::vector<int8_t> m_allocator; // per frame: -1 not looked at yet
};

struct FunctionTotals {
    int64_t allocObjects = 0;
    int64_t allocBytes = 0;
    int64_t inuseObjects = 0;
    int64_t inuseBytes = 0;
    int64_t peakObjects = 0;
    int64_t peakBytes = 0;
    size_t stacks = 0;
};

} // namespace

bool hasMemoryTypes(const Profile &profile)
{
    for (const ValueType &type : profile.sampleTypes()) {
        if (isMemorySampleType(profile.str(type.type)))
            return true;
    }
    return false;
}

bool tellsLifetimes(const Profile &profile)
{
    return std::any_of(profile.comments().begin(), profile.comments().end(),
                       [&](StringId c) { return profile.str(c) == kLifetimesComment; });
}

std::vector<uint8_t> shortLivedSamples(const Profile &profile)
{
    std::vector<uint8_t> mask(profile.sampleCount(), 0);
    const StringId key = profile.findString(kLifetimeLabel);
    const StringId value = profile.findString(kShortLivedValue);
    if (key == kNoIndex || value == kNoIndex)
        return mask;
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        for (const Label &l : profile.sampleLabels(i)) {
            if (l.key == key && l.str == value)
                mask[i] = 1;
        }
    }
    return mask;
}

std::vector<int8_t> sampleSizeClasses(const Profile &profile)
{
    std::vector<int8_t> classes(profile.sampleCount(), -1);
    const StringId key = profile.findString(kBlockBytesLabel);
    if (key == kNoIndex)
        return classes;
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        for (const Label &l : profile.sampleLabels(i)) {
            if (l.key == key && l.str == 0 && l.num >= 0)
                classes[i] = static_cast<int8_t>(blockSizeClass(static_cast<uint64_t>(l.num)));
        }
    }
    return classes;
}

SampleValues valuesOf(const Profile &profile, const std::atomic<bool> *cancel)
{
    return [&profile, cancel](int type, const std::function<void(uint32_t, int64_t)> &visit) {
        if (type < 0 || static_cast<size_t>(type) >= profile.sampleTypes().size())
            return;
        for (size_t i = 0; i < profile.sampleCount(); ++i) {
            if ((i & 0xffff) == 0 && cancel && cancel->load(std::memory_order_relaxed))
                return;
            if (const int64_t v = profile.sampleValues(i)[static_cast<size_t>(type)]; v != 0)
                visit(static_cast<uint32_t>(i), v);
        }
    };
}

std::vector<SizeClassRow> allocationsBySize(const Profile &profile, const SampleValues &values,
                                            const std::vector<uint8_t> &shortLived)
{
    const int objectsType = memoryTypeIndex(profile, "alloc-samples", "alloc_objects");
    const int bytesType = memoryTypeIndex(profile, "alloc-space", "alloc_space");
    if (objectsType < 0 && bytesType < 0)
        return {};
    const std::vector<int8_t> classes = sampleSizeClasses(profile);
    std::array<SizeClassRow, 65> byClass{};
    const bool lifetimes = shortLived.size() == classes.size();
    values(objectsType, [&](uint32_t sample, int64_t value) {
        if (sample >= classes.size() || classes[sample] < 0)
            return;
        SizeClassRow &row = byClass[static_cast<uint8_t>(classes[sample])];
        row.allocObjects += value;
        if (lifetimes && shortLived[sample] != 0)
            row.shortLivedObjects += value;
    });
    values(bytesType, [&](uint32_t sample, int64_t value) {
        if (sample < classes.size() && classes[sample] >= 0)
            byClass[static_cast<uint8_t>(classes[sample])].allocBytes += value;
    });
    std::vector<SizeClassRow> rows;
    for (size_t c = 0; c < byClass.size(); ++c) {
        if (byClass[c].allocObjects == 0 && byClass[c].allocBytes == 0)
            continue;
        rows.push_back(byClass[c]);
        rows.back().sizeClass = static_cast<uint8_t>(c);
    }
    return rows;
}

MemoryByStack memoryByStack(const Profile &profile, const std::atomic<bool> *cancel)
{
    MemoryByStack out;
    const int allocObjects = memoryTypeIndex(profile, "alloc-samples", "alloc_objects");
    out.allocObjects = perStackOf(profile, allocObjects, cancel);
    out.allocBytes = perStackOf(profile, memoryTypeIndex(profile, "alloc-space", "alloc_space"), cancel);
    out.inuseObjects = perStackOf(profile, memoryTypeIndex(profile, "inuse-objects", "inuse_objects"), cancel);
    out.inuseBytes = perStackOf(profile, memoryTypeIndex(profile, "inuse-space", "inuse_space"), cancel);
    out.lifetimes = allocObjects >= 0 && tellsLifetimes(profile);
    const std::vector<uint8_t> shortLived = out.lifetimes ? shortLivedSamples(profile) : std::vector<uint8_t>{};
    if (out.lifetimes)
        out.shortLivedObjects = valuesPerStack(profile, allocObjects, shortLived, cancel);
    out.sizes = allocationsBySize(profile, valuesOf(profile, cancel), shortLived);
    return out;
}

std::optional<FullestFlush> fullestFlush(const LiveSnapshot &snapshot)
{
    if (!snapshot.profile)
        return std::nullopt;
    const Profile &profile = *snapshot.profile;
    const int bytesColumn = inUseBytesColumn(snapshot);
    const int objectsColumn = snapshot.memoryColumn(memoryTypeIndex(profile, "inuse-objects", "inuse_objects"));
    if (bytesColumn < 0)
        return std::nullopt;
    const TimelineChunk *peak = nullptr;
    int64_t peakBytes = -1;
    for (const auto &chunk : snapshot.chunks) {
        const int64_t bytes = at(chunk->memory.totals(), static_cast<size_t>(bytesColumn));
        if (bytes > peakBytes) { // the first of equal peaks
            peakBytes = bytes;
            peak = chunk.get();
        }
    }
    if (!peak)
        return std::nullopt;
    FullestFlush out;
    out.timeNs = peak->endNs;
    out.flushSequence = peak->sequence;
    out.bytes = peakBytes;
    out.inuseBytes.assign(profile.stacks().size(), 0);
    out.inuseObjects.assign(profile.stacks().size(), 0);
    peak->memory.forEach([&](uint32_t sample, std::span<const int64_t> values) {
        if (sample >= profile.sampleCount())
            return;
        const uint32_t stack = profile.sampleStackId(sample);
        out.inuseBytes[stack] += values[static_cast<size_t>(bytesColumn)];
        if (objectsColumn >= 0)
            out.inuseObjects[stack] += values[static_cast<size_t>(objectsColumn)];
    });
    return out;
}

bool isAllocatorFrame(const Frame &frame)
{
    if (agent::isAgentFileName(frame.module.data(), frame.module.size()))
        return true;
    std::string_view name = frame.name;
    name = name.substr(0, name.find('@')); // malloc@@GLIBC_2.2.5
    static constexpr std::array<std::string_view, 24> kAllocators{"malloc",
                                                                  "calloc",
                                                                  "realloc",
                                                                  "reallocarray",
                                                                  "posix_memalign",
                                                                  "aligned_alloc",
                                                                  "memalign",
                                                                  "valloc",
                                                                  "pvalloc",
                                                                  "__libc_malloc",
                                                                  "__libc_calloc",
                                                                  "__libc_realloc",
                                                                  "__libc_memalign",
                                                                  "__libc_valloc",
                                                                  "__libc_pvalloc",
                                                                  "__posix_memalign",
                                                                  "_int_malloc",
                                                                  "_int_realloc",
                                                                  "runtime.mallocgc",
                                                                  "runtime.newobject",
                                                                  "runtime.makeslice",
                                                                  "runtime.growslice",
                                                                  "runtime.makemap",
                                                                  "runtime.makemap_small"};
    if (std::find(kAllocators.begin(), kAllocators.end(), name) != kAllocators.end())
        return true;
    // operator new and new[] (with nothrow or alignment), demangled or not; glibc's internal aliases.
    return name.starts_with("operator new") || name.starts_with("_Znw") || name.starts_with("_Zna") ||
           name.starts_with("__GI___libc_");
}

HeapSummary summarizeHeap(const Profile &profile, const FrameTable &frames, const MemoryByStack &values,
                          const FullestFlush *peak, size_t top)
{
    HeapSummary out;
    out.allocObjects = sum(values.allocObjects);
    out.allocBytes = sum(values.allocBytes);
    out.inuseObjects = sum(values.inuseObjects);
    out.inuseBytes = sum(values.inuseBytes);
    if (peak) {
        out.fullestFlush = FullestFlush{peak->timeNs, peak->flushSequence, peak->bytes, {}, {}};
    }
    const std::vector<int64_t> noValues;
    const std::vector<int64_t> &peakBytes = peak ? peak->inuseBytes : noValues;
    const std::vector<int64_t> &peakObjects = peak ? peak->inuseObjects : noValues;

    // Each stack with any memory is blamed on one function, once.
    Blame blame(profile, frames);
    std::vector<uint32_t> blamed(profile.stacks().size(), kNoIndex);
    std::vector<FunctionTotals> functions(frames.size());
    for (uint32_t s = 0; s < blamed.size(); ++s) {
        const int64_t any = at(values.allocObjects, s) | at(values.allocBytes, s) | at(values.inuseObjects, s) |
                            at(values.inuseBytes, s) | at(peakBytes, s) | at(peakObjects, s);
        if (any == 0)
            continue;
        const uint32_t frame = blame.frameOf(s);
        if (frame == kNoIndex)
            continue;
        blamed[s] = frame;
        FunctionTotals &f = functions[frame];
        f.allocObjects += at(values.allocObjects, s);
        f.allocBytes += at(values.allocBytes, s);
        f.inuseObjects += at(values.inuseObjects, s);
        f.inuseBytes += at(values.inuseBytes, s);
        f.peakObjects += at(peakObjects, s);
        f.peakBytes += at(peakBytes, s);
        f.stacks++;
    }

    // One list: per function the sum of `valueOf` over its stacks, the top ones, each with its largest stack.
    const auto rank = [&](const std::function<int64_t(uint32_t)> &valueOf, bool atPeak) {
        std::vector<int64_t> value(frames.size(), 0);
        std::vector<uint32_t> largest(frames.size(), kNoIndex);
        for (uint32_t s = 0; s < blamed.size(); ++s) {
            const uint32_t frame = blamed[s];
            const int64_t v = frame == kNoIndex ? 0 : valueOf(s);
            if (v <= 0)
                continue;
            value[frame] += v;
            if (largest[frame] == kNoIndex || v > valueOf(largest[frame]))
                largest[frame] = s;
        }
        std::vector<uint32_t> order;
        for (uint32_t f = 0; f < frames.size(); ++f) {
            if (value[f] > 0)
                order.push_back(f);
        }
        const size_t n = std::min(top, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                          [&](uint32_t a, uint32_t b) { return value[a] != value[b] ? value[a] > value[b] : a < b; });
        std::vector<HeapSummaryRow> rows;
        for (size_t i = 0; i < n; ++i) {
            const uint32_t f = order[i];
            const FunctionTotals &t = functions[f];
            HeapSummaryRow row;
            row.function = frames.frame(f).name;
            row.value = value[f];
            row.allocObjects = t.allocObjects;
            row.allocBytes = t.allocBytes;
            row.inuseObjects = atPeak ? t.peakObjects : t.inuseObjects;
            row.inuseBytes = atPeak ? t.peakBytes : t.inuseBytes;
            row.stacks = t.stacks;
            row.path = blame.path(largest[f], f);
            rows.push_back(std::move(row));
        }
        return rows;
    };
    if (peak)
        out.peak = rank([&](uint32_t s) { return at(peakBytes, s); }, true);
    out.leaks = rank([&](uint32_t s) { return at(values.inuseBytes, s); }, false);
    out.allocations = rank([&](uint32_t s) { return at(values.allocObjects, s); }, false);
    out.temporaryByLifetime = values.lifetimes;
    out.sizes = values.sizes;
    if (values.lifetimes)
        out.temporary = rank([&](uint32_t s) { return at(values.shortLivedObjects, s); }, false);
    else
        out.temporary = rank(
            [&](uint32_t s) { return std::max<int64_t>(at(values.allocObjects, s) - at(values.inuseObjects, s), 0); },
            false);
    return out;
}

std::vector<FunctionOverTime> inUseOverFlushes(const LiveSnapshot &snapshot, const FrameTable &frames,
                                               const std::vector<const TimelineChunk *> &flushes,
                                               const std::vector<std::string> &functions,
                                               const std::atomic<bool> *cancel)
{
    const int column = inUseBytesColumn(snapshot);
    if (column < 0 || !snapshot.profile || functions.empty())
        return {};
    const Profile &profile = *snapshot.profile;
    std::vector<FunctionOverTime> out(functions.size());
    for (size_t i = 0; i < functions.size(); ++i)
        out[i].function = functions[i];
    // Per stack, the series it adds to (-1: none; -2: not blamed yet).
    std::vector<int> seriesOf(profile.stacks().size(), -2);
    Blame blame(profile, frames);
    for (const TimelineChunk *flush : flushes) {
        if (cancel && cancel->load(std::memory_order_relaxed))
            return {};
        std::vector<int64_t> bytes(functions.size(), 0);
        flush->memory.forEach([&](uint32_t sample, std::span<const int64_t> values) {
            if (sample >= profile.sampleCount())
                return;
            const uint32_t stack = profile.sampleStackId(sample);
            int &series = seriesOf[stack];
            if (series == -2) {
                const uint32_t frame = blame.frameOf(stack);
                const auto it = frame == kNoIndex
                                    ? functions.end()
                                    : std::find(functions.begin(), functions.end(), frames.frame(frame).name);
                series = it == functions.end() ? -1 : static_cast<int>(it - functions.begin());
            }
            if (series >= 0)
                bytes[static_cast<size_t>(series)] += values[static_cast<size_t>(column)];
        });
        for (size_t i = 0; i < functions.size(); ++i)
            out[i].points.emplace_back(flush->endNs, bytes[i]);
    }
    return out;
}

} // namespace emberline::engine
