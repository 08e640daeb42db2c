// A running program whose heap is known on both sides of an attach: it keeps BEFORE_MIB MiB in 4 KiB blocks, says
// "ready", then looks at its own memory map every 20 ms until Emberline's agent is in it. The agent is loaded and its
// hooks put in place on the main thread, between two of those looks (the injector stops the group leader), so what
// comes after the look that finds it comes after the attach: grow_after keeps AFTER_MIB MiB more in 4 KiB blocks, and
// free_before frees half of the blocks kept before. It says "done", and ends when stdin closes or SECONDS pass. An
// attached session's live heap is then AFTER_MIB MiB and a little (its own look at the map), whatever was kept before.
//   attach_heap [SECONDS [BEFORE_MIB [AFTER_MIB]]]
#include "target_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

enum { kBlock = 4096 };

static void **g_before;
static long g_beforeCount;
static void **g_after;
static long g_afterCount;

TARGET_FN static void keep_before(long count)
{
    g_before = malloc((size_t)count * sizeof *g_before);
    for (long i = 0; i < count; ++i) {
        g_before[i] = malloc(kBlock);
        memset(g_before[i], 1, 64);
    }
    g_beforeCount = count;
}

TARGET_FN static void grow_after(long count)
{
    g_after = malloc((size_t)count * sizeof *g_after);
    for (long i = 0; i < count; ++i) {
        g_after[i] = malloc(kBlock);
        memset(g_after[i], 2, 64);
    }
    g_afterCount = count;
}

TARGET_FN static void free_before(void)
{
    for (long i = 0; i < g_beforeCount; i += 2) {
        free(g_before[i]);
        g_before[i] = NULL;
    }
}

// Whether stdin closed within `seconds`.
static int stdinClosed(double seconds)
{
    fd_set in;
    FD_ZERO(&in);
    FD_SET(0, &in);
    struct timeval tick = {0, (long)(seconds * 1e6)};
    char c;
    return select(1, &in, NULL, NULL, &tick) > 0 && read(0, &c, 1) <= 0;
}

int main(int argc, char **argv)
{
    const double seconds = target_seconds(argc, argv, 600);
    const long before = argc > 2 ? atol(argv[2]) : 64;
    const long after = argc > 3 ? atol(argv[3]) : 32;
    keep_before(before * (1024 * 1024 / kBlock));
    printf("ready\n");
    fflush(stdout);
    const double end = target_now() + seconds;
    int attached = 0;
    while (target_now() < end) {
        if (!attached && target_agent_loaded()) {
            attached = 1;
            grow_after(after * (1024 * 1024 / kBlock));
            free_before();
            printf("done\n");
            fflush(stdout);
        }
        if (stdinClosed(0.02))
            break;
    }
    printf("kept %ld blocks after the attach\n", g_afterCount);
    return 0;
}
