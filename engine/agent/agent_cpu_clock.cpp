// The in-process sampler's perf clock (agent_cpu.h): opened per thread, and its period drawn anew at every sample.
//
// Thread: openPerfClock on any thread of the program (for itself or for another); perfClockSampled in the signal
// handler of the thread whose clock it is (raw system calls only).

#include "engine/agent/agent_cpu.h"
#include "engine/agent/agent_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace emberline::agent {

// A cpu-clock perf event on thread `tid` (its own CPU time), whose every overflow signals that thread (F_SETSIG and
// F_SETOWN_EX to the thread, as async-profiler's perf mode does): the asked rate, not the kernel's tick. Kernel time
// counts where the system allows it, else user time only. -1 when perf events are refused.
int openPerfClock(uint32_t tid, int signal)
{
    struct perf_event_attr attr {};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = g_cpuPeriodNs;
    attr.wakeup_events = 1;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, pid_t(tid), -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        attr.exclude_kernel = 1;
        fd = syscall(SYS_perf_event_open, &attr, pid_t(tid), -1, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return -1;
    // The program's own descriptors come first: past half its limit, the thread gets a timer instead.
    struct rlimit limit {};
    if (fd >= kPerfId ||
        (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &limit) == 0 && uint64_t(fd) >= limit.rlim_cur / 2)) {
        syscall(SYS_close, fd);
        errno = EMFILE;
        return -1;
    }
    struct f_owner_ex owner {
        F_OWNER_TID, pid_t(tid)
    };
    if (syscall(SYS_fcntl, fd, F_SETFL, O_ASYNC) != 0 || syscall(SYS_fcntl, fd, F_SETSIG, signal) != 0 ||
        syscall(SYS_fcntl, fd, F_SETOWN_EX, &owner) != 0 || syscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        syscall(SYS_close, fd);
        return -1;
    }
    return int(fd);
}

uint64_t perfClockSampled(int fd)
{
    ThreadState &t = t_state;
    // The event counts the thread's CPU time from its start: the time since the last sample, whatever the periods
    // were and however late this signal came.
    uint64_t count = 0;
    uint64_t cpuNs = g_cpuPeriodNs;
    if (syscall(SYS_read, fd, &count, sizeof count) == long(sizeof count)) {
        if (t.cpuCountNs != 0 && count >= t.cpuCountNs)
            cpuNs = count - t.cpuCountNs;
        else if (t.cpuCountNs == 0)
            cpuNs = count; // the clock's first sample: its time from the start
        t.cpuCountNs = count;
    }
    const uint64_t x = nextRandom(t.cpuJitter);
    // A new period at one sample in eight, at random: changing it costs the handler about 12 µs here (the kernel
    // stops and restarts the event's timer), reading the count half a microsecond. Eight samples on one period move
    // the next ones' phase by up to four periods either way, which is all the randomness the phases need.
    if ((x & 7) != 0)
        return cpuNs;
    // The new period counts from here (the kernel restarts the event's timer).
    uint64_t next = g_cpuPeriodNs / 2 + (x >> 3) % (g_cpuPeriodNs | 1);
    if (next == 0)
        next = 1;
    syscall(SYS_ioctl, fd, PERF_EVENT_IOC_PERIOD, &next);
    return cpuNs;
}

} // namespace emberline::agent
