#include "engine/python/python_remote.h"

#include "engine/python/python_lines.h"

#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <unordered_set>

namespace emberline::engine {

namespace {

constexpr size_t kMaxStringChars = 4096;
constexpr size_t kMaxLineTable = 1 << 20;

// Where glibc keeps a thread's kernel id inside its thread descriptor (the struct a pthread_t points to), found in
// this process: the offset at which both the calling thread's descriptor and a second thread's hold their own
// gettid(). CPython before 3.11 records only the pthread_t; a target on the same C library keeps the id at the same
// place. -1 when no offset is found (another C library).
int glibcTidOffset()
{
    static const int offset = [] {
        constexpr int kScan = 1024;
        const auto matches = [](pthread_t self, pid_t tid) {
            std::vector<int> out;
            // NOLINTNEXTLINE(performance-no-int-to-ptr): glibc's pthread_t is its descriptor's address
            const auto *bytes = reinterpret_cast<const uint8_t *>(self);
            for (int k = 0; k + 4 <= kScan; k += 4) {
                int32_t v = 0;
                std::memcpy(&v, bytes + k, sizeof v);
                if (v == tid)
                    out.push_back(k);
            }
            return out;
        };
        const std::vector<int> mine = matches(pthread_self(), gettid());
        std::vector<int> theirs;
        std::thread([&] { theirs = matches(pthread_self(), gettid()); }).join();
        for (int k : mine)
            for (int j : theirs)
                if (k == j)
                    return k;
        return -1;
    }();
    return offset;
}

void appendCodePoint(std::string &out, uint32_t c)
{
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xc0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xe0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (c & 0x3f));
    }
}

