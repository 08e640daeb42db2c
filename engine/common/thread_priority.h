#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

namespace emberline::engine {

// The nice value the calling thread had before a SessionPriority raised it; none while it is not raised. A child
// forked by the thread inherits it, and gives itself that value back before it becomes the profiled program.
inline thread_local std::optional<int> t_niceBeforeRaise;

// The nice value of the threads raised above the profiled program's: the session's (below), the live stage's
// (engine/stage/live_stage.h) and the window's GUI thread (ui/jobs/thread_scheduling.h).
inline constexpr int kRaisedNice = -10;

// Raises the calling thread to kRaisedNice for the rest of its life, where the system allows it and it is not that
// high already; whether it runs at kRaisedNice or higher now.
inline bool raiseCallingThread()
{
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
    if (now == -1 && errno != 0)
        return false;
    if (now <= kRaisedNice)
        return true;
    return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kRaisedNice) == 0;
}

// The session's thread raised above the target's threads from the session's start to its end, where the system
// allows it (root or CAP_SYS_NICE), and with it the threads it starts meanwhile (the exporter, the table builder:
// Linux gives a new thread its creator's nice value). Among 64 busy threads of a target on two cores, a thread of
// ordinary priority gets a sixty-fifth of the machine: the kernel's ring buffers overflow before it drains them, and
// a session attached to a program of 500 busy threads took 28 s for 1 s of recording (22 s raised from the session's
// start; the process's own start, before main, is not). Its work is short bursts, so the target loses little to it.
// Without the privilege nothing changes. A program the session launches runs at the priority it would have had
// (LaunchedProcess restores it in the child).
//
// Thread: the session's; made and destroyed on it.
class SessionPriority {
public:
    SessionPriority()
    {
        errno = 0;
        const int before = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
        if (before == -1 && errno != 0)
            return;
        if (::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kRaisedNice) == 0) {
            m_before = before;
            m_raised = true;
            t_niceBeforeRaise = before;
        }
    }
    ~SessionPriority()
    {
        if (!m_raised)
            return;
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), m_before);
        t_niceBeforeRaise.reset();
    }
    SessionPriority(const SessionPriority &) = delete;
    SessionPriority &operator=(const SessionPriority &) = delete;

private:
    int m_before = 0;
    bool m_raised = false;
};

} // namespace emberline::engine
