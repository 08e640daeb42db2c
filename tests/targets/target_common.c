#include "target_common.h"

TARGET_FN uint64_t burn(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < n; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
