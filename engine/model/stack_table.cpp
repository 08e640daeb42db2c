#include "engine/model/stack_table.h"

namespace emberline::engine {

uint64_t StackTable::HashFrames::operator()(std::span<const uint32_t> frames) const
{
    // 64-bit multiply-mix per element; strong enough for ids, cheap enough for the sampling path.
    uint64_t h = 0x9E3779B97F4A7C15ull ^ frames.size();
    for (uint32_t f : frames) {
        h ^= f;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

} // namespace emberline::engine
