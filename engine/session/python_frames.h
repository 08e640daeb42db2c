#pragma once

#include "engine/agent/python/python_layout.h"
#include "engine/memory/ring_reader.h"
#include "engine/unwind/walked_stack.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace emberline::engine {

class PythonStackReader;
class Recorder;
struct FlushInput;

// The session's half of CPython frames (the agent's half is engine/agent/python/agent_python.h): for each process image
// of the program, it finds the CPython (its version read from the binary, its structures' layout: engine/python) and
// tells the image's agent where they are; it keeps what the agents say of each code object (its qualified name,
// file, first line and line table); and it merges each sample's Python frames into its native stack: every
// eval-loop frame (recognized by its address range in the interpreter binary, never by name) is replaced by the
// Python frames that call of the eval loop ran, split at the entry frames the agent marked. Python frames become
// locations of the recorder's kPythonModule, each a (code object, line) named by name().
//
// Where the counts disagree (the native stack was cut before the outermost eval frames, or the Python chain was cut),
// the Python frames that no eval frame took go outermost, and the sample is counted as mismatched.
//
// Thread: the session thread.
class PythonFrames final : public PythonCodeSink {
public:
    // `keepInterpreter`: the interpreter's own frames kept (SessionConfig::pythonInterpreterFrames): each eval-loop
    // frame under the Python frames it ran, and the frames that pass calls on between them, marked as the
    // interpreter's (kInterpreterFrameBit) so that a view can hide them again as if they had not been kept.
    PythonFrames(RingReader &rings, Recorder &recorder, bool keepInterpreter = false);

    void onPythonImage(uint64_t image, uint32_t pid) override;
    void onPythonCode(uint64_t image, uint32_t pid, const agent::PythonCodeFacts &facts,
                      std::span<const uint8_t> bytes) override;

    // Replaces the eval-loop frames of `locations` (the recorder's location ids of process `pid`, leaf first) with the
    // Python frames of `python`, thread `tid`'s.
    void merge(uint32_t pid, uint32_t tid, const PythonFramesView &python, std::vector<uint32_t> &locations);

    // The Python frames of thread `tid` of process `pid`, read from outside while the thread is blocked in a system
    // call (a wait sample's: a blocked thread cannot run the agent's handler, but its chain cannot move either; the
    // caller checks that it still waits after the read). Empty when the process has no CPython the session found.
    // The view holds until the next call.
    PythonFramesView readWaiting(uint32_t pid, uint32_t tid);
    std::function<PythonFramesView(uint32_t pid, uint32_t tid)> waitReader()
    {
        return [this](uint32_t pid, uint32_t tid) { return readWaiting(pid, tid); };
    }

    // What a kPythonModule location's address stands for.
    struct Name {
        std::string function; // the qualified name (3.11+), the name before
        std::string file;
        int64_t line = 0; // 0: not known
    };
    Name name(uint64_t address) const;
    // Names the flush's Python locations (FlushInput::pythonNames).
    void nameFlush(FlushInput &input) const;

