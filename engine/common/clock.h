#pragma once

#include <cstdint>
#include <ctime>

namespace emberline::engine {

// Nanoseconds on one of the kernel's clocks: CLOCK_MONOTONIC for intervals and perf timestamps,
// CLOCK_REALTIME for wall-clock labels, CLOCK_THREAD_CPUTIME_ID for our own cost.
inline int64_t clockNs(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace emberline::engine
