// Starts, then dlopens LIBRARY (the dlwork library) and spins in its dl_spin for SECONDS; with `alloc`, allocates 30
// blocks of 4099 bytes in its dl_allocate instead and ends at once.
// Usage: dlopener LIBRARY [SECONDS | alloc]
#include "target_common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

TARGET_FN uint64_t call_library(uint64_t (*fn)(void))
{
    uint64_t r = fn();
    KEEP();
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    burn(1000000); // run a little before the library exists
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    if (argc > 2 && strcmp(argv[2], "alloc") == 0) {
        void *(*allocate)(int) = (void *(*)(int))dlsym(lib, "dl_allocate");
        return allocate && allocate(30) ? 0 : 1;
    }
    uint64_t (*fn)(void) = (uint64_t(*)(void))dlsym(lib, "dl_spin");
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += call_library(fn);
    printf("%llu\n", (unsigned long long)(sink & 1));
    return 0;
}