    // The interpreters found (or why not), a line per process, and the share of samples whose Python chain was read
    // whole, cut, or not read: for the health view.
    struct Stats {
        uint64_t samples = 0;    // samples of a process with a CPython the agent walks
        uint64_t whole = 0;      // its chain read to the end
        uint64_t cut = 0;        // cut (a pointer that looked wrong) or deeper than the agent's bound
        uint64_t notRead = 0;    // no Python thread state on the sampled thread, or no frame
        uint64_t mismatched = 0; // the native stack's eval-loop frames and the chain's splits disagreed
        uint64_t waitsRead = 0;  // of the samples, waits whose chain was read from outside (readWaiting)
    };
    const Stats &stats() const { return m_stats; }
    // For the health view and the summary: each process's CPython (or why none), and how its chains were read.
    // Lines that warn go to `faults`, those that inform to `notes`.
    void healthLines(std::vector<std::string> &faults, std::vector<std::string> &notes) const;

private:
    struct Interpreter {
        bool found = false;
        std::string said; // "CPython 3.12.1 (/usr/lib/libpython3.12.so, the 3.12 table)", or why none
        LineTableKind lineTable = LineTableKind::Locations;
        std::vector<std::pair<uint64_t, uint64_t>> evalLoop;   // [start, end) of each part of the eval loop
        std::vector<std::pair<uint64_t, uint64_t>> forwarders; // [start, end) of the functions that pass calls on
        uint64_t image = 0;                                    // the agent's process image it was found in
        std::shared_ptr<const PythonStackReader> reader;       // reads a blocked thread's chain (readWaiting)
        std::unordered_map<uint32_t, uint64_t> threadStates;   // a thread's PyThreadState, by thread id
    };
    struct Code {
        std::string function;
        std::string file;
        int firstLine = 0;
        LineTableKind lineTable = LineTableKind::Locations;
        std::vector<uint8_t> table;
    };
    // A Python location: a code object and a line, or (its description not read yet) the code's address and the
    // instruction, named when the description comes.
    struct Location {
        int64_t code = -1; // index into m_codes; -1: pending
        int line = 0;
        uint64_t image = 0;
        uint64_t codeAddress = 0;
        int32_t instruction = -1;
    };

    void addCode(uint64_t image, uint64_t address, Code code);
    // `resolved`, when given, is false for a frame whose code was not described yet (a location named later).
    uint32_t locationOf(uint64_t image, const agent::PythonFrame &frame, bool *resolved = nullptr);
    // The locations of a sample's Python frames, leaf first (valid until the next call).
    const std::vector<uint32_t> &locationsOf(uint32_t tid, const PythonFramesView &python);
    bool isEvalFrame(const Interpreter &interpreter, uint32_t location) const;
    bool isForwarder(const Interpreter &interpreter, uint32_t location) const;
    // The location of native frame `location` marked as the interpreter's own (kept, to be hidden by a view).
    uint32_t interpreterFrame(uint32_t location);
    int lineOf(const Code &code, int32_t instruction) const;

    RingReader &m_rings;
    Recorder &m_recorder;
    std::map<uint32_t, Interpreter> m_interpreters;             // by pid (the newest image's)
    std::map<std::pair<uint64_t, uint64_t>, uint32_t> m_codeAt; // (image, code address) -> its newest m_codes
    struct FrameKey {
        uint64_t image;
        uint64_t code;
        int32_t instruction;
        bool operator==(const FrameKey &) const = default;
    };
    struct HashFrameKey {
        size_t operator()(const FrameKey &k) const
        {
            return std::hash<uint64_t>()(k.image * 0x9E3779B97F4A7C15ull ^ k.code ^
                                         uint64_t(uint32_t(k.instruction)) << 48);
        }
    };
    // A described code's frames, by (image, code, instruction): their location ids.
    std::unordered_map<FrameKey, uint32_t, HashFrameKey> m_frameLocations;
    std::vector<Code> m_codes;
    std::vector<Location> m_locations;                          // address - 1
    std::unordered_map<uint64_t, uint32_t> m_resolvedLocations; // code << 24 | line -> index
    std::map<std::tuple<uint64_t, uint64_t, int32_t>, uint32_t> m_pendingLocations;
    // Each thread's last sample's Python frames and their locations (locationsOf), by (image, tid).
    struct LastFrames {
        std::vector<agent::PythonFrame> frames;
        std::vector<uint32_t> locations;
        std::vector<uint8_t> resolved;
    };
    static constexpr size_t kMaxRememberedThreads = 4096;
    std::map<std::pair<uint64_t, uint32_t>, LastFrames> m_lastFrames;
    std::vector<uint32_t> m_resolved;          // locationsOf()'s
    std::vector<uint8_t> m_resolvedFlags;      // locationsOf()'s
    std::vector<uint32_t> m_merged;            // merge()'s scratch
    std::vector<agent::PythonFrame> m_waiting; // readWaiting()'s frames
    Stats m_stats;
    bool m_keepInterpreter = false;
};

} // namespace emberline::engine
