#include "engine/inject/remote_call.h"

#include "engine/common/clock.h"
#include "engine/inject/remote_memory.h"
#include "engine/process/proc_files.h"

#include <elf.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace emberline::engine {
namespace {

constexpr uint64_t kRedZone = 128; // below the stack pointer, owned by the interrupted function (x86-64 ABI)
constexpr size_t kXstateBuffer = size_t(64) << 10; // larger than any XSAVE area (AMX's is under 12 KiB)
constexpr unsigned long long kDirectionFlag = 0x400;
constexpr unsigned long long kTrapFlag = 0x100;
// The kernel's restart codes in rax after an interrupted system call (include/linux/errno.h).
constexpr long long kRestartNoHand = 514;
constexpr long long kRestartBlock = 516;
constexpr uint64_t kSameStack = uint64_t(64) << 20; // a stack pointer this far below a frame is on the same stack

void *asPointer(long value)
{
    return reinterpret_cast<void *>(value); // NOLINT(performance-no-int-to-ptr): ptrace's data argument
}

std::string ptraceFailure(const char *request, int error)
{
    return std::string(request) + " failed: " + std::strerror(error);
}

// The x87 register stack must be empty when a function is called (x86-64 ABI); the thread may have stopped in the
// middle of an x87 computation. FXSAVE layout (the XSAVE area's first 512 bytes): status word at 2, abridged tag
// word at 4 (0: every register empty). The XSAVE header's XSTATE_BV (at 512) without its x87 bit means that the x87
// state is in its initial state already, empty.
void emptyX87Stack(std::vector<uint8_t> &area, bool xsave)
{
    if (area.size() < 512)
        return;
    if (xsave && area.size() >= 520) {
        uint64_t present = 0;
        std::memcpy(&present, area.data() + 512, sizeof present);
        if (!(present & 1))
            return;
    }
    const uint16_t status = 0;
    const uint8_t tags = 0;
    std::memcpy(area.data() + 2, &status, sizeof status);
    std::memcpy(area.data() + 4, &tags, sizeof tags);
}

// The called function runs ahead of the program's other threads (SCHED_FIFO at the lowest real-time priority) and the
// thread's own scheduling comes back after it. Among hundreds of busy threads on two CPUs a thread of ordinary priority
// waits tens of milliseconds for its next slice, and the call (dlopen, the agent's start) takes several: the pause the
// program's thread sees went to 63 ms at the 99th percentile. A real-time thread is left as it is; where the kernel
// refuses (no CAP_SYS_NICE, a cgroup without real-time time), the call runs at the thread's own priority. The nice
// value stays the thread's through both changes (the kernel keeps it for a normal policy's return).
class CallPriority {
public:
    explicit CallPriority(int tid) : m_tid(tid)
    {
        m_policy = sched_getscheduler(tid);
        const int base = m_policy & ~SCHED_RESET_ON_FORK;
        if (m_policy < 0 || (base != SCHED_OTHER && base != SCHED_BATCH && base != SCHED_IDLE) ||
            sched_getparam(tid, &m_param) != 0)
            return;
        sched_param realTime{};
        realTime.sched_priority = sched_get_priority_min(SCHED_FIFO);
        // A thread the call starts (a constructor's) does not inherit it.
        m_raised = sched_setscheduler(tid, SCHED_FIFO | SCHED_RESET_ON_FORK, &realTime) == 0;
    }
    ~CallPriority()
    {
        if (m_raised)
            sched_setscheduler(m_tid, m_policy, &m_param); // fails only where the thread is gone
    }
    CallPriority(const CallPriority &) = delete;
    CallPriority &operator=(const CallPriority &) = delete;

private:
    int m_tid;
    int m_policy = -1;
    sched_param m_param{};
    bool m_raised = false;
};

// A hexadecimal signal set of a status file ("SigPnd:\t0000000000000200").
uint64_t signalSet(const std::string &status, const char *key)
{
    const size_t at = status.find(std::string("\n") + key + ":");
    return at == std::string::npos ? 0 : std::strtoull(status.c_str() + at + std::strlen(key) + 2, nullptr, 16);
}

} // namespace

