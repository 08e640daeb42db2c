#pragma once

#include "engine/agent/agent_protocol.h"
#include "engine/unwind/walked_stack.h"

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace emberline::engine {

// The stacks one process image's agent walked and wrote out for later references (agent_protocol.h's walked records
// with WalkDefines), by hash: a reference always comes after its stack in the image's ring, and the stacks live as long
// as the ring. Bounded by the agent's own set of written stacks (65,536 per image).
//
// Thread: the ring reader's.
class WalkedStacks {
public:
    // The stack a walked record carries (`pcs`: its own, empty for a reference; `flags`: agent::WalkFlag; `python`:
    // the record's own Python frames): its own pcs and Python frames, kept when it defines the stack, or the ones its
    // hash names (a reference's Python frames are its stack's). False for a reference to a stack the ring never wrote
    // out (a damaged ring). `stack` and `python` point into the record or into this table.
    bool resolve(uint64_t hash, uint8_t flags, std::span<const uint64_t> pcs, WalkedStack &stack,
                 PythonFramesView &python);

private:
    struct Kept {
        std::vector<uint64_t> pcs;
        std::vector<agent::PythonFrame> python;
        uint32_t pythonFlags = 0;
    };
    std::unordered_map<uint64_t, Kept> m_stacks;
};

// The pcs a walked record of `bytes` carries after its fixed part (at most what the record holds).
template <typename Record> std::span<const uint64_t> walkedPcs(const Record &record, uint32_t bytes)
{
    const uint32_t room = (bytes - uint32_t(sizeof(Record))) / uint32_t(sizeof(uint64_t));
    const uint32_t frames = record.frames < room ? record.frames : room;
    return {reinterpret_cast<const uint64_t *>(&record + 1), frames};
}

// A checked record's walk (agent_protocol.h: AllocRecord::walkedFrames, CpuRecord's): `frames` pcs at the end of the
// record but its last `tail` bytes (its Python frames), behind the copy in its `body` bytes; empty when it has none
// or they do not fit.
WalkedStack checkedPcs(const agent::RecordHeader &record, uint32_t frames, uint32_t body, uint32_t tail = 0);

} // namespace emberline::engine
