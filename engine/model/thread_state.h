#pragma once

#include <cstdint>

namespace emberline::engine {

// What a thread was doing when it was sampled: the `thread state` label of Emberline's profiles.
enum class ThreadState : uint8_t { Unknown, Running, Sleeping, DiskWait, Stopped };
const char *threadStateName(ThreadState state);

} // namespace emberline::engine
