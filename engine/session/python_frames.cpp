#include "engine/session/python_frames.h"

#include "engine/common/strings.h"
#include "engine/python/python_lines.h"
#include "engine/python/python_remote.h"
#include "engine/recorder/location_key.h"
#include "engine/recorder/recorder.h"

#include <QString>

#include <algorithm>
#include <cstdio>

namespace emberline::engine {

namespace {

// A string as CPython stores it (1, 2 or 4 bytes a character), in UTF-8.
std::string decodeString(const uint8_t *bytes, size_t size, uint8_t kind)
{
    switch (kind) {
    case 2:
        return QString::fromUtf16(reinterpret_cast<const char16_t *>(bytes), qsizetype(size / 2)).toStdString();
    case 4:
        return QString::fromUcs4(reinterpret_cast<const char32_t *>(bytes), qsizetype(size / 4)).toStdString();
    default:
        return QString::fromLatin1(reinterpret_cast<const char *>(bytes), qsizetype(size)).toStdString();
    }
}

} // namespace

PythonFrames::PythonFrames(RingReader &rings, Recorder &recorder, bool keepInterpreter)
    : m_rings(rings), m_recorder(recorder), m_keepInterpreter(keepInterpreter)
{
}

void PythonFrames::onPythonImage(uint64_t image, uint32_t pid)
{
    if (!mayRunPython(static_cast<int>(pid))) {
        m_interpreters.erase(pid);
        return;
    }
    Interpreter interpreter;
    interpreter.image = image;
    auto reader = PythonStackReader::attach(static_cast<int>(pid));
    if (!reader) {
        interpreter.said = reader.error().message;
        m_interpreters[pid] = std::move(interpreter);
        return;
    }
    const PythonImage &found = reader.value().image();
    const ChosenPythonLayout &layout = reader.value().layout();
    agent::PythonTarget target;
    target.layout = layout.layout;
    target.runtime = found.runtimeAddress;
    target.codeType = found.codeTypeAddress;
    interpreter.found = found.runtimeAddress != 0 && m_rings.setPythonTarget(image, target);
    interpreter.lineTable = layout.layout.lineTable;
    for (const PythonCodeRange &part : found.evalLoop)
        interpreter.evalLoop.emplace_back(part.start, part.start + part.size);
    for (const PythonCodeRange &f : found.forwarders) // sorted by address
        interpreter.forwarders.emplace_back(f.start, f.start + f.size);
    interpreter.said = "CPython " + found.version.text + " (" + found.path + ", " + layout.source + ")";
    if (!found.evalLoopKnown())
        interpreter.said += ": its eval loop was not found, so Python frames are not placed among native ones";
    // Kept for the waits' chains, read from outside (readWaiting); `found` is the reader's, moved here last.
    interpreter.reader = std::make_shared<const PythonStackReader>(std::move(reader).value());
    m_interpreters[pid] = std::move(interpreter);
}

void PythonFrames::onPythonCode(uint64_t image, uint32_t pid, const agent::PythonCodeFacts &facts,
                                std::span<const uint8_t> bytes)
{
    Code code;
    const uint8_t *at = bytes.data();
    code.function = decodeString(at, facts.nameBytes, facts.nameKind);
    at += facts.nameBytes;
    code.file = decodeString(at, facts.fileBytes, facts.fileKind);
    at += facts.fileBytes;
    code.table.assign(at, at + facts.lineTableBytes);
    code.firstLine = facts.firstLine;
    if (auto it = m_interpreters.find(pid); it != m_interpreters.end())
        code.lineTable = it->second.lineTable;
    addCode(image, facts.code, std::move(code));
}

void PythonFrames::addCode(uint64_t image, uint64_t address, Code code)
{
    if (code.function.empty())
        code.function = "[python code " + hexAddress(address) + "]";
    auto [at, added] = m_codeAt.try_emplace({image, address}, static_cast<uint32_t>(m_codes.size()));
    if (!added) {
        // Another code object at a freed one's address: the frames turned into locations through the old one go.
        at->second = static_cast<uint32_t>(m_codes.size());
        m_frameLocations.clear();
        m_lastFrames.clear();
    }
    m_codes.push_back(std::move(code));
}

PythonFramesView PythonFrames::readWaiting(uint32_t pid, uint32_t tid)
{
    const auto found = m_interpreters.find(pid);
    if (found == m_interpreters.end() || !found->second.found || !found->second.reader)
        return {};
    Interpreter &interpreter = found->second;
    uint64_t &threadState = interpreter.threadStates[tid];
    const uint32_t flags = interpreter.reader->readThreadCodes(tid, threadState, m_waiting);
    if (flags & agent::PythonWalkNoThread) {
        interpreter.threadStates.erase(tid); // not a Python thread (yet): looked for again at its next wait
        return {};
    }
    // The codes the agent has not described yet are described from here.
    PythonStackReader::CodeFacts facts;
    for (const agent::PythonFrame &frame : m_waiting) {
        if (m_codeAt.contains({interpreter.image, frame.code}) || !interpreter.reader->describeCode(frame.code, facts))
            continue;
        Code code;
        code.function = std::move(facts.name);
        code.file = std::move(facts.file);
        code.firstLine = facts.firstLine;
        code.lineTable = interpreter.lineTable;
        code.table = std::move(facts.lineTable);
        addCode(interpreter.image, frame.code, std::move(code));
    }
    ++m_stats.waitsRead;
    return PythonFramesView{m_waiting, flags, interpreter.image};
}

int PythonFrames::lineOf(const Code &code, int32_t instruction) const
{
    if (instruction < 0)
        return code.firstLine;
    const int line = lineForOffset(code.lineTable, code.firstLine, code.table.data(), code.table.size(), instruction);
    return line > 0 ? line : 0;
}

const std::vector<uint32_t> &PythonFrames::locationsOf(uint32_t tid, const PythonFramesView &python)
{
    // A thread's samples in a row share their outer frames (the calls it is in), and those frames' (code,
    // instruction) give the same locations as before: found from the outermost frame inwards by comparing with the
    // thread's last sample, not looked up. A location whose code was not described yet is not reused (the next
    // lookup may find it described).
    if (m_lastFrames.size() > kMaxRememberedThreads)
        m_lastFrames.clear();
    LastFrames &last = m_lastFrames[{python.image, tid}];
    const size_t n = python.frames.size();
    const size_t m = last.frames.size();
    size_t same = 0;
    while (same < n && same < m) {
        const agent::PythonFrame &a = python.frames[n - 1 - same];
        const agent::PythonFrame &b = last.frames[m - 1 - same];
        if (a.code != b.code || a.instruction != b.instruction || !last.resolved[m - 1 - same])
            break;
        ++same;
    }
    m_resolved.resize(n);
    m_resolvedFlags.resize(n);
    for (size_t k = 0; k < same; ++k) {
        m_resolved[n - 1 - k] = last.locations[m - 1 - k];
        m_resolvedFlags[n - 1 - k] = 1;
    }
    for (size_t i = 0; i + same < n; ++i) {
        bool resolved = false;
        m_resolved[i] = locationOf(python.image, python.frames[i], &resolved);
        m_resolvedFlags[i] = resolved ? 1 : 0;
    }
    last.frames.assign(python.frames.begin(), python.frames.end());
    last.locations = m_resolved;
    last.resolved = m_resolvedFlags;
    return m_resolved;
}

uint32_t PythonFrames::locationOf(uint64_t image, const agent::PythonFrame &frame, bool *resolved)
{
    if (resolved)
        *resolved = true;
    // A thread in a loop is sampled at the same few instructions, a deep stack's outer frames at the same calls: each
    // (image, code, instruction) is turned into a line and a location once.
    const FrameKey frameKey{image, frame.code, frame.instruction};
    if (auto known = m_frameLocations.find(frameKey); known != m_frameLocations.end())
        return known->second;
    if (auto code = m_codeAt.find({image, frame.code}); code != m_codeAt.end()) {
        const int line = lineOf(m_codes[code->second], frame.instruction);
        const uint64_t key = uint64_t(code->second) << 24 | uint64_t(uint32_t(line) & 0xffffff);
        auto [it, inserted] = m_resolvedLocations.try_emplace(key, static_cast<uint32_t>(m_locations.size()));
        if (inserted)
            m_locations.push_back(Location{int64_t(code->second), line, image, frame.code, frame.instruction});
        const uint32_t location = m_recorder.internLocation(kPythonModule, uint64_t(it->second) + 1);
        m_frameLocations.emplace(frameKey, location);
        return location;
    }
    auto [it, inserted] = m_pendingLocations.try_emplace({image, frame.code, frame.instruction},
                                                         static_cast<uint32_t>(m_locations.size()));
    if (inserted)
        m_locations.push_back(Location{-1, 0, image, frame.code, frame.instruction});
    if (resolved)
        *resolved = false;
    return m_recorder.internLocation(kPythonModule, uint64_t(it->second) + 1);
}

bool PythonFrames::isEvalFrame(const Interpreter &interpreter, uint32_t location) const
{
    if (m_recorder.locationModule(location) < kFirstModuleId)
        return false;
    const uint64_t address = m_recorder.locationAddress(location);
    for (const auto &[start, end] : interpreter.evalLoop)
        if (address >= start && address < end)
            return true;
    return false;
}

bool PythonFrames::isForwarder(const Interpreter &interpreter, uint32_t location) const
{
    if (interpreter.forwarders.empty() || m_recorder.locationModule(location) < kFirstModuleId)
        return false;
    const uint64_t address = m_recorder.locationAddress(location);
    auto after = std::upper_bound(interpreter.forwarders.begin(), interpreter.forwarders.end(), address,
                                  [](uint64_t a, const std::pair<uint64_t, uint64_t> &r) { return a < r.first; });
    return after != interpreter.forwarders.begin() && address < std::prev(after)->second;
}

uint32_t PythonFrames::interpreterFrame(uint32_t location)
{
    return m_recorder.internLocation(m_recorder.locationModule(location),
                                     m_recorder.locationAddress(location) | kInterpreterFrameBit);
}

void PythonFrames::merge(uint32_t pid, uint32_t tid, const PythonFramesView &python, std::vector<uint32_t> &locations)
{
    const auto found = m_interpreters.find(pid);
    if (found == m_interpreters.end() || !found->second.found)
        return;
    const Interpreter &interpreter = found->second;
    ++m_stats.samples;
    if (python.frames.empty()) {
        ++m_stats.notRead;
        return;
    }
    if ((python.flags & (agent::PythonWalkCut | agent::PythonWalkTruncated)) != 0)
        ++m_stats.cut;
    else
        ++m_stats.whole;
    const std::vector<uint32_t> &pythonLocations = locationsOf(tid, python);
    // Each call of the eval loop ran the frames from the next one on up to its entry frame (the outermost it ran).
    size_t next = 0;
    const auto takeCall = [&] {
        while (next < python.frames.size()) {
            const agent::PythonFrame &frame = python.frames[next];
            m_merged.push_back(pythonLocations[next++]);
            if ((frame.flags & agent::PythonFrameEntry) != 0)
                break;
        }
    };
    m_merged.clear();
    // The interpreter's frames that only pass a call on, between the innermost and the outermost eval frame, go too
    // (unless the interpreter's frames are kept).
    size_t innermost = locations.size();
    size_t outermost = 0;
    size_t evalFrames = 0;
    for (size_t i = 0; i < locations.size(); ++i) {
        if (isEvalFrame(interpreter, locations[i])) {
            innermost = std::min(innermost, i);
            outermost = i;
            ++evalFrames;
        }
    }
    // A sample taken as a call of the eval loop begins or ends finds the loop's native frame at the leaf while its
    // Python frame is not linked yet (or no longer): one eval frame more than the chain has calls, read whole. That
    // leaf eval frame is kept as it is, and the calls pair with the eval frames below it.
    size_t inTransition = 0;
    if ((python.flags & (agent::PythonWalkCut | agent::PythonWalkTruncated)) == 0) {
        const auto calls = size_t(std::count_if(python.frames.begin(), python.frames.end(), [](const auto &frame) {
            return (frame.flags & agent::PythonFrameEntry) != 0;
        }));
        inTransition = evalFrames == calls + 1 ? 1 : 0;
    }
    bool mismatched = false;
    for (size_t i = 0; i < locations.size(); ++i) {
        const uint32_t location = locations[i];
        if (i > innermost && i < outermost && isForwarder(interpreter, location)) {
            if (m_keepInterpreter)
                m_merged.push_back(interpreterFrame(location));
            continue;
        }
        if (!isEvalFrame(interpreter, location)) {
            m_merged.push_back(location);
            continue;
        }
        if (inTransition > 0) {
            --inTransition;
            m_merged.push_back(location);
            continue;
        }
        if (next == python.frames.size()) {
            mismatched = true; // an eval frame with no Python frame left for it: kept as it is
            m_merged.push_back(location);
            continue;
        }
        takeCall();
        if (m_keepInterpreter)
            m_merged.push_back(interpreterFrame(location)); // the eval loop's frame under the Python frames it ran
    }
    if (next < python.frames.size()) {
        mismatched = true;
        while (next < python.frames.size())
            m_merged.push_back(pythonLocations[next++]);
    }
    m_stats.mismatched += mismatched ? 1 : 0;
    locations.swap(m_merged);
}

PythonFrames::Name PythonFrames::name(uint64_t address) const
{
    Name out;
    if (address == 0 || address > m_locations.size())
        return {"[python]", "", 0};
    const Location &l = m_locations[address - 1];
    const Code *code = l.code >= 0 ? &m_codes[size_t(l.code)] : nullptr;
    int line = l.line;
    if (!code) {
        if (auto it = m_codeAt.find({l.image, l.codeAddress}); it != m_codeAt.end()) {
            code = &m_codes[it->second];
            line = lineOf(*code, l.instruction);
        }
    }
    if (!code)
        return {"[python code " + hexAddress(l.codeAddress) + "]", "", 0};
    out.function = code->function;
    out.file = code->file;
    out.line = line;
    return out;
}

void PythonFrames::nameFlush(FlushInput &input) const
{
    healthLines(input.agentFaults, input.agentNotes);
    for (const LocationKey &key : input.locations) {
        if (key.moduleId != kPythonModule)
            continue;
        Name named = name(key.address);
        input.pythonNames[key.address] =
            FlushInput::PythonName{std::move(named.function), std::move(named.file), named.line};
    }
}

void PythonFrames::healthLines(std::vector<std::string> &faults, std::vector<std::string> &notes) const
{
    // A CPython found with its eval loop informs; one not found (or whose frames cannot be placed) warns.
    for (const auto &[pid, interpreter] : m_interpreters)
        (interpreter.found && !interpreter.evalLoop.empty() ? notes : faults)
            .push_back("python: process " + std::to_string(pid) + ": " + interpreter.said);
    const Stats &s = m_stats;
    if (s.samples == 0)
        return;
    const auto share = [&](uint64_t n) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1f%%", 100.0 * double(n) / double(s.samples));
        return std::string(text);
    };
    // Chains cut in more than 1% of the samples (frames that looked wrong, or deeper than the bound) warn.
    (s.cut * 100 > s.samples ? faults : notes)
        .push_back("python: " + std::to_string(s.samples) + " samples of a CPython: " + share(s.whole) +
                   " with the Python chain read whole, " + share(s.cut) + " cut (deeper than " +
                   std::to_string(agent::kMaxPythonFrames) + " frames, or a frame that looked wrong), " +
                   share(s.notRead) + " not read (no Python thread state on the thread, or no frame running); " +
                   std::to_string(s.mismatched) +
                   " whose native eval-loop frames and Python calls did not pair (the rest put outermost)");
    if (s.waitsRead > 0)
        notes.push_back("python: " + std::to_string(s.waitsRead) +
                        " waits had their Python chain read from outside while the thread was blocked (and still "
                        "blocked after the read)");
}

} // namespace emberline::engine
