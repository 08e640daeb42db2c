#pragma once

#include "engine/agent/python/agent_python.h"

#include <cstdint>
#include <span>

namespace emberline::engine {

// A stack the profiled program's own agent walked with the session's unwind tables (engine/agent/agent_tables.h):
// its program counters, leaf first, as the agent wrote them (return addresses not moved back).
struct WalkedStack {
    std::span<const uint64_t> pcs;
    bool truncated = false; // the walk stopped at its depth limit
    uint64_t hash = 0;      // the agent's name for the stack within its process image (0: a checked sample's)
};

// The Python frames the agent read at a sample (engine/agent/python/agent_python.h), leaf first, and how its walk ended
// (agent::PythonWalkFlag); `image` is the process image (ring) whose code objects they name.
struct PythonFramesView {
    std::span<const agent::PythonFrame> frames;
    uint32_t flags = 0;
    uint64_t image = 0;
};

} // namespace emberline::engine
