#include "engine/session/sampling_pipeline.h"

#include "engine/session/python_frames.h"

#include "engine/agent/agent_protocol.h"
#include "engine/common/clock.h"
#include "engine/common/strings.h"
#include "engine/process/proc_files.h"
#include "engine/symbols/kernel_symbols.h"

#include <algorithm>
#include <ctime>
#include <dirent.h>
#include <filesystem>
#include <set>

namespace emberline::engine {
SamplingPipeline::SamplingPipeline(Recorder &recorder) : m_recorder(recorder)
{
    m_realtimeOffsetNs = clockNs(CLOCK_REALTIME) - clockNs(CLOCK_MONOTONIC);
}

ProcessMap &SamplingPipeline::processMap(uint32_t pid)
{
    auto &slot = m_processes[pid];
    if (!slot) {
        slot = std::make_unique<ProcessMap>(&m_elfCache, &m_moduleIds);
        (void)slot->loadFromProc(static_cast<int>(pid));
    }
    return *slot;
}

void SamplingPipeline::primeProcess(int pid)
{
    ProcessMap &map = processMap(static_cast<uint32_t>(pid));
    (void)map;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d)) {
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
                const int tid = std::atoi(e->d_name);
                m_recorder.setThreadName(static_cast<uint32_t>(pid), static_cast<uint32_t>(tid),
                                         readThreadName(pid, tid));
            }
        }
        ::closedir(d);
    }
}

uint32_t SamplingPipeline::moduleIdFor(const MappedModule &module)
{
    // Registered once per id: ids are stable, so the module's strings are copied once, not per frame.
    if (module.id < m_health.modules.size() && !m_health.modules[module.id].path.empty())
        return module.id;
    ModuleInfo info;
    info.id = module.id;
    info.path = module.path;
    info.buildId = module.image ? module.image->buildId() : std::string();
    info.start = module.start;
    info.end = module.end;
    info.pgoff = module.pgoff;
    m_recorder.registerModule(info);
    if (m_health.modules.size() <= module.id)
        m_health.modules.resize(module.id + 1);
    ModuleUnwindInfo &health = m_health.modules[module.id];
    health.path = module.path.empty() ? std::string("[anonymous]") : module.path;
    health.buildId = info.buildId;
    health.hasUnwindTable = module.image && module.image->fdeCount() > 0;
    health.fileMissing = module.fileMissing;
    health.anonymous = !module.image && !module.fileMissing;
    return module.id;
}

uint32_t SamplingPipeline::moduleIdAt(uint32_t pid, uint64_t address)
{
    const MappedModule *module = processMap(pid).find(address);
    return module ? moduleIdFor(*module) : kUnknownModule;
}

void SamplingPipeline::countModuleSample(uint32_t id)
{
    if (m_health.byModule.size() <= id)
        m_health.byModule.resize(id + 1);
    ModuleUnwindCounters &c = m_health.byModule[id];
    if (c.lastSample != m_sampleSerial) {
        c.lastSample = m_sampleSerial;
        ++c.samples;
    }
}

void SamplingPipeline::countIncompleteEnd(uint32_t id, UnwindCause cause, uint64_t neededBytes, bool neededExact)
{
    if (m_health.byModule.size() <= id)
        m_health.byModule.resize(id + 1);
    ModuleUnwindCounters &c = m_health.byModule[id];
    ++c.causes[static_cast<size_t>(cause)];
    if (cause == UnwindCause::FramePointers)
        return;
    ++c.incomplete;
    ++m_health.incomplete;
    if (neededBytes > c.neededStackBytes) {
        c.neededStackBytes = neededBytes;
        c.neededExact = neededExact;
    }
}

UnwindCause SamplingPipeline::classifyIncomplete(const UnwindOutput &out, const MappedModule *last,
                                                 bool copyEnded) const
{
    if (copyEnded)
        return UnwindCause::StackCopyTooSmall;
    // An address that no mapping holds is not code at all: the walk went astray (a return address read from the
    // wrong slot), which no perf map would fix.
    if (!last)
        return UnwindCause::Other;
    if (!last->image && !last->fileMissing)
        return UnwindCause::JitOrAnonymous;
    if (last->fileMissing)
        return UnwindCause::FileMissing;
    if (out.stop == UnwindStop::NoUnwindInfo || !last->image->fdeCount())
        return UnwindCause::NoUnwindInfo;
    return UnwindCause::Other;
}

