#include "engine/sampler/perf_sampler.h"

#include "engine/common/clock.h"
#include "engine/symbols/kernel_symbols.h"
#include "engine/unwind/unwinder.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <set>
#include <thread>
#include <utility>

namespace emberline::engine {

struct PerfSampler::Buffer {
    int fd = -1;
    void *base = nullptr;
    size_t mapSize = 0;
    size_t dataSize = 0;
    perf_event_mmap_page *meta = nullptr;
    const uint8_t *data = nullptr;
};

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

template <typename T>
T take(const uint8_t *&p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
}

} // namespace

std::string perfOpenErrorMessage(int error, int pid)
{
    const std::string target = "process " + std::to_string(pid);
    switch (error) {
    case EACCES:
    case EPERM:
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

PerfSampler::~PerfSampler()
{
    for (auto &b : m_buffers) {
        if (b->base)
            ::munmap(b->base, b->mapSize);
    }
    for (int fd : m_fds)
        ::close(fd);
    for (int fd : m_retiredFds)
        ::close(fd);
}

Status PerfSampler::openEvent(EventKind kind, int pid, int cpu, bool forLaunch, int outputFd, int &fdOut)
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
    attr.wakeup_watermark = m_options.bufferPages * 4096u / 4;
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

void PerfSampler::openSwitchEvent(int pid, int cpu, bool forLaunch, int outputFd)
{
    if (!m_options.wallTime || !m_wallTimeProblem.empty())
        return;
    int fd = -1;
    if (auto st = openEvent(EventKind::ContextSwitch, pid, cpu, forLaunch, outputFd, fd); !st) {
        m_wallTimeProblem = "wall time is not available with perf events here (" + st.error().message +
                            "); the ptrace sampler (--sampler ptrace) measures wall time without them";
    }
}

void PerfSampler::chooseKernelCallchain()
{
    m_kernelCallchain = false;
    if (!m_options.kernelCallchain)
        return;
    m_kernelFramesProblem = KernelSymbols::problem(m_options.kallsymsPath);
    m_kernelCallchain = m_kernelFramesProblem.empty();
}

Status PerfSampler::mapBuffer(int fd)
{
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    auto b = std::make_unique<Buffer>();
    b->fd = fd;
    // Where locked memory is limited (an unprivileged user: perf_event_mlock_kb and RLIMIT_MEMLOCK), a smaller
    // ring is better than none: halve it down to 64 pages before giving up.
    for (uint32_t pages = m_options.bufferPages;; pages /= 2) {
        b->dataSize = pages * page;
        b->mapSize = b->dataSize + page;
        b->base = ::mmap(nullptr, b->mapSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (b->base != MAP_FAILED || (errno != EPERM && errno != ENOMEM) || pages <= 64)
            break;
    }
    if (b->base == MAP_FAILED) {
        b->base = nullptr;
        return makeError(Error::Code::Io, std::string("cannot map the perf ring buffer: ") + std::strerror(errno) +
                                              " (check /proc/sys/kernel/perf_event_mlock_kb)");
    }
    b->meta = static_cast<perf_event_mmap_page *>(b->base);
    b->data = static_cast<const uint8_t *>(b->base) + page;
    m_buffers.push_back(std::move(b));
    return Ok{};
}

Result<std::unique_ptr<PerfSampler>> PerfSampler::openForLaunch(int childPid, const PerfSamplerOptions &options)
{
    std::unique_ptr<PerfSampler> s(new PerfSampler);
    s->m_options = options;
    s->m_tree.setRoot(static_cast<uint32_t>(childPid));
    s->chooseKernelCallchain();
    const int cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF));
    for (int cpu = 0; cpu < cpus; ++cpu) {
        int fd = -1;
        if (auto st = s->openEvent(EventKind::Clock, childPid, cpu, true, -1, fd); !st)
            return st.error();
        s->m_cpuLeaderFd.push_back(fd);
        if (auto st = s->mapBuffer(fd); !st)
            return st.error();
        s->openSwitchEvent(childPid, cpu, true, fd);
    }
    return s;
}

Result<std::unique_ptr<PerfSampler>> PerfSampler::openForAttach(int pid, const PerfSamplerOptions &options)
{
    std::unique_ptr<PerfSampler> s(new PerfSampler);
    s->m_options = options;
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(pid));
    s->m_tree.setRoot(static_cast<uint32_t>(pid));
    s->chooseKernelCallchain();
    s->m_cpuLeaderFd.assign(static_cast<size_t>(::sysconf(_SC_NPROCESSORS_CONF)), -1);
    if (auto st = s->openThreadEvents({pid}); !st)
        return st.error();
    if (s->m_fds.empty())
        return makeError(Error::Code::Invalid, "process " + std::to_string(pid) + " has no threads to sample");
    return s;
}

