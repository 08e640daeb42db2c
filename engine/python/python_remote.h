#pragma once

#include "engine/agent/python/agent_python.h"
#include "engine/common/result.h"
#include "engine/python/python_image.h"
#include "engine/python/python_layout_choice.h"

#include <cstdint>
#include <string>
#include <vector>

namespace emberline::engine {

// One Python frame of a thread, innermost first in its stack.
struct PythonFrame {
    std::string name; // co_qualname from 3.11 ("Worker.hot", "outer.<locals>.inner"); co_name before (see below)
    std::string file; // co_filename
    int line = 0;     // the line being executed; 0 when the line table gives the instruction none
    // 3.11+: the first frame that one call of the eval loop runs (3.11 `is_entry`; 3.12+ the frame whose previous
    // frame is the loop's shim owned by the C stack). One native eval-loop frame holds the Python frames from an
    // entry frame up to the next entry frame's callee; later work splits native stacks there.
    bool entry = false;
};

// One thread state's Python stack.
struct PythonThreadStack {
    uint64_t nativeThreadId = 0; // the kernel's thread id; 0 when not known
    uint64_t threadId = 0;       // PyThreadState.thread_id: the thread's pthread_t
    std::vector<PythonFrame> frames;
    bool complete = true; // false when the chain was cut: an unreadable frame, a cycle, or deeper than kMaxDepth
    std::string problem;  // why it is not complete
};

// Reads the Python stacks of another process from outside, with process_vm_readv (same user, or CAP_SYS_PTRACE; a
// process that is not our descendant also needs ptrace_scope 0): every thread state of every interpreter, each
// frame's qualified name, file and line. Every read is checked; a chain is cut at kMaxDepth frames, at a cycle or at
// an unreadable frame, and says so. The process may be stopped or running: a running one may change its frames
// under the walk, which then stops where a read fails or a pointer leads nowhere.
//
// Which frames count: from 3.11 on, frames that have not started (_PyFrame_IsIncomplete: before the code's first
// traceable instruction, generators excepted) and the eval loop's own shim frames (3.12+, owned by the C stack) are
// skipped, as CPython's own tracebacks skip them.
//
// Names: before 3.11 a code object knows only its bare name (co_name), and a frame holds no function object to ask
// for a qualified one; the type of a `self` argument would name a subclass for an inherited method, so the bare name
// is given as it is.
//
// Thread: any; one reader at a time.
class PythonStackReader {
public:
    static constexpr int kMaxDepth = 1024;   // frames a thread
    static constexpr int kMaxThreads = 4096; // thread states an interpreter
    static constexpr int kMaxInterpreters = 256;

    // Finds the process's CPython, its version and its layout (for 3.13 from the process's debug offsets).
    static Result<PythonStackReader> attach(int pid);

    Result<std::vector<PythonThreadStack>> readStacks() const;

    // Thread `nativeTid`'s Python frames as the agent writes them (code object, instruction offset, entry flag), leaf
    // first, into `out`: for a thread known to be blocked, whose chain cannot move while it waits (its caller checks
    // that it still waits after the read). `threadState` caches the thread's state between calls (0: look for it in
    // the interpreters' thread lists; checked at each use). While subinterpreters exist the thread may hold a state in
    // each interpreter it has entered: their chains are joined as the agent joins them (agent_python.h), the running
    // one leafward, and none is cached. Returns agent::PythonWalkFlag bits (PythonWalkNoThread when no thread state is
    // the thread's).
    uint32_t readThreadCodes(uint32_t nativeTid, uint64_t &threadState, std::vector<agent::PythonFrame> &out) const;
    // What names a code object: its qualified name (the bare one before 3.11), file, first line and line table.
    struct CodeFacts {
        std::string name;
        std::string file;
        int firstLine = 0;
        std::vector<uint8_t> lineTable;
    };
    bool describeCode(uint64_t code, CodeFacts &out) const;

    int pid() const { return m_pid; }
    const PythonImage &image() const { return m_image; }
    const ChosenPythonLayout &layout() const { return m_layout; }

private:
    PythonStackReader() = default;
    bool read(uint64_t address, void *out, size_t size) const;
    bool readPointer(uint64_t address, uint64_t &out) const { return read(address, &out, sizeof out); }
    PythonThreadStack readThread(uint64_t threadState) const;
    uint64_t nativeIdOf(uint64_t threadState) const;
    // Thread `nativeTid`'s states, one per interpreter, the one it runs first, then newest interpreter first.
    std::vector<uint64_t> threadStatesOf(uint32_t nativeTid) const;
    // The chain of thread state `threadState`, leaf first; false with `problem` said where it was cut.
    bool walkCodes(uint64_t threadState, std::vector<agent::PythonFrame> &out, std::string &problem) const;
    bool readFrameCode(uint64_t frame, agent::PythonFrame &out, bool &skip) const;
    std::string readString(uint64_t unicode) const;
    uint64_t nativeIdOfPthread(uint64_t pthread) const;

    int m_pid = 0;
    PythonImage m_image;
    ChosenPythonLayout m_layout;
};

} // namespace emberline::engine
