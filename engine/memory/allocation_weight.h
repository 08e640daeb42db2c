#pragma once

#include <cmath>
#include <cstdint>

namespace emberline::engine {

// What one sampled allocation stands for. The agent samples by bytes (a Poisson process with a mean interval
// of `interval` bytes), so an allocation of `size` bytes is sampled with probability p = 1 - exp(-size /
// interval); weighing each sample by 1/p (as Go's and jemalloc's heap profiles do) makes the estimates of the
// allocation count and bytes unbiased. This is the only weighting applied: the agent reports raw sizes, and
// nothing else scales them. An interval of 1 (every allocation recorded) weighs each as itself.
struct AllocationWeight {
    double count = 1;
    double bytes = 0;
};

inline AllocationWeight weighAllocation(uint64_t size, uint64_t interval)
{
    if (interval <= 1 || size == 0)
        return {1, double(size)};
    const double p = -std::expm1(-double(size) / double(interval));
    return {1 / p, double(size) / p};
}

} // namespace emberline::engine
