#include "engine/memory/heap_tracker.h"

#include "engine/memory/allocation_weight.h"

#include <algorithm>

namespace emberline::engine {

HeapTracker::HeapTracker(uint64_t interval) : m_interval(interval) {}

void HeapTracker::allocate(uint64_t image, uint32_t pid, uint64_t address, uint64_t size, uint32_t stack)
{
    const AllocationWeight w = weighAllocation(size, m_interval);
    ++m_counters.allocations;
    m_counters.allocatedObjects += w.count;
    m_counters.allocatedBytes += w.bytes;
    StackMemory &allocated = m_allocated[stackKey(pid, stack)];
    allocated.pid = pid;
    allocated.stack = stack;
    allocated.objects += w.count;
    allocated.bytes += w.bytes;

    auto [it, inserted] = m_live.try_emplace(Key{image, address});
    if (!inserted) {
        // Allocated again while live: the block's free was never seen (an allocator that frees around the hooks).
        ++m_counters.reallocated;
        m_counters.liveBytes -= it->second.bytes;
    }
    it->second = Block{pid, stack, w.count, w.bytes};
    m_counters.liveBytes += w.bytes;
    m_counters.peakLiveBytes = std::max(m_counters.peakLiveBytes, m_counters.liveBytes);
}

void HeapTracker::free(uint64_t image, uint64_t address)
{
    const auto it = m_live.find(Key{image, address});
    if (it == m_live.end()) {
        ++m_counters.unknownFrees;
        return;
    }
    ++m_counters.frees;
    m_counters.liveBytes -= it->second.bytes;
    m_live.erase(it);
}

void HeapTracker::endImage(uint64_t image)
{
    ++m_counters.imagesEnded;
    for (auto it = m_live.begin(); it != m_live.end();) {
        if (it->first.image != image) {
            ++it;
            continue;
        }
        const Block &b = it->second;
        StackMemory &leak = m_leaks[stackKey(b.pid, b.stack)];
        leak.pid = b.pid;
        leak.stack = b.stack;
        leak.objects += b.objects;
        leak.bytes += b.bytes;
        m_counters.leakedObjects += b.objects;
        m_counters.leakedBytes += b.bytes;
        m_counters.liveBytes -= b.bytes;
        it = m_live.erase(it);
    }
}

std::vector<HeapTracker::StackMemory> HeapTracker::listed(const std::unordered_map<uint64_t, StackMemory> &byStack)
{
    std::vector<StackMemory> out;
    out.reserve(byStack.size());
    for (const auto &[key, memory] : byStack)
        out.push_back(memory);
    std::sort(out.begin(), out.end(), [](const StackMemory &a, const StackMemory &b) {
        return a.pid != b.pid ? a.pid < b.pid : a.stack < b.stack;
    });
    return out;
}

std::vector<HeapTracker::StackMemory> HeapTracker::takeAllocated()
{
    std::vector<StackMemory> out = listed(m_allocated);
    m_allocated.clear();
    return out;
}

std::vector<HeapTracker::StackMemory> HeapTracker::inUse() const
{
    std::unordered_map<uint64_t, StackMemory> byStack;
    for (const auto &[key, b] : m_live) {
        StackMemory &m = byStack[stackKey(b.pid, b.stack)];
        m.pid = b.pid;
        m.stack = b.stack;
        m.objects += b.objects;
        m.bytes += b.bytes;
    }
    return listed(byStack);
}

std::vector<HeapTracker::StackMemory> HeapTracker::leaks() const
{
    return listed(m_leaks);
}

} // namespace emberline::engine
