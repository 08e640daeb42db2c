// Helpers shared by the programs that exist only to be profiled. Every function that a test looks for is
// `noipa` (never inlined, cloned or analysed across calls) and does something after each call, so that the
// compiler can neither inline it away nor turn the call into a tail call.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TARGET_FN __attribute__((noipa)) __attribute__((used))
#define KEEP() __asm__ volatile("" ::: "memory")

static inline double target_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double target_seconds(int argc, char **argv, double fallback)
{
    return argc > 1 ? atof(argv[1]) : fallback;
}

// Whether Emberline's agent is mapped into this process (an attach loaded it).
static inline int target_agent_loaded(void)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (!maps)
        return 0;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, maps))
        found = strstr(line, "libemberline_agent.so") != NULL;
    fclose(maps);
    return found;
}

// A fixed amount of integer work (a linear congruential chain the compiler cannot fold).
TARGET_FN uint64_t burn(uint64_t n);
