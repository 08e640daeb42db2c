// The session's table of live blocks (engine/memory/live_blocks.h) under the address patterns a heap makes: insert,
// look up and erase, in nanoseconds per block, for each pattern and two orders of look-up (the order the blocks were
// allocated, as frees mostly follow it; and no order).
//   bench_live_blocks [BLOCKS]   (default 2,000,000)
// Patterns: dense (16 bytes apart, as a run of small allocations), random in a heap 64 times the blocks' span, one a
// page (mmap'd blocks), and 64 at the start of each MiB (arenas).

#include "engine/memory/live_blocks.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using emberline::engine::LiveBlocks;

namespace {

struct Block { // the session's block is 80 bytes
    uint64_t words[10];
};

double nsPer(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to, size_t n)
{
    return std::chrono::duration<double, std::nano>(to - from).count() / double(n);
}

} // namespace

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
    const char *names[4] = {"dense", "random", "a page each", "64 a MiB"};
    for (int pattern = 0; pattern < 4; ++pattern) {
        std::mt19937_64 rng(1);
        std::vector<uint64_t> addresses(n);
        for (size_t i = 0; i < n; ++i) {
            switch (pattern) {
            case 0:
                addresses[i] = 0x555500000000ull + i * 16;
                break;
            case 1:
                addresses[i] = 0x555500000000ull + (rng() % (n * 64)) * 16;
                break;
            case 2:
                addresses[i] = 0x7f0000000000ull + i * 4096;
                break;
            default:
                addresses[i] = 0x555500000000ull + (i % 64) * 16 + (i / 64) * (uint64_t(1) << 20);
                break;
            }
        }
        LiveBlocks<Block> table;
        bool inserted = false;
        const auto t0 = std::chrono::steady_clock::now();
        for (const uint64_t a : addresses)
            table.tryEmplace(1, a, inserted);
        const auto t1 = std::chrono::steady_clock::now();
        size_t found = 0;
        for (const uint64_t a : addresses)
            found += table.find(1, a) != nullptr;
        const auto t2 = std::chrono::steady_clock::now();
        for (size_t i = 0; i < n; ++i)
            found += table.find(1, addresses[(i * 7919) % n]) != nullptr;
        const auto t3 = std::chrono::steady_clock::now();
        for (const uint64_t a : addresses)
            table.erase(1, a);
        const auto t4 = std::chrono::steady_clock::now();
        std::printf(
            "%-12s insert %6.1f ns  find in order %6.1f ns  in no order %6.1f ns  erase %6.1f ns  (%zu found)\n",
            names[pattern], nsPer(t0, t1, n), nsPer(t1, t2, n), nsPer(t2, t3, n), nsPer(t3, t4, n), found);
    }
    return 0;
}
