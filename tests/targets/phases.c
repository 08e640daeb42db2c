// Two phases one after the other: phase_one for the first SECONDS/2, then phase_two for the rest. A time range
// over the first half holds phase_one only, over the second half phase_two only.
// Usage: phases [SECONDS] (default 4)
#include "target_common.h"

#include <stdio.h>

TARGET_FN uint64_t phase_one(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

TARGET_FN uint64_t phase_two(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 4.0);
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds / 2)
        sink += phase_one();
    while (target_now() - start < seconds)
        sink += phase_two();
    printf("phases done (%llu)\n", (unsigned long long)(sink & 1));
    return 0;
}