std::string addressText(uint64_t v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

Result<PythonStackReader> PythonStackReader::attach(int pid)
{
    Result<PythonImage> image = findPythonInProcess(pid);
    if (!image)
        return image.error();
    if (!image->runtimeAddress)
        return makeError(Error::Code::Unsupported,
                         image->path + ": _PyRuntime not found (no symbol in the binary nor in a debug file)");
    PythonStackReader reader;
    reader.m_pid = pid;
    reader.m_image = std::move(image.value());
    const PythonVersion &v = reader.m_image.version;
    DebugOffsets313 offsets{};
    const bool haveOffsets =
        v.major == 3 && v.minor == 13 && reader.read(reader.m_image.runtimeAddress, &offsets, sizeof offsets);
    Result<ChosenPythonLayout> layout = choosePythonLayout(v.major, v.minor, haveOffsets ? &offsets : nullptr);
    if (!layout)
        return makeError(layout.error().code, reader.m_image.path + ": " + layout.error().message);
    reader.m_layout = std::move(layout.value());
    return reader;
}

bool PythonStackReader::read(uint64_t address, void *out, size_t size) const
{
    if (address == 0 || address + size < address)
        return false;
    iovec local{out, size};
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the remote address as process_vm_readv takes it
    iovec remote{reinterpret_cast<void *>(address), size};
    return process_vm_readv(m_pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

Result<std::vector<PythonThreadStack>> PythonStackReader::readStacks() const
{
    const PythonLayout &l = m_layout.layout;
    std::vector<PythonThreadStack> out;
    uint64_t interp = 0;
    if (!readPointer(m_image.runtimeAddress + l.runtimeInterpretersHead, interp))
        return makeError(Error::Code::Permission, "cannot read process " + std::to_string(m_pid) + "'s _PyRuntime at " +
                                                      addressText(m_image.runtimeAddress) + ": " +
                                                      std::strerror(errno));
    std::unordered_set<uint64_t> seen;
    for (int i = 0; interp && i < kMaxInterpreters && seen.insert(interp).second; ++i) {
        uint64_t thread = 0;
        if (!readPointer(interp + l.interpThreadsHead, thread))
            return makeError(Error::Code::Io, "unreadable interpreter state at " + addressText(interp));
        for (int t = 0; thread && t < kMaxThreads && seen.insert(thread).second; ++t) {
            out.push_back(readThread(thread));
            if (!readPointer(thread + l.threadNext, thread))
                return makeError(Error::Code::Io, "unreadable thread state at " + addressText(thread));
        }
        if (!readPointer(interp + l.interpNext, interp))
            return makeError(Error::Code::Io, "unreadable interpreter state at " + addressText(interp));
    }
    return out;
}

uint64_t PythonStackReader::nativeIdOfPthread(uint64_t pthread) const
{
    const int offset = glibcTidOffset();
    int32_t tid = 0;
    if (offset < 0 || !read(pthread + static_cast<uint64_t>(offset), &tid, sizeof tid) || tid <= 0)
        return 0;
    // Only a thread of this process: anything else was not a tid.
    const std::string task = "/proc/" + std::to_string(m_pid) + "/task/" + std::to_string(tid);
    return ::access(task.c_str(), F_OK) == 0 ? static_cast<uint64_t>(tid) : 0;
}

uint64_t PythonStackReader::nativeIdOf(uint64_t threadState) const
{
    const PythonLayout &l = m_layout.layout;
    uint64_t id = 0;
    if (l.threadNativeId != kPyAbsent) {
        read(threadState + l.threadNativeId, &id, sizeof id);
        return id;
    }
    uint64_t pthread = 0;
    return read(threadState + l.threadId, &pthread, sizeof pthread) ? nativeIdOfPthread(pthread) : 0;
}

PythonThreadStack PythonStackReader::readThread(uint64_t threadState) const
{
    const PythonLayout &l = m_layout.layout;
    PythonThreadStack out;
    read(threadState + l.threadId, &out.threadId, sizeof out.threadId);
    out.nativeThreadId = nativeIdOf(threadState);
    std::vector<agent::PythonFrame> codes;
    out.complete = walkCodes(threadState, codes, out.problem);
    // Before 3.11 every frame is its own call of the eval loop: no frame is told apart as an entry one.
    const bool entries = l.frameIsEntry != kPyAbsent || l.ownerCStack != kPyNoOwner;
    CodeFacts facts;
    for (const agent::PythonFrame &code : codes) {
        if (!describeCode(code.code, facts)) {
            out.complete = false;
            out.problem = "unreadable code object at " + addressText(code.code);
            return out;
        }
        PythonFrame f;
        f.name = std::move(facts.name);
        f.file = std::move(facts.file);
        const int line = lineForOffset(l.lineTable, facts.firstLine, facts.lineTable.data(), facts.lineTable.size(),
                                       code.instruction);
        f.line = line < 0 ? 0 : line;
        f.entry = entries && (code.flags & agent::PythonFrameEntry) != 0;
        out.frames.push_back(std::move(f));
    }
    return out;
}

std::vector<uint64_t> PythonStackReader::threadStatesOf(uint32_t nativeTid) const
{
    const PythonLayout &l = m_layout.layout;
    std::vector<uint64_t> states;
    uint64_t interp = 0;
    readPointer(m_image.runtimeAddress + l.runtimeInterpretersHead, interp);
    std::unordered_set<uint64_t> seen;
    for (int i = 0; interp && i < kMaxInterpreters && seen.insert(interp).second; ++i) {
        uint64_t thread = 0;
        readPointer(interp + l.interpThreadsHead, thread);
        for (int t = 0; thread && t < kMaxThreads && seen.insert(thread).second; ++t) {
            // Every match: a thread starting another one (before 3.11) holds for a while the new thread's state too.
            if (nativeIdOf(thread) == nativeTid)
                states.push_back(thread);
            if (!readPointer(thread + l.threadNext, thread))
                break;
        }
        if (!readPointer(interp + l.interpNext, interp))
            break;
    }
    // The running one: the GIL's holder (3.8-3.11) or the one swapped in (3.12+).
    const auto running = [&](uint64_t state) {
        uint64_t current = 0;
        uint32_t status = 0;
        if (l.runtimeThreadCurrent != kPyAbsent)
            return readPointer(m_image.runtimeAddress + l.runtimeThreadCurrent, current) && current == state;
        return l.threadStatus != kPyAbsent && read(state + l.threadStatus, &status, sizeof status) &&
               (status & l.threadActiveBit) != 0;
    };
    const auto first = std::find_if(states.begin(), states.end(), running);
    if (first != states.end())
        std::rotate(states.begin(), first, first + 1);
    return states;
}

uint32_t PythonStackReader::readThreadCodes(uint32_t nativeTid, uint64_t &threadState,
                                            std::vector<agent::PythonFrame> &out) const
{
    const PythonLayout &l = m_layout.layout;
    out.clear();
    uint64_t head = 0;
    uint64_t second = 0;
    const bool several = readPointer(m_image.runtimeAddress + l.runtimeInterpretersHead, head) && head != 0 &&
                         readPointer(head + l.interpNext, second) && second != 0;
    std::vector<uint64_t> states;
    if (!several && threadState != 0 && nativeIdOf(threadState) == nativeTid)
        states.push_back(threadState);
    else
        states = threadStatesOf(nativeTid);
    if (!several && states.size() > 1)
        states.resize(1); // one interpreter: the first match, as the agent takes it
    threadState = !several && !states.empty() ? states.front() : 0;
    if (states.empty())
        return agent::PythonWalkNoThread;
    for (size_t i = 0; i < states.size(); ++i) {
        std::string problem;
        if (!walkCodes(states[i], out, problem))
            return problem.starts_with("deeper") ? agent::PythonWalkTruncated : agent::PythonWalkCut;
        // The chain that entered this one goes on rootward; this one's outermost frame is its eval loop's entry.
        if (i + 1 < states.size() && !out.empty())
            out.back().flags |= agent::PythonFrameEntry;
    }
    return 0;
}

bool PythonStackReader::walkCodes(uint64_t threadState, std::vector<agent::PythonFrame> &out,
                                  std::string &problem) const
{
    const PythonLayout &l = m_layout.layout;
    uint64_t frame = 0;
    bool ok = true;
    if (l.threadFrame != kPyAbsent) {
        ok = readPointer(threadState + l.threadFrame, frame);
    } else {
        uint64_t cframe = 0;
        ok = readPointer(threadState + l.threadCframe, cframe) &&
             (cframe == 0 || readPointer(cframe + l.cframeCurrentFrame, frame));
    }
    if (!ok) {
        problem = "unreadable thread state at " + addressText(threadState);
        return false;
    }
    // Before 3.11 every frame is its own call of the eval loop (the agent marks each one so).
    const bool eachEntry = l.frameIsEntry == kPyAbsent && l.ownerCStack == kPyNoOwner;
    std::unordered_set<uint64_t> visited;
    bool lastKept = false; // the frame visited just before was kept (it is the callee of the one now visited)
    int depth = 0;
    for (; frame && depth < kMaxDepth; ++depth) {
        if (!visited.insert(frame).second) {
            problem = "the frames make a cycle at " + addressText(frame);
            return false;
        }
        uint8_t owner = 0;
        if (l.frameOwner != kPyAbsent && !read(frame + l.frameOwner, &owner, 1)) {
            problem = "unreadable frame at " + addressText(frame);
            return false;
        }
        if (l.ownerCStack != kPyNoOwner && owner == l.ownerCStack) {
            if (lastKept)
                out.back().flags |= agent::PythonFrameEntry; // its caller is the eval loop's shim
            lastKept = false;
        } else {
            agent::PythonFrame f{0, -1, eachEntry ? uint32_t(agent::PythonFrameEntry) : 0u};
            bool skip = false;
            if (!readFrameCode(frame, f, skip)) {
                problem = "unreadable frame at " + addressText(frame);
                return false;
            }
            if (!skip)
                out.push_back(f);
            lastKept = !skip;
        }
        if (!readPointer(frame + l.framePrevious, frame)) {
            problem = "unreadable frame link";
            return false;
        }
    }
    if (frame) {
        problem = "deeper than " + std::to_string(kMaxDepth) + " frames: cut there";
        return false;
    }
    return true;
}

bool PythonStackReader::readFrameCode(uint64_t frame, agent::PythonFrame &out, bool &skip) const
{
    const PythonLayout &l = m_layout.layout;
    uint64_t code = 0;
    if (!readPointer(frame + l.frameCode, code) || !code)
        return false;
    out.code = code;
    int64_t offset = -1;
    if (l.instruction == InstructionKind::LastiBytes || l.instruction == InstructionKind::LastiCodeUnits) {
        int32_t lasti = 0;
        if (!read(frame + l.frameInstruction, &lasti, sizeof lasti))
            return false;
        offset = lasti < 0 ? -1 : l.instruction == InstructionKind::LastiBytes ? lasti : int64_t(lasti) * 2;
    } else {
        uint64_t instruction = 0;
        if (!readPointer(frame + l.frameInstruction, instruction))
            return false;
        offset = static_cast<int64_t>(instruction - (code + l.codeCodeAdaptive));
        uint8_t owner = 0;
        int32_t firstTraceable = 0;
        if (l.codeFirstTraceable != kPyAbsent && read(frame + l.frameOwner, &owner, 1) && owner != l.ownerGenerator &&
            read(code + l.codeFirstTraceable, &firstTraceable, sizeof firstTraceable))
            skip = offset < int64_t(firstTraceable) * 2; // not started: _PyFrame_IsIncomplete
        if (skip)
            return true;
        if (l.frameIsEntry != kPyAbsent) {
            uint8_t isEntry = 0;
            read(frame + l.frameIsEntry, &isEntry, 1);
            if (isEntry != 0)
                out.flags |= agent::PythonFrameEntry;
        }
    }
    out.instruction = offset < 0 || offset > INT32_MAX ? -1 : static_cast<int32_t>(offset);
    return true;
}

bool PythonStackReader::describeCode(uint64_t code, CodeFacts &out) const
{
    const PythonLayout &l = m_layout.layout;
    uint64_t name = 0, file = 0, table = 0;
    int32_t firstLine = 0;
    if (!readPointer(code + (l.codeQualname != kPyAbsent ? l.codeQualname : l.codeName), name) ||
        !readPointer(code + l.codeFilename, file) || !readPointer(code + l.codeLineTable, table) ||
        !read(code + l.codeFirstLineno, &firstLine, sizeof firstLine))
        return false;
    out.name = readString(name);
    out.file = readString(file);
    out.firstLine = firstLine;
    out.lineTable.clear();
    int64_t tableSize = 0;
    if (read(table + l.bytesSize, &tableSize, sizeof tableSize) && tableSize > 0 &&
        tableSize <= int64_t(kMaxLineTable)) {
        out.lineTable.resize(static_cast<size_t>(tableSize));
        if (!read(table + l.bytesData, out.lineTable.data(), out.lineTable.size()))
            out.lineTable.clear();
    }
    return true;
}

std::string PythonStackReader::readString(uint64_t unicode) const
{
    const PythonLayout &l = m_layout.layout;
    int64_t length = 0;
    uint32_t state = 0;
    if (!read(unicode + l.unicodeLength, &length, sizeof length) || !read(unicode + l.unicodeState, &state, 4) ||
        length < 0)
        return "?";
    const size_t n = std::min<size_t>(static_cast<size_t>(length), kMaxStringChars);
    if (!(state & l.unicodeCompactBit))
        return "?"; // a legacy string whose characters live elsewhere: code objects never hold one
    if (state & l.unicodeAsciiBit) {
        std::string out(n, '\0');
        return read(unicode + l.unicodeAsciiData, out.data(), n) ? out : "?";
    }
    const uint32_t kind = (state >> l.unicodeKindShift) & 7;
    if (l.unicodeCompactData == kPyAbsent || (kind != 1 && kind != 2 && kind != 4))
        return "?";
    std::vector<uint8_t> data(n * kind);
    if (!read(unicode + l.unicodeCompactData, data.data(), data.size()))
        return "?";
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        uint32_t c = 0;
        std::memcpy(&c, &data[i * kind], kind); // little-endian: the low bytes first
        appendCodePoint(out, c);
    }
    return out;
}

} // namespace emberline::engine
