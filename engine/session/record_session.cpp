#include "engine/session/record_session.h"

#include "engine/annotate/debuginfod_client.h"
#include "engine/common/clock.h"
#include "engine/common/logging.h"
#include "engine/common/thread_priority.h"
#include "engine/flush/export_worker.h"
#include "engine/process/launcher.h"
#include "engine/process/process_memory.h"
#include "engine/recorder/recorder.h"
#include "engine/sampler/inprocess_sampler.h"
#include "engine/sampler/stack_copy_policy.h"
#include "engine/session/agent_link.h"
#include "engine/session/exec_barrier.h"
#include "engine/session/memory_session.h"
#include "engine/session/python_frames.h"
#include "engine/session/sampling_pipeline.h"
#include "engine/symbols/stores/line_table_store.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

namespace emberline::engine {
namespace {

// The in-process sampler's ring per process image: at 999 Hz and a 32 KiB first copy, two busy threads write some
// 64 MB a second, read every 10 ms.
constexpr uint64_t kInprocessRingBytes = uint64_t(16) << 20;

int64_t ownCpuNs()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto ns = [](const timeval &tv) { return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 + tv.tv_usec * 1000; };
    return ns(ru.ru_utime) + ns(ru.ru_stime);
}

bool processAlive(int pid)
{
    return ::kill(pid, 0) == 0 || errno == EPERM;
}

Status makeOutputDirectory(const std::string &dir)
{
    if (dir.empty())
        return Ok{};
    std::string partial;
    for (size_t i = 0; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') {
            partial = dir.substr(0, i);
            if (!partial.empty() && ::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
                return makeError(Error::Code::Io, "cannot create " + partial + ": " + std::strerror(errno));
        }
    }
    if (::access(dir.c_str(), W_OK) != 0)
        return makeError(Error::Code::Io, dir + ": " + std::strerror(errno));
    return Ok{};
}

std::string exitReason(int status)
{
    return status > 128 ? "target killed by signal " + std::to_string(status - 128)
                        : "target exited with status " + std::to_string(status);
}

} // namespace

// Everything one run holds, from start() to finish(). Members are destroyed in reverse order: the sampler
// first (it asks the exporter for its CPU time), then the exporter (its thread may still report an error),
// then the pipeline and the recorder it feeds, and the launched child last.
struct RecordSession::Running {
    SessionSummary summary;
    std::optional<LaunchedProcess> child;
    std::string exportError; // set on the exporter thread, read after finish() joined it
    Recorder recorder;
    SamplingPipeline pipeline{recorder};
    std::optional<StackCopyPolicy> stackCopy;    // when the stack copy is learned
    std::unique_ptr<AgentLink> agent;            // when the program gets Emberline's agent (memory, in-process)
    std::optional<AgentLink::Attached> attached; // an attached program the agent was loaded into
    std::unique_ptr<MemorySession> memory;       // when memory is profiled
    std::unique_ptr<PythonFrames> python;        // with the agent: the Python frames of a CPython's samples
    RingSinks ringSinks;                       // where the agent's records go: the memory side, the in-process sampler
    size_t ringRecords = 0;                    // read at the last poll of the agent's rings
    std::unique_ptr<ExecBarrier> execBarrier;  // a sampler that reports execs, with memory profiled
    std::optional<ProcessTreeMemory> resident; // memory profiled: the program's RSS, read with the live stats
    std::unique_ptr<ExportWorker> exporter;
    std::unique_ptr<Sampler> sampler;
    int targetPid = 0;
    bool targetAnnounced = true; // false until the consumers learn a launched program's executable from /proc
    int64_t cpuAtStart = 0;
    int64_t monoStart = 0;
    int64_t flushStartReal = 0;
    int64_t nextFlushMono = 0;
    int64_t lastStatsMono = 0;
    int64_t lastStatsCpu = 0;
    uint64_t lastStatsSamples = 0;
    bool paused = false;
    SampleSink *drainInto = nullptr; // the pipeline, or the exec barrier in front of it
    bool cpuFromRings = false;       // the in-process sampler: its CPU samples come from the rings too
};

RecordSession::RecordSession(SessionConfig config, SamplerFactory samplerFactory)
    : m_config(std::move(config)), m_samplerFactory(samplerFactory ? std::move(samplerFactory) : openSystemSampler)
{
}

RecordSession::~RecordSession() = default;

