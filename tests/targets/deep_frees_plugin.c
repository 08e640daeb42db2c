// The plugin tests/targets/deep_frees opens with RTLD_DEEPBIND: its malloc, realloc, free and malloc_usable_size bind
// to the C library's first.
#include "deep_frees_take.h"

#include <malloc.h>
#include <stdlib.h>

static void *g_kept[1000];

// deepTake with the plugin's own bindings of the allocation functions.
int deep_take(void **blocks, int count, size_t size)
{
    const struct DeepCalls calls = {malloc, free, realloc, malloc_usable_size};
    return deepTake(&calls, blocks, count, size, g_kept);
}
