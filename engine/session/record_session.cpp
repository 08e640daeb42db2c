#include "engine/session/record_session.h"

#include "engine/common/clock.h"

#include "engine/process/launcher.h"
#include "engine/recorder/recorder.h"
#include "engine/sampler/perf_sampler.h"
#include "engine/sampler/ptrace_sampler.h"
#include "engine/export/export_worker.h"
#include "engine/session/sampling_pipeline.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <optional>

namespace emberline::engine {
namespace {

int64_t ownCpuNs()
{
    rusage ru {};
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

} // namespace

Result<std::unique_ptr<Sampler>> openSampler(const SessionConfig &c, int childPid, std::string &choice)
{
    PerfSamplerOptions perf;
    perf.frequency = c.frequency;
    perf.stackBytes = c.stackBytes;
    perf.wallTime = c.wallTime;
    PtraceSamplerOptions ptrace;
    ptrace.frequency = c.frequency;
    ptrace.stackBytes = c.stackBytes;
    ptrace.maxOverheadPercent = c.ptraceMaxOverheadPercent;
    auto openPtrace = [&]() -> Result<std::unique_ptr<Sampler>> {
        auto s = childPid ? PtraceSampler::openForLaunch(childPid, ptrace) : PtraceSampler::openForAttach(c.pid, ptrace);
        if (!s)
            return s.error();
        return std::unique_ptr<Sampler>(std::move(s).value());
    };
    if (c.sampler == "ptrace") {
        choice = "ptrace sampler, as asked";
        return openPtrace();
    }
    auto s = childPid ? PerfSampler::openForLaunch(childPid, perf) : PerfSampler::openForAttach(c.pid, perf);
    if (s) {
        choice = c.sampler == "auto" ? "perf events (auto: they are allowed here)" : "perf events, as asked";
        return std::unique_ptr<Sampler>(std::move(s).value());
    }
    if (c.sampler == "perf" || (s.error().code != Error::Code::Permission && s.error().code != Error::Code::Io))
        return s.error();
    // auto: perf events are forbidden (or missing) here; the ptrace sampler needs only ptrace rights.
    auto fallback = openPtrace();
    if (!fallback)
        return makeError(fallback.error().code, s.error().message + "; the ptrace sampler cannot run either: " +
                                                    fallback.error().message);
    choice = "ptrace sampler (auto: " + s.error().message + ")";
    return fallback;
}

Status validateConfig(const SessionConfig &c)
{
    if (c.command.empty() == (c.pid <= 0))
        return makeError(Error::Code::Invalid, "give either a command to launch or a pid to attach to");
    if (c.frequency < 1 || c.frequency > 100000)
        return makeError(Error::Code::Invalid, "the frequency must be between 1 and 100000 Hz");
    if (c.flushPeriodNs < 1'000'000'000 || c.flushPeriodNs > 60'000'000'000)
        return makeError(Error::Code::Invalid, "the flush period must be between 1 and 60 seconds");
    if (c.durationNs < 0)
        return makeError(Error::Code::Invalid, "the duration cannot be negative");
    if (c.stackBytes < 1024 || c.stackBytes > 65000 || c.stackBytes % 8 != 0)
        return makeError(Error::Code::Invalid, "the stack size must be a multiple of 8 between 1024 and 65000 bytes");
    if (c.sampler != "auto" && c.sampler != "perf" && c.sampler != "ptrace")
        return makeError(Error::Code::Unsupported, "unknown sampler '" + c.sampler + "' (choose auto, perf or ptrace)");
    return Ok{};
}

Result<SessionSummary> RecordSession::run(const std::atomic<bool> &stop, FlushCallback onFlush)
{
    SessionControl control;
    control.externalStop = &stop;
    return run(control, Callbacks{std::move(onFlush), {}});
}

Result<SessionSummary> RecordSession::run(SessionControl &control, const Callbacks &callbacks)
{
    const auto &onFlush = callbacks.onFlush;
    if (auto st = validateConfig(m_config); !st)
        return st.error();
    if (auto st = makeOutputDirectory(m_config.outputDirectory); !st)
        return st.error();

    SessionSummary summary;
    std::optional<LaunchedProcess> child;
    if (!m_config.command.empty()) {
        LaunchOptions launch{m_config.command, m_config.workingDirectory, m_config.environment, m_config.ownSession};
        auto spawned = LaunchedProcess::spawn(launch);
        if (!spawned)
            return spawned.error();
        child.emplace(std::move(spawned).value());
        summary.launched = true;
    }
    // On failure the launched child reads EOF on its gate and exits without running the command.
    auto opened = openSampler(m_config, child ? child->pid() : 0, summary.samplerChoice);
    if (!opened)
        return opened.error();
    std::unique_ptr<Sampler> sampler = std::move(opened).value();
    summary.samplerDescription = sampler->description();
    summary.wallTime = sampler->wallTime();
    summary.wallTimeProblem = sampler->wallTimeProblem();

    Recorder recorder;
    SamplingPipeline pipeline(recorder);
    ExporterOptions exporterOptions;
    exporterOptions.outputDirectory = m_config.outputDirectory;
    exporterOptions.frequency = m_config.frequency;
    exporterOptions.samplerDescription = summary.samplerDescription;
    exporterOptions.wallTime = summary.wallTime;
    exporterOptions.symbolizer.debugDirectories = m_config.debugDirectories;
    std::string exportError;
    ExportWorker exporter(exporterOptions, onFlush, [&](const Error &e) { exportError = e.message; });
    sampler->countHelperCpu([&exporter] { return exporter.cpuNs(); });

    const int64_t cpuAtStart = ownCpuNs();
    const int64_t monoStart = clockNs(CLOCK_MONOTONIC);
    int64_t flushStartReal = clockNs(CLOCK_REALTIME);
    int64_t nextFlushMono = monoStart + m_config.flushPeriodNs;

    if (child) {
        if (auto st = child->release(); !st)
            return st.error();
    } else {
        pipeline.primeProcess(m_config.pid);
    }

    int64_t lastStatsMono = monoStart;
    int64_t lastStatsCpu = cpuAtStart;
    uint64_t lastStatsSamples = 0;
    bool paused = false;
    const int targetPid = child ? child->pid() : m_config.pid;
    while (true) {
        sampler->wait(20);
        sampler->drain(pipeline);
        const int64_t now = clockNs(CLOCK_MONOTONIC);
        if (control.paused.load() != paused) {
            paused = !paused;
            paused ? sampler->disable() : sampler->enable();
        }
        if (callbacks.onStats && now - lastStatsMono >= 250'000'000) {
            const int64_t cpu = ownCpuNs();
            SessionStats stats;
            stats.elapsedNs = now - monoStart;
            stats.samples = recorder.totalSamples();
            stats.lost = recorder.lost();
            stats.incomplete = recorder.incomplete();
            stats.rateHz = (stats.samples - lastStatsSamples) * 1e9 / static_cast<double>(now - lastStatsMono);
            stats.profilerCpuPercent = 100.0 * static_cast<double>(cpu - lastStatsCpu) / static_cast<double>(now - lastStatsMono);
            stats.paused = paused;
            stats.targetPid = targetPid;
            stats.samplerDescription = summary.samplerDescription;
            callbacks.onStats(stats);
            lastStatsMono = now;
            lastStatsCpu = cpu;
            lastStatsSamples = stats.samples;
        }
        bool ending = false;
        if (control.stopRequested()) {
            ending = true;
            summary.endReason = "stopped";
        } else if (m_config.durationNs > 0 && now - monoStart >= m_config.durationNs) {
            ending = true;
            summary.endReason = "duration reached";
        } else if (child) {
            int status = 0;
            if (sampler->observesTargetExit() ? sampler->targetExited(status) : child->poll(status)) {
                if (sampler->observesTargetExit())
                    child->markReaped(status);
                ending = true;
                summary.targetExited = true;
                summary.exitStatus = status;
                summary.endReason = status > 128 ? "target killed by signal " + std::to_string(status - 128)
                                                 : "target exited with status " + std::to_string(status);
            }
        } else if (!processAlive(m_config.pid)) {
            ending = true;
            summary.targetExited = true;
            summary.endReason = "target exited";
        }
        if (ending)
            break;
        if (now >= nextFlushMono) {
            const int64_t real = clockNs(CLOCK_REALTIME);
            pipeline.closeOffCpuIntervals(static_cast<uint64_t>(now));
            exporter.submit(recorder.takeFlush(flushStartReal, real, false));
            flushStartReal = real;
            nextFlushMono += m_config.flushPeriodNs;
        }
    }

    // Ending: a launched target still running is ended (after our own stop); an attached one is left alone.
    sampler->disable();
    sampler->drain(pipeline);
    summary.samplerDescription = sampler->description(); // with the rate it achieved
    sampler->release();
    if (child && !summary.targetExited) {
        int status = 0;
        child->terminate(2000, status);
        summary.exitStatus = status;
    }
    const int64_t endReal = clockNs(CLOCK_REALTIME);
    pipeline.closeOffCpuIntervals(static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC)));
    FlushInput last = recorder.takeFlush(flushStartReal, endReal, true);
    exporter.submit(std::move(last));
    // A failed write is not the session's failure: the summary says what could not be saved.
    auto sessionPath = exporter.finish();
    summary.sessionProfilePath = sessionPath ? sessionPath.value() : std::string();
    summary.saveErrors = exporter.saveErrors();
    summary.flushesNotSaved = exporter.flushesNotSaved();
    if (!exportError.empty())
        summary.saveErrors.push_back(exportError);
    summary.durationNs = clockNs(CLOCK_MONOTONIC) - monoStart;
    summary.samples = recorder.totalSamples();
    summary.lost = recorder.lost();
    summary.incomplete = recorder.incomplete();
    summary.framePointerFallbacks = pipeline.framePointerFallbacks();
    summary.flushes = exporter.flushesReported();
    summary.realRateHz = summary.durationNs > 0 ? summary.samples * 1e9 / summary.durationNs : 0;
    summary.profilerCpuNs = ownCpuNs() - cpuAtStart;
    summary.targetCpuNs = recorder.totalCpuNs();
    summary.incompleteByModule = recorder.incompleteByModule();
    return summary;
}

} // namespace emberline::engine
