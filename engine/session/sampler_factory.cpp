#include "engine/session/sampler_factory.h"

#include "engine/process/proc_files.h"
#include "engine/python/python_image.h"
#include "engine/sampler/perf_event_sets.h"
#include "engine/sampler/perf_sampler.h"
#include "engine/sampler/ptrace_sampler.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <unistd.h>

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

bool runsCPython(const SessionConfig &config)
{
    std::error_code ec;
    if (config.pid > 0)
        return mayRunPython(config.pid);
    if (config.command.empty())
        return false;
    std::filesystem::path program = config.command.front();
    if (program.filename() == program) { // a bare name: the first on PATH, as the launch finds it
        const char *path = std::getenv("PATH");
        std::string_view dirs = path ? path : "/usr/bin:/bin";
        while (!dirs.empty()) {
            const size_t colon = dirs.find(':');
            const std::filesystem::path candidate = std::filesystem::path(dirs.substr(0, colon)) / program;
            if (::access(candidate.c_str(), X_OK) == 0) {
                program = candidate;
                break;
            }
            dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
        }
    }
    // A python3 that is a version manager's script (pyenv's shim) runs the interpreter it names: by its name.
    if (program.filename().string().starts_with("python"))
        return true;
    const std::filesystem::path real = std::filesystem::canonical(program, ec);
    if (!ec && real.filename().string().starts_with("python"))
        return true;
    // A script that names its interpreter.
    std::ifstream script(program);
    std::string first;
    std::getline(script, first);
    return first.starts_with("#!") && first.find("python") != std::string::npos;
}

bool wantsInprocessSampler(const SessionConfig &config, std::string &choice)
{
    if (config.sampler == "inprocess") {
        choice = "in-process sampler, as asked";
        return true;
    }
    if (config.sampler != "auto")
        return false;
    if (runsCPython(config)) {
        choice = "in-process sampler (auto: a CPython program, whose samples carry its Python frames only from the "
                 "agent's handler)";
        return true;
    }
    const std::string forbidden = perfEventsForbidden();
    if (forbidden.empty())
        return false;
    choice = "in-process sampler (auto: " + forbidden + ")";
    return true;
}

} // namespace emberline::engine
