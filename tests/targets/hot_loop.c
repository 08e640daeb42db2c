// One function whose time is spent in one tight loop by construction: the disassembly tests find the loop in the
// listing (the instructions from the backward branch's target to the branch) and expect nearly all of the
// function's samples on them. A short setup before the loop and a short tail after it keep the loop from
// starting or ending the function. Usage: hot_loop [SECONDS]
#include "target_common.h"

#include <stdio.h>

#define ROUND 400000

TARGET_FN uint64_t spin(uint64_t n, uint64_t seed)
{
    uint64_t x = seed ^ 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < n; ++i) { // HOT_LOOP
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
        __asm__ volatile("" : "+r"(x));
    }
    KEEP();
    return x + seed;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 2.0);
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += spin(ROUND, sink);
    printf("%llu\n", (unsigned long long)(sink & 1));
    return 0;
}
