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
// This thread's bytes until its next sampled allocation, read and set around a call that must not count down.
int64_t allocationCountdown();
void setAllocationCountdown(int64_t bytes);
// Looks up the C library's (or the next allocator's) functions, once.
void resolveRealFunctions();

} // namespace emberline::agent
