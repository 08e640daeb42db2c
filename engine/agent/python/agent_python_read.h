#pragma once

// The reads every part of the agent's look at CPython makes (agent_python.cpp's walk, agent_python_code.cpp's
// descriptions): in place, in this very process, at addresses computed from the pointers the interpreter's structures
// hold. A read is a fixed-size copy from an address whose base pointer passed `plausible` (the compiler turns each into
// one load), so that a field at an odd offset or a type punned through it is never undefined behaviour.
//
// Internal to engine/agent/python.

#include "engine/agent/python/agent_python.h"

#include <stdint.h>

namespace emberline::agent::python_read {

// A pointer that may be followed: non-null, 8-byte aligned, in the user half of the address space.
inline bool plausible(uint64_t p)
{
    return p >= 0x10000 && p <= 0x7fffffffffffull && (p & 7) == 0;
}

template <typename T> inline T load(uint64_t address)
{
    T value;
    // NOLINTNEXTLINE(performance-no-int-to-ptr)
    __builtin_memcpy(&value, reinterpret_cast<const void *>(address), sizeof value);
    return value;
}

inline uint64_t loadPointer(uint64_t base, uint32_t offset)
{
    return load<uint64_t>(base + offset);
}

// The code object at `code`, checked: plausible, and of type PyCode_Type when it is known.
inline bool readableCode(const PythonTarget &target, uint64_t code)
{
    if (!plausible(code) || target.layout.objectType == engine::kPyAbsent)
        return false;
    return target.codeType == 0 || loadPointer(code, target.layout.objectType) == target.codeType;
}

} // namespace emberline::agent::python_read
