#include "engine/sampler/perf_event_sets.h"

#include "engine/common/clock.h"
#include "engine/process/proc_files.h"
#include "engine/symbols/kernel_symbols.h"
#include "engine/unwind/unwinder.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <set>
#include <utility>

namespace emberline::engine {
namespace {

long perfEventOpen(perf_event_attr *attr, int pid, int cpu, int groupFd, unsigned long flags)
{
    return ::syscall(SYS_perf_event_open, attr, pid, cpu, groupFd, flags);
}

int readParanoid()
{
    std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
    int v = 2;
    f >> v;
    return v;
}

std::vector<int> threadsOf(int pid)
{
    std::vector<int> tids;
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d)) {
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
                tids.push_back(std::atoi(e->d_name));
        }
        ::closedir(d);
    }
    return tids;
}

// The `followed` processes and their children, whose fork records may not have been read yet.
std::vector<int> withChildren(const std::vector<uint32_t> &followed)
{
    std::vector<int> pids;
    pids.reserve(followed.size());
    for (uint32_t pid : followed)
        pids.push_back(static_cast<int>(pid));
    // Children forked since the last drain read their fork records: /proc knows them already.
    for (size_t i = 0; i < pids.size() && pids.size() < 4096; ++i) {
        for (int tid : threadsOf(pids[i])) {
            std::ifstream children("/proc/" + std::to_string(pids[i]) + "/task/" + std::to_string(tid) + "/children");
            for (int child = 0; children >> child;) {
                if (std::find(pids.begin(), pids.end(), child) == pids.end())
                    pids.push_back(child);
            }
        }
    }
    return pids;
}

} // namespace

bool seccompFiltered()
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("Seccomp:", 0) == 0)
            return line.find('2') != std::string::npos; // 2: SECCOMP_MODE_FILTER
    }
    return false;
}

std::string perfEventsPolicyRefusal()
{
    // Refused although neither the paranoia level nor the privileges explain it: a seccomp filter (a
    // container's default profile refuses perf_event_open) or another security module decided.
    const bool privileged = ::geteuid() == 0;
    const int paranoid = readParanoid();
    if (!seccompFiltered() || (!privileged && paranoid > 2))
        return {};
    return std::string("perf_event_open is refused by a seccomp filter on this process (a container's security "
                       "policy; ") +
           (privileged ? "Emberline runs as root" : "kernel.perf_event_paranoid is " + std::to_string(paranoid)) +
           ", so neither privileges nor the paranoia level are the cause). Sample from inside the program instead "
           "(--sampler inprocess, for a program Emberline launches) or with ptrace (--sampler ptrace), or allow "
           "perf_event_open in the container's seccomp profile";
}

