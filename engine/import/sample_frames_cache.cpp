#include "engine/import/sample_frames_cache.h"

#include <algorithm>
#include <cstring>

namespace emberline::engine {

namespace {
constexpr size_t kChunkFrames = 1u << 16;
} // namespace

SampleFramesCache::Block SampleFramesCache::frameBlock(std::string_view ahead)
{
    const char *const data = ahead.data();
    size_t pos = 0;
    size_t lines = 0;
    while (pos < ahead.size() && (data[pos] == '\t' || data[pos] == ' ')) {
        const void *nl = std::memchr(data + pos, '\n', ahead.size() - pos);
        if (!nl)
            return {};
        pos = static_cast<size_t>(static_cast<const char *>(nl) - data) + 1;
        ++lines;
    }
    if (lines == 0 || pos >= ahead.size() || data[pos] != '\n')
        return {};
    return {ahead.substr(0, pos), lines};
}

const std::span<const uint32_t> *SampleFramesCache::findAtFront(std::string_view ahead, Block &block)
{
    const size_t lastSize = m_lastText.size();
    if (m_last != SIZE_MAX && ahead.size() > lastSize && ahead[lastSize] == '\n' &&
        std::memcmp(ahead.data(), m_lastText.data(), lastSize) == 0) {
        block = {ahead.substr(0, lastSize), m_lastLines}; // what frameBlock finds in the same bytes
        count(true);
        return &m_stacks[m_last];
    }
    block = frameBlock(ahead);
    if (block.lines == 0)
        return nullptr;
    const uint32_t *index = m_index.find(block.text);
    count(index != nullptr);
    if (!index)
        return nullptr;
    remember(block.text, block.lines, *index);
    return &m_stacks[*index];
}

void SampleFramesCache::count(bool hit)
{
    ++m_lookups;
    m_hits += hit ? 1 : 0;
    if (m_lookups == kWindow) {
        m_off = m_hits * 4 < m_lookups;
        m_lookups = 0;
        m_hits = 0;
    }
}

void SampleFramesCache::remember(std::string_view text, size_t lines, size_t index)
{
    m_lastText.assign(text);
    m_lastLines = lines;
    m_last = index;
}

void SampleFramesCache::insert(std::string_view text, const std::vector<uint32_t> &locations)
{
    if (m_textBytes + text.size() > kMaxTextBytes || locations.size() > kChunkFrames)
        return;
    if (m_frames.empty() || m_frames.back().size() + locations.size() > kChunkFrames) {
        m_frames.emplace_back();
        m_frames.back().reserve(kChunkFrames); // filled in place: the spans into it stay valid
    }
    std::vector<uint32_t> &chunk = m_frames.back();
    const size_t start = chunk.size();
    chunk.insert(chunk.end(), locations.begin(), locations.end());
    m_index.insert(text, static_cast<uint32_t>(m_stacks.size()));
    m_stacks.emplace_back(chunk.data() + start, locations.size());
    m_textBytes += text.size();
    remember(text, static_cast<size_t>(std::count(text.begin(), text.end(), '\n')), m_stacks.size() - 1);
}

} // namespace emberline::engine
