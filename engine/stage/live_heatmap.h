#pragma once

#include "engine/analysis/heatmap.h"
#include "engine/live/live_snapshot.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace emberline::engine {

// A live session's sub-second heatmap, kept up to date flush by flush: each new snapshot's new timeline chunks
// are added to the grid (only their cells change); the whole grid is bucketed again only when the hidden threads
// or the session's start change. Every update publishes an immutable copy of the grid (cells, not samples: a
// 30-minute session is 90,000 of them), or the previous copy when nothing changed.
//
// Thread: the live stage's thread (one caller at a time); what update() returns is immutable and shared.
class LiveHeatmap {
public:
    std::shared_ptr<const Heatmap> update(const LiveSnapshot &snapshot, const std::vector<uint32_t> &hiddenThreads);
    // How many timeline chunks were bucketed again from scratch, over all updates (for the tests).
    uint64_t rebucketedChunks() const { return m_rebucketed; }

private:
    Heatmap m_grid;
    std::shared_ptr<const Heatmap> m_published;
    size_t m_chunks = 0; // chunks of the session already in m_grid
    int64_t m_startNs = 0;
    int64_t m_endNs = 0;
    std::vector<uint32_t> m_hidden;
    uint64_t m_rebucketed = 0;
};

} // namespace emberline::engine
