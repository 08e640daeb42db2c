#include "engine/session/sampler_factory.h"

#include "engine/sampler/perf_event_sets.h"
#include "engine/sampler/perf_sampler.h"
#include "engine/sampler/ptrace_sampler.h"

namespace emberline::engine {

Result<std::unique_ptr<Sampler>> openSystemSampler(const SessionConfig &c, int childPid, std::string &choice)
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
        auto s =
            childPid ? PtraceSampler::openForLaunch(childPid, ptrace) : PtraceSampler::openForAttach(c.pid, ptrace);
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
        return makeError(fallback.error().code,
                         s.error().message + "; the ptrace sampler cannot run either: " + fallback.error().message);
    choice = "ptrace sampler (auto, attaching: " + s.error().message + ")";
    return fallback;
}

bool wantsInprocessSampler(const SessionConfig &config, std::string &choice)
{
    if (config.sampler == "inprocess") {
        choice = "in-process sampler, as asked";
        return true;
    }
    if (config.sampler != "auto")
        return false;
    const std::string forbidden = perfEventsForbidden();
    if (forbidden.empty())
        return false;
    choice = "in-process sampler (auto: " + forbidden + ")";
    return true;
}

} // namespace emberline::engine
