#include "engine/stage/live_compare.h"

#include "engine/live/live_selection.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace emberline::engine {
namespace {

// Per thread of the snapshot, 1 when the user hid it.
std::vector<uint8_t> hiddenThreadMask(const LiveSnapshot &snap, const std::vector<uint32_t> &hiddenThreads)
{
    std::vector<uint8_t> hidden(snap.threads.size(), 0);
    for (const uint32_t t : hiddenThreads) {
        if (t < hidden.size())
            hidden[t] = 1;
    }
    return hidden;
}

// Per aggregated sample, the share of its value that falls in one flush: that flush's timeline entries over all
// of the sample's entries; 0 for hidden threads.
std::vector<float> flushWeights(const LiveSnapshot &snap, std::span<const uint32_t> allHits, const TimelineChunk &chunk,
                                const std::vector<uint32_t> &hiddenThreads)
{
    const ChunkedColumn<uint32_t> &threadOf = snap.sampleThread();
    const std::span<const uint32_t> hitsOf = allHits.first(std::min(allHits.size(), threadOf.size()));
    const std::vector<uint8_t> hidden = hiddenThreadMask(snap, hiddenThreads);
    std::vector<uint32_t> inFlush(hitsOf.size(), 0);
    chunk.forEach([&](int64_t, uint32_t sample) {
        if (sample < inFlush.size())
            inFlush[sample]++;
    });
    std::vector<float> weights(hitsOf.size(), 0.0f);
    for (size_t i = 0; i < weights.size(); ++i) {
        const uint32_t thread = threadOf[i];
        if (inFlush[i] == 0 || hitsOf[i] == 0 || (thread < hidden.size() && hidden[thread]))
            continue;
        weights[i] = static_cast<float>(static_cast<double>(inFlush[i]) / hitsOf[i]);
    }
    return weights;
}

// The session's profile with other weights (and its memory types' values from `memory`): the same profile, frames
// and threads, so a comparison of two of them needs no frame union. Its totals are not those of the weights (the
// comparison sums its own).
std::shared_ptr<const LoadedProfile> weighted(const LoadedProfile &scope, std::vector<float> weights,
                                              std::shared_ptr<const SampleOverlay> memory)
{
    auto side = std::make_shared<LoadedProfile>(scope);
    side->sampleOverlay = std::move(memory);
    side->path.clear(); // not a file: never "the same file" as the other side
    side->totals.clear();
    side->liveTrees.reset();
    if (weights.empty())
        side->sampleWeights.reset();
    else
        side->sampleWeights = std::make_shared<const std::vector<float>>(std::move(weights));
    return side;
}

const TimelineChunk *findFlush(const LiveSnapshot &snap, uint32_t sequence)
{
    const auto it = std::find_if(snap.chunks.begin(), snap.chunks.end(),
                                 [&](const auto &chunk) { return chunk->sequence == sequence; });
    return it == snap.chunks.end() ? nullptr : it->get();
}

std::string flushLabel(uint32_t sequence)
{
    return "flush " + std::to_string(sequence);
}

// A flush's side straight from its timeline entries: each aggregated sample it names counts with the share of its
// value those entries hold, as flushWeights weighs it, so the cost follows the flush and not the whole session. A
// memory type's values are the flush's own memory rows: what it allocated, what was in use at its end.
std::shared_ptr<const ComparisonSide> deriveFlushSide(const LiveSnapshot &snap, std::span<const uint32_t> hitsOf,
                                                      const FrameTable &frames, const TimelineChunk &chunk,
                                                      int sampleType, const std::vector<uint32_t> &hiddenThreads)
{
    const Profile &profile = *snap.profile;
    const ChunkedColumn<uint32_t> &threadOf = snap.sampleThread();
    const std::vector<uint8_t> hidden = hiddenThreadMask(snap, hiddenThreads);
    std::vector<uint32_t> samples = chunk.entrySamples();
    std::sort(samples.begin(), samples.end());
    auto perStack = std::make_shared<std::vector<int64_t>>(profile.stacks().size(), 0);
    auto side = std::make_shared<ComparisonSide>();
    const auto type = static_cast<size_t>(sampleType);
    const size_t known = std::min({hitsOf.size(), threadOf.size(), profile.sampleCount()});
    const auto memoryColumn = std::find(snap.memoryTypes.begin(), snap.memoryTypes.end(), sampleType);
    if (memoryColumn != snap.memoryTypes.end()) {
        const auto column = static_cast<size_t>(memoryColumn - snap.memoryTypes.begin());
        chunk.memory.forEach([&](uint32_t i, std::span<const int64_t> values) {
            if (i >= profile.sampleCount() ||
                (i < threadOf.size() && threadOf[i] < hidden.size() && hidden[threadOf[i]]))
                return;
            (*perStack)[profile.sampleStackId(i)] += values[column];
            side->total += values[column];
        });
        samples.clear();
    }
    for (size_t k = 0; k < samples.size();) {
        const uint32_t i = samples[k];
        const size_t first = k;
        while (k < samples.size() && samples[k] == i)
            ++k;
        if (i >= known || hitsOf[i] == 0 || (threadOf[i] < hidden.size() && hidden[threadOf[i]]))
            continue;
        const auto weight = static_cast<float>(static_cast<double>(k - first) / hitsOf[i]);
        const int64_t value = std::llround(static_cast<double>(profile.sampleValues(i)[type]) * weight);
        (*perStack)[profile.sampleStackId(i)] += value;
        side->total += value;
    }
    side->tree = std::make_shared<const CallTree>(*CallTree::build(profile, frames, *perStack));
    side->perStack = std::move(perStack);
    return side;
}

} // namespace