// The stack copy that would have held the whole stack: exact for the main thread (its [stack] mapping ends
// where its frames end), else the furthest the walk tried to reach.
uint64_t SamplingPipeline::stackNeeded(const RawSample &sample, ProcessMap &map, uint64_t reached, bool &exact) const
{
    const uint64_t sp = sample.regs.size() == RegCount ? sample.regs[RegSP] : 0;
    if (sample.pid == sample.tid)
        map.readMainStack(static_cast<int>(sample.pid)); // once per process image, for its cut-short stacks only
    exact = sp >= map.mainStackStart() && sp < map.mainStackEnd();
    if (exact)
        return std::max(reached, map.mainStackEnd() - sp);
    return reached;
}

bool SamplingPipeline::reloadMap(uint32_t pid, ProcessMap &map)
{
    // At most every 100 ms, as reading /proc/PID/maps costs far more than a sample; every 2 ms in the second
    // after an exec, while the loader maps one library after another.
    const int64_t now = clockNs(CLOCK_MONOTONIC);
    const auto exec = m_execAt.find(pid);
    const bool starting = exec != m_execAt.end() && now - exec->second < 1'000'000'000;
    if (now - m_lastReload[pid] <= (starting ? 2'000'000 : 100'000'000))
        return false;
    m_lastReload[pid] = now;
    return map.loadFromProc(static_cast<int>(pid)).ok();
}

