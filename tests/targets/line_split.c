// One function whose CPU time splits 2:1 between two of its source lines by construction: each round runs the
// same kind of loop twice as many times on the line marked LINE_TWO_THIRDS as on the line marked LINE_ONE_THIRD.
// Each loop fits on its one line, so every instruction of it carries that line. The tests find the lines by
// their markers in this file. Usage: line_split [SECONDS]
#include "target_common.h"

#include <stdio.h>

#define ROUND 200000

TARGET_FN uint64_t two_lines(uint64_t n)
{
    uint64_t x = n;
    // Each loop on one line: the tests read the split per line.
    // clang-format off
    for (uint64_t i = 0; i < 2 * n; ++i) { x = x * 6364136223846793005ull + 1442695040888963407ull; __asm__ volatile("" : "+r"(x)); } // LINE_TWO_THIRDS
    for (uint64_t i = 0; i < n; ++i) { x = x * 6364136223846793005ull + 1442695040888963407ull; __asm__ volatile("" : "+r"(x)); } // LINE_ONE_THIRD
    // clang-format on
    KEEP();
    return x;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 2.0);
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += two_lines(ROUND);
    printf("%llu\n", (unsigned long long)(sink & 1));
    return 0;
}
