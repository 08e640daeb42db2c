#include "engine/session/session_config.h"

namespace emberline::engine {

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
    if (c.sampler != "auto" && c.sampler != "perf" && c.sampler != "ptrace" && c.sampler != "inprocess")
        return makeError(Error::Code::Unsupported,
                         "unknown sampler '" + c.sampler + "' (choose auto, perf, ptrace or inprocess)");
    if (c.pythonAllocators && !c.memory)
        return makeError(Error::Code::Invalid, "--python-allocators needs --memory");
    if (c.pythonAllocators && c.pid > 0)
        return makeError(Error::Code::Unsupported,
                         "--python-allocators needs a launched program: CPython's allocators can only be replaced "
                         "before the interpreter starts (an attached session counts what reaches malloc)");
    if (c.memory && c.allocInterval < 1)
        return makeError(Error::Code::Invalid, "the allocation interval must be at least 1 byte");
    return Ok{};
}

} // namespace emberline::engine
