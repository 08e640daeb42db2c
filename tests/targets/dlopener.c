// Starts, then dlopens LIBRARY (the dlwork library) and spins in its dl_spin for SECONDS.
// Usage: dlopener LIBRARY [SECONDS]
#include "target_common.h"

#include <dlfcn.h>
#include <stdio.h>

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
    uint64_t (*fn)(void) = (uint64_t(*)(void))dlsym(lib, "dl_spin");
    const double start = target_now();
    uint64_t sink = 0;
    while (target_now() - start < seconds)
        sink += call_library(fn);
    printf("%llu\n", (unsigned long long)(sink & 1));
    return 0;
}
