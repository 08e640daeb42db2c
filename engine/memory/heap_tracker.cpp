#include "engine/memory/heap_tracker.h"

#include "engine/memory/allocation_weight.h"
#include "engine/model/sample_kinds.h"

#include <algorithm>
#include <tuple>

namespace emberline::engine {

HeapTracker::HeapTracker(uint64_t interval) : m_interval(interval) {}

void HeapTracker::add(BySite &sites, const Block &b, BySize bySize, bool shortLived)
{
    const uint8_t sizeClass = bySize == BySize::Yes ? b.sizeClass : 0;
    StackMemory &m = sites[SiteKey{b.pid, b.tid, b.stack, shortLived, sizeClass}];
    m.pid = b.pid;
    m.tid = b.tid;
    m.stack = b.stack;
    m.shortLived = shortLived;
    m.sizeClass = sizeClass;
    m.objects += b.objects;
    m.bytes += b.bytes;
}

void HeapTracker::forget(const Block &b)
{
    const auto image = m_images.find(b.image);
    if (image != m_images.end()) {
        ImageLive &i = image->second;
        if (--i.blocks == 0) {
            m_images.erase(image); // nothing live: no rounding error left behind
        } else {
            i.objects -= b.objects;
            i.bytes -= b.bytes;
            i.heapBytes -= b.heapBytes;
            i.variance -= b.variance;
        }
    }
    m_counters.liveBytes -= b.bytes;
    // A sum kept by adding and taking away: it never goes below 0, nor does it stay a rounding error above 0 once
    // nothing is live.
    m_counters.liveBytesVariance = m_live.size() <= 1 ? 0 : std::max(0.0, m_counters.liveBytesVariance - b.variance);
}

void HeapTracker::allocate(uint64_t image, uint32_t pid, uint32_t tid, uint64_t address, uint64_t size, uint32_t stack,
                           uint64_t timeNs, uint64_t heapBytes)
{
    const AllocationWeight w = weighAllocation(size, m_interval);
    ++m_counters.allocations;
    m_counters.allocatedObjects += w.count;
    m_counters.allocatedBytes += w.bytes;
    m_counters.allocatedBytesVariance += w.bytesVariance;
    const Block block{image,
                      pid,
                      tid,
                      stack,
                      w.count,
                      w.bytes,
                      w.bytesVariance,
                      timeNs,
                      m_flush,
                      blockSizeClass(size),
                      w.count * double(heapBytes)};
    add(m_allocated, block, BySize::Yes);

    bool inserted = false;
    Block &slot = m_live.tryEmplace(image, address, inserted);
    if (!inserted) {
        // Allocated again while live: the block's free was never seen (an allocator that frees around the hooks).
        ++m_counters.reallocated;
        forget(slot);
    }
    slot = block;
    ImageLive &i = m_images[image];
    ++i.blocks;
    i.objects += block.objects;
    i.bytes += block.bytes;
    i.heapBytes += block.heapBytes;
    i.variance += block.variance;
    m_counters.liveBytes += w.bytes;
    m_counters.liveBytesVariance += w.bytesVariance;
    m_counters.highWaterBytes = std::max(m_counters.highWaterBytes, m_counters.liveBytes);
}

void HeapTracker::free(uint64_t image, uint64_t address, uint64_t timeNs)
{
    const Block *found = m_live.find(image, address);
    if (!found) {
        ++m_counters.unknownFrees;
        return;
    }
    ++m_counters.frees;
    const Block b = *found;
    if (b.flush == m_flush && b.allocNs != 0 && timeNs >= b.allocNs && timeNs - b.allocNs < kShortLivedNs) {
        // Short-lived: its allocation moves to the flush's short-lived row of its site.
        const auto site = m_allocated.find(SiteKey{b.pid, b.tid, b.stack, false, b.sizeClass});
        if (site != m_allocated.end()) {
            ++m_counters.shortLived;
            site->second.objects -= b.objects;
            site->second.bytes -= b.bytes;
            add(m_allocated, b, BySize::Yes, true);
        }
    }
    forget(b);
    m_live.erase(image, address);
}

void HeapTracker::startImage(uint64_t image, uint32_t pid)
{
    m_imagePids[image] = pid;
}

double HeapTracker::unsampled(uint64_t image, int64_t exact) const
{
    if (m_interval <= 1 || !m_unsampledStack || exact <= 0 || m_images.count(image) != 0 ||
        m_imagePids.count(image) == 0)
        return 0;
    return double(exact);
}

void HeapTracker::endImage(uint64_t image, std::optional<int64_t> exactHeapBytes)
{
    ++m_counters.imagesEnded;
    ExactHeapBytes exact;
    if (exactHeapBytes)
        exact.emplace(image, *exactHeapBytes);
    if (const double bytes = exactHeapBytes ? unsampled(image, *exactHeapBytes) : 0; bytes > 0) {
        const uint32_t pid = m_imagePids[image];
        Block b;
        b.image = image;
        b.pid = pid;
        b.tid = pid;
        b.stack = *m_unsampledStack;
        b.bytes = bytes;
        add(m_leaks, b, BySize::Yes);
        m_counters.leakedBytes += bytes;
    }
    m_imagePids.erase(image);
    const double g = calibration(image, exact);
    m_counters.leakedBytesVariance += live(exact, image).variance;
    m_live.eraseImage(image, [&](uint64_t, const Block &live) {
        Block b = live;
        forget(b);
        b.objects *= g;
        b.bytes *= g;
        add(m_leaks, b, BySize::Yes);
        m_counters.leakedObjects += b.objects;
        m_counters.leakedBytes += b.bytes;
    });
}

double HeapTracker::calibration(uint64_t image, const ExactHeapBytes &exact) const
{
    if (m_interval <= 1)
        return 1; // every allocation recorded: nothing to calibrate
    const auto e = exact.find(image);
    const auto i = m_images.find(image);
    if (e == exact.end() || i == m_images.end() || e->second < 0 || i->second.heapBytes <= 0)
        return 1;
    return double(e->second) / i->second.heapBytes;
}

double HeapTracker::liveBytes(const ExactHeapBytes &exact) const
{
    double bytes = 0;
    for (const auto &[image, i] : m_images)
        bytes += calibration(image, exact) * i.bytes;
    for (const auto &[image, e] : exact)
        bytes += unsampled(image, e);
    return bytes;
}

HeapTracker::LiveEstimate HeapTracker::live(const ExactHeapBytes &exact, std::optional<uint64_t> image) const
{
    LiveEstimate out;
    double variance = 0; // of the images without calibration
    struct Calibrated {
        double g = 1;
        double rho = 0;
        double terms = 0; // sum of the samples' terms, w (w - 1) (size - rho heapBytes)^2
    };
    std::unordered_map<uint64_t, Calibrated> calibrated;
    for (const auto &[id, i] : m_images) {
        if (image && id != *image)
            continue;
        const double g = calibration(id, exact);
        out.bytes += g * i.bytes;
        out.objects += g * i.objects;
        if (g == 1)
            variance += std::max(0.0, i.variance);
        else
            calibrated[id] = {g, i.heapBytes > 0 ? i.bytes / i.heapBytes : 0, 0};
    }
    for (const auto &[id, e] : exact)
        if (!image || id == *image)
            out.bytes += unsampled(id, e); // exact: no error
    if (!calibrated.empty()) {
        m_live.forEach([&](uint64_t image, uint64_t, const Block &b) {
            const auto c = calibrated.find(image);
            if (c == calibrated.end() || b.objects <= 1)
                return; // a block sampled for sure (w = 1) leaves no error
            // w (w - 1) (size - rho heapBytes)^2, with bytes = w size and heapBytes = w chunk size.
            const double d = b.bytes - c->second.rho * b.heapBytes;
            const double term = (b.objects - 1) / b.objects * d * d;
            c->second.terms += term;
        });
        for (const auto &[id, c] : calibrated)
            variance += c.g * c.g * c.terms;
    }
    out.variance = variance;
    out.margin = samplingMargin(variance);
    return out;
}

std::vector<HeapTracker::StackMemory> HeapTracker::listed(const BySite &bySite)
{
    std::vector<StackMemory> out;
    out.reserve(bySite.size());
    for (const auto &[key, memory] : bySite)
        out.push_back(memory);
    std::sort(out.begin(), out.end(), [](const StackMemory &a, const StackMemory &b) {
        return std::tie(a.pid, a.tid, a.stack, a.shortLived, a.sizeClass) <
               std::tie(b.pid, b.tid, b.stack, b.shortLived, b.sizeClass);
    });
    return out;
}

std::vector<HeapTracker::StackMemory> HeapTracker::takeAllocated()
{
    std::vector<StackMemory> out = listed(m_allocated);
    // A site whose every allocation was short-lived keeps a row of (nearly) nothing: left out.
    std::erase_if(out, [](const StackMemory &m) { return m.objects < 0.5 && m.bytes < 0.5; });
    m_allocated.clear();
    ++m_flush;
    return out;
}

std::vector<HeapTracker::StackMemory> HeapTracker::inUse(const ExactHeapBytes &exact) const
{
    std::unordered_map<uint64_t, double> factors;
    for (const auto &[image, i] : m_images)
        factors.emplace(image, calibration(image, exact));
    BySite bySite;
    m_live.forEach([&](uint64_t image, uint64_t, const Block &b) {
        const double g = factors[image];
        if (g == 1) {
            add(bySite, b, BySize::No);
            return;
        }
        Block calibrated = b;
        calibrated.objects *= g;
        calibrated.bytes *= g;
        add(bySite, calibrated, BySize::No);
    });
    for (const auto &[image, e] : exact) {
        Block b;
        b.bytes = unsampled(image, e);
        if (b.bytes <= 0)
            continue;
        b.pid = b.tid = m_imagePids.at(image);
        b.stack = *m_unsampledStack;
        add(bySite, b, BySize::No);
    }
    return listed(bySite);
}

std::vector<HeapTracker::StackMemory> HeapTracker::leaks() const
{
    return listed(m_leaks);
}

} // namespace emberline::engine