int holdPerfScheduling()
{
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK; // a counter, never enabled: no timer runs for it
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return static_cast<int>(perfEventOpen(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string perfEventsForbidden()
{
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.sample_period = 1'000'000;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = perfEventOpen(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
        ::close(static_cast<int>(fd));
        return {};
    }
    const int error = errno;
    if (error == EACCES || error == EPERM) {
        if (std::string policy = perfEventsPolicyRefusal(); !policy.empty())
            return policy;
        return "perf events are not allowed for this user (kernel.perf_event_paranoid is " +
               std::to_string(readParanoid()) + ")";
    }
    if (error == ENOSYS)
        return "this kernel has no perf events";
    return perfOpenErrorMessage(error, ::getpid());
}

std::string perfOpenErrorMessage(int error, int pid)
{
    const std::string target = "process " + std::to_string(pid);
    switch (error) {
    case EACCES:
    case EPERM:
        if (const std::string policy = perfEventsPolicyRefusal(); !policy.empty())
            return "not allowed to sample " + target + " with perf events: " + policy;
        return "not allowed to sample " + target + " with perf events (kernel.perf_event_paranoid is " +
               std::to_string(readParanoid()) +
               "). Profile a process you own with perf_event_paranoid at 2 or lower (sudo sysctl "
               "kernel.perf_event_paranoid=2), or run Emberline as root or with CAP_PERFMON and CAP_SYS_PTRACE "
               "(sudo setcap cap_perfmon,cap_sys_ptrace+ep $(command -v emberline))";
    case ESRCH:
        return target + " does not exist (it may have exited)";
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
        return "this kernel does not support the cpu-clock perf event with user stack sampling";
    case EMFILE:
        return "too many open files: raise the limit (ulimit -n) to profile a target with this many threads";
    case EINVAL:
        return "the kernel refused the perf event settings (sampling frequency above "
               "/proc/sys/kernel/perf_event_max_sample_rate, or a stack size it does not accept)";
    default:
        return std::string("perf_event_open failed: ") + std::strerror(error);
    }
}

uint32_t ringPagesPerCpu(int cpus, bool lockedMemoryLimited)
{
    constexpr uint32_t kTotalPages = 4096; // 16 MiB
    constexpr uint32_t kMinPages = 1024;
    constexpr uint32_t kMaxPages = 2048;
    if (lockedMemoryLimited)
        return kMinPages;
    const uint32_t share = kTotalPages / static_cast<uint32_t>(std::max(cpus, 1));
    uint32_t pages = kMinPages;
    while (pages * 2 <= std::min(share, kMaxPages))
        pages *= 2;
    return pages;
}

uint32_t ringWakeupBytes(uint32_t pages)
{
    return std::min<uint32_t>(pages * 4096U / 4, 1U << 20);
}

PerfEventSets::PerfEventSets(const PerfSamplerOptions &options, MapRing mapRing)
    : m_options(options), m_mapRing(std::move(mapRing))
{
    if (m_options.bufferPages == 0) {
        constexpr int kCapIpcLock = 14;
        const bool limited = !haveEffectiveCapability(kCapIpcLock) && readParanoid() > -1;
        m_options.bufferPages = ringPagesPerCpu(static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)), limited);
    }
}

PerfEventSets::~PerfEventSets()
{
    for (int fd : m_fds)
        ::close(fd);
    for (int fd : m_retiredFds)
        ::close(fd);
}

Status PerfEventSets::openForLaunch(int childPid)
{
    chooseKernelCallchain();
    const int cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF));
    for (int cpu = 0; cpu < cpus; ++cpu) {
        int fd = -1;
        if (auto st = openEvent(EventKind::Clock, childPid, cpu, true, -1, fd); !st)
            return st.error();
        m_cpuLeaderFd.push_back(fd);
        if (auto st = m_mapRing(fd); !st)
            return st.error();
        openSwitchEvent(childPid, cpu, true, fd);
    }
    return Ok{};
}

Status PerfEventSets::openForAttach(int pid)
{
    chooseKernelCallchain();
    m_cpuLeaderFd.assign(static_cast<size_t>(::sysconf(_SC_NPROCESSORS_CONF)), -1);
    if (auto st = openThreadEvents({pid}); !st)
        return st.error();
    if (m_fds.empty())
        return makeError(Error::Code::Invalid, "process " + std::to_string(pid) + " has no threads to sample");
    return Ok{};
}

void PerfEventSets::chooseKernelCallchain()
{
    m_kernelCallchain = false;
    if (!m_options.kernelCallchain)
        return;
    m_kernelFramesProblem = KernelSymbols::problem(m_options.kallsymsPath);
    m_kernelCallchain = m_kernelFramesProblem.empty();
}

