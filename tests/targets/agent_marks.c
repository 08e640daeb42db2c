// Every allocation function of the C library through the agent's hooks, sampled often, where the agent marks its
// sampled blocks (tst_agent_hooks::marksWholeThroughEveryFunction): each block's bytes, alignment and usable size are
// the program's as asked, whatever realloc does to it, and its free gives back what the allocator gave (the C
// library aborts on a pointer it did not hand out). A forked child frees its parent's blocks. Prints "ok N marked M"
// (the rounds' calls, and how many of malloc's and calloc's blocks came marked) and exits 0; anything else is a
// failure it names.
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long g_calls = 0;
static unsigned long g_marked = 0; // blocks handed out past the agent's mark (the C library never sets bit 3 there)

static void fail(const char *what, size_t size)
{
    fprintf(stderr, "agent_marks: %s (size %zu)\n", what, size);
    exit(1);
}

// The block holds `size` bytes the program may use, filled with a pattern of `seed`.
static void fill(unsigned char *p, size_t size, unsigned seed)
{
    if (malloc_usable_size(p) < size)
        fail("usable size below the request", size);
    for (size_t i = 0; i < size; ++i)
        p[i] = (unsigned char)(seed + i * 7);
}

static void check(const unsigned char *p, size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; ++i)
        if (p[i] != (unsigned char)(seed + i * 7))
            fail("bytes changed", size);
}

static size_t sizeOf(unsigned i)
{
    static const size_t sizes[] = {1, 8, 24, 40, 100, 250, 1000, 4000, 5000, 70000, 300000};
    return sizes[i % (sizeof sizes / sizeof sizes[0])];
}

static void rounds(unsigned n)
{
    for (unsigned i = 0; i < n; ++i) {
        const size_t size = sizeOf(i);
        unsigned char *m = malloc(size);
        unsigned char *c = calloc(1, size);
        if (!m || !c)
            fail("malloc or calloc failed", size);
        g_marked += (((const uint64_t *)m)[-1] & 8) != 0;
        g_marked += (((const uint64_t *)c)[-1] & 8) != 0;
        for (size_t k = 0; k < size; ++k)
            if (c[k] != 0)
                fail("calloc's block not zero", size);
        fill(m, size, i);
        // Grown, shrunk and moved: the bytes follow.
        const size_t bigger = size * 3 + 17;
        m = realloc(m, bigger);
        if (!m)
            fail("realloc failed", bigger);
        check(m, size, i);
        fill(m, bigger, i + 1);
        m = realloc(m, size / 2 + 1);
        check(m, size / 2 + 1, i + 1);
        unsigned char *r = reallocarray(NULL, 3, size);
        if (!r)
            fail("reallocarray failed", size);
        fill(r, 3 * size, i + 2);
        // Aligned, at every alignment the functions take.
        const size_t alignment = (size_t)16 << (i % 9); // 16 to 4096
        void *a = NULL;
        if (posix_memalign(&a, alignment, size) != 0 || ((uintptr_t)a & (alignment - 1)) != 0)
            fail("posix_memalign's block misaligned", alignment);
        fill(a, size, i + 3);
        unsigned char *b = aligned_alloc(alignment, size);
        unsigned char *d = memalign(64, size);
        unsigned char *v = valloc(size);
        unsigned char *pv = pvalloc(size);
        if (!b || ((uintptr_t)b & (alignment - 1)) != 0 || !d || ((uintptr_t)d & 63) != 0 || !v ||
            ((uintptr_t)v & 4095) != 0 || !pv || ((uintptr_t)pv & 4095) != 0)
            fail("an aligned block misaligned", alignment);
        fill(b, size, i + 4);
        fill(d, size, i + 5);
        fill(v, size, i + 6);
        fill(pv, size, i + 7);
        char *s = strdup("a string the C library allocates");
        if (!s)
            fail("strdup failed", 0);
        check(m, size / 2 + 1, i + 1);
        check(a, size, i + 3);
        free(s);
        free(m);
        free(c);
        free(r);
        free(a);
        free(b);
        free(d);
        free(v);
        free(pv);
        free(realloc(malloc(size), 0)); // frees p; what it returns is the implementation's (null with glibc)
        free(NULL);
        g_calls += 13;
    }
}

int main(void)
{
    rounds(600);
    // Blocks of the parent freed in a forked child, and in the parent after it.
    enum { kKept = 200 };
    void *kept[kKept];
    for (unsigned i = 0; i < kKept; ++i) {
        kept[i] = malloc(sizeOf(i));
        if (!kept[i])
            fail("malloc failed", sizeOf(i));
        fill(kept[i], sizeOf(i), i);
    }
    const pid_t child = fork();
    if (child < 0)
        fail("fork failed", 0);
    if (child == 0) {
        for (unsigned i = 0; i < kKept; ++i) {
            check(kept[i], sizeOf(i), i);
            kept[i] = realloc(kept[i], sizeOf(i) + 100);
            check(kept[i], sizeOf(i), i);
            free(kept[i]);
        }
        rounds(100);
        _exit(0);
    }
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("the forked child failed", 0);
    for (unsigned i = 0; i < kKept; ++i) {
        check(kept[i], sizeOf(i), i);
        free(kept[i]);
    }
    printf("ok %lu marked %lu\n", g_calls, g_marked);
    return 0;
}
