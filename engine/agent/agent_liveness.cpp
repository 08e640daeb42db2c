// Whether the session still reads this process image's ring (agent_writer.h): its heartbeat, and when that is late,
// whether its process still runs. Async-signal-safe: the CPU sampler's handler asks too.
//
// Thread: every thread of the program, concurrently.

#include "engine/agent/agent_thread.h"
#include "engine/agent/agent_writer.h"

#include <cpuid.h>
#include <x86intrin.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace emberline::agent {

constexpr uint64_t kStaleNs = 100'000'000;    // the session is gone when it has not visited for this long
constexpr uint64_t kAttachNs = 5'000'000'000; // how long a new ring waits for the session's first visit

uint64_t nowNs()
{
    struct timespec ts = {0, 0};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

namespace {

// The records' clock (recordNs): CLOCK_MONOTONIC read through the time-stamp counter where the kernel keeps its own
// clock by it (clocksource "tsc": invariant and the same on every CPU). clock_gettime costs 20 ns here and a read of
// the counter 9: exact mode stamps every allocation and every free, a tenth of a CPython program's time. Each thread
// anchors its counter to the clock (a clock_gettime) at least every kAnchorTicks (about a millisecond), with the
// counter's rate it measured between its last two anchors: a stamp is then off the clock by the rate's error over a
// millisecond (tens of nanoseconds), where a block's life is told short from long at a millisecond.
bool g_counterClock = false;
std::atomic<uint64_t> g_counterRate{0}; // nanoseconds per tick, 32.32 fixed point, as a thread last measured it
constexpr uint64_t kAnchorTicks = uint64_t(1) << 21;
constexpr uint64_t kAnchorSlackTicks = 512; // a clock_gettime takes 60-120 ticks: more is a thread interrupted

} // namespace

void recordClockStart()
{
    char name[16] = {};
    const int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    ssize_t n = 0;
    if (fd >= 0) {
        n = read(fd, name, sizeof name - 1);
        close(fd);
    }
    unsigned a = 0, b = 0, c = 0, d = 0;
    const bool invariant = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
    g_counterClock = invariant && n == 4 && memcmp(name, "tsc\n", 4) == 0;
}

uint64_t recordNs()
{
    if (!g_counterClock)
        return nowNs();
    ThreadState &t = t_state;
    const uint64_t now = __rdtsc();
    if (now - t.clockTsc < kAnchorTicks && t.clockRate != 0)
        return t.clockNs + uint64_t((static_cast<unsigned __int128>(now - t.clockTsc) * t.clockRate) >> 32);
    // The anchor pairs a clock reading with the counter read just around it: a thread preempted (or a handler run)
    // between the two would anchor microseconds off, and every stamp until the next anchor with it. Where no try is
    // tight, the clock itself is the stamp and the old anchor stays expired.
    uint64_t ns = 0;
    uint64_t tsc = 0;
    for (int tries = 0;; ++tries) {
        const uint64_t first = __rdtsc();
        ns = nowNs();
        const uint64_t last = __rdtsc();
        if (last - first <= kAnchorSlackTicks) {
            tsc = first + (last - first) / 2;
            break;
        }
        if (tries == 2)
            return ns;
    }
    const uint64_t ticks = tsc - t.clockTsc;
    uint64_t rate = t.clockRate != 0 ? t.clockRate : g_counterRate.load(std::memory_order_relaxed);
    if (t.clockTsc != 0 && ticks >= kAnchorTicks / 2 && ns > t.clockNs) {
        rate = uint64_t(double(ns - t.clockNs) / double(ticks) * 4294967296.0); // no 128-bit division: no libgcc
        g_counterRate.store(rate, std::memory_order_relaxed);
    } else if (t.clockTsc != 0 && rate == 0) {
        return ns; // no rate yet: the first anchor stays until one can be measured
    }
    // A handler that stamps a record in the middle of this finds no anchor and makes its own.
    t.clockTsc = 0;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.clockNs = ns;
    t.clockRate = rate;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.clockTsc = tsc;
    return ns;
}

std::atomic<bool> g_sessionGone{false};

void appendDecimal(char *&p, uint64_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = char('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        *p++ = digits[--n];
}

namespace {

constexpr uint64_t kRecheckNs = 10'000'000; // how long a slow session, found running, is taken to run on
std::atomic<uint64_t> g_sessionSeenNs{0};

// Whether process `pid` still runs. A session that died is gone even before its parent reaps it: kill(pid, 0)
// alone still finds a zombie (a killed `emberline record` whose shell is slow to reap it kept the program's
// timers going for a second), so its state is read from /proc (async-signal-safe calls only: this runs in the
// CPU sampler's signal handler too). Without /proc, kill(pid, 0) decides.
bool processRuns(uint32_t pid)
{
    char path[32] = "/proc/";
    char *p = path + 6;
    appendDecimal(p, pid);
    memcpy(p, "/stat", 6);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[512];
        const ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n > 0) {
            // "PID (COMM) S ...": the state follows the last ')' (a name may hold parentheses).
            const char *paren = nullptr;
            for (ssize_t i = 0; i < n; ++i)
                if (buf[i] == ')')
                    paren = buf + i;
            if (paren && paren + 2 < buf + n)
                return paren[2] != 'Z' && paren[2] != 'X';
        }
    }
    return kill(pid_t(pid), 0) == 0 || errno != ESRCH;
}

} // namespace

// Whether the session still reads the ring. A visit in the last 100 ms says yes; without one, the session
// process is asked for (a slow session keeps its samples, a dead one gets none: from then on everything passes
// through). A ring the session never visited is given kAttachNs to be found.
bool sessionAlive(uint64_t now)
{
    if (g_sessionGone.load(std::memory_order_relaxed))
        return false;
    const uint64_t beat = g_ring->heartbeatNs.load(std::memory_order_acquire);
    if (beat != 0 && now < beat + kStaleNs)
        return true;
    if (beat != 0 && now < g_sessionSeenNs.load(std::memory_order_relaxed) + kRecheckNs)
        return true; // a slow session, found running moments ago: not asked again for every sample
    const uint32_t session = g_ring->sessionPid.load(std::memory_order_relaxed);
    const bool alive = beat == 0 ? now - g_ring->createdNs < kAttachNs : session != 0 && processRuns(session);
    if (alive && beat != 0)
        g_sessionSeenNs.store(now, std::memory_order_relaxed);
    if (!alive)
        g_sessionGone.store(true, std::memory_order_relaxed);
    return alive;
}

void resetLiveness()
{
    g_sessionGone.store(false, std::memory_order_relaxed);
    g_sessionSeenNs.store(0, std::memory_order_relaxed);
}

} // namespace emberline::agent
