#pragma once

// What the C hooks (agent.cpp) lend the C++ operators (agent_cxx.cpp), inside libemberline_agent.so.
//
// Thread: every thread of the program, concurrently.

#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// > 0 while an allocator's own operator new or delete runs: what it allocates or frees through the hooked C
// functions is the operator's one call, counted by the operator (the C hooks neither record it nor count it down).
extern __thread uint32_t t_inCxx;

// An allocation of `size` bytes at `address` (null: failed) taken off this thread's countdown, and sampled when it
// runs out, as malloc's are; returns `address`.
void *countAllocation(void *address, size_t size);
// A free of `address`, recorded when the session must see it (a sampled block, or every block in exact mode).
void recordFree(void *address);
// The thread's countdown to its next sample and its count of allocations, kept around a call that allocates
// through the hooks on behalf of one counted call.
struct AllocationCount {
    int64_t state; // the countdown and the count since the slow path's last look (agent.cpp's ThreadState)
    uint64_t allocations;
};
AllocationCount allocationCount();
void setAllocationCount(AllocationCount count);
// Looks up the C library's (or the next allocator's) functions, once.
void resolveRealFunctions();

} // namespace emberline::agent
