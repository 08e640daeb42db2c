#pragma once

#include <cstdint>

// The byte offsets that walking CPython's frames needs, one table per minor version (x86-64, the default build:
// no debug build, no free threading). Plain data and constexpr: this header includes nothing but <cstdint>, so that
// the agent (no C++ runtime, read inside a signal handler) can use the same tables later.
//
// The chain a walk follows, with the field of each step:
//   _PyRuntime.interpreters.head -> PyInterpreterState (.next) -> its threads' head -> PyThreadState (.next)
//   (a thread that has entered a subinterpreter holds a state in each interpreter: the running one is the GIL's holder,
//   _PyRuntime.gilstate.tstate_current, through 3.11, the one whose _status.active is set from 3.12)
//   PyThreadState -> the current frame: `frame` (3.8-3.10, a PyFrameObject), `cframe->current_frame` (3.11, 3.12),
//                    `current_frame` (3.13), both _PyInterpreterFrame
//   frame -> previous frame (`f_back` / `previous`), code object (`f_code`, 3.13 `f_executable`), instruction
//   code  -> file name, name, qualified name (3.11+), first line, line table, bytecode
//
// Every value was read from the version's own headers (cpython/pystate.h, internal/pycore_interp.h,
// internal/pycore_runtime.h, frameobject.h / internal/pycore_frame.h, code.h / cpython/code.h, unicodeobject.h,
// bytesobject.h) and is checked against them by tests/engine/python/tst_python_layout.cpp, which compiles a probe
// of offsetof() against every installed version's headers. 3.13 also describes itself (_Py_DebugOffsets at the
// start of _PyRuntime): python_layout.cpp reads that first and takes from the 3.13 table only what it lacks.

namespace emberline::engine {

// An offset this version does not have.
inline constexpr uint32_t kPyAbsent = 0xffffffffu;
// An owner value this version does not have.
inline constexpr uint8_t kPyNoOwner = 0xffu;

// What a frame's instruction field holds.
enum class InstructionKind : uint8_t {
    LastiBytes,     // 3.8, 3.9: int f_lasti, a byte offset into co_code (-1 before the first instruction)
    LastiCodeUnits, // 3.10: int f_lasti, an index of 2-byte code units (-1 before the first instruction)
    PrevInstr,      // 3.11, 3.12: _Py_CODEUNIT *prev_instr, the unit before the next one to run
    InstrPtr,       // 3.13: _Py_CODEUNIT *instr_ptr, the instruction running or about to run
};

// The format of the code object's line table (python_lines.h decodes each).
enum class LineTableKind : uint8_t {
    Lnotab,    // 3.8, 3.9: co_lnotab, (byte increment, signed line increment) pairs
    Pep626,    // 3.10: co_linetable, (byte delta, signed line delta; -128 = no line) pairs
    Locations, // 3.11+: co_linetable, the location table (Objects/locations.md)
};

struct PythonLayout {
    uint8_t major = 0;
    uint8_t minor = 0;

    // _PyRuntimeState
    uint32_t runtimeInterpretersHead = kPyAbsent; // interpreters.head
    // gilstate.tstate_current (3.8-3.11): the thread state that holds the GIL, the one its thread runs. A thread holds
    // a thread state per interpreter it has entered; this and `threadActiveBit` tell which of them is running.
    uint32_t runtimeThreadCurrent = kPyAbsent;
    // PyInterpreterState
    uint32_t interpNext = kPyAbsent;
    uint32_t interpThreadsHead = kPyAbsent; // tstate_head (3.8-3.10), threads.head (3.11+)
    // PyThreadState
    uint32_t threadNext = kPyAbsent;
    uint32_t threadId = kPyAbsent;           // unsigned long thread_id: the pthread_t of the thread
    uint32_t threadNativeId = kPyAbsent;     // unsigned long native_thread_id (3.11+): the kernel's thread id
    uint32_t threadFrame = kPyAbsent;        // frame (3.8-3.10), current_frame (3.13); absent when through the cframe
    uint32_t threadCframe = kPyAbsent;       // cframe (3.11, 3.12)
    uint32_t cframeCurrentFrame = kPyAbsent; // _PyCFrame.current_frame (3.11, 3.12)
    uint32_t threadStatus = kPyAbsent;       // _status (3.12+), a 32-bit word of bit fields
    uint32_t threadActiveBit = 0;            // _status.active (3.12+): swapped in, the state its thread runs

