#include "engine/sampler/follow_tree.h"

namespace emberline::engine {

FollowTree::FollowTree(uint32_t root)
{
    setRoot(root);
}

void FollowTree::setRoot(uint32_t root)
{
    m_processes.erase(m_root);
    m_root = root;
    if (root != 0)
        m_processes[root] = Span{0, kAlive};
}

void FollowTree::onFork(uint32_t pid, uint32_t ppid, uint64_t timeNs)
{
    if (pid == ppid || !follows(ppid, timeNs))
        return;
    // A pid seen before (exited and reused) starts a new span.
    m_processes[pid] = Span{timeNs, kAlive};
}

void FollowTree::onExit(uint32_t pid, uint64_t timeNs)
{
    auto it = m_processes.find(pid);
    if (it != m_processes.end() && it->second.untilNs == kAlive && it->second.sinceNs <= timeNs)
        it->second.untilNs = timeNs;
}

bool FollowTree::follows(uint32_t pid, uint64_t timeNs) const
{
    auto it = m_processes.find(pid);
    return it != m_processes.end() && it->second.sinceNs <= timeNs && timeNs <= it->second.untilNs;
}

void FollowTree::prune(uint64_t timeNs)
{
    for (auto it = m_processes.begin(); it != m_processes.end();) {
        if (it->second.untilNs < timeNs)
            it = m_processes.erase(it);
        else
            ++it;
    }
}

std::vector<uint32_t> FollowTree::alive() const
{
    std::vector<uint32_t> pids;
    for (const auto &[pid, span] : m_processes) {
        if (span.untilNs == kAlive)
            pids.push_back(pid);
    }
    return pids;
}

} // namespace emberline::engine
