#include "engine/python/python_layout_choice.h"

#include <cstring>
#include <vector>

namespace emberline::engine {

namespace {

// The names of the fields where the debug offsets and the 3.13 table differ; empty when they agree.
std::vector<std::string> disagreements(const PythonLayout &fromProcess, const PythonLayout &table)
{
    std::vector<std::string> out;
    const auto check = [&](const char *name, uint32_t a, uint32_t b) {
        if (a != b)
            out.push_back(std::string(name) + " " + std::to_string(a) + " (table " + std::to_string(b) + ")");
    };
    check("interpreters.head", fromProcess.runtimeInterpretersHead, table.runtimeInterpretersHead);
    check("interp.next", fromProcess.interpNext, table.interpNext);
    check("interp.threads.head", fromProcess.interpThreadsHead, table.interpThreadsHead);
    check("tstate.next", fromProcess.threadNext, table.threadNext);
    check("tstate.thread_id", fromProcess.threadId, table.threadId);
    check("tstate.native_thread_id", fromProcess.threadNativeId, table.threadNativeId);
    check("tstate.current_frame", fromProcess.threadFrame, table.threadFrame);
    check("tstate._status", fromProcess.threadStatus, table.threadStatus);
    check("frame.previous", fromProcess.framePrevious, table.framePrevious);
    check("frame.f_executable", fromProcess.frameCode, table.frameCode);
    check("frame.instr_ptr", fromProcess.frameInstruction, table.frameInstruction);
    check("frame.owner", fromProcess.frameOwner, table.frameOwner);
    check("code.co_filename", fromProcess.codeFilename, table.codeFilename);
    check("code.co_name", fromProcess.codeName, table.codeName);
    check("code.co_qualname", fromProcess.codeQualname, table.codeQualname);
    check("code.co_firstlineno", fromProcess.codeFirstLineno, table.codeFirstLineno);
    check("code.co_linetable", fromProcess.codeLineTable, table.codeLineTable);
    check("code.co_code_adaptive", fromProcess.codeCodeAdaptive, table.codeCodeAdaptive);
    check("object.ob_type", fromProcess.objectType, table.objectType);
    check("unicode.length", fromProcess.unicodeLength, table.unicodeLength);
    check("unicode.state", fromProcess.unicodeState, table.unicodeState);
    check("sizeof(PyASCIIObject)", fromProcess.unicodeAsciiData, table.unicodeAsciiData);
    check("bytes.ob_size", fromProcess.bytesSize, table.bytesSize);
    check("bytes.ob_sval", fromProcess.bytesData, table.bytesData);
    return out;
}

// Offsets that no structure of 3.13 could hold (each group's fields lie inside its size) mean the bytes read are
// not debug offsets at all.
bool plausible(const DebugOffsets313 &o)
{
    const auto inside = [](uint64_t field, uint64_t size) { return size < (1u << 20) && field < size; };
    return inside(o.runtimeState.interpretersHead, o.runtimeState.size) &&
           inside(o.interpreterState.next, o.interpreterState.size) &&
           inside(o.interpreterState.threadsHead, o.interpreterState.size) &&
           inside(o.threadState.next, o.threadState.size) && inside(o.threadState.threadId, o.threadState.size) &&
           inside(o.threadState.nativeThreadId, o.threadState.size) &&
           inside(o.threadState.currentFrame, o.threadState.size) && inside(o.threadState.status, o.threadState.size) &&
           inside(o.interpreterFrame.previous, o.interpreterFrame.size) &&
           inside(o.interpreterFrame.executable, o.interpreterFrame.size) &&
           inside(o.interpreterFrame.instrPtr, o.interpreterFrame.size) &&
           inside(o.interpreterFrame.owner, o.interpreterFrame.size) &&
           inside(o.codeObject.filename, o.codeObject.size) && inside(o.codeObject.name, o.codeObject.size) &&
           inside(o.codeObject.qualname, o.codeObject.size) && inside(o.codeObject.linetable, o.codeObject.size) &&
           inside(o.codeObject.firstlineno, o.codeObject.size) && o.codeObject.coCodeAdaptive <= o.codeObject.size &&
           inside(o.pyObject.obType, o.pyObject.size) && inside(o.bytesObject.obSize, o.bytesObject.size) &&
           o.bytesObject.obSval < o.bytesObject.size && inside(o.unicodeObject.length, o.unicodeObject.size) &&
           inside(o.unicodeObject.state, o.unicodeObject.size) &&
           o.unicodeObject.asciiobjectSize <= o.unicodeObject.size;
}

std::string versionText(int major, int minor)
{
    return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace

Result<ChosenPythonLayout> choosePythonLayout(int major, int minor, const DebugOffsets313 *debugOffsets)
{
    if (const PythonLayout *table = builtinLayout(major, minor))
        return ChosenPythonLayout{*table, "the " + versionText(major, minor) + " table"};
    if (major != 3 || minor != 13)
        return makeError(Error::Code::Unsupported, "CPython " + versionText(major, minor) +
                                                       " has no known structure layout (3.8 to 3.13 are known)");
    if (!debugOffsets)
        return makeError(Error::Code::Io, "CPython 3.13's debug offsets (the start of _PyRuntime) could not be read");
    if (std::memcmp(debugOffsets->cookie, kPyDebugCookie, sizeof kPyDebugCookie) != 0)
        return makeError(Error::Code::Format,
                         "the start of CPython 3.13's _PyRuntime does not hold the debug offsets' cookie \"xdebugpy\"");
    const int offsetsMajor = static_cast<int>((debugOffsets->version >> 24) & 0xff);
    const int offsetsMinor = static_cast<int>((debugOffsets->version >> 16) & 0xff);
    if (offsetsMajor != 3 || offsetsMinor != 13)
        return makeError(Error::Code::Format, "the debug offsets say CPython " +
                                                  versionText(offsetsMajor, offsetsMinor) + ", the binary says 3.13");
    if (!plausible(*debugOffsets))
        return makeError(Error::Code::Format, "CPython 3.13's debug offsets hold offsets outside their structures");
    const PythonLayout fromProcess = layoutFromDebugOffsets(*debugOffsets, nullptr);
    const std::vector<std::string> differ = disagreements(fromProcess, kPython313);
    if (differ.empty() && !debugOffsets->freeThreaded)
        return ChosenPythonLayout{layoutFromDebugOffsets(*debugOffsets, &kPython313),
                                  "3.13's debug offsets, which agree with the 3.13 table"};
    std::string why = debugOffsets->freeThreaded ? "a free-threaded build" : "";
    for (const std::string &d : differ)
        why += (why.empty() ? "" : ", ") + d;
    return ChosenPythonLayout{fromProcess, "3.13's debug offsets alone (they differ from the 3.13 table: " + why +
                                               "; the first traceable instruction and non-ASCII names are not read)"};
}

} // namespace emberline::engine
