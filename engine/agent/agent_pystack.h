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
    uint16_t flags = 0;          // PythonWalkFlag
    uint8_t form = PythonInline; // PythonForm: how the record gives the frames (claimed by gatherPython)
    uint64_t hash = 0;           // the frames' and flags' hash, where the form names one
    // The frames the record holds, and their bytes.
    uint16_t inRecord() const { return form == PythonByHash ? 0 : count; }
    uint32_t bytes() const { return uint32_t(inRecord()) * uint32_t(sizeof(PythonFrame)); }
};

// The calling thread's frames, when the session has named the process image's CPython (none otherwise), and how its
// record gives them (PythonStack::form: the stack claimed in the set of stacks written out, agent_walk.h). `wait`: as
// the sample's own record (a code record waits for room only where the sample would). Every gather is followed by
// putPython or dropPython.
void gatherPython(PythonStack &stack, bool wait);
// The CPU handler's gatherPython: the walk timed and counted in the ring's header (RingHeader::pythonWalkNs).
void gatherPythonTimed(PythonStack &stack);
// The record's Python fields, and its frames at `tail` (the record's last stack.bytes() bytes), once the record is
// reserved: a stack this record defines is named by its hash from here on (later records of the ring come after it).
void putPython(PythonFields &fields, void *tail, const PythonStack &stack);
// The sample's record was not written (no room): a stack it was to define is left to the next sample that meets it.
void dropPython(const PythonStack &stack);
// A new ring: the code objects described go with the old one.
void pythonForget();

} // namespace emberline::agent
