// Spins for SECONDS, then dies: "abort" (SIGABRT), "segv" (a null write) or "exit3" (exit status 3).
// Usage: crasher SECONDS MODE
#include "target_common.h"

#include <stdio.h>
#include <string.h>

TARGET_FN uint64_t before_crash(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 1.5);
    const char *mode = argc > 2 ? argv[2] : "abort";
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += before_crash();
    fflush(stdout);
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)(uintptr_t)(sink & 0) = 1;
    if (strcmp(mode, "exit3") == 0)
        return 3;
    abort();
}
