#include "engine/memory/ring_header_reads.h"

#include <algorithm>

namespace emberline::engine {

std::optional<int64_t> heapLiveOf(const agent::RingHeader &h)
{
    if (h.heapCounted.load(std::memory_order_acquire) == 0)
        return std::nullopt;
    // Each sum is written by one thread at a time with whole 8-byte stores; their differences add up modulo 2^64.
    uint64_t live = h.lateAllocated.load(std::memory_order_relaxed) - h.lateFreed.load(std::memory_order_relaxed);
    const agent::HeapSlot *slots = agent::heapSlots(&h);
    for (int i = 0; i < agent::kHeapSlots; ++i)
        live +=
            __atomic_load_n(&slots[i].allocated, __ATOMIC_RELAXED) - __atomic_load_n(&slots[i].freed, __ATOMIC_RELAXED);
    // Checked again after the sums: a thread that found no slot meanwhile made them partial.
    if (h.heapCounted.load(std::memory_order_acquire) == 0)
        return std::nullopt;
    return static_cast<int64_t>(live);
}

// The ring's bytes that unread records hold. The heads' count takes a lap's padding to the ring's end (never written)
// for bytes used: while the writers are a lap ahead, the unread part is the lap before's, up to where it ended
// (RingHeader::lapEnd), and the writers' part from the ring's start.
uint64_t unreadBytes(const agent::RingHeader &h)
{
    const uint64_t tail = h.tail.load(std::memory_order_acquire);
    const uint64_t head = h.head.load(std::memory_order_acquire);
    const uint64_t capacity = h.dataBytes;
    if (head <= tail)
        return 0;
    const uint64_t lap = tail / capacity;
    const int64_t dataEnd = agent::lapDataEnd(h.lapEnd.load(std::memory_order_acquire), lap);
    if (head / capacity != lap + 1 || dataEnd < 0)
        return head - tail;
    const uint64_t before = uint64_t(dataEnd) > tail % capacity ? uint64_t(dataEnd) - tail % capacity : 0;
    return std::min(head - tail, before + head % capacity);
}

void addHandlerTimes(RingCounters &c, const agent::RingHeader &h)
{
    for (int b = 0; b < agent::kHandlerBuckets; ++b) {
        c.cpuHandlerNs[size_t(b)] += h.cpuHandlerNs[b].load(std::memory_order_relaxed);
        c.pythonWalkNs[size_t(b)] += h.pythonWalkNs[b].load(std::memory_order_relaxed);
    }
    c.pythonWalkFrames += h.pythonWalkFrames.load(std::memory_order_relaxed);
    c.pythonRepeatChecks += h.pythonRepeatChecks.load(std::memory_order_relaxed);
    c.pythonRepeatDiffers += h.pythonRepeatDiffers.load(std::memory_order_relaxed);
}

void addPythonAllocators(RingCounters &c, const agent::RingHeader &h)
{
    const uint32_t state = h.pythonAllocators.load(std::memory_order_relaxed);
    if (state < c.pythonAllocators.size())
        ++c.pythonAllocators[state];
}

void addHeaderCounts(RingCounters &c, uint32_t pid, const agent::RingHeader &h)
{
    c.allocsDropped += h.allocsDropped.load(std::memory_order_relaxed);
    c.bytesDropped += h.bytesDropped.load(std::memory_order_relaxed);
    c.waitNs += h.waitNs.load(std::memory_order_relaxed);
    c.problems |= h.problems.load(std::memory_order_relaxed);
    c.cpuDropped += h.cpuDropped.load(std::memory_order_relaxed);
    addHandlerTimes(c, h);
    addEscaped(c, pid, h);
    addPythonAllocators(c, h);
}

void addEscaped(RingCounters &c, uint32_t pid, const agent::RingHeader &h)
{
    const uint32_t count = h.escapedModules.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count && i < uint32_t(agent::kEscapedModules); ++i)
        c.escaped.push_back(RingCounters::Escaped{pid, h.escaped[i].address, h.escaped[i].kinds});
    if (count > uint32_t(agent::kEscapedModules))
        c.escapedUnlisted += count - uint32_t(agent::kEscapedModules);
}

PythonFramesView pythonFrames(const agent::RecordHeader &record, const agent::PythonFields &fields, uint32_t body,
                              uint64_t image)
{
    PythonFramesView view;
    view.image = image;
    view.flags = fields.pythonFlags;
    const uint32_t bytes = uint32_t(fields.pythonFrames) * uint32_t(sizeof(agent::PythonFrame));
    if (fields.pythonFrames == 0 || fields.pythonFrames > agent::kMaxPythonFrames || bytes > body)
        return view;
    const auto *end = reinterpret_cast<const uint8_t *>(&record) + record.bytes;
    view.frames = std::span<const agent::PythonFrame>(reinterpret_cast<const agent::PythonFrame *>(end - bytes),
                                                      fields.pythonFrames);
    return view;
}

} // namespace emberline::engine
