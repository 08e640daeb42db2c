// The ring reader's side of the rings' headers (ring_reader.h): the settings the session writes there for the agents
// (stack copies, Python's layout, CPU timers, the walk), and what it reads back (heap counts, positions, counters).
#include "engine/memory/directory_watch.h"
#include "engine/memory/ring_header_reads.h"
#include "engine/memory/ring_mapping.h"
#include "engine/memory/ring_reader.h"
#include "engine/unwind/unwind_table_server.h"

#include <algorithm>
#include <csignal>
#include <cstring>

namespace emberline::engine {

int RingReader::changeFd() const
{
    return m_made->fd();
}

void RingReader::setStackCopyBytes(uint32_t bytes)
{
    m_stackCopyBytes = bytes;
    for (auto &ring : m_rings)
        ring->header->stackCopyBytes.store(bytes, std::memory_order_relaxed);
}

bool RingReader::setPythonTarget(uint64_t image, const agent::PythonTarget &target)
{
    for (auto &ring : m_rings) {
        if (ring->image != image)
            continue;
        agent::RingHeader &h = *ring->header;
        h.python = target;
        h.pythonState.store(1, std::memory_order_release);
        return true;
    }
    return false;
}

void RingReader::setCpuStackCopyBytes(uint32_t bytes)
{
    m_cpuStackCopyBytes = bytes;
    for (auto &ring : m_rings)
        ring->header->cpuStackCopyBytes.store(bytes, std::memory_order_relaxed);
}

uint32_t RingReader::cpuSignal(uint32_t pid) const
{
    for (auto it = m_rings.rbegin(); it != m_rings.rend(); ++it)
        if ((*it)->pid == pid)
            return (*it)->header->cpuSignal;
    return 0;
}

agent::CpuClock RingReader::cpuClock() const
{
    for (auto it = m_rings.rbegin(); it != m_rings.rend(); ++it)
        if ((*it)->header->cpuClock != uint32_t(agent::CpuClock::NotChosen))
            m_cpuClock = agent::CpuClock((*it)->header->cpuClock);
    return m_cpuClock;
}

bool RingReader::requestTimer(uint32_t pid, uint32_t tid)
{
    // The newest ring of the process: the image running now.
    for (auto it = m_rings.rbegin(); it != m_rings.rend(); ++it) {
        if ((*it)->pid != pid)
            continue;
        for (auto &slot : (*it)->header->timerRequests) {
            uint32_t empty = 0;
            if (slot.load(std::memory_order_relaxed) == tid)
                return true;
            if (slot.compare_exchange_strong(empty, tid, std::memory_order_acq_rel))
                return true;
        }
        return false;
    }
    return false;
}

void RingReader::detach(const RingSinks &sinks)
{
    poll(sinks);
    for (auto &ring : m_rings)
        ring->header->detached.store(1, std::memory_order_release);
    poll(sinks);
}

void RingReader::setUnwindMode(agent::UnwindMode mode, uint32_t checkEvery)
{
    m_unwindMode = mode;
    m_checkEvery = checkEvery;
    if (mode == agent::UnwindMode::Walk && !m_tables) {
        m_tables = std::make_unique<UnwindTableServer>(m_directory);
        for (auto &ring : m_rings)
            ring->indexed = m_tables->addImage(ring->image, ring->pid, ring->header, ring->fd);
    }
    for (auto &ring : m_rings) {
        ring->header->checkEvery.store(checkEvery, std::memory_order_relaxed);
        // A ring whose index's pages are not had copies its stacks (addImage).
        ring->header->unwindMode.store(uint32_t(ring->indexed ? mode : agent::UnwindMode::Copy),
                                       std::memory_order_release);
    }
}

std::optional<int64_t> RingReader::heapLive(uint64_t image) const
{
    for (const auto &ring : m_rings)
        if (ring->image == image)
            return heapLiveOf(*ring->header);
    return std::nullopt;
}

std::unordered_map<uint64_t, int64_t> RingReader::heapLive() const
{
    std::unordered_map<uint64_t, int64_t> out;
    for (const auto &ring : m_rings)
        if (const auto live = heapLiveOf(*ring->header))
            out.emplace(ring->image, *live);
    return out;
}

std::optional<RingReader::Position> RingReader::position(uint32_t pid) const
{
    for (auto it = m_rings.rbegin(); it != m_rings.rend(); ++it) {
        if ((*it)->pid != pid)
            continue;
        const agent::RingHeader &h = *(*it)->header;
        return Position{h.head.load(std::memory_order_acquire), h.tail.load(std::memory_order_acquire), h.dataBytes};
    }
    return std::nullopt;
}

std::optional<UnwindServerStats> RingReader::tableStats() const
{
    if (!m_tables)
        return std::nullopt;
    return m_tables->stats();
}

RingCounters RingReader::counters() const
{
    RingCounters c = m_counters;
    c.allocsDropped += m_closed.allocsDropped;
    c.bytesDropped += m_closed.bytesDropped;
    c.waitNs += m_closed.waitNs;
    c.problems |= m_closed.problems;
    c.cpuDropped += m_closed.cpuDropped;
    c.cpuHandlerNs = m_closed.cpuHandlerNs;
    c.pythonWalkNs = m_closed.pythonWalkNs;
    c.pythonWalkFrames = m_closed.pythonWalkFrames;
    c.pythonRepeatChecks = m_closed.pythonRepeatChecks;
    c.pythonRepeatDiffers = m_closed.pythonRepeatDiffers;
    c.escaped = m_closed.escaped;
    c.escapedUnlisted += m_closed.escapedUnlisted;
    c.pythonAllocators = m_closed.pythonAllocators;
    for (const auto &ring : m_rings)
        addHeaderCounts(c, ring->pid, *ring->header);
    return c;
}

} // namespace emberline::engine
