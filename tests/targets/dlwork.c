// A library that dlopener loads at run time.
#include "target_common.h"

#include <stdlib.h>

TARGET_FN uint64_t dl_spin(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}

// `count` blocks of 4099 bytes, allocated here and kept (the program ends at once): the memory tests' truth for a
// module loaded moments before the program's end.
TARGET_FN void *dl_allocate(int count)
{
    void **blocks = malloc(sizeof(void *) * (size_t)count);
    for (int i = 0; i < count; ++i)
        blocks[i] = malloc(4099);
    KEEP();
    return blocks;
}