std::string SamplingPipeline::unwindInto(const RawSample &sample, ProcessMap &map, StackOf of)
{
    UnwindOutput &out = m_unwound;
    bool copyEnded = false;
    bool framePointersFinished = false;
    uint64_t reached = 0;
    uint32_t dwarfEnd = kUnknownModule;
    if (sample.regs.size() != RegCount && !sample.walked.pcs.empty()) {
        takeWalk(sample.walked, out);
        // A library mapped moments ago may not be in our map yet: reload from /proc.
        if (!map.find(sample.walked.pcs[0]) || !map.find(sample.walked.pcs.back()))
            reloadMap(sample.pid, map);
    } else if (sample.regs.size() == RegCount) {
        const UnwindInput input{sample.regs, sample.stack, &map, static_cast<int>(sample.pid)};
        // A library mapped moments ago may not be in our map yet: reload from /proc.
        if (!map.find(sample.regs[RegIP]))
            reloadMap(sample.pid, map);
        if (of == StackOf::Sample)
            m_health.stackBytes = m_stackCopyBytes
                                      ? m_stackCopyBytes
                                      : std::max(m_health.stackBytes, static_cast<uint32_t>(sample.stack.size()));
        // A copy shorter than asked for reached the top of the thread's stack: it cannot have been too small.
        const bool copyFull = sample.stack.size() >= (sample.stackLimit ? sample.stackLimit : m_health.stackBytes);
        m_unwinder.unwind(input, out);
        // A walk that ended at an address outside the map may have reached a library mapped since the map was
        // read (one the program is loading): read it again and walk again if that places the address.
        if (!out.complete && !out.ips.empty() && !map.find(out.ips.back()) && reloadMap(sample.pid, map) &&
            map.find(out.ips.back()))
            m_unwinder.unwind(input, out);
        if (of == StackOf::Sample)
            ++(out.byTables ? m_health.tableWalks : m_health.libunwindWalks);
        if (!out.complete) {
            if (!out.ips.empty())
                if (const MappedModule *m = map.find(out.ips.back()))
                    dwarfEnd = moduleIdFor(*m);
            copyEnded = copyFull && out.stop == UnwindStop::StackCopyEnded;
            reached = out.stackNeeded;
            // DWARF stopped short (no unwind info, or a stack deeper than the copy): the frame-pointer chain
            // may go further.
            m_unwinder.unwindFramePointers(input, m_fpUnwound);
            if (m_fpUnwound.complete && m_fpUnwound.ips.size() > out.ips.size()) {
                std::swap(out, m_fpUnwound);
                ++m_framePointerFallbacks;
                framePointersFinished = true;
            } else if (copyFull && m_fpUnwound.stop == UnwindStop::StackCopyEnded &&
                       m_fpUnwound.ips.size() >= out.ips.size()) {
                copyEnded = true;
                reached = std::max(reached, m_fpUnwound.stackNeeded);
            }
        }
        if (!sample.walked.pcs.empty())
            checkWalk(sample.walked, out, map);
    } else {
        out.ips.assign(1, sample.ip);
        out.complete = false;
        out.stop = UnwindStop::Other;
    }

    m_locations.clear();
    // A CPU sample in the kernel always has a kernel frame ([kernel] when its chain was not recorded); a
    // context switch has the kernel frames of its wait when the chain was recorded.
    if ((sample.inKernel && sample.kind == RawSample::Kind::Cpu) ||
        (sample.kind == RawSample::Kind::SwitchOut && !sample.kernelStack.empty()))
        addKernelFrames(sample);
    m_kernelFrames = m_locations.size();
    if (of == StackOf::Allocation) {
        allocationStack(out, map);
        if (m_python && !sample.python.frames.empty())
            m_python->merge(sample.pid, sample.tid, sample.python, m_locations);
        return {};
    }
    ++m_sampleSerial;
    ++m_health.samples;
    for (uint64_t ip : out.ips) {
        const MappedModule *module = map.find(ip);
        const uint32_t id = module ? moduleIdFor(*module) : kUnknownModule;
        countModuleSample(id);
        m_locations.push_back(m_recorder.internLocation(id, ip));
    }
    if (m_python && sample.python.image != 0)
        m_python->merge(sample.pid, sample.tid, sample.python, m_locations);
    const bool copied = sample.regs.size() == RegCount && !sample.stack.empty();
    if (out.complete) {
        if (framePointersFinished)
            countIncompleteEnd(dwarfEnd, UnwindCause::FramePointers, 0);
        if (m_stackCopyPolicy && copied)
            m_stackCopyPolicy->observe(sample.stackLimit, out.stackUsed, false, 0);
        return {};
    }
    const MappedModule *last = out.ips.empty() ? nullptr : map.find(out.ips.back());
    const uint32_t endId = last ? last->id : kUnknownModule;
    const UnwindCause cause = classifyIncomplete(out, last, copyEnded);
    bool exact = false;
    const uint64_t needed = copyEnded ? stackNeeded(sample, map, reached, exact) : 0;
    countIncompleteEnd(endId, cause, needed, exact);
    if (m_stackCopyPolicy && copied)
        m_stackCopyPolicy->observe(sample.stackLimit, out.stackUsed, copyEnded, needed);
    m_lastEnd = endId;
    m_lastCause = cause;
    std::string module = last ? baseName(last->path) : std::string("[unknown]");
    // The recorder's count is of samples (its percentage is of them): an off-CPU stack is not one.
    if (sample.kind != RawSample::Kind::SwitchOut && sample.kind != RawSample::Kind::Wait)
        m_recorder.countIncomplete(module);
    return module;
}

size_t SamplingPipeline::leadingAgentFrames(const std::vector<uint64_t> &ips, ProcessMap &map)
{
    size_t i = 0;
    while (i < ips.size()) {
        const MappedModule *module = map.find(ips[i]);
        const std::string file = module ? baseName(module->path) : std::string();
        if (!module || !agent::isAgentFileName(file.data(), file.size())) // its own file, or a copy
            break;
        ++i;
    }
    return i;
}

void SamplingPipeline::allocationStack(const UnwindOutput &out, ProcessMap &map)
{
    // The agent's own frames (the hook and what it called to take the sample) lead the stack: the allocation is
    // its caller's. The unwind health counts the CPU samples' stacks only.
    for (size_t i = leadingAgentFrames(out.ips, map); i < out.ips.size(); ++i) {
        const MappedModule *module = map.find(out.ips[i]);
        m_locations.push_back(m_recorder.internLocation(module ? moduleIdFor(*module) : kUnknownModule, out.ips[i]));
    }
}

