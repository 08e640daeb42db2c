// One thread whose CPU time splits 60/30/10 between hot_sixty, warm_thirty and cool_ten by construction:
// every chunk of identical work is given to one of them at random with those probabilities, so the split
// cannot alias with any sampling period. warm_thirty reaches its work through 48 levels of recursion.
// Usage: cpu_split [SECONDS]; prints the chunks per second it achieved (the benchmark's throughput).
#include "target_common.h"

#include <stdio.h>

#define CHUNK 20000

static uint64_t g_rng = 88172645463325252ull;

static uint64_t next_random(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

TARGET_FN uint64_t hot_sixty(void)
{
    uint64_t r = burn(CHUNK);
    KEEP();
    return r ^ 1;
}

TARGET_FN uint64_t recurse_deep(int depth)
{
    if (depth == 0)
        return burn(CHUNK);
    uint64_t r = recurse_deep(depth - 1);
    KEEP();
    return r + (uint64_t)depth;
}

TARGET_FN uint64_t warm_thirty(void)
{
    uint64_t r = recurse_deep(48);
    KEEP();
    return r ^ 2;
}

TARGET_FN uint64_t cool_ten(void)
{
    uint64_t r = burn(CHUNK);
    KEEP();
    return r ^ 3;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 3.0);
    const double start = target_now();
    uint64_t sink = 0, chunks = 0;
    double now = start;
    while (now - start < seconds) {
        for (int i = 0; i < 64; ++i) {
            const uint64_t r = next_random() % 10;
            if (r < 6)
                sink += hot_sixty();
            else if (r < 9)
                sink += warm_thirty();
            else
                sink += cool_ten();
        }
        chunks += 64;
        now = target_now();
    }
    printf("chunks_per_second %.1f (%llu)\n", (double)chunks / (now - start), (unsigned long long)(sink & 1));
    return 0;
}