std::shared_ptr<const ComparisonSide> LiveFlushSides::side(const LiveSnapshot &snapshot, std::span<const uint32_t> hits,
                                                           const FrameTable &frames, const TimelineChunk &chunk,
                                                           int sampleType, const std::vector<uint32_t> &hiddenThreads)
{
    if (sampleType != m_sampleType || hiddenThreads != m_hiddenThreads) {
        m_entries.clear();
        m_sampleType = sampleType;
        m_hiddenThreads = hiddenThreads;
    }
    const auto it =
        std::find_if(m_entries.begin(), m_entries.end(), [&](const Entry &e) { return e.sequence == chunk.sequence; });
    if (it != m_entries.end()) {
        Entry entry = std::move(*it);
        m_entries.erase(it);
        m_entries.push_back(std::move(entry));
        return m_entries.back().side;
    }
    m_entries.push_back(
        Entry{chunk.sequence, deriveFlushSide(snapshot, hits, frames, chunk, sampleType, hiddenThreads)});
    if (m_entries.size() > kKept)
        m_entries.erase(m_entries.begin());
    return m_entries.back().side;
}

std::string sessionRangeLabel(const LiveSnapshot &snapshot, int64_t startNs, int64_t endNs)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.1f–%.1f s", static_cast<double>(startNs - snapshot.startNs) / 1e9,
                  static_cast<double>(endNs - snapshot.startNs) / 1e9);
    return text;
}

Result<LiveComparison> compareLive(const LiveSnapshot &snap, std::span<const uint32_t> hits,
                                   const std::shared_ptr<const LoadedProfile> &scope, const LiveCompareRequest &request,
                                   const std::vector<uint32_t> &hiddenThreads, int sampleType,
                                   LiveFlushSides *flushSides)
{
    LiveComparison out;
    ComparisonRequest compare;
    compare.normalize = request.normalize;
    compare.widths = request.widths;
    const auto &types = snap.profile->sampleTypes();
    const bool knownType = sampleType >= 0 && static_cast<size_t>(sampleType) < types.size();
    if (knownType)
        compare.sampleType = snap.profile->str(types[static_cast<size_t>(sampleType)].type);
    // Sides kept from earlier updates (and derived from the flush's entries only) where the caller keeps them.
    // Not when normalizing: a scaled base is derived from its weights.
    const bool keptSides = flushSides && knownType && scope->frames && !request.normalize;
    const auto flushSide = [&](const TimelineChunk &chunk) {
        return flushSides->side(snap, hits, *scope->frames, chunk, sampleType, hiddenThreads);
    };
    if (request.mode == LiveCompareMode::PreviousFlush) {
        if (snap.chunks.size() < 2)
            return makeError(Error::Code::Invalid,
                             "Comparing with the previous flush needs two flushes; only the first is in so far.");
        const TimelineChunk &last = *snap.chunks.back();
        const TimelineChunk &before = *snap.chunks[snap.chunks.size() - 2];
        if (keptSides) {
            compare.next = weighted(*scope, {}, nullptr);
            compare.base = compare.next;
            compare.baseSide = flushSide(before);
            compare.nextSide = flushSide(last);
        } else {
            compare.next = weighted(*scope, flushWeights(snap, hits, last, hiddenThreads),
                                    flushMemoryOverlay(snap, last, hiddenThreads));
            compare.base = weighted(*scope, flushWeights(snap, hits, before, hiddenThreads),
                                    flushMemoryOverlay(snap, before, hiddenThreads));
        }
        out.newLabel = flushLabel(last.sequence);
        out.baseLabel = flushLabel(before.sequence);
    } else {
        const LiveBaseline &baseline = request.baseline;
        compare.next = scope;
        switch (baseline.kind) {
        case LiveBaseline::Kind::Flush: {
            const TimelineChunk *chunk = findFlush(snap, baseline.flushSequence);
            if (!chunk)
                return makeError(Error::Code::Invalid,
                                 "The pinned " + flushLabel(baseline.flushSequence) + " is not in this session.");
            if (keptSides) {
                compare.base = weighted(*scope, {}, nullptr);
                compare.baseSide = flushSide(*chunk);
            } else {
                compare.base = weighted(*scope, flushWeights(snap, hits, *chunk, hiddenThreads),
                                        flushMemoryOverlay(snap, *chunk, hiddenThreads));
            }
            out.baseLabel = flushLabel(baseline.flushSequence);
            break;
        }
        case LiveBaseline::Kind::TimeRange: {
            if (baseline.endNs <= baseline.startNs)
                return makeError(Error::Code::Invalid,
                                 "The baseline's time range is empty: select a range on the timeline first.");
            LiveSelection selection;
            selection.startNs = baseline.startNs;
            selection.endNs = baseline.endNs;
            selection.hiddenThreads = hiddenThreads;
            compare.base = weighted(*scope, selectionWeights(snap, hits, selection), memoryOverlay(snap, selection));
            out.baseLabel = sessionRangeLabel(snap, baseline.startNs, baseline.endNs);
            break;
        }
        case LiveBaseline::Kind::File:
            if (!baseline.file || !baseline.file->profile)
                return makeError(Error::Code::Invalid, "No baseline file is loaded.");
            compare.base = baseline.file;
            out.baseLabel = QFileInfo(baseline.file->path).fileName().toStdString();
            // The file's threads are matched by name with the session's threads that are shown.
            if (!hiddenThreads.empty()) {
                for (uint32_t t = 0; t < snap.threads.size(); ++t) {
                    if (std::find(hiddenThreads.begin(), hiddenThreads.end(), t) == hiddenThreads.end())
                        compare.newThreads.push_back(t);
                }
            }
            break;
        }
    }
    auto comparison = compareProfiles(compare, nullptr);
    if (!comparison)
        return comparison.error();
    out.comparison = std::move(comparison).value();
    return out;
}

} // namespace emberline::engine
