// The agent's walk of CPython's frames (agent_python.h).
//
// Every structure is read in place (agent_python_read.h): the chain is the calling thread's own, stopped in a hook or
// a handler. The descriptions of code objects for the session are agent_python_code.cpp's.
//
// Which frames a walk gives, version by version (the same rules as CPython's tracebacks):
//   3.8-3.10  every PyFrameObject on `f_back`; each is its own call of the eval loop (PythonFrameEntry)
//   3.11      frames that have started (_PyFrame_IsIncomplete: the instruction before the code's first traceable
//             one, generators excepted); `is_entry` says the eval loop's first frame
//   3.12+     the same, and the eval loop's shim frames (owned by the C stack) are left out: the frame above a shim
//             (whose `previous` it is) is the first frame of that call of the eval loop
//
// Thread: any; touches nothing shared. No allocation, no lock, no system call; pthread_self is the one libc call
// (glibc reads it from the thread pointer).

#include "engine/agent/python/agent_python.h"
#include "engine/agent/python/agent_python_read.h"

#include <pthread.h>

namespace emberline::agent {
namespace {

using engine::InstructionKind;
using engine::kPyAbsent;
using engine::kPyNoOwner;
using engine::PythonLayout;
using namespace python_read;

constexpr int kMaxInterpreters = 64;
constexpr int kMaxThreadStates = 4096;
// The thread states of one thread whose chains a walk joins: one per interpreter the thread has entered and not left.
constexpr int kMaxThreadStatesPerThread = 8;
// Frames visited (given or skipped) before a chain is called wrong: at most one shim and one frame not yet started
// beside each frame given.
constexpr int kMaxVisits = 4 * kMaxPythonFrames;

// Whether `threadState` is the one its thread runs now, when a thread holds one per interpreter it has entered: the
// GIL's holder (3.8-3.11), or the one swapped in (3.12+, where each interpreter may have a GIL of its own). True when
// the layout cannot tell.
bool runningState(const PythonTarget &target, uint64_t threadState)
{
    const PythonLayout &l = target.layout;
    if (l.runtimeThreadCurrent != kPyAbsent)
        return loadPointer(target.runtime, l.runtimeThreadCurrent) == threadState;
    if (l.threadStatus != kPyAbsent && l.threadActiveBit != 0)
        return (load<uint32_t>(threadState + l.threadStatus) & l.threadActiveBit) != 0;
    return true;
}

// The calling thread's PyThreadStates into `out`, the one it runs first; returns how many (0: none).
//
// With one interpreter the thread has one state: the cached one while its thread_id is still this thread's, else
// found anew on the interpreter's thread list. With subinterpreters a thread has a state in each interpreter it has
// entered (running code in a subinterpreter swaps the caller's state out and the subinterpreter's in, on the same
// thread), so every list is read at every walk: the running state first, then the others newest interpreter first
// (the order interpreters.head keeps), which is the order they nest in when each was entered from the one before.
// Nothing found then is cached: a subinterpreter's states are freed with it, and a cached pointer to one would be
// followed after.
int threadStates(const PythonTarget &target, PythonThreadCache &cache, uint64_t (&out)[kMaxThreadStatesPerThread])
{
    const PythonLayout &l = target.layout;
    if (l.threadId == kPyAbsent || l.runtimeInterpretersHead == kPyAbsent || l.interpNext == kPyAbsent ||
        l.interpThreadsHead == kPyAbsent || l.threadNext == kPyAbsent || !plausible(target.runtime))
        return 0;
    const uint64_t self = static_cast<uint64_t>(pthread_self());
    const uint64_t head = loadPointer(target.runtime, l.runtimeInterpretersHead);
    const bool several = plausible(head) && plausible(loadPointer(head, l.interpNext));
    if (!several && plausible(cache.threadState) && loadPointer(cache.threadState, l.threadId) == self) {
        out[0] = cache.threadState;
        return 1;
    }
    cache.threadState = 0;
    int count = 0;
    uint64_t interp = head;
    for (int i = 0; i < kMaxInterpreters && plausible(interp) && count < kMaxThreadStatesPerThread; ++i) {
        uint64_t thread = loadPointer(interp, l.interpThreadsHead);
        // Every match, not the first: a thread starting another one (before 3.11) holds for a while the new
        // thread's state too, made ahead with the starter's thread id and no frame yet.
        for (int j = 0; j < kMaxThreadStates && plausible(thread) && count < kMaxThreadStatesPerThread; ++j) {
            if (loadPointer(thread, l.threadId) == self) {
                out[count++] = thread;
                if (!several)
                    break;
            }
            thread = loadPointer(thread, l.threadNext);
        }
        interp = loadPointer(interp, l.interpNext);
    }
    if (!several) {
        cache.threadState = count > 0 ? out[0] : 0;
        return count;
    }
    for (int i = 1; i < count; ++i) {
        if (!runningState(target, out[i]))
            continue;
        const uint64_t running = out[i];
        for (int k = i; k > 0; --k)
            out[k] = out[k - 1];
        out[0] = running;
        break;
    }
    return count;
}

// The thread's current frame (0 when it runs none, or the layout cannot say).
uint64_t currentFrame(const PythonLayout &l, uint64_t threadState)
{
    if (l.threadFrame != kPyAbsent)
        return loadPointer(threadState, l.threadFrame);
    if (l.threadCframe == kPyAbsent || l.cframeCurrentFrame == kPyAbsent)
        return 0;
    const uint64_t cframe = loadPointer(threadState, l.threadCframe);
    return plausible(cframe) ? loadPointer(cframe, l.cframeCurrentFrame) : 0;
}

// What the walk reads of a code object to place a frame's instruction in its bytecode: read once for a run of frames
// that share the code object (a recursion), since it does not change while the code object lives.
struct CodeShape {
    uint64_t code = 0;          // the code object read (0: none yet)
    bool readable = false;      // readableCode
    uint64_t bytecode = 0;      // 3.8-3.10: the bytes object of its bytecode (0: not plausible)
    int64_t size = 0;           // its bytecode's size in bytes
    int64_t firstTraceable = 0; // 3.11+: the byte offset of its first traceable instruction (0: none known)
};

void readCodeShape(const PythonTarget &target, uint64_t code, CodeShape &shape)
{
    const PythonLayout &l = target.layout;
    shape = CodeShape{code, readableCode(target, code), 0, 0, 0};
    if (!shape.readable || l.frameInstruction == kPyAbsent || l.bytesSize == kPyAbsent)
        return;
    switch (l.instruction) {
    case InstructionKind::LastiBytes:
    case InstructionKind::LastiCodeUnits:
        if (l.codeCode == kPyAbsent)
            return;
        shape.bytecode = loadPointer(code, l.codeCode);
        if (!plausible(shape.bytecode)) {
            shape.bytecode = 0;
            return;
        }
        shape.size = load<int64_t>(shape.bytecode + l.bytesSize);
        break;
    case InstructionKind::PrevInstr:
    case InstructionKind::InstrPtr:
        if (l.codeCodeAdaptive == kPyAbsent)
            return;
        // The code object is a variable-size object of 2-byte code units: its ob_size is where a bytes object's is.
        shape.size = load<int64_t>(code + l.bytesSize) * 2;
        if (l.codeFirstTraceable != kPyAbsent)
            shape.firstTraceable = int64_t(load<int32_t>(code + l.codeFirstTraceable)) * 2;
        break;
    }
}

// Whether the layout's frames hold an instruction pointer (3.11+: _PyInterpreterFrame) rather than f_lasti.
bool pointerInstruction(const PythonLayout &l)
{
    return l.instruction == InstructionKind::PrevInstr || l.instruction == InstructionKind::InstrPtr;
}

// The frame's instruction field (at `at`) as the walk reads it: the instruction pointer (`pointer`) or f_lasti; 0
// where the layout has none.
uint64_t instructionField(uint64_t frame, uint32_t at, bool pointer)
{
    if (at == kPyAbsent)
        return 0;
    return pointer ? loadPointer(frame, at) : uint64_t(uint32_t(load<int32_t>(frame + at)));
}

// The byte offset into its code's bytecode of the instruction that the frame's instruction field (`field`) names, -1
// when not known or out of the bytecode; `started` is false for a 3.11+ frame that has not reached its code's first
// traceable instruction.
int32_t instructionOf(const PythonLayout &l, uint64_t field, const CodeShape &shape, bool &started)
{
    started = true;
    if (shape.size <= 0)
        return -1;
    int64_t offset = -1;
    switch (l.instruction) {
    case InstructionKind::LastiBytes:
    case InstructionKind::LastiCodeUnits: {
        const auto lasti = int32_t(uint32_t(field));
        if (lasti < 0)
            return -1;
        offset = l.instruction == InstructionKind::LastiBytes ? lasti : int64_t(lasti) * 2;
        break;
    }
    case InstructionKind::PrevInstr:
    case InstructionKind::InstrPtr: {
        offset = int64_t(field - (shape.code + l.codeCodeAdaptive));
        if (l.codeFirstTraceable != kPyAbsent)
            started = offset >= shape.firstTraceable;
        break;
    }
    }
    if (offset < 0 || offset >= shape.size || offset > 0x7fffffff)
        return -1;
    return static_cast<int32_t>(offset);
}

// compareKept's comparison, for a layout with (or without) an owner byte, an is_entry byte and an instruction pointer:
// each known here, so that the loop holds no test of the layout. -1 where the chain differs.
template <bool HasOwner, bool HasIsEntry, bool PointerField>
int compareChain(const PythonLayout &l, PythonCodeMemo &memo, uint64_t frame, int from)
{
    // The layout's offsets held apart from it: the stores below could be to it for all the compiler knows.
    const uint32_t ownerAt = l.frameOwner;
    const uint32_t previousAt = l.framePrevious;
    const uint32_t codeAt = l.frameCode;
    const uint32_t instructionAt = l.frameInstruction;
    const uint32_t isEntryAt = l.frameIsEntry;
    const uint8_t ownerGenerator = l.ownerGenerator;
    const int visits = memo.chainVisits;
    uint64_t differs = 0;
    for (int v = from; v < visits; ++v) {
        PythonCodeMemo::Visit &visit = memo.visits[v];
        const uint64_t previous = loadPointer(frame, previousAt);
        if (previous != visit.previous)
            return -1;
        const uint8_t owner = HasOwner ? load<uint8_t>(frame + ownerAt) : kPyNoOwner;
        differs |= uint64_t(owner ^ visit.owner);
        if (visit.kind != PythonCodeMemo::VisitKind::Shim) {
            differs |= loadPointer(frame, codeAt) ^ visit.code;
            if (HasIsEntry && visit.kind == PythonCodeMemo::VisitKind::Given)
                differs |= uint64_t(load<uint8_t>(frame + isEntryAt) ^ visit.isEntry);
            const uint64_t field = PointerField ? loadPointer(frame, instructionAt)
                                                : uint64_t(uint32_t(load<int32_t>(frame + instructionAt)));
            if (field != visit.instruction) {
                const CodeShape shape{visit.code, true, visit.bytecode, visit.size, visit.firstTraceable};
                bool started = true;
                const int32_t offset = instructionOf(l, field, shape, started);
                const bool waiting = !started && owner != ownerGenerator;
                if (waiting != (visit.kind == PythonCodeMemo::VisitKind::Waiting))
                    return -1;
                visit.instruction = field;
                visit.offset = offset;
                memo.moved = true;
                if (visit.kind == PythonCodeMemo::VisitKind::Given)
                    memo.givenFrames[visit.given].instruction = offset;
            }
        }
        frame = previous;
    }
    return differs != 0 || frame != 0 ? -1 : 0;
}

// The kept chain's visits from `from` on (PythonCodeMemo's chain), compared word by word with what the walk would read
// from `frame` on: 0 where they hold, -1 where a word differs. Each frame's `previous` is compared before it is
// followed (a pointer that changed may point anywhere); its other words are gathered into one difference, looked at
// once at the end. A frame whose instruction field alone moved is placed again with its code's shape, kept (its visit
// and its frame as given take the new instruction); where it would now be left out (or given), as not yet started, the
// chain differs.
int compareKept(const PythonLayout &l, PythonCodeMemo &memo, uint64_t frame, int from, bool hasOwner)
{
    if (l.frameInstruction == kPyAbsent)
        return -1;
    const bool isEntry = l.frameIsEntry != kPyAbsent;
    const bool pointer = pointerInstruction(l);
    if (hasOwner && isEntry && pointer)
        return compareChain<true, true, true>(l, memo, frame, from); // 3.11
    if (hasOwner && pointer)
        return compareChain<true, false, true>(l, memo, frame, from); // 3.12+
    if (!hasOwner && !isEntry && !pointer)
        return compareChain<false, false, false>(l, memo, frame, from); // before 3.11
    if (hasOwner)
        return isEntry ? compareChain<true, true, false>(l, memo, frame, from)
                       : compareChain<true, false, false>(l, memo, frame, from);
    if (isEntry)
        return pointer ? compareChain<false, true, true>(l, memo, frame, from)
                       : compareChain<false, true, false>(l, memo, frame, from);
    return compareChain<false, false, true>(l, memo, frame, from);
}

// The kept chain given again, from the thread's current frame on: the frames given, or -1 where it differs.
int repeatChain(const PythonLayout &l, PythonCodeMemo &memo, uint64_t frame, PythonFrame *out, int limit,
                uint64_t *addresses, int addressRoom, bool hasOwner)
{
    const int given = memo.chainGiven;
    memo.moved = false;
    if (given > limit || memo.chainVisits == 0 || frame != memo.visits[0].frame ||
        compareKept(l, memo, frame, 0, hasOwner) != 0)
        return -1;
    __builtin_memcpy(out, memo.givenFrames, size_t(given) * sizeof(PythonFrame));
    if (addressRoom > 0)
        __builtin_memcpy(addresses, memo.givenAddresses, size_t(given < addressRoom ? given : addressRoom) * 8);
    return given;
}

// Where the chain no longer is the kept one from its leaf (a call made, a generator entered or left since), it may
// still lead into the kept chain a few frames on: the leaf frames new, the rest as kept. Finds the kept visit that a
// frame at most kSpliceFrames from `frame` is, moves the kept visits from it on to follow that many (the walk then
// keeps the new frames before them), and compares them: the frame the walk stops at, 0 where the chain does not lead
// into the kept one (the visits may have moved: the walk keeps the chain anew). `fresh`: the frames before it.
constexpr int kSpliceFrames = 8;
uint64_t spliceKept(const PythonLayout &l, PythonCodeMemo &memo, uint64_t frame, bool hasOwner, int &fresh)
{
    const int visits = memo.chainVisits;
    int join = -1;
    for (fresh = 0; fresh <= kSpliceFrames && join < 0; ++fresh) {
        if (!plausible(frame))
            return 0;
        for (int v = 0; v < visits; ++v) {
            if (memo.visits[v].frame == frame) {
                join = v;
                break;
            }
        }
        if (join < 0)
            frame = loadPointer(frame, l.framePrevious);
    }
    --fresh; // the loop counted the step that found it
    if (join < 0 || (join == 0 && fresh == 0) || fresh + visits - join > PythonCodeMemo::kChainVisits)
        return 0;
    if (fresh != join)
        __builtin_memmove(&memo.visits[fresh], &memo.visits[join], size_t(visits - join) * sizeof(memo.visits[0]));
    memo.chainVisits = fresh + visits - join;
    return compareKept(l, memo, frame, fresh, hasOwner) == 0 ? frame : 0;
}

} // namespace

int pythonWalk(const PythonTarget &target, PythonThreadCache &cache, PythonFrame *out, int room, uint32_t &flags,
               uint64_t *addresses, int addressRoom, PythonCodeMemo *memo)
{
    flags = 0;
    const PythonLayout &l = target.layout;
    uint64_t states[kMaxThreadStatesPerThread];
    const int stateCount = threadStates(target, cache, states);
    if (stateCount == 0) {
        flags |= PythonWalkNoThread;
        return 0;
    }
    if (l.framePrevious == kPyAbsent || l.frameCode == kPyAbsent)
        return 0;
    const bool interpreterFrames = pointerInstruction(l);
    const bool hasOwner = interpreterFrames && l.frameOwner != kPyAbsent;
    const int limit = room < kMaxPythonFrames ? room : kMaxPythonFrames;
    uint64_t stopAt = 0; // the kept chain's frame where the walk joins it (spliceKept), 0: none
    int fresh = 0;       // the frames before it
    // The chain kept by the thread's last walk, where it is this one's.
    if (memo && stateCount == 1 && memo->chainState == states[0] && memo->chainRuntime == target.runtime) {
        const int given =
            repeatChain(l, *memo, currentFrame(l, states[0]), out, limit, addresses, addressRoom, hasOwner);
        if (given >= 0) {
            memo->repeated = true;
            return given;
        }
        // The new leaf frames alone are walked, where they lead into the kept chain (memo->visits[fresh] on).
        if (limit >= PythonCodeMemo::kChainVisits)
            stopAt = spliceKept(l, *memo, currentFrame(l, states[0]), hasOwner, fresh);
    }
    // Kept as it goes, while one chain's frames fit.
    PythonCodeMemo::Visit *kept = nullptr;
    if (memo) {
        memo->chainState = 0;
        memo->repeated = false;
        memo->described = 0;
        if (stateCount == 1)
            kept = memo->visits;
    }
    int visited = 0;

    // A loop in the chain (a wrong pointer) is found by Brent's method: each frame is compared with the one seen at the
    // last power of two of visits, so a loop is met within twice its length and its lead-in; the visits are bounded
    // besides (kMaxVisits).
    uint64_t checkpoint = 0;
    CodeShape shape; // of the last frame's code object
    int count = 0;
    int lastGiven = -1; // the frame given at the previous step, whose `previous` is the one being visited
    int state = 0;
    uint64_t frame = currentFrame(l, states[0]);
    for (int steps = 0;; ++steps) {
        if (stopAt != 0 && frame == stopAt)
            break;
        // A chain's end: the next thread state's chain goes on rootward (the interpreter that entered this one), its
        // leaf frame the one whose call entered it. The outermost frame of the chain before is its eval loop's entry.
        if (!frame) {
            if (++state >= stateCount)
                break;
            if (lastGiven >= 0)
                out[lastGiven].flags |= PythonFrameEntry;
            lastGiven = -1;
            frame = currentFrame(l, states[state]);
            continue;
        }
        if (!plausible(frame) || steps >= kMaxVisits || frame == checkpoint) {
            flags |= PythonWalkCut;
            break;
        }
        if ((steps & (steps + 1)) == 0) // steps + 1 a power of two
            checkpoint = frame;
        if (kept && visited >= PythonCodeMemo::kChainVisits)
            kept = nullptr; // too long to keep
        PythonCodeMemo::Visit *visit = kept ? &kept[visited++] : nullptr;
        const uint8_t owner = hasOwner ? load<uint8_t>(frame + l.frameOwner) : kPyNoOwner;
        const uint64_t previous = loadPointer(frame, l.framePrevious);
        if (visit)
            *visit = PythonCodeMemo::Visit{
                frame, previous, 0, 0, 0, 0, 0, -1, 0, owner, 0, PythonCodeMemo::VisitKind::Shim, 0};
        if (owner != kPyNoOwner && owner == l.ownerCStack) {
            if (lastGiven >= 0)
                out[lastGiven].flags |= PythonFrameEntry;
            lastGiven = -1;
            frame = previous;
            continue;
        }
        const uint64_t code = loadPointer(frame, l.frameCode);
        if (code != shape.code) {
            PythonCodeMemo::Entry *entry = memo ? &memo->at(frame) : nullptr;
            const uint64_t seal = entry ? PythonCodeMemo::sealOf(frame, code) : 0;
            if (entry && entry->seal == seal) {
                shape = CodeShape{code, true, entry->bytecode, entry->size, entry->firstTraceable};
            } else {
                readCodeShape(target, code, shape);
                if (entry && shape.readable)
                    *entry = PythonCodeMemo::Entry{seal, shape.bytecode, shape.size, shape.firstTraceable, 0};
            }
        }
        if (!shape.readable) {
            flags |= PythonWalkCut;
            break;
        }
        bool started = true;
        const uint64_t field = instructionField(frame, l.frameInstruction, interpreterFrames);
        const int32_t instruction = instructionOf(l, field, shape, started);
        if (visit) {
            visit->code = code;
            visit->instruction = field;
            visit->bytecode = shape.bytecode;
            visit->size = shape.size;
            visit->firstTraceable = shape.firstTraceable;
            visit->offset = instruction;
            visit->kind = PythonCodeMemo::VisitKind::Waiting;
        }
        lastGiven = -1;
        if (!started && owner != l.ownerGenerator) {
            frame = previous;
            continue;
        }
        if (count >= limit) {
            flags |= PythonWalkTruncated;
            break;
        }
        uint32_t frameFlags = 0;
        const uint8_t isEntry = l.frameIsEntry != kPyAbsent ? load<uint8_t>(frame + l.frameIsEntry) : 0;
        if (!interpreterFrames || isEntry != 0)
            frameFlags |= PythonFrameEntry;
        if (visit) {
            visit->isEntry = isEntry;
            visit->kind = PythonCodeMemo::VisitKind::Given;
        }
        out[count] = PythonFrame{code, instruction, frameFlags};
        if (count < addressRoom)
            addresses[count] = frame;
        lastGiven = count++;
        frame = previous;
    }
    if (stopAt != 0) {
        // Where the new frames ended before the kept chain (cut, the depth bound), a walk of the whole chain would
        // have ended there too: nothing is kept.
        if (frame != stopAt || flags != 0 || !kept || visited != fresh)
            return count;
        // The kept chain from its first visit on, as the comparison left it; a shim there ends the eval loop's call
        // whose frames the walk gave last.
        if (lastGiven >= 0 && kept[fresh].kind == PythonCodeMemo::VisitKind::Shim)
            out[lastGiven].flags |= PythonFrameEntry;
        for (int v = fresh; v < memo->chainVisits; ++v) {
            if (kept[v].kind != PythonCodeMemo::VisitKind::Given)
                continue;
            out[count] = memo->givenFrames[kept[v].given];
            if (count < addressRoom)
                addresses[count] = kept[v].frame;
            ++count;
        }
        visited = memo->chainVisits;
        frame = 0;
        memo->repeated = true; // checked against a walk anew as the repeats are
    }
    if (kept && flags == 0 && frame == 0) {
        // The frames as given (an entry is marked at the frame after it), in the order given.
        int given = 0;
        for (int v = 0; v < visited; ++v) {
            if (kept[v].kind != PythonCodeMemo::VisitKind::Given)
                continue;
            kept[v].flags = out[given].flags;
            kept[v].given = uint8_t(given);
            memo->givenFrames[given] = out[given];
            memo->givenAddresses[given] = kept[v].frame;
            ++given;
        }
        memo->chainState = states[0];
        memo->chainRuntime = target.runtime;
        memo->chainVisits = visited;
        memo->chainGiven = count;
    }
    return count;
}

} // namespace emberline::agent
