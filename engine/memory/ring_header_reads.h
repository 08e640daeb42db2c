#pragma once

#include "engine/agent/agent_protocol.h"
#include "engine/memory/ring_reader.h"
#include "engine/unwind/walked_stack.h"

#include <cstdint>
#include <optional>

// What the session reads from a ring besides its records: the header's heap counts and escaped modules, and the
// Python frames at a sample record's end.
namespace emberline::engine {

// The live heap the image's agent counts (agent_protocol.h's HeapSlot sums), exactly; nothing when its counts are not
// whole.
std::optional<int64_t> heapLiveOf(const agent::RingHeader &h);

// The modules ring `h`'s agent left alone (RingHeader::escaped), added to `c` as process `pid`'s.
void addEscaped(RingCounters &c, uint32_t pid, const agent::RingHeader &h);

// The ring's bytes that unread records hold.
uint64_t unreadBytes(const agent::RingHeader &h);

// The times ring `h`'s CPU handler took, and its walks of Python frames, added to `c`'s.
void addHandlerTimes(RingCounters &c, const agent::RingHeader &h);

// How ring `h`'s agent counted CPython's memory, added to `c`'s count of images by it.
void addPythonAllocators(RingCounters &c, const agent::RingHeader &h);

// Everything ring `h` of process `pid` counts in its header (what was dropped, waited, the problems, the handler's
// times, escaped modules, CPython's allocators), added to `c`'s.
void addHeaderCounts(RingCounters &c, uint32_t pid, const agent::RingHeader &h);

// The Python frames at the end of a sample record (agent_protocol.h's PythonFields), within its `body` bytes after its
// fixed part; none when they do not fit.
PythonFramesView pythonFrames(const agent::RecordHeader &record, const agent::PythonFields &fields, uint32_t body,
                              uint64_t image);

} // namespace emberline::engine