    // PyFrameObject (3.8-3.10) or _PyInterpreterFrame (3.11+)
    uint32_t framePrevious = kPyAbsent; // f_back, previous
    uint32_t frameCode = kPyAbsent;     // f_code, f_executable (3.13)
    uint32_t frameInstruction = kPyAbsent;
    uint32_t frameOwner = kPyAbsent;   // char owner (3.11+)
    uint32_t frameIsEntry = kPyAbsent; // bool is_entry (3.11 only)
    InstructionKind instruction = InstructionKind::LastiBytes;
    uint8_t ownerGenerator = kPyNoOwner; // FRAME_OWNED_BY_GENERATOR (3.11+)
    // FRAME_OWNED_BY_CSTACK (3.12+): the eval loop's shim frame on the C stack (`entry_frame` in ceval.c), not a
    // Python frame. The Python frame whose previous frame is such a shim is the first frame that call of the eval
    // loop runs: an entry frame.
    uint8_t ownerCStack = kPyNoOwner;

    // PyCodeObject
    uint32_t codeFilename = kPyAbsent;
    uint32_t codeName = kPyAbsent;
    uint32_t codeQualname = kPyAbsent;     // 3.11+
    uint32_t codeFirstLineno = kPyAbsent;  // int
    uint32_t codeLineTable = kPyAbsent;    // co_lnotab (3.8, 3.9), co_linetable (3.10+): a bytes object
    uint32_t codeCode = kPyAbsent;         // co_code, a bytes object (3.8-3.10)
    uint32_t codeCodeAdaptive = kPyAbsent; // co_code_adaptive, the bytecode inside the code object (3.11+)
    // int _co_firsttraceable (3.11+), in code units: a frame whose instruction lies before it has not started
    // (_PyFrame_IsIncomplete).
    uint32_t codeFirstTraceable = kPyAbsent;
    LineTableKind lineTable = LineTableKind::Lnotab;

