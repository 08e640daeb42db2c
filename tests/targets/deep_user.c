// A plugin with an allocator of its own (own_malloc), opened with RTLD_DEEPBIND so that its malloc and free bind to
// that allocator rather than the program's: late_alloc keeps its last 64 blocks of 2048 bytes, freeing the oldest at
// each call. After an attach, its frees go on to blocks allocated before it: they must still reach own_malloc.
// late_grow reallocates its newest block: opened lazily, its first call binds realloc only then (after an attach,
// when the program calls it only once the agent is in).
#include <stdlib.h>

static void *g_blocks[64];
static unsigned g_next;

__attribute__((noipa)) void late_alloc(void)
{
    void **slot = &g_blocks[g_next++ % 64];
    free(*slot);
    *slot = malloc(2048);
}

__attribute__((noipa)) void late_grow(void)
{
    void **slot = &g_blocks[(g_next + 63) % 64];
    void *grown = realloc(*slot, 3000);
    if (grown)
        *slot = grown;
}
