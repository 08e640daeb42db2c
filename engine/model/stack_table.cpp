#include "engine/model/stack_table.h"

namespace emberline::engine {

uint64_t StackTable::HashFrames::operator()(std::span<const uint32_t> frames) const
{
    uint64_t h = kRowHashSeed ^ frames.size();
    for (uint32_t f : frames)
        h = mixRowHash(h, f);
    return h;
}

} // namespace emberline::engine
