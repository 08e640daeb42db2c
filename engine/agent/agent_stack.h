#pragma once

// The stack copies of the agent's records (agent_stack.cpp): a thread's stack bounds, learned once, and a copy of its
// live part that never reads past the stack's end.
//
// Thread: every thread of the program, each on its own stack.

#include <stdint.h>

namespace emberline::agent {

// Copies up to `want` bytes of this thread's stack from `sp`, never past its end (learning its bounds first: that
// allocates, as the agent's own work). Returns the bytes copied.
uint32_t copyStack(uint64_t sp, uint8_t *out, uint32_t want);
// The same without learning the bounds: safe in a signal handler.
uint32_t copyStackInHandler(uint64_t sp, uint8_t *out, uint32_t want);
// Learns this thread's stack bounds now (outside signal handlers).
void learnThreadStack();
// The bytes from `sp` to the top of this thread's stack, where its bounds are known (every frame lives there),
// else 0. Safe in a signal handler.
uint64_t liveStackBytes(uint64_t sp);
// The caller's callee-saved registers, stack pointer and return address into `regs` (agent_protocol.h's Reg* order):
// where the session's unwinder, or the agent's walk, starts.
void captureRegisters(uint64_t *regs);

} // namespace emberline::agent
