// A library attach_rates opens while it runs (after an attach, in the tests): its own allocations, through its own
// global offset table, which the agent must find and redirect once the library is there.
#include <stdlib.h>

void *volatile g_late_sink;

__attribute__((noipa)) void late_alloc(void)
{
    void *p = malloc(2048);
    g_late_sink = p;
    free(p);
}