Result<std::unique_ptr<RemoteThread>> RemoteThread::seize(int pid, int tid)
{
    // PTRACE_SEIZE does not stop the thread, unlike PTRACE_ATTACH, and reports group-stops as such. No
    // PTRACE_O_EXITKILL: the target must outlive us whatever happens to us.
    if (::ptrace(PTRACE_SEIZE, tid, nullptr, asPointer(PTRACE_O_TRACEEXEC)) != 0) {
        const int error = errno;
        return makeError(error == EPERM ? Error::Code::Permission : Error::Code::Io,
                         "PTRACE_SEIZE of thread " + std::to_string(tid) + ": " + std::strerror(error));
    }
    std::unique_ptr<RemoteThread> thread(new RemoteThread(pid, tid));
    thread->m_attached = true;
    return thread;
}

RemoteThread::~RemoteThread()
{
    release();
}

void RemoteThread::release()
{
    if (m_attached)
        (void)detach();
}

RemoteThread::Wait RemoteThread::waitForStatus(int64_t deadlineNs, int &status)
{
    const int64_t start = clockNs(CLOCK_MONOTONIC);
    for (;;) {
        const pid_t r = ::waitpid(m_tid, &status, __WALL | WNOHANG);
        if (r == m_tid) {
            if (WIFSTOPPED(status))
                return Wait::Stopped;
            m_gone = true;
            m_attached = m_stopped = false;
            m_goneReason = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                             : std::string("killed by ") + strsignal(WTERMSIG(status));
            return Wait::Gone;
        }
        if (r < 0 && errno != EINTR) {
            m_gone = true; // ECHILD: no longer our tracee (another thread exec'd and took over its pid)
            m_attached = m_stopped = false;
            m_goneReason = "no longer traced";
            return Wait::Gone;
        }
        // No blocking wait with a timeout exists for ptrace stops: poll, at once first (a stop takes microseconds,
        // and the pause of the target's thread is measured), then more slowly.
        const int64_t now = clockNs(CLOCK_MONOTONIC);
        if (now >= deadlineNs)
            return Wait::TimedOut;
        if (now - start < 1'000'000) {
            sched_yield();
        } else {
            const timespec pause{0, now - start < 50'000'000 ? 50'000 : 1'000'000};
            nanosleep(&pause, nullptr);
        }
    }
}

// Signals that could not be delivered from a signal-delivery-stop, sent to the thread again. Their siginfo is lost
// (they arrive as from tgkill): they had come while a call was abandoned, an unusual path.
void RemoteThread::resendSignals()
{
    for (const int sig : m_resend)
        ::syscall(SYS_tgkill, m_pid, m_tid, sig);
    m_resend.clear();
}

Status RemoteThread::goneError() const
{
    return makeError(Error::Code::Cancelled, "the program exited during the injection (" + m_goneReason + ")");
}

Status RemoteThread::stop(int64_t deadlineNs)
{
    if (m_gone)
        return goneError();
    if (m_stopped)
        return Ok{};
    if (::ptrace(PTRACE_INTERRUPT, m_tid, nullptr, nullptr) != 0)
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_INTERRUPT", errno));
    for (;;) {
        int status = 0;
        const Wait wait = waitForStatus(deadlineNs, status);
        if (wait == Wait::Gone)
            return goneError();
        if (wait == Wait::TimedOut)
            return makeError(Error::Code::Cancelled,
                             "thread " + std::to_string(m_tid) + " did not stop when asked (an uninterruptible wait?)");
        const int event = status >> 16;
        const int sig = WSTOPSIG(status);
        m_stoppedAtNs = clockNs(CLOCK_MONOTONIC);
        if (event == PTRACE_EVENT_EXEC) {
            m_stopped = true;
            return makeError(Error::Code::Cancelled, "the program ran another executable during the injection");
        }
        if (event == PTRACE_EVENT_STOP && sig != SIGTRAP) {
            // A group-stop: someone stopped the program since we looked. It stays stopped when we detach.
            m_stopped = true;
            return makeError(Error::Code::Cancelled, std::string("the program was stopped (") + strsignal(sig) +
                                                         ") during the injection; it is left stopped");
        }
        if (event == 0 && sig == SIGSEGV && m_changed && ::ptrace(PTRACE_GETREGS, m_tid, nullptr, &m_regs) == 0 &&
            m_regs.rip == 0) {
            m_stopped = true; // the end of our own call, just now: not a signal of the program's
            m_signalStop = true;
            return Ok{};
        }
        if (event == PTRACE_EVENT_STOP || event == 0) {
            m_stopped = true;
            // A signal-delivery-stop ends the wait as well: the kernel dropped our interrupt for it, and the
            // thread stands where it was. The signal is held, to be delivered when the thread goes on.
            m_signalStop = event == 0;
            if (m_signalStop) {
                if (m_held)
                    m_resend.push_back(m_heldInfo.si_signo);
                m_held = ::ptrace(PTRACE_GETSIGINFO, m_tid, nullptr, &m_heldInfo) == 0;
                if (!m_held) {
                    std::memset(&m_heldInfo, 0, sizeof m_heldInfo);
                    m_heldInfo.si_signo = sig;
                    m_held = true;
                }
            }
            if (::ptrace(PTRACE_GETREGS, m_tid, nullptr, &m_regs) != 0)
                return makeError(Error::Code::Io, ptraceFailure("PTRACE_GETREGS", errno));
            return Ok{};
        }
        ::ptrace(PTRACE_CONT, m_tid, nullptr, nullptr); // another event: not ours
    }
}

// The system call the thread was stopped in, made to end as the kernel would have ended it. Three cases:
//  - A handler of the program ran during our call: the thread, in the program's eyes, was in its system call when the
//    signal came. The kernel ends such a call with EINTR where it restarts it only when no handler runs
//    (ERESTARTNOHAND: poll, select, pause, sigsuspend...; ERESTART_RESTARTBLOCK: nanosleep...), so it does here; a
//    pause() loop that waits for its handler's flag sees it. (ERESTARTSYS calls restart, as with SA_RESTART, the
//    common case: the handler's flags are not known here.)
//  - A nanosleep-like call (ERESTART_RESTARTBLOCK) whose restart record the kernel keeps per thread, which a sleep of
//    the called function may have replaced (it was stopped by a group-stop, or the call was abandoned): the call is
//    made again from its start, whole (longer than asked, never shorter).
//  - A wait that ends in EINTR when its thread is stopped and goes on, signal or not (epoll_wait, semop,
//    sigtimedwait, io_getevents: signal(7)), where the others are restarted: with no signal of the program's on the
//    way or delivered while we held the thread, it is made again with the same arguments, as if we had not stopped
//    it (its timeout starts again).
void RemoteThread::settleInterruptedSyscall()
{
    user_regs_struct r = m_regs;
    const auto result = static_cast<long long>(r.rax);
    if (static_cast<long long>(r.orig_rax) < 0)
        return;
    if (m_handlerRan && (result == -kRestartNoHand || result == -kRestartBlock)) {
        r.rax = static_cast<unsigned long long>(-EINTR);
    } else if (m_restartBlockLost && result == -kRestartBlock) {
        if (!atSyscallInstruction(r.rip - 2))
            return;
        r.rax = r.orig_rax;
        r.rip -= 2;
    } else if (result == -EINTR && !m_held && m_passedSignals == 0) {
        const std::string status =
            readProcFile("/proc/" + std::to_string(m_pid) + "/task/" + std::to_string(m_tid) + "/status");
        const uint64_t pending = (signalSet(status, "SigPnd") | signalSet(status, "ShdPnd")) &
                                 ~(signalSet(status, "SigBlk") | signalSet(status, "SigIgn"));
        if (status.empty() || pending != 0 || !atSyscallInstruction(r.rip - 2))
            return; // a signal of the program's own ended the wait: it keeps its EINTR
        r.rax = r.orig_rax;
        r.rip -= 2;
    } else {
        return;
    }
    if (::ptrace(PTRACE_SETREGS, m_tid, nullptr, &r) == 0)
        m_regs = r;
}

bool RemoteThread::atSyscallInstruction(uint64_t address) const
{
    uint8_t code[2] = {};
    return readRemote(m_pid, m_tid, address, code, sizeof code) && code[0] == 0x0f && code[1] == 0x05;
}

// Whether the program handles `sig` (a handler, not SIG_DFL or SIG_IGN): /proc/PID/status's SigCgt.
bool RemoteThread::programHandles(int sig) const
{
    const std::string status = readProcFile("/proc/" + std::to_string(m_pid) + "/status");
    return sig > 0 && sig <= 64 && ((signalSet(status, "SigCgt") >> (sig - 1)) & 1);
}

Status RemoteThread::resume()
{
    if (!m_stopped)
        return Ok{};
    if (m_changed)
        return makeError(Error::Code::Internal, "resume() of a thread whose state a call changed");
    settleInterruptedSyscall();
    long sig = 0;
    if (m_held && m_signalStop) {
        ::ptrace(PTRACE_SETSIGINFO, m_tid, nullptr, &m_heldInfo);
        sig = m_heldInfo.si_signo;
    }
    if (::ptrace(PTRACE_CONT, m_tid, nullptr, asPointer(sig)) != 0)
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_CONT", errno));
    if (m_held && !m_signalStop)
        m_resend.push_back(m_heldInfo.si_signo);
    resendSignals();
    m_held = false;
    m_stopped = false;
    return Ok{};
}

Status RemoteThread::save()
{
    if (!m_stopped)
        return makeError(Error::Code::Internal, "save() of a running thread");
    m_savedRegs = m_regs;
    m_savedXstate.assign(kXstateBuffer, 0);
    iovec io{m_savedXstate.data(), m_savedXstate.size()};
    if (::ptrace(PTRACE_GETREGSET, m_tid, asPointer(NT_X86_XSTATE), &io) == 0) {
        m_savedXstate.resize(io.iov_len);
    } else {
        // No XSAVE on this processor: the FXSAVE area (x87 and SSE) is the whole extended state.
        m_savedXstate.resize(sizeof(user_fpregs_struct));
        if (::ptrace(PTRACE_GETFPREGS, m_tid, nullptr, m_savedXstate.data()) != 0)
            return makeError(Error::Code::Io, ptraceFailure("PTRACE_GETFPREGS", errno));
        m_xsave = false;
    }
    m_saved = true;
    return Ok{};
}

Status RemoteThread::setState(const user_regs_struct &regs, const std::vector<uint8_t> &xstate)
{
    // The extended state first: PTRACE_SETREGS last leaves the general registers exactly as given.
    if (m_xsave) {
        iovec io{const_cast<uint8_t *>(xstate.data()), xstate.size()};
        if (::ptrace(PTRACE_SETREGSET, m_tid, asPointer(NT_X86_XSTATE), &io) != 0)
            return makeError(Error::Code::Io, ptraceFailure("PTRACE_SETREGSET", errno));
    } else if (::ptrace(PTRACE_SETFPREGS, m_tid, nullptr, xstate.data()) != 0) {
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_SETFPREGS", errno));
    }
    if (::ptrace(PTRACE_SETREGS, m_tid, nullptr, &regs) != 0)
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_SETREGS", errno));
    m_regs = regs;
    return Ok{};
}

Result<uint64_t> RemoteThread::call(uint64_t function, std::initializer_list<RemoteArg> args, int64_t deadlineNs,
                                    const std::function<void()> &whileRunning)
{
    if (!m_saved || !m_stopped)
        return makeError(Error::Code::Internal, "call() needs a stopped thread whose state is saved");
    if (args.size() > 6)
        return makeError(Error::Code::Internal, "call() passes at most six arguments (in registers)");
    size_t room = 0;
    for (const RemoteArg &arg : args)
        room += arg.isText ? arg.text.size() + 1 : 0;
    // Our frame lies below the red zone of the interrupted function, aligned as a call expects: 16 at the call
    // instruction, so (rsp + 8) % 16 == 0 at the function's first instruction once the return address is pushed.
    const uint64_t frame = (m_savedRegs.rsp - kRedZone - room) & ~uint64_t(15);
    m_callFrame = frame;
    uint64_t values[6] = {};
    uint64_t at = frame;
    size_t index = 0;
    for (const RemoteArg &arg : args) {
        if (arg.isText) {
            if (auto st = writeRemote(m_pid, m_tid, at, arg.text.c_str(), arg.text.size() + 1); !st)
                return st.error();
            values[index] = at;
            at += arg.text.size() + 1;
        } else {
            values[index] = arg.value;
        }
        ++index;
    }
    // Returning to address 0 faults: the SIGSEGV stop at rip 0 is the call's end.
    const uint64_t returnAddress = 0;
    if (auto st = writeRemote(m_pid, m_tid, frame - 8, &returnAddress, sizeof returnAddress); !st)
        return st.error();

    user_regs_struct regs = m_savedRegs;
    regs.rsp = frame - 8;
    regs.rip = function;
    regs.rax = 0; // no vector registers hold arguments (variadic functions read it)
    // No system call to restart after this stop: with orig_rax >= 0 and a restart code in rax the kernel would
    // move rip back onto the syscall instruction. restore() puts both back, and the restart happens then.
    regs.orig_rax = static_cast<unsigned long long>(-1);
    regs.eflags &= ~(kDirectionFlag | kTrapFlag); // the ABI wants DF clear at a call
    regs.rdi = values[0];
    regs.rsi = values[1];
    regs.rdx = values[2];
    regs.rcx = values[3];
    regs.r8 = values[4];
    regs.r9 = values[5];
    std::vector<uint8_t> xstate = m_savedXstate;
    emptyX87Stack(xstate, m_xsave);
    m_changed = true;
    if (auto st = setState(regs, xstate); !st)
        return st.error();
    const CallPriority priority(m_tid);
    // A held signal stays held (it is delivered at detach()); the SIGSEGV of a previous call's end is dropped.
    if (::ptrace(PTRACE_CONT, m_tid, nullptr, nullptr) != 0)
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_CONT", errno));
    m_stopped = false;
    m_signalStop = false;
    if (whileRunning)
        whileRunning();
    return waitForReturn(frame, deadlineNs);
}

Result<uint64_t> RemoteThread::waitForReturn(uint64_t expectedSp, int64_t deadlineNs)
{
    const int64_t start = clockNs(CLOCK_MONOTONIC);
    for (;;) {
        int status = 0;
        const Wait wait = waitForStatus(deadlineNs, status);
        if (wait == Wait::Gone)
            return goneError().error();
        if (wait == Wait::TimedOut)
            return abandonCall(clockNs(CLOCK_MONOTONIC) - start).error();
        const int event = status >> 16;
        const int sig = WSTOPSIG(status);
        if (event == PTRACE_EVENT_EXEC) {
            m_stopped = true;
            m_changed = false; // a new program: nothing of the saved state applies
            return makeError(Error::Code::Cancelled, "the program ran another executable during the injection");
        }
        if (event != 0) {
            // A group-stop or a stray interrupt: the call goes on. A thread resumed out of a group-stop joins it
            // again once we detach. A sleep of the called function it interrupted replaced the thread's restart
            // record.
            m_restartBlockLost = true;
            ::ptrace(PTRACE_CONT, m_tid, nullptr, nullptr);
            continue;
        }
        if (sig == SIGSEGV) {
            user_regs_struct regs{};
            if (::ptrace(PTRACE_GETREGS, m_tid, nullptr, &regs) == 0 && regs.rip == 0 && regs.rsp == expectedSp) {
                m_regs = regs;
                m_stopped = true;
                m_signalStop = true;
                return static_cast<uint64_t>(regs.rax);
            }
        }
        // The program's own signal (or its own fault): delivered, as it would be without us.
        m_handlerRan |= programHandles(sig);
        ::ptrace(PTRACE_CONT, m_tid, nullptr, asPointer(sig));
        ++m_passedSignals;
    }
}

Status RemoteThread::abandonCall(int64_t waitedNs)
{
    const std::string waited = std::to_string(waitedNs / 1'000'000) + " ms";
    m_restartBlockLost = true; // our interrupt may end a sleep of the called function
    if (auto st = stop(clockNs(CLOCK_MONOTONIC) + 1'000'000'000); !st)
        return makeError(Error::Code::Cancelled, "the called function did not return within " + waited +
                                                     " and its thread could not be stopped: " + st.error().message);
    // A signal handler of the program that ran during the call may have left it for good (siglongjmp): the thread
    // then runs the program's own code, past where we stopped it, and putting the saved state back would rewind it.
    // It is left as it is. Otherwise it is inside the call, below our frame on the same stack, and is put back.
    const bool returned = m_regs.rip == 0 && m_regs.rsp == m_callFrame;
    const bool inCall = m_regs.rsp < m_callFrame && m_callFrame - m_regs.rsp < kSameStack;
    if (!returned && !inCall) {
        m_changed = false;
        return makeError(Error::Code::Cancelled, "the called function did not return within " + waited +
                                                     " and its thread left it by another way (a signal handler's "
                                                     "siglongjmp?): the thread is left running where it went");
    }
    if (auto st = restore(); !st)
        return st;
    return makeError(Error::Code::Cancelled,
                     "the called function did not return within " + waited +
                         ": the call was abandoned and the thread put back where it was (what the function held, "
                         "a lock or memory, stays held)");
}

Status RemoteThread::restore()
{
    if (!m_saved || !m_stopped)
        return makeError(Error::Code::Internal, "restore() needs a stopped thread whose state is saved");
    if (auto st = setState(m_savedRegs, m_savedXstate); !st)
        return st;
    m_changed = false;
    return Ok{};
}

Status RemoteThread::detach()
{
    if (!m_attached)
        return m_gone ? goneError() : Status(Ok{});
    if (!m_stopped) {
        // Running (a call that never ended, or resumed): it must stop before it can be detached.
        if (auto st = stop(clockNs(CLOCK_MONOTONIC) + 2'000'000'000); !st && !m_stopped)
            return st;
    }
    Status restored = Ok{};
    if (m_changed)
        restored = restore();
    if (restored)
        settleInterruptedSyscall();
    long sig = 0;
    if (m_held && m_signalStop) {
        // The signal that was on its way when the thread first stopped, delivered now with its own siginfo.
        ::ptrace(PTRACE_SETSIGINFO, m_tid, nullptr, &m_heldInfo);
        sig = m_heldInfo.si_signo;
    }
    const bool detached = ::ptrace(PTRACE_DETACH, m_tid, nullptr, asPointer(sig)) == 0;
    const int error = errno;
    if (m_held && !m_signalStop)
        m_resend.push_back(m_heldInfo.si_signo); // no stop to inject it at: sent again
    if (detached)
        resendSignals();
    m_attached = false;
    m_stopped = false;
    m_held = false;
    if (!detached)
        return makeError(Error::Code::Io, ptraceFailure("PTRACE_DETACH", error));
    return restored;
}

} // namespace emberline::engine
