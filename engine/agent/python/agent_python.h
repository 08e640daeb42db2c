#pragma once

// The agent's walk of CPython's frames: at a sample (an allocation hook's, or the CPU handler's), the thread reads its
// own Python frame chain, leaf first, and writes each frame's code object and instruction beside the native frames.
// The session tells the agent where the interpreter's structures are (PythonTarget, in the ring's header: the layout
// of the version it found, _PyRuntime's and PyCode_Type's addresses); the first time the agent meets a code object it
// writes what names it (pythonCodeFacts), and the session turns (code, instruction) into function, file and line.
//
// Safety: only the thread's own chain is read, while the thread is stopped in the hook or the handler, so every frame
// on it is alive and the code objects they hold are too. Each pointer is still checked before it is followed
// (non-null, aligned, in the user half of the address space; a code object must have PyCode_Type as its type), the
// depth is bounded (kMaxPythonFrames) and a chain that loops or looks wrong is cut and marked, never followed further.
// No allocation, no lock, no system call: safe in a signal handler.

#include "engine/agent/python/python_layout.h"

#include <stddef.h>
#include <stdint.h>

namespace emberline::agent {

// What the session found of the CPython in a process image.
struct PythonTarget {
    engine::PythonLayout layout;
    uint64_t runtime = 0;  // &_PyRuntime in the process
    uint64_t codeType = 0; // &PyCode_Type in the process (0: not known; code objects are then not checked by type)
};

inline constexpr int kMaxPythonFrames = 256;

// A Python frame as the walk gives it.
enum PythonFrameFlag : uint32_t {
    // The first frame its call of the eval loop runs (3.11+: is_entry, or the previous frame is the C stack's shim;
    // before 3.11 every frame is its own call of the eval loop): the session splits the chain at these to match the
    // native stack's eval-loop frames.
    PythonFrameEntry = 1u << 0,
};
struct PythonFrame {
    uint64_t code;       // the code object's address
    int32_t instruction; // the byte offset of the instruction running in the code's bytecode; -1 when not known
    uint32_t flags;      // PythonFrameFlag
};

// How a walk ended (bits).
enum PythonWalkFlag : uint32_t {
    PythonWalkNoThread = 1u << 0,  // no thread state belongs to this thread (not a Python thread, or not yet)
    PythonWalkCut = 1u << 1,       // a pointer looked wrong or the chain looped: the frames before it are given
    PythonWalkTruncated = 1u << 2, // the depth bound was reached: the outermost frames are missing
};

// What the caller keeps per thread between walks: the thread's PyThreadState, found once by walking the interpreters'
// thread lists for the thread's pthread_self() and checked at each use. While subinterpreters exist, a thread may hold
// a state in each interpreter it has entered: then every walk reads the lists again, joins the chains of all of them
// (the running one leafward, the ones that entered it rootward) and caches none.
struct PythonThreadCache {
    uint64_t threadState; // 0: not found yet (a plain value: it lives in the agent's thread state, set up as a whole)
};

// A thread's memo of the code objects its walks met, direct-mapped by the address of the frame that ran each (the agent
// keeps one per thread beside its stack walk's memo: agent_walk.h). A frame at the same address running the same code
// object as at an earlier walk runs that code object still (the frame holds it alive; only a code object freed and
// another made at its address, run by a frame at the same address, would pass for it): the walk takes what it read of
// the code then, and the sample knows whether it described the code in this ring already.
struct PythonCodeMemo {
    static constexpr uint32_t kEntries = 128;
    struct Entry {
        uint64_t seal; // sealOf(frame, code); 0: empty
        uint64_t bytecode;
        int64_t size;
        int64_t firstTraceable;
        uint64_t described; // the serial of the ring the code was described in (0: none yet)
    };
    Entry entries[kEntries];

