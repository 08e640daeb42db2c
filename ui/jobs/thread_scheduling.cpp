#include "ui/jobs/thread_scheduling.h"

#include "engine/common/thread_priority.h"
#include "ui/common/logging.h"

#include <cerrno>
#include <cstdint>

#include <sys/syscall.h>
#include <unistd.h>

namespace emberline::ui {

namespace {

// The kernel's struct sched_attr (SCHED_ATTR_SIZE_VER1); glibc has no wrapper for sched_{get,set}attr.
struct SchedAttr {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime;
    uint64_t deadline;
    uint64_t period;
    uint32_t utilMin;
    uint32_t utilMax;
};
static_assert(sizeof(SchedAttr) == 56);

constexpr uint32_t kSchedOther = 0;
constexpr uint64_t kResetOnFork = 0x01;
// A wakeup of the GUI thread runs a timer or an input event for well under a millisecond; a slice this short
// gives it an earlier deadline than the default slice of a busy thread, so it preempts one instead of waiting.
constexpr uint64_t kGuiSliceNs = 500'000;

// The calling thread's scheduling, where it has the ordinary policy; false (and left alone) for a real-time or batch
// policy chosen by whoever started Emberline, or where it cannot be read.
bool readOrdinaryScheduling(SchedAttr &attr)
{
    attr.size = sizeof(attr);
    if (::syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0) {
        qCDebug(lcUiAnalysis) << "cannot read the GUI thread's scheduling:" << qt_error_string(errno);
        return false;
    }
    attr.size = sizeof(attr);
    return attr.policy == kSchedOther;
}

} // namespace

bool requestPromptWakeups()
{
    SchedAttr attr{};
    if (!readOrdinaryScheduling(attr))
        return false;
    // The nice value and policy are kept. Reset on fork: threads and processes started from the GUI thread
    // (pool workers, the engine thread, a program launched for profiling) start with the default slice,
    // which they would otherwise inherit.
    attr.flags = kResetOnFork;
    attr.runtime = kGuiSliceNs;
    if (::syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
        qCDebug(lcUiAnalysis) << "cannot ask for a short time slice:" << qt_error_string(errno);
        return false;
    }
    return true;
}

bool raiseGuiThread()
{
    SchedAttr attr{};
    if (!readOrdinaryScheduling(attr))
        return false;
    if (attr.nice <= engine::kRaisedNice)
        return true; // started at least this high
    // One call for both, so that the raise is never inherited: a thread started later gets nice 0 back (the kernel
    // resets a negative nice value on fork when the flag is set). The time slice read above is kept.
    attr.flags = kResetOnFork;
    attr.nice = engine::kRaisedNice;
    if (::syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
        qCDebug(lcUiAnalysis) << "the GUI thread keeps its priority:" << qt_error_string(errno);
        return false;
    }
    return true;
}

} // namespace emberline::ui
