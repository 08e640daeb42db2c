#pragma once

#include <cstdint>
#include <vector>

namespace emberline::engine {

// The time the host kept this machine's virtual CPUs from running ("steal", the eighth count of each CPU's line in
// /proc/stat). A thread's scheduler statistics include none of it: a CPU-bound thread on a loaded host seems to lose
// that time to nothing. The share is read over the last one to two seconds (the kernel counts steal in clock ticks of
// 10 ms: a shorter span would read 0 or half), for the CPU that lost the most (steal is not spread evenly: a busy
// virtual CPU loses more than an idle one).
class HostSteal {
public:
    // `path` is /proc/stat but for tests; the span starts at `nowNs` (CLOCK_MONOTONIC).
    explicit HostSteal(int64_t nowNs, const char *path = "/proc/stat");
    ~HostSteal();
    HostSteal(const HostSteal &) = delete;
    HostSteal &operator=(const HostSteal &) = delete;

    // The largest share of time (0 to 1) that one CPU was stolen over the span up to `nowNs` (CLOCK_MONOTONIC);
    // 0 where /proc/stat cannot be read or counts no steal.
    double share(int64_t nowNs);

private:
    struct Reading {
        int64_t ns = 0;
        std::vector<uint64_t> stealTicks; // per CPU, in the order of /proc/stat's lines
    };
    bool read(Reading &reading, int64_t nowNs);

    int m_fd = -1;
    std::vector<char> m_text; // /proc/stat as read, once allocated
    Reading m_older;          // the start of the span
    Reading m_newer;          // becomes the start once it is a second old
};

} // namespace emberline::engine
