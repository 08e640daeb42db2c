// All its time goes to mix_inline, a function that is always inlined into outer_caller.
#include "target_common.h"

#include <stdio.h>

static inline __attribute__((always_inline)) uint64_t mix_inline(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i) {
        x ^= x << 7;
        x ^= x >> 9;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

TARGET_FN uint64_t outer_caller(uint64_t seed)
{
    uint64_t r = mix_inline(seed, 50000);
    KEEP();
    return r;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 2.0);
    const double start = target_now();
    uint64_t sink = 1;
    while (target_now() - start < seconds)
        sink += outer_caller(sink);
    printf("%llu\n", (unsigned long long)(sink & 1));
    return 0;
}
