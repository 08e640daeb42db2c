#pragma once

#include "engine/model/profile.h"

#include <cstdint>
#include <span>
#include <vector>

namespace emberline::engine {

// Values of some sample types that stand in for a profile's own, per sample: what a live session's time range shows
// of its memory types (engine/live). The timeline's per-sample weights cannot give them: the live aggregate holds
// the latest in-use snapshot only, so an earlier flush's in-use values are no share of it. A sample the overlay does
// not list holds 0 of its types; the other types keep the profile's values (and weights).
//
// Thread: built once, immutable afterwards; shared as std::shared_ptr<const SampleOverlay>.
struct SampleOverlay {
    std::vector<int> types;        // the sample types it gives (indices into the profile's), ascending
    std::vector<uint32_t> samples; // the samples it gives values of, ascending, each once
    std::vector<int64_t> values;   // per listed sample, one value per type of `types`

    int column(int sampleType) const; // -1 when the overlay does not give the type
    bool covers(int sampleType) const { return column(sampleType) >= 0; }
    std::span<const int64_t> row(size_t k) const { return {values.data() + k * types.size(), types.size()}; }
    // The values of `sample` (one per type), or an empty span when it is not listed.
    std::span<const int64_t> find(uint32_t sample) const;
    // Sum per interned stack of one type it gives, over the samples `mask` keeps (an empty mask keeps all).
    std::vector<int64_t> valuesPerStack(const Profile &profile, int sampleType, const std::vector<uint8_t> &mask) const;
    // Sets the totals (per sample type) of the types it gives to its own sums.
    void replaceTotals(std::vector<int64_t> &totals) const;
    // The overlay of a profile derived from this one's sample by sample: derived sample j is sample kept[j].
    SampleOverlay remapped(std::span<const uint32_t> kept) const;
};

// Builds an overlay from values given sample by sample in any order; a sample given twice holds the sum.
class SampleOverlayBuilder {
public:
    explicit SampleOverlayBuilder(std::vector<int> types);
    // `values`: one per type, in the order of the types.
    void add(uint32_t sample, std::span<const int64_t> values);
    SampleOverlay finish();

private:
    std::vector<int> m_types;
    std::vector<uint32_t> m_samples;
    std::vector<int64_t> m_values;
};

} // namespace emberline::engine
