#include "engine/sampler/perf_sampler.h"

#include "engine/common/clock.h"
#include "engine/unwind/unwinder.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
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

template <typename T> T take(const uint8_t *&p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
}

} // namespace

PerfSampler::PerfSampler(const PerfSamplerOptions &options)
    : m_events(options, [this](int fd) { return mapBuffer(fd); })
{
}

PerfSampler::~PerfSampler()
{
    for (auto &b : m_buffers) {
        if (b->base)
            ::munmap(b->base, b->mapSize);
    }
    // Each ring is unmapped before its event closes: m_events goes after this body.
}

Status PerfSampler::mapBuffer(int fd)
{
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    auto b = std::make_unique<Buffer>();
    b->fd = fd;
    // Where locked memory is limited (an unprivileged user: perf_event_mlock_kb and RLIMIT_MEMLOCK), a smaller
    // ring is better than none: halve it down to 64 pages before giving up.
    for (uint32_t pages = m_events.options().bufferPages;; pages /= 2) {
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
    std::unique_ptr<PerfSampler> s(new PerfSampler(options));
    s->m_tree.setRoot(static_cast<uint32_t>(childPid));
    if (auto st = s->m_events.openForLaunch(childPid); !st)
        return st.error();
    return s;
}

Result<std::unique_ptr<PerfSampler>> PerfSampler::openForAttach(int pid, const PerfSamplerOptions &options)
{
    std::unique_ptr<PerfSampler> s(new PerfSampler(options));
    if (::kill(pid, 0) != 0 && errno == ESRCH)
        return makeError(Error::Code::Invalid, "no process with pid " + std::to_string(pid));
    s->m_tree.setRoot(static_cast<uint32_t>(pid));
    if (auto st = s->m_events.openForAttach(pid); !st)
        return st.error();
    return s;
}

bool PerfSampler::setStackCopyBytes(uint32_t bytes)
{
    bytes &= ~7U;
    if (bytes == m_events.options().stackBytes)
        return true;
    if (bytes == 0 || m_buffers.empty())
        return false;
    return m_events.openNewSet(bytes, m_tree.alive());
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
    m_events.disable();
}

void PerfSampler::enable()
{
    m_events.enable();
}

std::string PerfSampler::description() const
{
    const PerfSamplerOptions &options = m_events.options();
    return "perf cpu-clock at " + std::to_string(options.frequency) + " Hz" +
           (wallTime() ? " + context switches (wall time)" : "") + ", " +
           (kernelExcluded()    ? "user space only"
            : kernelCallchain() ? "user and kernel (kernel frames named)"
                                : "user and kernel") +
           ", " + std::to_string(options.stackBytes / 1024) + " KiB stacks";
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
                if ((fork || ids[0] == ids[2]) && m_events.accepts(id, time))
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

    // Every buffer's records in time order, merged: a process's records spread over the buffers of the CPUs it ran on
    // (an exec moves it to another CPU), and its fork, exec and mappings must be applied in the order they happened,
    // or a mapping read before its exec is cleared by it, or a child's new mappings replaced by its parent's.
    const size_t count = m_buffers.size();
    m_nextTimes.assign(count, UINT64_MAX);
    auto peek = [&](size_t i) {
        Buffer &b = *m_buffers[i];
        const uint64_t tail = b.meta->data_tail;
        m_nextTimes[i] = UINT64_MAX;
        if (tail >= m_heads[i])
            return;
        perf_event_header hdr{};
        copyFromRing(b.data, b.dataSize, tail, &hdr, sizeof hdr);
        if (hdr.size < sizeof hdr || tail + hdr.size > m_heads[i])
            return; // a damaged or partial record: this buffer is done for this drain
        uint64_t time = 0;
        if (hdr.type == PERF_RECORD_SAMPLE && hdr.size >= sizeof hdr + 32)
            copyFromRing(b.data, b.dataSize, tail + sizeof hdr + 24, &time, sizeof time); // after id, ip, pid/tid
        else if (hdr.type != PERF_RECORD_SAMPLE && hdr.size >= sizeof hdr + 16)
            copyFromRing(b.data, b.dataSize, tail + hdr.size - 16, &time, sizeof time); // the sample_id trailer
        m_nextTimes[i] = time == UINT64_MAX ? UINT64_MAX - 1 : time;
    };
    for (size_t i = 0; i < count; ++i)
        peek(i);
    size_t records = 0;
    while (true) {
        size_t i = count;
        for (size_t j = 0; j < count; ++j) {
            if (m_nextTimes[j] != UINT64_MAX && (i == count || m_nextTimes[j] < m_nextTimes[i]))
                i = j;
        }
        if (i == count)
            break;
        Buffer &b = *m_buffers[i];
        const uint64_t tail = b.meta->data_tail;
        const size_t offset = tail % b.dataSize;
        perf_event_header hdr{};
        // The header itself may straddle the end of the ring.
        copyFromRing(b.data, b.dataSize, tail, &hdr, sizeof hdr);
        const uint8_t *record = b.data + offset;
        if (offset + hdr.size > b.dataSize) {
            m_scratch.resize(hdr.size);
            copyFromRing(b.data, b.dataSize, tail, m_scratch.data(), hdr.size);
            record = m_scratch.data();
        }
        handleRecord(record, hdr.size, sink);
        ++records;
        // Each record's space goes back to the kernel once it is handled, not after the whole batch: a batch of
        // samples unwound one after another takes milliseconds, during which a busy target's threads go on filling
        // the ring.
        __atomic_store_n(&b.meta->data_tail, tail + hdr.size, __ATOMIC_RELEASE);
        peek(i);
    }
    return records;
}

void PerfSampler::handleSample(const perf_event_header &hdr, const uint8_t *p, const uint8_t *end, SampleSink &sink)
{
    RawSample s;
    const auto id = take<uint64_t>(p);
    if (m_events.isContextSwitch(id))
        s.kind = RawSample::Kind::SwitchOut;
    s.ip = take<uint64_t>(p);
    s.pid = take<uint32_t>(p);
    s.tid = take<uint32_t>(p);
    s.timeNs = take<uint64_t>(p);
    s.period = take<uint64_t>(p);
    if (!m_events.accepts(id, s.timeNs))
        return; // taken by the other set of events, around a change of the stack copy
    if (!m_tree.follows(s.pid, s.timeNs)) {
        ++m_foreignDropped;
        return;
    }
    s.inKernel = (hdr.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
    if (m_events.kernelCallchain()) {
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
    if (hdr.type != PERF_RECORD_SAMPLE && m_events.hasChanged() && size >= sizeof hdr + 24) {
        uint64_t time = 0, id = 0;
        std::memcpy(&time, end - 16, sizeof time);
        std::memcpy(&id, end - 8, sizeof id);
        if (!m_events.accepts(id, time))
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
        const bool exec = (hdr.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
        if (exec && pid == tid) {
            uint64_t time = 0;
            std::memcpy(&time, end - 16, sizeof time); // the sample_id trailer's (followed() checked its size)
            sink.onExecTime(pid, time);
        }
        sink.onComm(pid, tid, std::string_view(name, strnlen(name, static_cast<size_t>(end - p))), exec);
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
