// A stack about 40 KiB deep: 40 nested calls with a 1 KiB frame each, and all of the time spent at the bottom.
// Sampled with a small stack copy (--stack-size 4096), the copy ends long before main: the health view must
// name "stack copy too small" and the size that would have held the whole stack. Usage: deep_stack [SECONDS]
#include "target_common.h"

#include <stdio.h>
#include <string.h>

#define DEPTH 40

static double g_seconds;
static double g_start;

TARGET_FN uint64_t deep_leaf(uint64_t seed)
{
    uint64_t sink = seed;
    while (target_now() - g_start < g_seconds)
        sink += burn(200000);
    return sink;
}

TARGET_FN uint64_t deep_frame(int depth, uint64_t seed)
{
    volatile char pad[1024];
    memset((char *)pad, (int)depth, sizeof pad);
    const uint64_t r = depth == 0 ? deep_leaf(seed + pad[7]) : deep_frame(depth - 1, seed + pad[depth]);
    KEEP();
    return r + pad[3];
}

int main(int argc, char **argv)
{
    g_seconds = target_seconds(argc, argv, 2.0);
    g_start = target_now();
    printf("%llu\n", (unsigned long long)(deep_frame(DEPTH, 1) & 1));
    return 0;
}