    // PyObject, PyASCIIObject / PyCompactUnicodeObject, PyBytesObject
    uint32_t objectType = kPyAbsent;         // ob_type
    uint32_t unicodeLength = kPyAbsent;      // length, in code points
    uint32_t unicodeState = kPyAbsent;       // the state bit field, read as a 32-bit word
    uint32_t unicodeAsciiData = kPyAbsent;   // sizeof(PyASCIIObject): a compact ASCII string's characters
    uint32_t unicodeCompactData = kPyAbsent; // sizeof(PyCompactUnicodeObject): a compact non-ASCII string's data
    uint32_t unicodeKindShift = 2;           // state.kind: 3 bits after interned:2 (1, 2 or 4 bytes a character)
    uint32_t unicodeCompactBit = 1u << 5;    // state.compact
    uint32_t unicodeAsciiBit = 1u << 6;      // state.ascii
    uint32_t bytesSize = kPyAbsent;          // ob_size
    uint32_t bytesData = kPyAbsent;          // ob_sval
};

// 3.8, 3.9: PyFrameObject frames, pointed to by PyThreadState.frame.
inline constexpr PythonLayout kPython38{.major = 3,
                                        .minor = 8,
                                        .runtimeInterpretersHead = 32,
                                        .runtimeThreadCurrent = 1368,
                                        .interpNext = 0,
                                        .interpThreadsHead = 8,
                                        .threadNext = 8,
                                        .threadId = 176,
                                        .threadFrame = 24,
                                        .framePrevious = 24,
                                        .frameCode = 32,
                                        .frameInstruction = 104,
                                        .instruction = InstructionKind::LastiBytes,
                                        .codeFilename = 104,
                                        .codeName = 112,
                                        .codeFirstLineno = 40,
                                        .codeLineTable = 120,
                                        .codeCode = 48,
                                        .lineTable = LineTableKind::Lnotab,
                                        .objectType = 8,
                                        .unicodeLength = 16,
                                        .unicodeState = 32,
                                        .unicodeAsciiData = 48,
                                        .unicodeCompactData = 72,
                                        .bytesSize = 16,
                                        .bytesData = 32};

inline constexpr PythonLayout kPython39 = [] {
    PythonLayout l = kPython38;
    l.minor = 9;
    l.runtimeThreadCurrent = 568;
    return l;
}();

// 3.10: f_lasti moves and counts code units; the line table becomes PEP 626's co_linetable.
inline constexpr PythonLayout kPython310 = [] {
    PythonLayout l = kPython38;
    l.minor = 10;
    l.runtimeThreadCurrent = 568;
    l.frameInstruction = 96;
    l.instruction = InstructionKind::LastiCodeUnits;
    l.lineTable = LineTableKind::Pep626;
    return l;
}();

// 3.11: _PyInterpreterFrame through the thread's _PyCFrame; frames mark their eval loop's entry with is_entry.
inline constexpr PythonLayout kPython311{.major = 3,
                                         .minor = 11,
                                         .runtimeInterpretersHead = 40,
                                         .runtimeThreadCurrent = 576,
                                         .interpNext = 0,
                                         .interpThreadsHead = 16,
                                         .threadNext = 8,
                                         .threadId = 152,
                                         .threadNativeId = 160,
                                         .threadCframe = 56,
                                         .cframeCurrentFrame = 8,
                                         .framePrevious = 48,
                                         .frameCode = 32,
                                         .frameInstruction = 56,
                                         .frameOwner = 69,
                                         .frameIsEntry = 68,
                                         .instruction = InstructionKind::PrevInstr,
                                         .ownerGenerator = 1,
                                         .codeFilename = 112,
                                         .codeName = 120,
                                         .codeQualname = 128,
                                         .codeFirstLineno = 72,
                                         .codeLineTable = 136,
                                         .codeCodeAdaptive = 184,
                                         .codeFirstTraceable = 168,
                                         .lineTable = LineTableKind::Locations,
                                         .objectType = 8,
                                         .unicodeLength = 16,
                                         .unicodeState = 32,
                                         .unicodeAsciiData = 48,
                                         .unicodeCompactData = 72,
                                         .bytesSize = 16,
                                         .bytesData = 32};

// 3.12: is_entry gives way to a shim frame owned by the C stack; PyASCIIObject loses wstr.
inline constexpr PythonLayout kPython312{.major = 3,
                                         .minor = 12,
                                         .runtimeInterpretersHead = 40,
                                         .interpNext = 0,
                                         .interpThreadsHead = 72,
                                         .threadNext = 8,
                                         .threadId = 136,
                                         .threadNativeId = 144,
                                         .threadCframe = 56,
                                         .cframeCurrentFrame = 0,
                                         .threadStatus = 24,
                                         .threadActiveBit = 1u << 4,
                                         .framePrevious = 8,
                                         .frameCode = 0,
                                         .frameInstruction = 56,
                                         .frameOwner = 70,
                                         .instruction = InstructionKind::PrevInstr,
                                         .ownerGenerator = 1,
                                         .ownerCStack = 3,
                                         .codeFilename = 112,
                                         .codeName = 120,
                                         .codeQualname = 128,
                                         .codeFirstLineno = 68,
                                         .codeLineTable = 136,
                                         .codeCodeAdaptive = 192,
                                         .codeFirstTraceable = 176,
                                         .lineTable = LineTableKind::Locations,
                                         .objectType = 8,
                                         .unicodeLength = 16,
                                         .unicodeState = 32,
                                         .unicodeAsciiData = 40,
                                         .unicodeCompactData = 56,
                                         .bytesSize = 16,
                                         .bytesData = 32};

// 3.13 as its headers lay it out; a process's own _Py_DebugOffsets come first (python_layout.cpp).
inline constexpr PythonLayout kPython313{.major = 3,
                                         .minor = 13,
                                         .runtimeInterpretersHead = 632,
                                         .interpNext = 7264,
                                         .interpThreadsHead = 7344,
                                         .threadNext = 8,
                                         .threadId = 152,
                                         .threadNativeId = 160,
                                         .threadFrame = 72,
                                         .threadStatus = 32,
                                         .threadActiveBit = 1u << 4,
                                         .framePrevious = 8,
                                         .frameCode = 0,
                                         .frameInstruction = 56,
                                         .frameOwner = 70,
                                         .instruction = InstructionKind::InstrPtr,
                                         .ownerGenerator = 1,
                                         .ownerCStack = 3,
                                         .codeFilename = 112,
                                         .codeName = 120,
                                         .codeQualname = 128,
                                         .codeFirstLineno = 68,
                                         .codeLineTable = 136,
                                         .codeCodeAdaptive = 200,
                                         .codeFirstTraceable = 184,
                                         .lineTable = LineTableKind::Locations,
                                         .objectType = 8,
                                         .unicodeLength = 16,
                                         .unicodeState = 32,
                                         .unicodeAsciiData = 40,
                                         .unicodeCompactData = 56,
                                         .bytesSize = 16,
                                         .bytesData = 32};

// The table of 3.8-3.12 (3.13 only through its debug offsets: python_layout.cpp); null for any other version.
constexpr const PythonLayout *builtinLayout(int major, int minor)
{
    if (major != 3)
        return nullptr;
    switch (minor) {
    case 8:
        return &kPython38;
    case 9:
        return &kPython39;
    case 10:
        return &kPython310;
    case 11:
        return &kPython311;
    case 12:
        return &kPython312;
    default:
        return nullptr;
    }
}

// 3.13's _Py_DebugOffsets (internal/pycore_runtime.h), the first member of _PyRuntimeState: an 8-byte cookie
// "xdebugpy", PY_VERSION_HEX, then groups of 64-bit offsets, each group led by the size of its structure. Laid out
// here field for field (all 64-bit, no padding) so that one read of the process's memory fills it; only 3.13's
// order is known, a later version's is not read with it.
struct DebugOffsets313 {
    char cookie[8];
    uint64_t version;
    uint64_t freeThreaded;
    struct {
        uint64_t size, finalizing, interpretersHead;
    } runtimeState;
    struct {
        uint64_t size, id, next, threadsHead, gc, importsModules, sysdict, builtins, cevalGil, gilRuntimeState,
            gilEnabled, gilLocked, gilHolder;
    } interpreterState;
    struct {
        uint64_t size, prev, next, interp, currentFrame, threadId, nativeThreadId, datastackChunk, status;
    } threadState;
    struct {
        uint64_t size, previous, executable, instrPtr, localsplus, owner;
    } interpreterFrame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
            coCodeAdaptive;
    } codeObject;
    struct {
        uint64_t size, obType;
    } pyObject;
    struct {
        uint64_t size, tpName, tpRepr, tpFlags;
    } typeObject;
    struct {
        uint64_t size, obItem, obSize;
    } tupleObject;
    struct {
        uint64_t size, obItem, obSize;
    } listObject;
    struct {
        uint64_t size, maKeys, maValues;
    } dictObject;
    struct {
        uint64_t size, obFval;
    } floatObject;
    struct {
        uint64_t size, lvTag, obDigit;
    } longObject;
    struct {
        uint64_t size, obSize, obSval;
    } bytesObject;
    struct {
        uint64_t size, state, length, asciiobjectSize;
    } unicodeObject;
    struct {
        uint64_t size, collecting;
    } gc;
};
static_assert(sizeof(DebugOffsets313) == sizeof(uint64_t) * 73,
              "3.13's _Py_DebugOffsets: a cookie and 72 64-bit fields");