    // The thread's last walk of one chain (one thread state) that ended at the chain's end: every word it read of each
    // frame it visited, and what it made of them. A walk that reads the same words gives the same frames, so the next
    // walk compares where it would decode (repeatChain); a frame whose instruction alone moved is placed again with the
    // code shape kept here. `described`: the ring serial at which every code object of the chain was known described
    // (agent_pystack.cpp), 0 when not yet.
    static constexpr int kChainVisits = 48;
    enum class VisitKind : uint8_t { Shim, Waiting, Given };
    struct Visit {
        uint64_t frame;
        uint64_t previous;
        uint64_t code;        // Waiting, Given
        uint64_t instruction; // the instruction field as read (Waiting, Given)
        uint64_t bytecode;    // the code's shape (readCodeShape)
        int64_t size;
        int64_t firstTraceable;
        int32_t offset;  // the instruction's byte offset as given (Given)
        uint32_t flags;  // the frame's PythonFrameFlag as given (Given)
        uint8_t owner;   // as read (kPyNoOwner where the layout has none)
        uint8_t isEntry; // as read (0 where the walk read none)
        VisitKind kind;
        uint8_t given; // its place among the frames given (Given)
    };
    uint64_t chainState; // the thread state whose chain is kept (0: none)
    uint64_t chainRuntime;
    int32_t chainVisits;
    int32_t chainGiven;
    uint64_t described;
    bool repeated; // the last walk gave the kept chain's code objects again
    bool moved;    // and an instruction of it moved since the walk before (compareKept placed it again)
    // pythonStackHash of the frames given (chainGiven of them, no walk flags), where gatherPython knows it; 0: not
    // known
    uint64_t givenHash;
    uint32_t checkLeft; // repeats until the next is checked against a walk anew (agent_pystack.cpp)
    Visit visits[kChainVisits];
    // The frames the kept chain gives, and their addresses, in the order given: a repeat copies them out at once,
    // having placed again only the instructions that moved.
    PythonFrame givenFrames[kChainVisits];
    uint64_t givenAddresses[kChainVisits];

    static uint64_t sealOf(uint64_t frame, uint64_t code)
    {
        uint64_t h = frame * 0x9E3779B97F4A7C15ull ^ code;
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        return h | 1;
    }
    Entry &at(uint64_t frame) { return entries[(frame >> 4) & (kEntries - 1)]; }
};

// Walks the calling thread's Python frames, leaf first, into `out` (at most `room`); returns how many, and sets
// `flags` (PythonWalkFlag). `addresses` (null: not wanted) takes the address of each of the first `addressRoom` frames
// given; `memo` (null: none) is read and kept up to date.
int pythonWalk(const PythonTarget &target, PythonThreadCache &cache, PythonFrame *out, int room, uint32_t &flags,
               uint64_t *addresses = nullptr, int addressRoom = 0, PythonCodeMemo *memo = nullptr);

// A fingerprint of a code object (its address and the addresses of the objects it holds: its name, file and line
// table), so that another code object at the same address after the first was freed is told apart. 0 when the code
// object cannot be read.
uint32_t pythonCodeTag(const PythonTarget &target, uint64_t code);

// What names a code object, for the session, serialized into `out` (at most `room` bytes): a PythonCodeFacts, then
// its qualified name's bytes, its file name's bytes and its line table's bytes. Returns the bytes written, 0 when the
// code object cannot be read or `room` is too small for its header (strings longer than the room are cut and marked).
struct PythonCodeFacts {
    uint64_t code;
    uint32_t tag;       // pythonCodeTag
    int32_t firstLine;  // co_firstlineno
    uint32_t nameBytes; // the qualified name (co_qualname from 3.11, co_name before), as the string stores it
    uint32_t fileBytes; // co_filename
    uint32_t lineTableBytes;
    uint8_t nameKind; // bytes per character of the name's storage: 1 (ASCII or Latin-1), 2 or 4
    uint8_t fileKind;
    uint8_t cut; // 1: a string or the line table was longer than the room and is cut
    uint8_t reserved;
};
size_t pythonCodeFacts(const PythonTarget &target, uint64_t code, void *out, size_t room);

} // namespace emberline::agent