Result<SessionSummary> RecordSession::run(const std::atomic<bool> &stop, FlushCallback onFlush)
{
    SessionControl control;
    control.externalStop = &stop;
    Callbacks callbacks;
    callbacks.consumers = std::make_shared<FlushConsumers>();
    callbacks.consumers->add(std::move(onFlush));
    return run(control, callbacks);
}

Result<SessionSummary> RecordSession::run(SessionControl &control, const Callbacks &callbacks)
{
    const SessionPriority priority; // before start(): the threads it starts take the session thread's priority
    auto started = start(callbacks);
    if (!started)
        return started.error();
    Running &r = *started.value();
    loop(r, control, callbacks);
    return finish(r);
}

Result<std::unique_ptr<RecordSession::Running>> RecordSession::start(const Callbacks &callbacks)
{
    if (auto st = validateConfig(m_config); !st)
        return st.error();
    if (auto st = makeOutputDirectory(m_config.outputDirectory); !st)
        return st.error();

    auto r = std::make_unique<Running>();
    std::string inprocessChoice;
    bool inprocess = wantsInprocessSampler(m_config, inprocessChoice);
    if (m_config.memory || inprocess) {
        auto link = AgentLink::create(m_config, m_config.memory ? "memory profiling" : "the in-process sampler");
        if (!link)
            return link.error();
        r->agent = std::move(link).value();
    }
    if (inprocess && r->agent->executableIsStatic()) {
        // No dynamic loader runs in a static program: nothing is preloaded, and no sample would come.
        if (m_config.sampler == "inprocess")
            return makeError(Error::Code::Unsupported,
                             r->agent->executable() + " is statically linked: the in-process sampler's agent cannot "
                                                      "be loaded into it (no dynamic loader runs there); use "
                                                      "--sampler perf or ptrace");
        inprocess = false;
    }
    if (m_config.memory) {
        auto memory = MemorySession::create(m_config, *r->agent, r->pipeline, r->recorder);
        if (!memory)
            return memory.error();
        r->memory = std::move(memory).value();
        r->ringSinks.memory = r->memory.get();
    }
    if (inprocess)
        r->agent->askCpu(static_cast<uint64_t>(1'000'000'000 / m_config.frequency), kInprocessRingBytes,
                         runsCPython(m_config));
    if (r->agent && m_config.pid > 0) {
        // Loaded into the running program now: its hooks and its threads' timers work from here on.
        auto attached = r->agent->attach(m_config.pid);
        if (!attached) {
            if (m_config.memory || m_config.sampler == "inprocess")
                return attached.error();
            // Chosen by auto (perf events forbidden): the ptrace sampler, as before injection, and why.
            inprocess = false;
            r->agent.reset();
            r->summary.samplerProblems.push_back("the in-process sampler's agent could not be loaded: " +
                                                 attached.error().message);
        } else {
            r->attached = attached.value();
            if (r->memory)
                r->memory->setOwnAllocators(r->attached->ownAllocators);
        }
    }
    if (r->agent) // the Python frames: named from the rings' records, merged into the pipeline's stacks
        r->ringSinks.python =
            r->pipeline.setPython(r->python = std::make_unique<PythonFrames>(r->agent->rings(), r->recorder,
                                                                             m_config.pythonInterpreterFrames));
    if (!m_config.command.empty()) {
        LaunchOptions launch{m_config.command, m_config.workingDirectory, m_config.environment, m_config.ownSession};
        if (r->agent) {
            // The agent's variables replace any of the same name (LD_PRELOAD keeps what it held, after the agent).
            auto added = r->agent->environment(launch.environment);
            std::erase_if(launch.environment, [&](const auto &v) {
                return std::any_of(added.begin(), added.end(), [&](const auto &a) { return a.first == v.first; });
            });
            launch.environment.insert(launch.environment.end(), added.begin(), added.end());
        }
        auto spawned = LaunchedProcess::spawn(launch);
        if (!spawned)
            return spawned.error();
        r->child.emplace(std::move(spawned).value());
        r->summary.launched = true;
    }
    // On failure the launched child reads EOF on its gate and exits without running the command.
    Result<std::unique_ptr<Sampler>> opened = makeError(Error::Code::Unsupported, "no sampler");
    if (inprocess) {
        InprocessSamplerOptions options;
        options.frequency = m_config.frequency;
        options.wallTime = m_config.wallTime;
        options.stackBytes = m_config.stackBytes;
        options.pythonOfWait = r->python ? r->python->waitReader() : nullptr;
        auto s =
            InprocessSampler::open(r->agent->rings(), r->child ? r->child->pid() : m_config.pid, options, r->pipeline);
        if (s) {
            r->ringSinks.cpu = s.value().get();
            opened = std::unique_ptr<Sampler>(std::move(s).value());
            r->summary.samplerChoice = inprocessChoice;
            r->cpuFromRings = true;
        } else {
            opened = s.error();
        }
    } else {
        opened = m_samplerFactory(m_config, r->child ? r->child->pid() : 0, r->summary.samplerChoice);
    }
    if (!opened)
        return opened.error();
    r->sampler = std::move(opened).value();
    // The rings tell the in-process sampler's execs in order, an old image's records before its new one's; a
    // sampler that reports execs itself gets the barrier that reads the old image's allocations first.
    // Where the sampler reports no mappings (the in-process and ptrace samplers read /proc), the agents' module
    // records place each image's modules, an image gone from /proc before its ring was read included.
    if (r->agent && !r->sampler->reportsMappings())
        r->ringSinks.modules = &r->pipeline;
    r->drainInto = &r->pipeline;
    if (r->memory && !r->cpuFromRings) {
        r->execBarrier =
            std::make_unique<ExecBarrier>(r->pipeline, r->agent->rings(), *r->memory, r->ringSinks.modules);
        r->drainInto = r->execBarrier.get();
    }
    r->summary.samplerDescription = r->sampler->description();
    r->summary.wallTime = r->sampler->wallTime();
    r->summary.wallTimeProblem = r->sampler->wallTimeProblem();
    r->summary.kernelFramesProblem = r->sampler->kernelFramesProblem();

    ExporterOptions exporterOptions;
    exporterOptions.outputDirectory = m_config.outputDirectory;
    exporterOptions.frequency = m_config.frequency;
    exporterOptions.samplerDescription = r->summary.samplerDescription;
    exporterOptions.wallTime = r->summary.wallTime;
    exporterOptions.symbolizer.debugDirectories = m_config.debugDirectories;
    exporterOptions.symbolizer.debuginfod = DebuginfodClient::configured();
    exporterOptions.symbolizer.lineTableDirectory = LineTableStore::defaultDirectory();
    exporterOptions.kernelFramesProblem = r->summary.kernelFramesProblem;
    exporterOptions.memory = m_config.memory;
    Running *run = r.get();
    ExportWorker::FlushCallback onFlush;
    if (callbacks.consumers)
        onFlush = [consumers = callbacks.consumers](std::shared_ptr<const Flush> flush) {
            consumers->addFlush(std::move(flush));
        };
    r->exporter = std::make_unique<ExportWorker>(exporterOptions, std::move(onFlush),
                                                 [run](const Error &e) { run->exportError = e.message; });
    r->sampler->countHelperCpu([exporter = r->exporter.get()] { return exporter->cpuNs(); });

    r->pipeline.setStackCopyBytes(m_config.stackBytes);
    if (m_config.learnStackCopy && r->sampler->stackCopyBytes() == m_config.stackBytes) {
        StackCopyPolicy::Limits limits;
        limits.startBytes = m_config.stackBytes;
        limits.maxBytes = std::max(m_config.stackBytes, kMaxStackCopyBytes);
        limits.minBytes = std::min(limits.minBytes, m_config.stackBytes);
        r->stackCopy.emplace(limits);
        r->pipeline.setStackCopyPolicy(&*r->stackCopy);
    }
    r->cpuAtStart = ownCpuNs();
    r->monoStart = clockNs(CLOCK_MONOTONIC);
    r->flushStartReal = clockNs(CLOCK_REALTIME);
    r->nextFlushMono = r->monoStart + m_config.flushPeriodNs;
    r->lastStatsMono = r->monoStart;
    r->lastStatsCpu = r->cpuAtStart;
    r->targetPid = r->child ? r->child->pid() : m_config.pid;
    if (r->memory && callbacks.onStats && r->targetPid > 0)
        r->resident.emplace(r->targetPid);
    // A launched program has not called exec yet: its executable is the command until the first live numbers.
    if (callbacks.consumers) {
        callbacks.consumers->setTarget(r->targetPid, r->child ? m_config.command.front() : std::string());
        r->targetAnnounced = !r->child;
    }
    if (r->child) {
        if (auto st = r->child->release(); !st)
            return st.error();
    } else {
        r->pipeline.primeProcess(m_config.pid);
    }
    return r;
}

namespace {

constexpr int64_t kMaxWaitNs = 100'000'000;     // the longest the session loop sleeps
constexpr int64_t kStatsPeriodNs = 250'000'000; // how often the live stats are reported
// How often the memory agent's rings are read: a 4 MiB ring holds a few hundred sampled stacks, and a program
// allocating at full speed fills it in some tens of milliseconds at the default interval. Read again sooner while
// they deliver in bulk (exact mode keeps the program waiting for room); a steady trickle waits its 10 ms, as each
// wake-up costs the session's thread some tens of microseconds.
constexpr int64_t kMemoryPollNs = 10'000'000;
constexpr int64_t kMemoryBusyPollNs = 1'000'000;
constexpr size_t kMemoryBusyRecords = 256; // records in one poll that make the next come sooner

} // namespace

void RecordSession::loop(Running &r, SessionControl &control, const Callbacks &callbacks)
{
    const bool stats = static_cast<bool>(callbacks.onStats);
    int64_t now = clockNs(CLOCK_MONOTONIC);
    while (true) {
        // Sleep until the next thing due (a flush, the stats, the end of the session), at most 100 ms: a stop
        // request or a pause is noticed that late. The sampler wakes earlier when its buffers fill. Each
        // wake-up costs 30-60 us in a VM, which at the former 20 ms was a sixth of a live session's cost.
        int64_t due = std::min(r.nextFlushMono, now + kMaxWaitNs);
        if (stats)
            due = std::min(due, r.lastStatsMono + kStatsPeriodNs);
        if (m_config.durationNs > 0)
            due = std::min(due, r.monoStart + m_config.durationNs);
        // The in-process sampler's wait paces the reads of the rings by their fill; the memory side alone, by the
        // records the last read found.
        if (r.memory && !r.cpuFromRings)
            due = std::min(due, now + (r.ringRecords >= kMemoryBusyRecords ? kMemoryBusyPollNs : kMemoryPollNs));
        r.sampler->wait(
            static_cast<int>(std::clamp<int64_t>((due - now + 999'999) / 1'000'000, 1, kMaxWaitNs / 1'000'000)));
        // The sampler first: the maps it reports serve the allocations read next (a process that has exited has
        // no /proc map to read), up to those made when this drain began; later ones wait for the next drain's
        // maps. An exec it reports reads the rings before the old image's map goes.
        const int64_t drainedFrom = clockNs(CLOCK_MONOTONIC);
        r.sampler->drain(*r.drainInto);
        readRings(r, drainedFrom);
        now = clockNs(CLOCK_MONOTONIC);
        if (r.stackCopy)
            adaptStackCopy(r, now);
        if (control.paused.load() != r.paused) {
            r.paused = !r.paused;
            r.paused ? r.sampler->disable() : r.sampler->enable();
        }
        announceTarget(r, callbacks, now);
        if (stats && now - r.lastStatsMono >= kStatsPeriodNs)
            reportStats(r, callbacks, now);
        if (ended(r, control, now))
            return;
        schedule(r, now);
    }
}

void RecordSession::readRings(Running &r, int64_t drainedFrom)
{
    if (!r.agent)
        return;
    // The sampler's maps serve the allocations up to the records stamped when its drain began (`drainedFrom`); the
    // in-process sampler reports no maps: its records up to now (an exact-mode program may write as fast as they are
    // read, which would hold the read, and the unwind tables' rounds, for good).
    const uint64_t upTo =
        r.cpuFromRings ? static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC)) : static_cast<uint64_t>(drainedFrom);
    r.ringRecords = r.agent->rings().poll(r.ringSinks, upTo);
    if (r.memory)
        r.memory->afterRead();
}

void RecordSession::adaptStackCopy(Running &r, int64_t now)
{
    const std::optional<uint32_t> next = r.stackCopy->decide(now);
    if (!next)
        return;
    const uint32_t before = r.sampler->stackCopyBytes();
    const int64_t changeStart = clockNs(CLOCK_MONOTONIC);
    if (!r.sampler->setStackCopyBytes(*next)) {
        r.stackCopy->rejected();
        const std::string why = r.sampler->stackCopyProblem();
        if (why.empty())
            return; // the target has just ended: nothing is left to sample
        r.summary.stackCopyProblem = "the stack copy stays at " + std::to_string(before) + " bytes: " + why;
        qCInfo(lcSession, "%s", r.summary.stackCopyProblem.c_str());
        return;
    }
    r.pipeline.setStackCopyBytes(*next);
    qCInfo(lcSession, "stack copy %u -> %u bytes (deepest stack so far %llu bytes), changed in %.1f ms", before, *next,
           static_cast<unsigned long long>(r.stackCopy->deepest()),
           static_cast<double>(clockNs(CLOCK_MONOTONIC) - changeStart) / 1e6);
}

bool RecordSession::ended(Running &r, const SessionControl &control, int64_t now)
{
    SessionSummary &s = r.summary;
    if (control.stopRequested()) {
        s.endReason = "stopped";
    } else if (m_config.durationNs > 0 && now - r.monoStart >= m_config.durationNs) {
        s.endReason = "duration reached";
    } else if (r.sampler->finished()) {
        s.endReason = "the sampler has delivered everything";
    } else if (r.child) {
        int status = 0;
        const bool observes = r.sampler->observesTargetExit();
        if (!(observes ? r.sampler->targetExited(status) : r.child->poll(status)))
            return false;
        if (observes)
            r.child->markReaped(status);
        s.targetExited = true;
        s.exitStatus = status;
        s.endReason = exitReason(status);
    } else if (!processAlive(m_config.pid)) {
        s.targetExited = true;
        s.endReason = "target exited";
    } else {
        return false;
    }
    return true;
}

void RecordSession::announceTarget(Running &r, const Callbacks &callbacks, int64_t now)
{
    // By the time the first live numbers are due, the launched program has called exec: /proc names its executable.
    // No wake-up of its own: the loop wakes at least every kMaxWaitNs.
    if (r.targetAnnounced || now - r.monoStart < kStatsPeriodNs)
        return;
    callbacks.consumers->setTarget(r.targetPid, std::string());
    r.targetAnnounced = true;
}

void RecordSession::schedule(Running &r, int64_t now)
{
    if (now < r.nextFlushMono)
        return;
    const int64_t real = clockNs(CLOCK_REALTIME);
    r.pipeline.closeOffCpuIntervals(static_cast<uint64_t>(now));
    if (r.memory)
        r.memory->flush(real);
    FlushInput input = r.recorder.takeFlush(r.flushStartReal, real, false);
    input.unwind = std::make_shared<const UnwindCounters>(r.pipeline.unwindCounters());
    if (r.memory) {
        input.inUseBytesMargin = r.memory->flushLive().margin;
        for (const std::string &line : r.memory->moduleEscapes())
            input.agentFaults.push_back("memory: " + line);
    }
    if (r.agent)
        pythonRepeatHealth(r.agent->rings(), input.agentNotes, input.agentFaults);
    if (r.python)
        r.python->nameFlush(input);
    r.exporter->submit(std::move(input));
    r.flushStartReal = real;
    r.nextFlushMono += m_config.flushPeriodNs;
}

void RecordSession::reportStats(Running &r, const Callbacks &callbacks, int64_t now)
{
    const int64_t cpu = ownCpuNs();
    const double interval = static_cast<double>(now - r.lastStatsMono);
    SessionStats stats;
    stats.realNs = clockNs(CLOCK_REALTIME);
    stats.elapsedNs = now - r.monoStart;
    stats.samples = r.recorder.totalSamples();
    stats.lost = r.recorder.lost();
    stats.incomplete = r.recorder.incomplete();
    stats.foreignDropped = r.sampler->foreignSamplesDropped();
    stats.rateHz = static_cast<double>(stats.samples - r.lastStatsSamples) * 1e9 / interval;
    stats.profilerCpuPercent = 100.0 * static_cast<double>(cpu - r.lastStatsCpu) / interval;
    stats.paused = r.paused;
    stats.targetPid = r.targetPid;
    stats.attachedRealNs = r.attached ? r.attached->attachedRealNs : 0;
    stats.samplerDescription = r.summary.samplerDescription = r.sampler->description();
    stats.samplerChoice = r.summary.samplerChoice;
    if (r.memory) {
        stats.memory = true;
        const HeapTracker::LiveEstimate live = r.memory->live(); // one read of the agent's heap counts for both
        stats.liveBytes = live.bytes;
        stats.liveBytesMargin = live.margin;
        stats.allocatedBytes = r.memory->allocatedBytes();
    }
    if (r.resident) {
        // A read of a statm file per process of the program (and of every process's stat every 2 s, to find new
        // ones): some tens of microseconds.
        stats.residentBytes = r.resident->residentBytes();
        if (stats.residentBytes < 0)
            r.resident.reset(); // the program is gone
    }
    if (callbacks.onStats)
        callbacks.onStats(stats);
    r.lastStatsMono = now;
    r.lastStatsCpu = cpu;
    r.lastStatsSamples = stats.samples;
}

Result<SessionSummary> RecordSession::finish(Running &r)
{
    SessionSummary &summary = r.summary;
    // A launched target still running is ended (after our own stop); an attached one is left alone.
    r.sampler->disable();
    r.sampler->drain(*r.drainInto);
    readRings(r, clockNs(CLOCK_MONOTONIC));
    summary.samplerDescription = r.sampler->description(); // with the rate it achieved
    summary.foreignDropped = r.sampler->foreignSamplesDropped();
    r.sampler->release();
    if (r.child && !summary.targetExited) {
        int status = 0;
        r.child->terminate(2000, status);
        summary.exitStatus = status;
    }
    // The rings read a last time, every agent passes everything through from now on.
    if (r.agent)
        r.agent->rings().detach(r.ringSinks);
    // The in-process sampler's, of the rings read whole (after what the start noted).
    for (std::string &problem : r.sampler->problems())
        summary.samplerProblems.push_back(std::move(problem));
    const int64_t endReal = clockNs(CLOCK_REALTIME);
    if (r.memory)
        r.memory->finish(endReal);
    r.pipeline.closeOffCpuIntervals(static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC)));
    FlushInput input = r.recorder.takeFlush(r.flushStartReal, endReal, true);
    input.unwind = std::make_shared<const UnwindCounters>(r.pipeline.unwindCounters());
    if (r.memory) {
        input.inUseBytesMargin = r.memory->summary()->leakedBytesMargin; // the last flush's in-use is the leaks
        for (const std::string &line : r.memory->moduleEscapes())
            input.agentFaults.push_back("memory: " + line);
    }
    if (r.agent)
        pythonRepeatHealth(r.agent->rings(), input.agentNotes, input.agentFaults);
    if (r.python)
        r.python->nameFlush(input);
    r.exporter->submit(std::move(input));
    // A failed write is not the session's failure: the summary says what could not be saved.
    auto sessionPath = r.exporter->finish();
    summary.sessionProfilePath = sessionPath ? sessionPath.value() : std::string();
    summary.saveErrors = r.exporter->saveErrors();
    summary.health = r.exporter->health();
    summary.flushesNotSaved = r.exporter->flushesNotSaved();
    if (!r.exportError.empty())
        summary.saveErrors.push_back(r.exportError);
    summary.durationNs = clockNs(CLOCK_MONOTONIC) - r.monoStart;
    summary.samples = r.recorder.totalSamples();
    summary.lost = r.recorder.lost();
    summary.incomplete = r.recorder.incomplete();
    summary.framePointerFallbacks = r.pipeline.framePointerFallbacks();
    summary.stackCopyBytes = m_config.stackBytes;
    if (r.stackCopy) {
        summary.stackCopyLearned = true;
        summary.stackCopyBytes = r.stackCopy->current();
        summary.stackCopyChanges = r.stackCopy->changes();
        summary.deepestStackBytes = r.stackCopy->deepest();
    }
    summary.flushes = r.exporter->flushesReported();
    summary.realRateHz = summary.durationNs > 0 ? static_cast<double>(summary.samples) * 1e9 / summary.durationNs : 0;
    summary.profilerCpuNs = ownCpuNs() - r.cpuAtStart;
    summary.targetCpuNs = r.recorder.totalCpuNs();
    summary.incompleteByModule = r.recorder.incompleteByModule();
    if (r.memory)
        summary.memory = r.memory->summary();
    if (r.memory && r.attached) {
        auto memory = std::make_shared<MemorySummary>(*summary.memory);
        memory->attached = true;
        memory->attachedRealNs = r.attached->attachedRealNs;
        memory->modulesRedirected = r.attached->modules;
        memory->attachStoppedNs = r.attached->stoppedNs;
        memory->attachInjectNs = r.attached->injectNs;
        summary.memory = std::move(memory);
    }
    if (r.agent) {
        // An attached program's tables as they were, its agent idle (a failure is the summary's, not the session's).
        if (auto st = r.agent->detach(); !st)
            summary.saveErrors.push_back(st.error().message);
        summary.agentStacks = agentStacksSummary(r.agent->rings(), r.pipeline.unwindCounters(), m_config.agentWalks);
    }
    return summary;
}

} // namespace emberline::engine
