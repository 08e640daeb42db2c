#pragma once

#include "engine/agent/python/python_layout.h"

#include <cstddef>
#include <cstdint>

// The line a CPython frame is executing, from its code object's line table: pure functions over the table's bytes
// (no allocation, no library call), so that the agent can later run them where it samples. `offset` is a byte offset
// into the bytecode (a code unit is 2 bytes from 3.6 on); each returns -1 where the table gives that instruction no
// line (3.10+: artificial instructions) or where a malformed table ends before it.

namespace emberline::engine {

// 3.8, 3.9 co_lnotab: (unsigned byte increment, signed line increment) pairs; the line of an offset adds every line
// increment whose pair's running byte offset is at most the offset (PyCode_Addr2Line of those versions). Offsets
// past the table's last pair keep its last line.
int lineFromLnotab(int firstLine, const uint8_t *table, size_t size, int64_t offset);

// 3.10 co_linetable (PEP 626): (unsigned byte length, signed line delta) pairs, each a range of bytecode; a delta of
// -128 gives the range no line and leaves the running line as it was. Empty ranges still move the line.
int lineFromPep626(int firstLine, const uint8_t *table, size_t size, int64_t offset);

// 3.11+ location table (Objects/locations.md): entries led by a byte with its top bit set, holding a 4-bit code and
// the entry's length in code units minus one; codes 0-9 (short form, one more byte) keep the line, 10-12 add 0-2
// (two more bytes), 13 adds a signed varint, 14 adds a signed varint and is followed by three more varints (end
// line, columns), 15 means no location. Varints are 6-bit chunks, least significant first, bit 6 saying another
// chunk follows; a signed varint keeps the sign in its lowest bit.
int lineFromLocations(int firstLine, const uint8_t *table, size_t size, int64_t offset);

// The decoder of `kind`.
int lineForOffset(LineTableKind kind, int firstLine, const uint8_t *table, size_t size, int64_t offset);

} // namespace emberline::engine
