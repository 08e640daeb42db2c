#include "engine/memory/walked_stacks.h"

namespace emberline::engine {

bool WalkedStacks::resolve(uint64_t hash, uint8_t flags, std::span<const uint64_t> pcs, WalkedStack &stack,
                           PythonFramesView &python)
{
    stack.truncated = (flags & agent::WalkTruncated) != 0;
    stack.hash = hash;
    if (!pcs.empty()) {
        if ((flags & agent::WalkDefines) == 0) {
            stack.pcs = pcs;
            return true;
        }
        Kept &kept = m_stacks[hash];
        kept.pcs.assign(pcs.begin(), pcs.end());
        kept.python.assign(python.frames.begin(), python.frames.end());
        kept.pythonFlags = python.flags;
        stack.pcs = kept.pcs;
        python.frames = kept.python;
        return true;
    }
    const auto known = m_stacks.find(hash);
    if (known == m_stacks.end())
        return false;
    stack.pcs = known->second.pcs;
    python.frames = known->second.python;
    python.flags = known->second.pythonFlags;
    return true;
}

WalkedStack checkedPcs(const agent::RecordHeader &record, uint32_t frames, uint32_t body, uint32_t tail)
{
    WalkedStack walk;
    const uint32_t bytes = frames * uint32_t(sizeof(uint64_t));
    if (frames == 0 || frames > agent::kMaxWalkFrames || bytes > body || tail > record.bytes)
        return walk;
    const auto *end = reinterpret_cast<const uint8_t *>(&record) + record.bytes - tail;
    walk.pcs = std::span<const uint64_t>(reinterpret_cast<const uint64_t *>(end - bytes), frames);
    return walk;
}

} // namespace emberline::engine