void SamplingPipeline::takeWalk(const WalkedStack &walk, UnwindOutput &out) const
{
    out.ips.clear();
    for (size_t i = 0; i < walk.pcs.size(); ++i)
        out.ips.push_back(i == 0 ? walk.pcs[i] : walk.pcs[i] - 1);
    out.complete = !walk.truncated;
    out.usedFramePointers = false;
    out.stop = walk.truncated ? UnwindStop::MaxFrames : UnwindStop::Other;
    out.stackNeeded = 0;
    out.stackUsed = 0;
}

void SamplingPipeline::checkWalk(const WalkedStack &walk, const UnwindOutput &out, ProcessMap &map)
{
    ++m_health.walkChecks;
    UnwindOutput walked;
    takeWalk(walk, walked);
    // An allocation's walk starts at the program's call of the allocator, its copy in the agent's frames under it:
    // both are compared from the program's first frame.
    const size_t walkedFrom = leadingAgentFrames(walked.ips, map);
    const size_t outFrom = leadingAgentFrames(out.ips, map);
    const size_t walkedFrames = walked.ips.size() - walkedFrom;
    const size_t outFrames = out.ips.size() - outFrom;
    const size_t common = std::min(walkedFrames, outFrames);
    const bool samePrefix =
        std::equal(walked.ips.begin() + std::ptrdiff_t(walkedFrom),
                   walked.ips.begin() + std::ptrdiff_t(walkedFrom + common), out.ips.begin() + std::ptrdiff_t(outFrom));
    // The session's unwind of the copy may stop short (a copy too small): the walk going further is no mismatch.
    if (!samePrefix || (out.complete && walkedFrames != outFrames))
        ++m_health.walkMismatches;
    else if (walkedFrames > outFrames)
        ++m_health.walkLonger;
}

UnwoundAllocation SamplingPipeline::unwindAllocation(uint32_t pid, uint32_t tid, std::span<const uint64_t> regs,
                                                     std::span<const uint8_t> stack, uint32_t stackLimit,
                                                     const WalkedStack &walk, const PythonFramesView &python)
{
    ProcessMap &map = processMap(pid);
    if (m_recorder.threadName(tid).empty())
        m_recorder.setThreadName(pid, tid, readThreadName(static_cast<int>(pid), static_cast<int>(tid)));
    RawSample sample;
    sample.pid = pid;
    sample.tid = tid;
    sample.regs = regs;
    sample.stack = stack;
    sample.stackLimit = stackLimit;
    sample.ip = regs.size() > RegIP ? regs[RegIP] : 0;
    sample.walked = walk;
    sample.python = python;
    unwindInto(sample, map, StackOf::Allocation);
    const UnwindOutput &out = m_unwound;
    return {m_locations, out.stackUsed, !out.complete && out.stop == UnwindStop::StackCopyEnded};
}

void SamplingPipeline::countRepeatedStack(const LastStack &stack)
{
    ++m_sampleSerial;
    ++m_health.samples;
    for (uint32_t location : stack.locations) {
        const uint32_t id = m_recorder.locationModule(location);
        if (id >= kFirstModuleId || id == kUnknownModule)
            countModuleSample(id);
    }
    if (!stack.incompleteModule.empty()) {
        countIncompleteEnd(stack.endModule, stack.cause, 0);
        m_recorder.countIncomplete(stack.incompleteModule);
    }
}

void SamplingPipeline::addKernelFrames(const RawSample &sample)
{
    if (sample.kernelStack.empty()) {
        ++m_health.kernelUnnamedSamples;
        m_locations.push_back(m_recorder.internLocation(kKernelModule, 0));
        return;
    }
    ++m_health.kernelSamples;
    if (!m_kernelModuleRegistered) {
        // The kernel's half of the address space: every kernel address falls in it, as in perf's mapping.
        ModuleInfo kernel;
        kernel.id = kKernelSymbolsModule;
        kernel.path = std::string(kKernelMappingName);
        kernel.start = 0xffff800000000000ULL;
        kernel.end = UINT64_MAX;
        m_recorder.registerModule(kernel);
        m_kernelModuleRegistered = true;
    }
    for (uint64_t ip : sample.kernelStack)
        m_locations.push_back(m_recorder.internLocation(kKernelSymbolsModule, ip));
}

