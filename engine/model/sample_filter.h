#pragma once

#include "engine/model/profile.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace emberline::engine {

struct ThreadInfo {
    std::string name; // from the `thread name` label, may be empty
    int64_t tid = 0;  // from the `thread id` label, 0 when absent
    size_t samples = 0;
    std::string displayName() const;
};

// The threads that samples carry in their `thread id` / `thread name` labels, and each sample's thread.
//
// Thread: built on a worker, immutable afterwards.
class ThreadIndex {
public:
    explicit ThreadIndex(const Profile &profile);
    // An index already known to its builder (a live session tracks each aggregated sample's thread itself): the
    // column is shared, not copied.
    ThreadIndex(std::vector<ThreadInfo> threads, ChunkedColumn<uint32_t> sampleThread)
        : m_threads(std::move(threads)), m_sampleThread(std::move(sampleThread))
    {
    }
    const std::vector<ThreadInfo> &threads() const { return m_threads; }
    uint32_t threadOf(size_t sample) const
    {
        return sample < m_sampleThread.size() ? m_sampleThread[sample] : kNoIndex;
    }
    bool empty() const { return m_threads.empty(); }

private:
    std::vector<ThreadInfo> m_threads;
    ChunkedColumn<uint32_t> m_sampleThread;
};

// Wall-clock time of each sample in ns since the epoch, from its `end_timestamp_ns` label; 0 when absent.
std::vector<int64_t> sampleTimestamps(const Profile &profile);

// Which samples a view shows: a set of threads and a time range. Empty thread set means every thread.
struct SampleFilter {
    std::vector<uint32_t> threads; // ThreadIndex ordinals
    int64_t startNs = std::numeric_limits<int64_t>::min();
    int64_t endNs = std::numeric_limits<int64_t>::max();
    bool isEmpty() const
    {
        return threads.empty() && startNs == std::numeric_limits<int64_t>::min() &&
               endNs == std::numeric_limits<int64_t>::max();
    }
};

// A mask over samples (1 = keep); an empty vector keeps every sample.
std::vector<uint8_t> selectSamples(const Profile &profile, const ThreadIndex *threads, const SampleFilter &filter);

// Sum of one sample type per interned stack id, over the samples the mask keeps.
std::vector<int64_t> valuesPerStack(const Profile &profile, int sampleType, const std::vector<uint8_t> &mask,
                                    const std::atomic<bool> *cancel = nullptr);

} // namespace emberline::engine
