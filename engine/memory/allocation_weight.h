#pragma once

#include <cmath>
#include <cstdint>

namespace emberline::engine {

// What one sampled allocation stands for. The agent samples by bytes (a Poisson process with a mean interval
// of `interval` bytes), so an allocation of `size` bytes is sampled with probability p = 1 - exp(-size /
// interval); weighing each sample by 1/p (as Go's and jemalloc's heap profiles do) makes the estimates of the
// allocation count and bytes unbiased. This is the only weighting applied: the agent reports raw sizes, and
// nothing else scales them. An interval of 1 (every allocation recorded) weighs each as itself.
//
// How far such an estimate may be off: an allocation is sampled or not independently of every other (the sampling
// points of a Poisson process fall independently in disjoint spans of bytes), so a sum of bytes over sampled
// allocations has the variance sum(size^2 (1 - p) / p) over every allocation it stands for, which the sampled ones
// estimate without bias by sum(size^2 (1 - p) / p^2) = sum(bytes (bytes - size)), where bytes = size / p is the
// sample's weighted bytes. `bytesVariance` is one sample's term: about interval^2 for a small allocation (which
// stands for interval / size allocations of about size * interval each), 0 for one much larger than the interval
// (always sampled) and at interval 1.
struct AllocationWeight {
    double count = 1;
    double bytes = 0;
    double bytesVariance = 0;
};

// The half-width of an estimate's 95% range from its sampling variance (the estimate is a sum of many independent
// terms: near normal): the estimate is within this of the program's own value 19 times in 20.
inline double samplingMargin(double variance)
{
    return variance > 0 ? 1.96 * std::sqrt(variance) : 0;
}

inline AllocationWeight weighAllocation(uint64_t size, uint64_t interval)
{
    if (interval <= 1 || size == 0)
        return {1, double(size)};
    const double p = -std::expm1(-double(size) / double(interval));
    const double bytes = double(size) / p;
    return {1 / p, bytes, bytes * (bytes - double(size))};
}

} // namespace emberline::engine
