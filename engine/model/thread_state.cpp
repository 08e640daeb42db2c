#include "engine/model/thread_state.h"

namespace emberline::engine {

const char *threadStateName(ThreadState state)
{
    switch (state) {
    case ThreadState::Running:
        return "running";
    case ThreadState::Sleeping:
        return "sleeping";
    case ThreadState::DiskWait:
        return "disk wait";
    case ThreadState::Stopped:
        return "stopped";
    case ThreadState::Unknown:
        break;
    }
    return "unknown";
}

} // namespace emberline::engine
