#pragma once

#include <cstddef>
#include <cstdint>

namespace emberline::engine {

// Module ids the recorder reserves; real mappings get ids from kFirstModuleId on (ProcessMap hands them out).
inline constexpr uint32_t kUnknownModule = 0;
inline constexpr uint32_t kKernelModule = 1;        // kernel time as one unnamed [kernel] frame, no mapping
inline constexpr uint32_t kKernelSymbolsModule = 2; // kernel frames by address, under [kernel.kallsyms]
inline constexpr uint32_t kMarkerModule = 3; // a frame that names what a row stands for, by address (MarkerFrame)
// A Python frame (a code object and a line), by the session's number for it (engine/session/python_frames.h).
inline constexpr uint32_t kPythonModule = 4;
inline constexpr uint32_t kFirstModuleId = 5;

// The addresses of kMarkerModule's frames.
enum class MarkerFrame : uint64_t {
    // The live heap of a process image that no live sample stands for (a heap smaller than the sampling interval, or
    // one whose sampled blocks were all freed): its size is the agent's exact count of it.
    UnsampledHeap = 1,
};
inline const char *markerFrameName(uint64_t address)
{
    switch (MarkerFrame(address)) {
    case MarkerFrame::UnsampledHeap:
        return "[heap no sample saw]";
    }
    return "[marker]";
}

// A native frame of CPython's interpreter (its eval loop, or a function that only passes a call on between two of
// its frames) that a recording keeping the interpreter's frames (SessionConfig::pythonInterpreterFrames) placed among
// the Python frames it ran: its address with this bit set, in the frame's own module. The exporter clears the bit
// and marks the frame's functions (engine/model/python_frame.h: isInterpreterFunction), so that the views can hide
// them again. No user-space address has bit 62 set; the kernel's addresses are never marked.
inline constexpr uint64_t kInterpreterFrameBit = uint64_t(1) << 62;

struct LocationKey {
    uint32_t moduleId = kUnknownModule;
    uint64_t address = 0;
    friend bool operator==(const LocationKey &, const LocationKey &) = default;
};

// Both halves of the key, whole: no packing of the module id into the address's high bits, which kernel
// addresses and module ids past 16 bits would collide in.
struct LocationKeyHash {
    size_t operator()(const LocationKey &key) const noexcept
    {
        uint64_t h = key.address * 0x9E3779B97F4A7C15ull;
        h ^= (static_cast<uint64_t>(key.moduleId) + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
        return static_cast<size_t>(h ^ (h >> 31));
    }
};

} // namespace emberline::engine
