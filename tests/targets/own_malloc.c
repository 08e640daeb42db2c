// An allocator of a library's own, as a plugin may bring one: malloc, free, calloc and realloc over an arena of its
// own (a bump allocator: a block's size is kept before it, and freed blocks are never reused). A free of a block that
// is not from its arena aborts, as a real allocator's would fail on a block of another: a module bound to this
// allocator must keep getting it.
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_BYTES (256ul << 20)

static char *g_arena;
static atomic_size_t g_used;

static char *arena(void)
{
    static atomic_flag made = ATOMIC_FLAG_INIT;
    static char *volatile ready;
    if (!atomic_flag_test_and_set(&made)) {
        void *memory =
            mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        ready = memory == MAP_FAILED ? NULL : memory;
    }
    while (!ready)
        ;
    return ready;
}

void *malloc(size_t size)
{
    g_arena = arena();
    const size_t bytes = (size + 16 + 15) & ~(size_t)15;
    const size_t at = atomic_fetch_add(&g_used, bytes);
    if (at + bytes > ARENA_BYTES)
        return NULL;
    memcpy(g_arena + at, &size, sizeof size);
    return g_arena + at + 16;
}

void free(void *block)
{
    if (!block)
        return;
    if ((char *)block < g_arena + 16 || (char *)block >= g_arena + ARENA_BYTES) {
        static const char message[] = "own_malloc: free of a block that is not ours\n";
        fwrite(message, 1, sizeof message - 1, stderr);
        abort();
    }
}

void *calloc(size_t count, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, size, &bytes))
        return NULL;
    return malloc(bytes); // the arena's pages start zeroed and are never reused
}

void *realloc(void *block, size_t size)
{
    void *moved = malloc(size);
    if (block && moved) {
        size_t old;
        memcpy(&old, (char *)block - 16, sizeof old);
        memcpy(moved, block, old < size ? old : size);
        free(block);
    }
    return moved;
}