Status PerfSampler::openThreadEvents(const std::vector<int> &pids)
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
                        if (auto mapped = mapBuffer(fd); !mapped)
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

std::vector<int> PerfSampler::followedProcesses() const
{
    std::vector<int> pids;
    for (uint32_t pid : m_tree.alive())
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

bool PerfSampler::setStackCopyBytes(uint32_t bytes)
{
    bytes &= ~7U;
    if (bytes == m_options.stackBytes)
        return true;
    if (bytes == 0 || m_buffers.empty())
        return false;
    const uint32_t before = m_options.stackBytes;
    const std::string wallTimeProblem = m_wallTimeProblem;
    std::vector<int> old = std::exchange(m_fds, {});
    m_options.stackBytes = bytes;
    m_openingGeneration = static_cast<uint32_t>(m_generationStart.size());
    // Opened disabled and enabled together below: opening takes milliseconds per hundred events, during which
    // both sets would otherwise write every sample into the buffers.
    m_openingDisabled = true;
    Status opened = openThreadEvents(followedProcesses());
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

bool PerfSampler::accepts(uint64_t id, uint64_t timeNs) const
{
    if (m_generationStart.size() == 1)
        return true;
    const auto it = m_eventIds.find(id);
    const uint32_t generation = it != m_eventIds.end() ? it->second.generation : 0;
    return timeNs >= m_generationStart[generation] &&
           (generation + 1 == m_generationStart.size() || timeNs < m_generationStart[generation + 1]);
}

bool PerfSampler::isContextSwitch(uint64_t id) const
{
    const auto it = m_eventIds.find(id);
    return it != m_eventIds.end() && it->second.contextSwitch;
}

void PerfSampler::wait(int timeoutMs)
{
    std::vector<pollfd> fds;
    for (const auto &b : m_buffers)
        fds.push_back(pollfd{b->fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), timeoutMs);
}

void PerfSampler::disable()
{
    m_disabled = true;
    for (int fd : m_fds)
        ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void PerfSampler::enable()
{
    m_disabled = false;
    for (int fd : m_fds)
        ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

std::string PerfSampler::description() const
{
    return "perf cpu-clock at " + std::to_string(m_options.frequency) + " Hz" +
           (wallTime() ? " + context switches (wall time)" : "") + ", " +
           (m_kernelExcluded ? "user space only" : m_kernelCallchain ? "user and kernel (kernel frames named)"
                                                                     : "user and kernel") +
           ", " +
           std::to_string(m_options.stackBytes / 1024) + " KiB stacks";
}

namespace {

// Copies `size` bytes at ring position `pos` (which may wrap around the end of the ring).
void copyFromRing(const uint8_t *data, size_t dataSize, uint64_t pos, void *out, size_t size)
{
    const size_t offset = pos % dataSize;
    const size_t first = std::min(size, dataSize - offset);
    std::memcpy(out, data + offset, first);
    std::memcpy(static_cast<uint8_t *>(out) + first, data, size - first);
}

} // namespace

void PerfSampler::followForks(const std::vector<uint64_t> &heads)
{
    // A child's fork record may sit in another CPU's buffer than its first samples, and a grandchild's fork in
    // a buffer read before its parent's: collect every buffer's, then apply them in time order.
    m_taskEvents.clear();
    for (size_t i = 0; i < m_buffers.size(); ++i) {
        const Buffer &b = *m_buffers[i];
        for (uint64_t pos = b.meta->data_tail; pos < heads[i];) {
            perf_event_header hdr{};
            copyFromRing(b.data, b.dataSize, pos, &hdr, sizeof hdr);
            if (hdr.size < sizeof hdr || pos + hdr.size > heads[i])
                break;
            if ((hdr.type == PERF_RECORD_FORK || hdr.type == PERF_RECORD_EXIT) && hdr.size >= sizeof hdr + 24) {
                uint32_t ids[4]; // pid, ppid, tid, ptid
                uint64_t time = 0;
                uint64_t id = 0;
                copyFromRing(b.data, b.dataSize, pos + sizeof hdr, ids, sizeof ids);
                copyFromRing(b.data, b.dataSize, pos + sizeof hdr + sizeof ids, &time, sizeof time);
                copyFromRing(b.data, b.dataSize, pos + hdr.size - sizeof id, &id, sizeof id); // sample_id's last
                const bool fork = hdr.type == PERF_RECORD_FORK;
                // Only the main thread's exit (pid == tid) ends a process.
                if ((fork || ids[0] == ids[2]) && accepts(id, time))
                    m_taskEvents.push_back(TaskEvent{time, ids[0], ids[1], fork});
            }
            pos += hdr.size;
        }
    }
    std::stable_sort(m_taskEvents.begin(), m_taskEvents.end(),
                     [](const TaskEvent &a, const TaskEvent &b) { return a.timeNs < b.timeNs; });
    for (const TaskEvent &e : m_taskEvents)
        e.fork ? m_tree.onFork(e.pid, e.ppid, e.timeNs) : m_tree.onExit(e.pid, e.timeNs);
}

size_t PerfSampler::drain(SampleSink &sink)
{
    // Records older than the previous drain's start were all read by it: their exits can be forgotten.
    const auto now = static_cast<uint64_t>(clockNs(CLOCK_MONOTONIC));
    m_tree.prune(m_previousDrainNs);
    m_previousDrainNs = now;
    m_heads.resize(m_buffers.size());
    for (size_t i = 0; i < m_buffers.size(); ++i)
        m_heads[i] = __atomic_load_n(&m_buffers[i]->meta->data_head, __ATOMIC_ACQUIRE);
    followForks(m_heads);

    size_t records = 0;
    for (size_t i = 0; i < m_buffers.size(); ++i) {
        Buffer &b = *m_buffers[i];
        const uint64_t head = m_heads[i];
        uint64_t tail = b.meta->data_tail;
        while (tail < head) {
            const size_t offset = tail % b.dataSize;
            perf_event_header hdr{};
            // The header itself may straddle the end of the ring.
            copyFromRing(b.data, b.dataSize, tail, &hdr, sizeof hdr);
            if (hdr.size < sizeof hdr || tail + hdr.size > head)
                break;
            const uint8_t *record = b.data + offset;
            if (offset + hdr.size > b.dataSize) {
                m_scratch.resize(hdr.size);
                copyFromRing(b.data, b.dataSize, tail, m_scratch.data(), hdr.size);
                record = m_scratch.data();
            }
            handleRecord(record, hdr.size, sink);
            tail += hdr.size;
            ++records;
            // Each record's space goes back to the kernel once it is handled, not after the whole batch: a batch of
            // samples unwound one after another takes milliseconds, during which a busy target's threads go on
            // filling the ring.
            __atomic_store_n(&b.meta->data_tail, tail, __ATOMIC_RELEASE);
        }
    }
    return records;
}

void PerfSampler::handleSample(const perf_event_header &hdr, const uint8_t *p, const uint8_t *end, SampleSink &sink)
{
    RawSample s;
    const auto id = take<uint64_t>(p);
    if (isContextSwitch(id))
        s.kind = RawSample::Kind::SwitchOut;
    s.ip = take<uint64_t>(p);
    s.pid = take<uint32_t>(p);
    s.tid = take<uint32_t>(p);
    s.timeNs = take<uint64_t>(p);
    s.period = take<uint64_t>(p);
    if (!accepts(id, s.timeNs))
        return; // taken by the other set of events, around a change of the stack copy
    if (!m_tree.follows(s.pid, s.timeNs)) {
        ++m_foreignDropped;
        return;
    }
    s.inKernel = (hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
    if (m_kernelCallchain) {
        const auto nr = take<uint64_t>(p);
        if (nr > static_cast<uint64_t>(end - p) / 8)
            return;
        m_kernelStack.clear();
        for (uint64_t i = 0; i < nr; ++i) {
            const auto ip = take<uint64_t>(p);
            if (ip < static_cast<uint64_t>(PERF_CONTEXT_MAX)) // not a context marker
                m_kernelStack.push_back(ip);
        }
        if (s.inKernel || s.kind == RawSample::Kind::SwitchOut)
            s.kernelStack = m_kernelStack;
    }
    const auto abi = take<uint64_t>(p);
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        if (p + static_cast<size_t>(RegCount) * 8 > end)
            return;
        s.regs = {reinterpret_cast<const uint64_t *>(p), static_cast<size_t>(RegCount)};
        p += static_cast<size_t>(RegCount) * 8;
    }
    const auto stackSize = take<uint64_t>(p);
    if (stackSize > 0) {
        if (p + stackSize + 8 > end)
            return;
        const uint8_t *stack = p;
        p += stackSize;
        const auto dynSize = take<uint64_t>(p);
        s.stack = {stack, static_cast<size_t>(std::min(dynSize, stackSize))};
        s.stackLimit = static_cast<uint32_t>(stackSize);
    }
    sink.onSample(s);
}

void PerfSampler::handleRecord(const uint8_t *record, size_t size, SampleSink &sink)
{
    perf_event_header hdr{};
    std::memcpy(&hdr, record, sizeof hdr);
    const uint8_t *p = record + sizeof hdr;
    const uint8_t *end = record + size;
    // Every side-band record ends with the sample_id trailer (pid, tid, time, identifier): whose it is, and when.
    auto followed = [&](uint32_t pid) {
        if (size < sizeof hdr + 24)
            return false;
        uint64_t time = 0;
        std::memcpy(&time, end - 16, sizeof time);
        return m_tree.follows(pid, time);
    };
    if (hdr.type != PERF_RECORD_SAMPLE && m_generationStart.size() > 1 && size >= sizeof hdr + 24) {
        uint64_t time = 0, id = 0;
        std::memcpy(&time, end - 16, sizeof time);
        std::memcpy(&id, end - 8, sizeof id);
        if (!accepts(id, time))
            return; // the other set of events reports it too, around a change of the stack copy
    }
    switch (hdr.type) {
    case PERF_RECORD_SAMPLE:
        handleSample(hdr, p, end, sink);
        break;
    case PERF_RECORD_MMAP2: {
        const auto pid = take<uint32_t>(p);
        if (!followed(pid))
            break;
        take<uint32_t>(p); // tid
        const auto addr = take<uint64_t>(p);
        const auto len = take<uint64_t>(p);
        const auto pgoff = take<uint64_t>(p);
        take<uint32_t>(p); // maj
        take<uint32_t>(p); // min
        const auto ino = take<uint64_t>(p);
        take<uint64_t>(p); // ino_generation
        const auto prot = take<uint32_t>(p);
        take<uint32_t>(p); // flags
        const char *name = reinterpret_cast<const char *>(p);
        const size_t maxLen = static_cast<size_t>(end - p);
        // With a build id in its place (PERF_RECORD_MISC_MMAP_BUILD_ID), the record carries no inode.
        const uint64_t inode = (hdr.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0 ? 0 : ino;
        sink.onMmap(pid, addr, len, pgoff, (prot & PROT_EXEC) != 0, inode,
                    std::string_view(name, strnlen(name, maxLen)));
        break;
    }
    case PERF_RECORD_COMM: {
        const auto pid = take<uint32_t>(p);
        const auto tid = take<uint32_t>(p);
        if (!followed(pid))
            break;
        const char *name = reinterpret_cast<const char *>(p);
        sink.onComm(pid, tid, std::string_view(name, strnlen(name, static_cast<size_t>(end - p))),
                    (hdr.misc & PERF_RECORD_MISC_COMM_EXEC) != 0);
        break;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
        const auto pid = take<uint32_t>(p);
        const auto ppid = take<uint32_t>(p);
        const auto tid = take<uint32_t>(p);
        take<uint32_t>(p); // ptid
        const auto time = take<uint64_t>(p);
        if (!m_tree.follows(pid, time))
            break;
        if (hdr.type == PERF_RECORD_FORK)
            sink.onFork(pid, ppid, tid);
        else
            sink.onExit(pid, tid);
        break;
    }
    case PERF_RECORD_LOST: {
        take<uint64_t>(p);
        sink.onLost(take<uint64_t>(p));
        break;
    }
    case PERF_RECORD_SWITCH: {
        // No body: the sample_id trailer (TID, TIME, IDENTIFIER) says who and when.
        const auto pid = take<uint32_t>(p);
        const auto tid = take<uint32_t>(p);
        const auto time = take<uint64_t>(p);
        if (!m_tree.follows(pid, time))
            break;
        sink.onSwitch(pid, tid, time, (hdr.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0,
                      (hdr.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0);
        break;
    }
    case PERF_RECORD_LOST_SAMPLES:
        sink.onLost(take<uint64_t>(p));
        break;
    default:
        break;
    }
}

} // namespace emberline::engine
