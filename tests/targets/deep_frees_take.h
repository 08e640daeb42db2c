// What tests/targets/deep_frees and its plugin do with the program's blocks, through the allocation functions given:
// each of `count` blocks of `size` bytes (block i filled with i's low byte) measured, grown (every other one) and
// freed; then 1,000 blocks of 4 KiB allocated into `kept`. Returns how many blocks read wrong (-1: no memory).
#include <stddef.h>
#include <string.h>

struct DeepCalls {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*realloc)(void *, size_t);
    size_t (*usableSize)(void *);
};

static inline int deepTake(const struct DeepCalls *calls, void **blocks, int count, size_t size, void **kept)
{
    int bad = 0;
    for (int i = 0; i < count; ++i) {
        unsigned char *block = blocks[i];
        if (calls->usableSize(block) < size)
            ++bad;
        if (i % 2 == 1 && !(block = calls->realloc(block, size * 2)))
            return -1;
        for (size_t j = 0; j < size; ++j) {
            if (block[j] != (unsigned char)i) {
                ++bad;
                break;
            }
        }
        calls->free(block);
    }
    for (int i = 0; i < 1000; ++i) {
        if (!(kept[i] = calls->malloc(4096)))
            return -1;
        memset(kept[i], 0, 64);
    }
    return bad;
}