void SamplingPipeline::onSample(const RawSample &sample)
{
    ProcessMap &map = processMap(sample.pid);
    if (m_recorder.threadName(sample.tid).empty())
        m_recorder.setThreadName(sample.pid, sample.tid,
                                 readThreadName(static_cast<int>(sample.pid), static_cast<int>(sample.tid)));
    if (sample.kind != RawSample::Kind::Periodic && sample.kind != RawSample::Kind::Wait) {
        unwindInto(sample, map);
    } else if (auto last = m_lastStacks.find(sample.tid); sample.sameStack && last != m_lastStacks.end()) {
        // The thread has not run since: same stack, nothing to unwind.
        m_locations = last->second.locations;
        countRepeatedStack(last->second);
    } else {
        std::string incomplete = unwindInto(sample, map);
        LastStack &kept = m_lastStacks[sample.tid];
        kept.locations = m_locations;
        kept.incompleteModule = std::move(incomplete);
        kept.endModule = m_lastEnd;
        kept.cause = m_lastCause;
    }
    const int64_t when = static_cast<int64_t>(sample.timeNs) + m_realtimeOffsetNs;
    switch (sample.kind) {
    case RawSample::Kind::Cpu:
        m_recorder.recordTimed(when, sample.pid, sample.tid, static_cast<int64_t>(sample.period),
                               static_cast<int64_t>(sample.period), static_cast<uint8_t>(ThreadState::Running), true,
                               m_locations);
        break;
    case RawSample::Kind::Periodic:
        m_recorder.recordTimed(when, sample.pid, sample.tid, static_cast<int64_t>(sample.period),
                               static_cast<int64_t>(sample.wallNs), static_cast<uint8_t>(sample.state), true,
                               m_locations);
        break;
    case RawSample::Kind::Wait:
        m_recorder.recordTimed(when, sample.pid, sample.tid, 0, static_cast<int64_t>(sample.wallNs),
                               static_cast<uint8_t>(sample.state), false, m_locations);
        break;
    case RawSample::Kind::SwitchOut: {
        OffCpu interval{sample.pid, sample.timeNs, false, m_locations, m_kernelFrames};
        if (auto p = m_lastPreempted.find(sample.tid); p != m_lastPreempted.end())
            interval.preempted = p->second;
        // The switch-in may sit in another CPU's buffer that was read first.
        if (auto in = m_earlySwitchIn.find(sample.tid); in != m_earlySwitchIn.end() && in->second >= sample.timeNs) {
            recordOffCpu(sample.tid, interval, in->second);
            m_earlySwitchIn.erase(in);
        } else {
            m_offCpu[sample.tid] = std::move(interval);
        }
        break;
    }
    }
}

void SamplingPipeline::recordOffCpu(uint32_t tid, const OffCpu &interval, uint64_t untilNs)
{
    if (untilNs <= interval.sinceNs)
        return;
    const auto state = interval.preempted ? ThreadState::Running : ThreadState::Sleeping;
    // A wait keeps its kernel frames: they say what the thread waits for (a futex, a read, a poll). A preempted
    // thread did not choose to stop, and its kernel frames are the scheduler's own path from the interrupt that
    // took the CPU: they would only split each of the thread's stacks into a few more that say nothing new (and
    // multiply a busy program's distinct stacks). Its time stays under its own stack, as runnable.
    std::span<const uint32_t> locations = interval.locations;
    if (interval.preempted && interval.kernelFrames < locations.size())
        locations = locations.subspan(interval.kernelFrames);
    m_recorder.recordTimed(static_cast<int64_t>(untilNs) + m_realtimeOffsetNs, interval.pid, tid, 0,
                           static_cast<int64_t>(untilNs - interval.sinceNs), static_cast<uint8_t>(state), false,
                           locations);
}

void SamplingPipeline::onSwitch(uint32_t pid, uint32_t tid, uint64_t timeNs, bool out, bool preempted)
{
    (void)pid;
    if (out) {
        // The kernel writes the switch-out sample just before this record: an open interval is this switch's.
        m_lastPreempted[tid] = preempted;
        if (auto it = m_offCpu.find(tid); it != m_offCpu.end())
            it->second.preempted = preempted;
        return;
    }
    auto it = m_offCpu.find(tid);
    if (it != m_offCpu.end() && it->second.sinceNs <= timeNs) {
        recordOffCpu(tid, it->second, timeNs);
        m_offCpu.erase(it);
    } else {
        m_earlySwitchIn[tid] = timeNs;
    }
}

