// The plugin tests/targets/deep_frees opens with RTLD_DEEPBIND: its malloc, realloc, free and malloc_usable_size bind
// to the C library's first.
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static void *g_kept[1000];

// Measures, grows (every other one) and frees each of the program's `count` blocks of `size` bytes, block i filled with
// i's low byte; then allocates 1,000 blocks of 4 KiB, kept. Returns how many blocks read wrong (-1: no memory).
int deep_take(void **blocks, int count, size_t size)
{
    int bad = 0;
    for (int i = 0; i < count; ++i) {
        unsigned char *block = blocks[i];
        if (malloc_usable_size(block) < size)
            ++bad;
        if (i % 2 == 1) {
            block = realloc(block, size * 2);
            if (!block)
                return -1;
        }
        for (size_t j = 0; j < size; ++j) {
            if (block[j] != (unsigned char)i) {
                ++bad;
                break;
            }
        }
        free(block);
    }
    for (int i = 0; i < 1000; ++i) {
        g_kept[i] = malloc(4096);
        if (!g_kept[i])
            return -1;
        memset(g_kept[i], 0, 64);
    }
    return bad;
}