Status PerfEventSets::openEvent(EventKind kind, int pid, int cpu, bool forLaunch, int outputFd, int &fdOut)
{
    const bool clock = kind == EventKind::Clock;
    perf_event_attr attr{};
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    if (clock) {
        attr.config = PERF_COUNT_SW_CPU_CLOCK;
        attr.freq = 1;
        attr.sample_freq = static_cast<uint64_t>(m_options.frequency);
        // Side-band records come from the clock events only; context-switch records when wall time is on.
        attr.mmap = 1;
        attr.mmap2 = 1;
        attr.comm = 1;
        attr.comm_exec = 1;
        attr.task = 1;
        attr.context_switch = m_options.wallTime && m_wallTimeProblem.empty() ? 1 : 0;
    } else {
        attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
        attr.sample_period = 1; // every switch-out: the stack the thread waits in
    }
    // No PERF_SAMPLE_CALLCHAIN: the kernel's frame-pointer walk reads user memory at every sample, in the
    // target's time; the same walk runs here over the copied stack when DWARF unwinding stops short.
    attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                       PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    if (m_kernelCallchain) {
        // The kernel part only (its own unwinder, cheap and exact); the user part is unwound here with DWARF.
        // A context switch's chain says where in the kernel the thread went to wait (a futex, a read, a sleep).
        attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
        attr.exclude_callchain_user = 1;
    }
    attr.sample_regs_user = kPerfRegsMask;
    attr.sample_stack_user = m_options.stackBytes;
    // Context switches happen in the kernel: that event cannot exclude it.
    attr.exclude_kernel = clock && m_kernelExcluded ? 1 : 0;
    attr.exclude_hv = 1;
    attr.inherit = 1;
    attr.sample_id_all = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.watermark = 1;
    attr.wakeup_watermark = ringWakeupBytes(m_options.bufferPages);
    attr.disabled = forLaunch || m_disabled || m_openingDisabled ? 1 : 0;
    attr.enable_on_exec = forLaunch ? 1 : 0;

    long fd = perfEventOpen(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (clock && fd < 0 && (errno == EACCES || errno == EPERM) && !m_kernelExcluded) {
        // Kernel samples need more privilege than user ones; keep going with user space only. Wall time
        // needs kernel context-switch samples, so it goes too.
        m_kernelExcluded = true;
        attr.exclude_kernel = 1;
        m_kernelCallchain = false; // no kernel samples, so no kernel stacks to name
        m_kernelFramesProblem.clear();
        attr.sample_type &= ~static_cast<uint64_t>(PERF_SAMPLE_CALLCHAIN);
        attr.exclude_callchain_user = 0;
        if (m_options.wallTime && m_wallTimeProblem.empty()) {
            m_wallTimeProblem = "wall time is not available with perf events here: it needs kernel "
                                "context-switch samples, which kernel.perf_event_paranoid " +
                                std::to_string(readParanoid()) +
                                " forbids for this user (1 or lower, root, or CAP_PERFMON allow them); the "
                                "ptrace sampler (--sampler ptrace) measures wall time without them";
            attr.context_switch = 0;
        }
        fd = perfEventOpen(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    }
    if (fd < 0)
        return makeError(errno == EACCES || errno == EPERM ? Error::Code::Permission : Error::Code::Io,
                         perfOpenErrorMessage(errno, pid));
    if (outputFd >= 0 && ::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, outputFd) != 0) {
        const int err = errno;
        ::close(static_cast<int>(fd));
        return makeError(Error::Code::Io, std::string("cannot share a perf ring buffer: ") + std::strerror(err));
    }
    if (uint64_t id = 0; ::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id) == 0)
        m_eventIds[id] = EventId{m_openingGeneration, !clock};
    fdOut = static_cast<int>(fd);
    m_fds.push_back(fdOut);
    return Ok{};
}

void PerfEventSets::openSwitchEvent(int pid, int cpu, bool forLaunch, int outputFd)
{
    if (!m_options.wallTime || !m_wallTimeProblem.empty())
        return;
    int fd = -1;
    if (auto st = openEvent(EventKind::ContextSwitch, pid, cpu, forLaunch, outputFd, fd); !st) {
        m_wallTimeProblem = "wall time is not available with perf events here (" + st.error().message +
                            "); the ptrace sampler (--sampler ptrace) measures wall time without them";
    }
}

