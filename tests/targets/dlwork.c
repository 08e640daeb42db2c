// A library that dlopener loads at run time.
#include "target_common.h"

TARGET_FN uint64_t dl_spin(void)
{
    uint64_t r = burn(20000);
    KEEP();
    return r;
}