inline constexpr char kPyDebugCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};

// Builds a layout from a 3.13 process's debug offsets. What they do not describe (the first traceable instruction,
// a non-ASCII string's data) is taken from `fill` when it is given, else left absent.
constexpr PythonLayout layoutFromDebugOffsets(const DebugOffsets313 &o, const PythonLayout *fill)
{
    PythonLayout l;
    l.major = static_cast<uint8_t>(o.version >> 24);
    l.minor = static_cast<uint8_t>(o.version >> 16);
    const auto at = [](uint64_t v) { return v < kPyAbsent ? static_cast<uint32_t>(v) : kPyAbsent; };
    l.runtimeInterpretersHead = at(o.runtimeState.interpretersHead);
    l.interpNext = at(o.interpreterState.next);
    l.interpThreadsHead = at(o.interpreterState.threadsHead);
    l.threadNext = at(o.threadState.next);
    l.threadId = at(o.threadState.threadId);
    l.threadNativeId = at(o.threadState.nativeThreadId);
    l.threadFrame = at(o.threadState.currentFrame);
    l.threadStatus = at(o.threadState.status);
    l.threadActiveBit = 1u << 4; // _status.active of 3.13: a bit field, named but not placed by the debug offsets
    l.framePrevious = at(o.interpreterFrame.previous);
    l.frameCode = at(o.interpreterFrame.executable);
    l.frameInstruction = at(o.interpreterFrame.instrPtr);
    l.frameOwner = at(o.interpreterFrame.owner);
    l.instruction = InstructionKind::InstrPtr;
    l.ownerGenerator = 1; // enum _frameowner of 3.13: values, not layout
    l.ownerCStack = 3;
    l.codeFilename = at(o.codeObject.filename);
    l.codeName = at(o.codeObject.name);
    l.codeQualname = at(o.codeObject.qualname);
    l.codeFirstLineno = at(o.codeObject.firstlineno);
    l.codeLineTable = at(o.codeObject.linetable);
    l.codeCodeAdaptive = at(o.codeObject.coCodeAdaptive);
    l.lineTable = LineTableKind::Locations;
    l.objectType = at(o.pyObject.obType);
    l.unicodeLength = at(o.unicodeObject.length);
    l.unicodeState = at(o.unicodeObject.state);
    l.unicodeAsciiData = at(o.unicodeObject.asciiobjectSize);
    l.bytesSize = at(o.bytesObject.obSize);
    l.bytesData = at(o.bytesObject.obSval);
    if (fill) {
        l.codeFirstTraceable = fill->codeFirstTraceable;
        l.unicodeCompactData = fill->unicodeCompactData;
    }
    return l;
}

} // namespace emberline::engine