Status PerfEventSets::openThreadEvents(const std::vector<int> &pids)
{
    // Threads may start while we open events: list again until a pass finds nothing new. Threads that start
    // after their creator's event exists are inherited by the kernel.
    std::set<int> done;
    for (int pass = 0; pass < 50; ++pass) {
        bool added = false;
        for (int pid : pids) {
            for (int tid : threadsOf(pid)) {
                if (!done.insert(tid).second)
                    continue;
                added = true;
                for (size_t cpu = 0; cpu < m_cpuLeaderFd.size(); ++cpu) {
                    int fd = -1;
                    auto st = openEvent(EventKind::Clock, tid, static_cast<int>(cpu), false, m_cpuLeaderFd[cpu], fd);
                    if (!st) {
                        if (errno == ESRCH) // the thread ended meanwhile
                            break;
                        return st.error();
                    }
                    if (m_cpuLeaderFd[cpu] < 0) {
                        // The kernel redirects other events only into a buffer that is already mapped.
                        m_cpuLeaderFd[cpu] = fd;
                        if (auto mapped = m_mapRing(fd); !mapped)
                            return mapped.error();
                    }
                    openSwitchEvent(tid, static_cast<int>(cpu), false, m_cpuLeaderFd[cpu]);
                }
            }
        }
        if (!added)
            break;
    }
    return Ok{};
}

bool PerfEventSets::openNewSet(uint32_t stackBytes, const std::vector<uint32_t> &followed)
{
    const uint32_t before = m_options.stackBytes;
    const std::string wallTimeProblem = m_wallTimeProblem;
    std::vector<int> old = std::exchange(m_fds, {});
    m_options.stackBytes = stackBytes;
    m_openingGeneration = static_cast<uint32_t>(m_generationStart.size());
    // Opened disabled and enabled together below: opening takes milliseconds per hundred events, during which
    // both sets would otherwise write every sample into the buffers.
    m_openingDisabled = true;
    Status opened = openThreadEvents(withChildren(followed));
    m_openingDisabled = false;
    if (opened && m_wallTimeProblem != wallTimeProblem)
        opened = makeError(Error::Code::Io, m_wallTimeProblem);
    if (!opened || m_fds.empty()) {
        m_stackCopyProblem = opened ? std::string() : opened.error().message; // none: no thread is left
        for (int fd : m_fds)
            ::close(fd);
        std::erase_if(m_eventIds, [&](const auto &e) { return e.second.generation == m_openingGeneration; });
        m_fds = std::move(old);
        m_options.stackBytes = before;
        m_wallTimeProblem = wallTimeProblem;
        m_openingGeneration = static_cast<uint32_t>(m_generationStart.size() - 1);
        return false;
    }
    if (!m_disabled) {
        for (int fd : m_fds) // a parent's enable reaches the events its threads have inherited since
            ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    }
    // From now on every followed thread is sampled by the new set: the old one's later records are dropped.
    m_generationStart.push_back(static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC)));
    for (int fd : old) {
        ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        const bool ownsBuffer = std::find(m_cpuLeaderFd.begin(), m_cpuLeaderFd.end(), fd) != m_cpuLeaderFd.end();
        if (ownsBuffer)
            m_retiredFds.push_back(fd);
        else
            ::close(fd);
    }
    m_stackCopyProblem.clear();
    return true;
}

bool PerfEventSets::accepts(uint64_t id, uint64_t timeNs) const
{
    if (m_generationStart.size() == 1)
        return true;
    const auto it = m_eventIds.find(id);
    const uint32_t generation = it != m_eventIds.end() ? it->second.generation : 0;
    return timeNs >= m_generationStart[generation] &&
           (generation + 1 == m_generationStart.size() || timeNs < m_generationStart[generation + 1]);
}

bool PerfEventSets::isContextSwitch(uint64_t id) const
{
    const auto it = m_eventIds.find(id);
    return it != m_eventIds.end() && it->second.contextSwitch;
}

void PerfEventSets::disable()
{
    m_disabled = true;
    for (int fd : m_fds)
        ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void PerfEventSets::enable()
{
    m_disabled = false;
    for (int fd : m_fds)
        ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

} // namespace emberline::engine
