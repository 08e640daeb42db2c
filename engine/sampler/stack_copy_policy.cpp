#include "engine/sampler/stack_copy_policy.h"

#include <algorithm>

namespace emberline::engine {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kMinHeadroom = 2048;

} // namespace

StackCopyPolicy::StackCopyPolicy(Limits limits) : m_limits(limits)
{
    m_limits.maxBytes = std::max<uint32_t>(m_limits.maxBytes & ~7U, 8);
    m_limits.minBytes = std::clamp<uint32_t>(m_limits.minBytes & ~7U, 8, m_limits.maxBytes);
    m_current = clampToLimits(m_limits.startBytes);
    m_previous = m_current;
}

uint32_t StackCopyPolicy::clampToLimits(uint64_t bytes) const
{
    const uint64_t rounded = (bytes + kPage - 1) / kPage * kPage;
    return static_cast<uint32_t>(std::clamp<uint64_t>(rounded, m_limits.minBytes, m_limits.maxBytes));
}

void StackCopyPolicy::observe(uint32_t copyBytes, uint64_t usedBytes, bool cutShort, uint64_t neededBytes)
{
    m_deepest = std::max({m_deepest, usedBytes, cutShort ? neededBytes : 0});
    // Samples taken under an earlier size (still in the buffers when it changed) say nothing of this one.
    if (copyBytes != m_current)
        return;
    ++m_samples;
    if (cutShort)
        ++m_cutShort;
}

std::optional<uint32_t> StackCopyPolicy::decide(int64_t nowNs)
{
    if (!m_since)
        m_since = nowNs;
    if (m_frozen)
        return std::nullopt;
    uint32_t next = m_current;
    if (m_cutShort >= kCutShortToGrow) {
        // At least twice as far: a program that went deeper once will likely do so again.
        next = clampToLimits(std::max<uint64_t>(m_deepest + m_deepest / 4, uint64_t(m_current) * 2));
    } else if (nowNs - *m_since >= kSettleNs && m_samples >= kSettleSamples) {
        const uint32_t fits = clampToLimits(m_deepest + std::max(m_deepest / 2, kMinHeadroom));
        // Only a real saving is worth the change (each one reopens the sampler's events).
        if (fits <= m_current - m_current / 4)
            next = fits;
    }
    if (next == m_current) {
        if (m_cutShort >= kCutShortToGrow)
            m_cutShort = 0; // cut short at the largest copy allowed: nothing more to do
        return std::nullopt;
    }
    m_previous = m_current;
    m_current = next;
    m_since = nowNs;
    m_samples = 0;
    m_cutShort = 0;
    ++m_changes;
    return next;
}

void StackCopyPolicy::rejected()
{
    // What keeps the sampler from changing (a limit on open files, locked memory) will not go away by itself.
    m_current = m_previous;
    m_frozen = true;
    --m_changes;
}

} // namespace emberline::engine
