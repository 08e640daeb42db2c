#pragma once

#include <cstdint>
#include <vector>

namespace emberline::engine {

// What a live session's recorder already knows about a flush profile's rows: the session-wide id of each
// location, and of each sample's stack. Given these, a merger maps a location or stack it has met in an earlier
// flush by index instead of interning its content again.
struct SessionIds {
    // Per location of the profile: the recorder's id, or kNoIndex (UINT32_MAX) where the location's name may
    // still change (JIT code that no perf map named yet).
    std::vector<uint32_t> locations;
    // Per sample of the profile: the recorder's id of its stack.
    std::vector<uint32_t> sampleStacks;
    // Changes when the recorder's stack ids start over (its table is bounded): stacks learnt by id are forgotten.
    uint64_t stackGeneration = 0;
    // Changes when the names of locations already exported may have changed (debug files that arrived late):
    // what was learnt by id under another epoch is forgotten.
    uint64_t namingEpoch = 0;
};

} // namespace emberline::engine
