#include "engine/stage/live_heatmap.h"

#include <algorithm>

namespace emberline::engine {

std::shared_ptr<const Heatmap> LiveHeatmap::update(const LiveSnapshot &snapshot,
                                                   const std::vector<uint32_t> &hiddenThreads)
{
    std::vector<uint32_t> hidden = hiddenThreads;
    std::sort(hidden.begin(), hidden.end());
    const bool restart =
        !m_published || hidden != m_hidden || snapshot.startNs != m_startNs || snapshot.chunks.size() < m_chunks;
    if (!restart && snapshot.chunks.size() == m_chunks && snapshot.endNs == m_endNs)
        return m_published;
    if (restart) {
        m_grid = Heatmap(snapshot.startNs);
        m_chunks = 0;
        m_hidden = std::move(hidden);
        m_startNs = snapshot.startNs;
        if (m_published)
            m_rebucketed += snapshot.chunks.size();
    }
    std::vector<uint8_t> hiddenMask(snapshot.threads.size(), 0);
    for (uint32_t t : m_hidden) {
        if (t < hiddenMask.size())
            hiddenMask[t] = 1;
    }
    const ChunkedColumn<uint32_t> &sampleThread = snapshot.sampleThread();
    for (size_t i = m_chunks; i < snapshot.chunks.size(); ++i)
        m_grid.addChunk(*snapshot.chunks[i], sampleThread, hiddenMask);
    m_chunks = snapshot.chunks.size();
    m_endNs = snapshot.endNs;
    m_grid.extendTo(snapshot.endNs);
    m_published = std::make_shared<const Heatmap>(m_grid);
    return m_published;
}

} // namespace emberline::engine
