#include "engine/model/sample_filter.h"

#include <map>

namespace emberline::engine {

std::string ThreadInfo::displayName() const
{
    if (name.empty())
        return "thread " + std::to_string(tid);
    if (tid == 0)
        return name;
    return name + " (" + std::to_string(tid) + ")";
}

ThreadIndex::ThreadIndex(const Profile &profile)
{
    const StringId tidKey = profile.findString("thread id");
    const StringId nameKey = profile.findString("thread name");
    if (tidKey == kNoIndex && nameKey == kNoIndex)
        return;
    std::map<std::pair<int64_t, StringId>, uint32_t> ordinals;
    std::vector<uint32_t> sampleThread(profile.sampleCount(), kNoIndex);
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        int64_t tid = 0;
        StringId name = 0;
        bool found = false;
        for (const Label &l : profile.sampleLabels(i)) {
            if (l.key == tidKey && l.str == 0) {
                tid = l.num;
                found = true;
            } else if (l.key == nameKey && l.str != 0) {
                name = l.str;
                found = true;
            }
        }
        if (!found)
            continue;
        auto [it, inserted] = ordinals.try_emplace({tid, name}, static_cast<uint32_t>(m_threads.size()));
        if (inserted)
            m_threads.push_back(ThreadInfo{profile.str(name), tid, 0});
        m_threads[it->second].samples++;
        sampleThread[i] = it->second;
    }
    if (m_threads.empty())
        return;
    m_sampleThread.reserveRows(sampleThread.size());
    for (uint32_t t : sampleThread)
        m_sampleThread.push_back(t);
}

std::vector<int64_t> sampleTimestamps(const Profile &profile)
{
    std::vector<int64_t> times(profile.sampleCount(), 0);
    const StringId key = profile.findString("end_timestamp_ns");
    if (key == kNoIndex)
        return times;
    for (size_t i = 0; i < profile.sampleCount(); ++i) {
        for (const Label &l : profile.sampleLabels(i)) {
            if (l.key == key && l.str == 0) {
                times[i] = l.num;
                break;
            }
        }
    }
    return times;
}

std::vector<uint8_t> selectSamples(const Profile &profile, const ThreadIndex *threads, const SampleFilter &filter)
{
    if (filter.isEmpty())
        return {};
    std::vector<uint8_t> allowedThread;
    if (!filter.threads.empty() && threads) {
        allowedThread.assign(threads->threads().size(), 0);
        for (uint32_t t : filter.threads) {
            if (t < allowedThread.size())
                allowedThread[t] = 1;
        }
    }
    const bool byTime =
        filter.startNs != std::numeric_limits<int64_t>::min() || filter.endNs != std::numeric_limits<int64_t>::max();
    std::vector<int64_t> times = byTime ? sampleTimestamps(profile) : std::vector<int64_t>{};

    std::vector<uint8_t> mask(profile.sampleCount(), 1);
    for (size_t i = 0; i < mask.size(); ++i) {
        if (!allowedThread.empty()) {
            const uint32_t t = threads->threadOf(i);
            if (t == kNoIndex || !allowedThread[t])
                mask[i] = 0;
        }
        if (byTime && (times[i] < filter.startNs || times[i] > filter.endNs))
            mask[i] = 0;
    }
    return mask;
}

std::vector<int64_t> valuesPerStack(const Profile &profile, int sampleType, const std::vector<uint8_t> &mask,
                                    const std::atomic<bool> *cancel)
{
    std::vector<int64_t> perStack(profile.stacks().size(), 0);
    if (sampleType < 0 || static_cast<size_t>(sampleType) >= profile.sampleTypes().size())
        return perStack;
    const size_t n = profile.sampleCount();
    for (size_t i = 0; i < n; ++i) {
        if ((i & 0xFFFF) == 0 && cancel && cancel->load(std::memory_order_relaxed))
            return {};
        if (!mask.empty() && !mask[i])
            continue;
        perStack[profile.sampleStackId(i)] += profile.sampleValues(i)[sampleType];
    }
    return perStack;
}

} // namespace emberline::engine
