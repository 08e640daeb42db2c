#pragma once

#include "engine/common/result.h"
#include "engine/sampler/sampler.h"
#include "engine/session/session_config.h"

#include <functional>
#include <memory>
#include <string>

namespace emberline::engine {

// Where a session gets its sampler: the system's (perf events, else ptrace) or, in tests and replays, any other
// Sampler. Given the session's configuration and the launched child's pid (0 when attaching), it returns the
// sampler and says in `choice` which one runs and why. A session takes its factory at construction, so that the
// unwinder, recorder, exporter and live stage run unchanged behind a fake or replayed sampler.
//
// Thread: called once, on the session thread, before the target runs.
using SamplerFactory =
    std::function<Result<std::unique_ptr<Sampler>>(const SessionConfig &config, int childPid, std::string &choice)>;

// perf events where they are allowed, the ptrace sampler where they are not (config.sampler: auto | perf |
// ptrace).
Result<std::unique_ptr<Sampler>> openSystemSampler(const SessionConfig &config, int childPid, std::string &choice);

// Whether the session's program is a CPython (a running one's executable is named python*, or it maps a libpython3;
// a launched one's command is an interpreter named python*, or a script whose #! line names one).
bool runsCPython(const SessionConfig &config);

// Whether a session samples its program from inside (the in-process sampler, through Emberline's agent, preloaded
// into a launched program or loaded into a running one): asked for, or auto for a CPython program (only the agent's
// handler reads its Python frames) or where perf events are forbidden.
// Decided before the launch (the agent is in the program's environment) or the attach; `choice` then says which
// and why.
bool wantsInprocessSampler(const SessionConfig &config, std::string &choice);

} // namespace emberline::engine