void SamplingPipeline::closeOffCpuIntervals(uint64_t monotonicNs)
{
    for (auto &[tid, interval] : m_offCpu) {
        recordOffCpu(tid, interval, monotonicNs);
        interval.sinceNs = std::max(interval.sinceNs, monotonicNs);
    }
}

void SamplingPipeline::onMmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, bool executable,
                              uint64_t inode, std::string_view path)
{
    processMap(pid).addMapping(start, length, pgoff, std::string(path), executable, inode);
}

void SamplingPipeline::onImageModule(uint64_t image, uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff,
                                     std::string_view path)
{
    (void)image;
    auto &slot = m_processes[pid];
    if (!slot) // the records stand for the image; a pc in none of its modules (one opened since) reads /proc then
        slot = std::make_unique<ProcessMap>(&m_elfCache, &m_moduleIds);
    // The dynamic linker names a module by the path it opened (/lib/... through a link); the kernel's map, and so
    // the module's other sightings, by the file's own path.
    auto resolved = m_resolvedPaths.find(path);
    if (resolved == m_resolvedPaths.end()) {
        std::string own(path);
        if (path.starts_with('/')) {
            std::error_code error;
            const std::filesystem::path canonical = std::filesystem::canonical(own, error);
            if (!error)
                own = canonical.string();
        }
        resolved = m_resolvedPaths.emplace(std::string(path), std::move(own)).first;
    }
    slot->addMapping(start, length, pgoff, resolved->second, true);
}

void SamplingPipeline::onComm(uint32_t pid, uint32_t tid, std::string_view name, bool exec)
{
    m_recorder.setThreadName(pid, tid, std::string(name));
    if (exec && pid == tid) {
        // A new program image: the old map and libunwind's cached unwind info no longer apply.
        if (auto it = m_processes.find(pid); it != m_processes.end())
            it->second->clear();
        m_unwinder.forgetProcess(static_cast<int>(pid));
        m_execAt[pid] = clockNs(CLOCK_MONOTONIC);
        m_lastReload.erase(pid);
    }
}

void SamplingPipeline::onFork(uint32_t pid, uint32_t ppid, uint32_t tid)
{
    if (pid != tid || pid == ppid)
        return; // a new thread shares its process's map
    // A forked child has its parent's name until it renames itself or execs (a COMM record then says so): known
    // now, it is not lost when the child exits before its name could be read from /proc.
    if (m_recorder.threadName(tid).empty()) {
        const std::string &parentName = m_recorder.threadName(ppid);
        if (!parentName.empty())
            m_recorder.setThreadName(pid, tid, std::string(parentName));
    }
    // A forked child starts with a copy of its parent's address space.
    auto parent = m_processes.find(ppid);
    auto &slot = m_processes[pid];
    slot = std::make_unique<ProcessMap>(&m_elfCache, &m_moduleIds);
    if (parent != m_processes.end()) {
        for (const auto &[start, m] : parent->second->modules())
            slot->addMapping(m.start, m.end - m.start, m.pgoff, m.path, true, m.inode);
    }
}

void SamplingPipeline::onExit(uint32_t pid, uint32_t tid)
{
    m_offCpu.erase(tid);
    m_lastStacks.erase(tid);
    m_earlySwitchIn.erase(tid);
    m_lastPreempted.erase(tid);
    if (pid == tid) {
        m_unwinder.forgetProcess(static_cast<int>(pid));
        m_lastReload.erase(pid);
        m_execAt.erase(pid);
    }
}

size_t SamplingPipeline::threadsTracked() const
{
    std::set<uint32_t> tids;
    for (const auto &[tid, v] : m_lastPreempted)
        tids.insert(tid);
    for (const auto &[tid, v] : m_offCpu)
        tids.insert(tid);
    for (const auto &[tid, v] : m_lastStacks)
        tids.insert(tid);
    for (const auto &[tid, v] : m_earlySwitchIn)
        tids.insert(tid);
    return tids.size();
}

void SamplingPipeline::onLost(uint64_t count)
{
    m_recorder.countLost(count);
}

} // namespace emberline::engine
