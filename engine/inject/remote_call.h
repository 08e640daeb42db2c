#pragma once

#include "engine/common/result.h"

#include <signal.h>
#include <sys/user.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace emberline::engine {

// An argument of a remote call: a number, or a string copied onto the thread's stack (the function gets its address).
struct RemoteArg {
    RemoteArg(uint64_t number) : value(number) {}
    RemoteArg(std::string_view string) : text(string), isText(true) {}
    uint64_t value = 0;
    std::string text;
    bool isText = false;
};

// One thread of another process, traced alone (PTRACE_SEIZE; the other threads keep running) and held stopped so
// that functions of the target can be called on it, as if the thread had called them where it stopped.
//
// A stop is either the interrupt we asked for or a signal the kernel was about to deliver (ptrace reports it first);
// such a signal is held and delivered when the thread runs on (resume()) or is let go (detach()), with its siginfo.
//
// save() takes the thread's whole state: the general registers with the interrupted system call's restart state
// (orig_rax, rax, rip), and the extended state (x87, SSE, AVX, AVX-512: PTRACE_GETREGSET NT_X86_XSTATE). call()
// runs a function on a stack frame below the thread's red zone and returns to address 0, where the thread faults
// into a SIGSEGV stop that ends the call; restore() puts the saved state back bit for bit, so that the kernel
// restarts an interrupted system call as it would have (a nanosleep with its remaining time). Where our stop or the
// call changed how that system call should end (a handler ran meanwhile, a wait that ends in EINTR on any stop),
// the thread is let go as the kernel would have let it go without us (settleInterruptedSyscall).
//
// The destructor restores the state if a call changed it and detaches, so that no path leaves the thread stopped,
// traced, or running our frame. Should the thread not stop when asked (a wait in uninterruptible sleep), the kernel
// detaches it when this process exits: the helper process that injects exits right after.
//
// Thread: the thread that seized it (ptrace binds a tracee to one tracer thread).
class RemoteThread {
public:
    static Result<std::unique_ptr<RemoteThread>> seize(int pid, int tid);
    ~RemoteThread();
    RemoteThread(const RemoteThread &) = delete;
    RemoteThread &operator=(const RemoteThread &) = delete;

    // Asks the thread to stop and waits until `deadlineNs` (CLOCK_MONOTONIC) for it. The stop's registers are then
    // registers().
    Status stop(int64_t deadlineNs);
    // Lets the stopped thread run on (delivering a held signal). It must not be in a call, or be resumed with
    // changed state.
    Status resume();
    // Saves the whole state of the stopped thread; needed before call().
    Status save();
    // Calls `function(args...)` on the stopped thread and waits until `deadlineNs` for its return. Signals that come
    // during the call are delivered (the program's handlers run nested, as for any signal) and a group-stop does
    // not hold the call up. The thread runs the call at SCHED_FIFO's lowest priority where the kernel allows it (its
    // own scheduling put back after), so that the program's other threads do not lengthen the pause. `whileRunning` is
    // called once the thread runs the function (tests pause there). A call that does not return in time is abandoned:
    // the thread is stopped and put back as it was saved, and whatever the function held (a lock, memory) stays held; a
    // thread that left the call by another way (a handler's siglongjmp) is left where it went.
    Result<uint64_t> call(uint64_t function, std::initializer_list<RemoteArg> args, int64_t deadlineNs,
                          const std::function<void()> &whileRunning = {});
    // Puts the saved state back (not needed before detach(): it restores on its own).
    Status restore();
    // Lets the thread go: restores the saved state if a call changed it, delivers a held signal, detaches.
    Status detach();

    int pid() const { return m_pid; }
    int tid() const { return m_tid; }
    const user_regs_struct &registers() const { return m_regs; }
    // Whether the current stop holds a signal the kernel was about to deliver.
    int heldSignal() const { return m_held ? m_heldInfo.si_signo : 0; }
    // CLOCK_MONOTONIC of the current stop's start.
    int64_t stoppedAtNs() const { return m_stoppedAtNs; }
    // The thread (or the whole program) is gone: it exited, was killed, or exec'd.
    bool gone() const { return m_gone; }

private:
    RemoteThread(int pid, int tid) : m_pid(pid), m_tid(tid) {}
    enum class Wait { Stopped, TimedOut, Gone };
    Wait waitForStatus(int64_t deadlineNs, int &status);
    Status goneError() const;
    Status setState(const user_regs_struct &regs, const std::vector<uint8_t> &xstate);
    Result<uint64_t> waitForReturn(uint64_t expectedSp, int64_t deadlineNs);
    Status abandonCall(int64_t waitedNs);
    void release();
    void resendSignals();
    void settleInterruptedSyscall();
    bool atSyscallInstruction(uint64_t address) const;
    bool programHandles(int sig) const;

    int m_pid = 0;
    int m_tid = 0;
    bool m_attached = false;
    bool m_stopped = false;
    bool m_gone = false;
    std::string m_goneReason;
    user_regs_struct m_regs{};          // at the current stop
    user_regs_struct m_savedRegs{};     // save()'s
    std::vector<uint8_t> m_savedXstate; // save()'s, NT_X86_XSTATE as the kernel gave it
    bool m_saved = false;
    bool m_xsave = true;    // m_savedXstate is an XSAVE area (else the FXSAVE area of PTRACE_GETFPREGS)
    bool m_changed = false; // the thread's state differs from the saved one
    bool m_held = false;
    siginfo_t m_heldInfo{};
    std::vector<int> m_resend; // signals held earlier that a later stop's signal displaced: sent again by tgkill
    bool m_signalStop = false; // the current stop is a signal-delivery-stop (a signal can be injected at it)
    int64_t m_stoppedAtNs = 0;
    int m_passedSignals = 0;         // signals of the program delivered during our calls
    bool m_handlerRan = false;       // one of them ran a handler of the program's
    bool m_restartBlockLost = false; // the thread's restart record may be a sleep of the called function's
    uint64_t m_callFrame = 0;        // the current call's frame: its return address lies just below
};

} // namespace emberline::engine
