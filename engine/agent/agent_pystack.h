#pragma once

// The Python frames of a sample (agent_python.h walks them): gathered by the sampling thread before its record is
// reserved, after a PythonCodeRecord for each code object the process image has not described yet, and written at
// the end of the sample's record (agent_protocol.h's PythonFields).
//
// Thread: the sampling thread (an allocation hook's slow path, the CPU signal handler), inside an AgentScope.

#include "engine/agent/agent_protocol.h"

#include <stdint.h>

namespace emberline::agent {

// The frames are written before they are read (`count` says how many): 4 KiB a sample left as they are.
struct PythonStack { // NOLINT(cppcoreguidelines-pro-type-member-init)
    PythonFrame frames[kMaxPythonFrames];
    uint16_t count = 0;
    uint16_t flags = 0; // PythonWalkFlag
    uint64_t hash = 0;  // pythonStackHash's, where gatherPython had it at hand (0: not yet)
    uint32_t bytes() const { return uint32_t(count) * uint32_t(sizeof(PythonFrame)); }
};

// The calling thread's frames, when the session has named the process image's CPython (none otherwise). `wait`: as
// the sample's own record (a code record waits for room only where the sample would).
void gatherPython(PythonStack &stack, bool wait);
// The CPU handler's gatherPython: the walk timed and counted in the ring's header (RingHeader::pythonWalkNs).
void gatherPythonTimed(PythonStack &stack);
// The record's Python fields, and its frames at `tail` (the record's last stack.bytes() bytes).
void putPython(PythonFields &fields, void *tail, const PythonStack &stack);
// The frames and flags as a walked sample's stack hash takes them in (walkStack's `python`); 0 for none (a thread
// outside a CPython, or a process image with none), so that such a stack's hash is its pcs' alone.
uint64_t pythonStackHash(const PythonStack &stack);
// What a walked record that names its stack by hash alone carries of `stack`: nothing (its frames and flags are the
// ones the record that wrote the stack out carried, agent_protocol.h); else `stack` itself.
inline const PythonStack &pythonWritten(const PythonStack &stack, bool named)
{
    static constexpr PythonStack kNone{};
    return named ? kNone : stack;
}
// A new ring: the code objects described go with the old one.
void pythonForget();

} // namespace emberline::agent
