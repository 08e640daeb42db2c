// bench_live_gui: a live session of many_stacks (8 threads, ~100,000 distinct call paths) at 999 Hz in the real
// live view (offscreen unless QT_QPA_PLATFORM says otherwise). It prints, per flush, how long after the flush
// arrived the flame graph and tables showed it (data applied and the window repainted); the GUI thread's
// event-loop latency (a 1 ms timer's lateness:
// max and p99), with every stall over 30 ms and every event delivery of 8 ms or more named as it happens; and
// memory over the run (RSS, aggregated samples, timeline bytes); and the GUI thread's CPU time per flush, with the
// longest single event delivery. Beside the GUI thread, a reference thread that only sleeps 1 ms at a time
// (scheduled like the GUI thread) and each CPU's steal time tell a stall of the GUI thread from a pause of the
// machine (a virtual machine whose CPUs the host took away). It never asserts timings.
// COMPARE runs the views in a live compare mode: "previous" (each flush against the one before it) or "pinned"
// (the whole session against the first flush shown); "off" (the default) shows the plain explorer. Run it once
// with each to measure what the live diff adds.
// Usage: bench_live_gui [SECONDS=30] [FLUSH_PERIOD_SECONDS=2] [COMPARE=off|previous|pinned]

#include "engine/common/clock.h"
#include "engine/common/huge_page_malloc.h"
#include "engine/session/profiling_session.h"
#include "ui/jobs/thread_scheduling.h"
#include "ui/views/live/live_session_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPointer>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iterator>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <unistd.h>

using namespace emberline;

namespace {

long rssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLong();
    }
    return 0;
}

// What malloc holds, over every arena: in use by the program, and free but kept (fragments between blocks in use,
// or unused tops not yet trimmed). RSS minus the first is what the allocator and the file mappings cost.
struct MallocState {
    double inUseMiB = 0;
    double freeMiB = 0;
};

MallocState mallocState()
{
    const struct mallinfo2 info = ::mallinfo2();
    return {static_cast<double>(info.uordblks + info.hblkhd) / (1024.0 * 1024.0),
            static_cast<double>(info.fordblks) / (1024.0 * 1024.0)};
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// A clock's reading in milliseconds (the engine's clockNs).
double clockMs(clockid_t clock)
{
    return static_cast<double>(engine::clockNs(clock)) / 1e6;
}

// Each CPU's steal time so far (the "cpuN" lines of /proc/stat), in milliseconds, by CPU number.
std::vector<double> stealPerCpuMs()
{
    std::vector<double> out;
    QFile stat(QStringLiteral("/proc/stat"));
    if (!stat.open(QIODevice::ReadOnly))
        return out;
    const double tickMs = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
    for (const QByteArray &line : stat.readAll().split('\n')) {
        if (line.size() < 4 || !line.startsWith("cpu") || line[3] < '0' || line[3] > '9')
            continue;
        const QList<QByteArray> fields = line.simplified().split(' ');
        const auto cpu = static_cast<size_t>(fields[0].mid(3).toInt());
        if (fields.size() <= 8)
            continue;
        if (out.size() <= cpu)
            out.resize(cpu + 1, 0);
        out[cpu] = fields[8].toDouble() * tickMs;
    }
    return out;
}

// The machine's steal time so far, all CPUs together, in seconds.
double stealSeconds()
{
    const std::vector<double> perCpu = stealPerCpuMs();
    return std::accumulate(perCpu.begin(), perCpu.end(), 0.0) / 1000.0;
}

// Timer lateness in 10-µs buckets up to 2 s: a fixed size however long the run, so the benchmark's own memory
// stays out of the RSS it reports.
class LatenessHistogram {
public:
    void add(double ms)
    {
        const auto bucket = static_cast<size_t>(std::max(0.0, ms) * 100);
        ++m_counts[std::min(bucket, m_counts.size() - 1)];
        ++m_total;
        m_max = std::max(m_max, ms);
    }
    size_t count() const { return m_total; }
    double max() const { return m_max; }
    double percentile(double p) const
    {
        const auto wanted = static_cast<size_t>(p * static_cast<double>(m_total));
        size_t seen = 0;
        for (size_t b = 0; b < m_counts.size(); ++b) {
            seen += m_counts[b];
            if (seen > wanted)
                return static_cast<double>(b) / 100;
        }
        return m_max;
    }

private:
    std::vector<uint32_t> m_counts = std::vector<uint32_t>(200'000, 0);
    size_t m_total = 0;
    double m_max = 0;
};

// The calling thread's time on a CPU and waiting for one (ns), from /proc/thread-self/schedstat, read through a
// descriptor kept open so a read costs a few microseconds.
class ThreadSchedStat {
public:
    ThreadSchedStat() : m_fd(::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
    ~ThreadSchedStat()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    bool read(double &runMs, double &waitMs) const
    {
        char buffer[128];
        const ssize_t n = m_fd >= 0 ? ::pread(m_fd, buffer, sizeof(buffer) - 1, 0) : -1;
        if (n <= 0)
            return false;
        buffer[n] = 0;
        unsigned long long run = 0, wait = 0;
        if (std::sscanf(buffer, "%llu %llu", &run, &wait) != 2)
            return false;
        runMs = static_cast<double>(run) / 1e6;
        waitMs = static_cast<double>(wait) / 1e6;
        return true;
    }

private:
    int m_fd;
};

struct Span {
    double startMs; // CLOCK_MONOTONIC
    double endMs;
};

struct GuiStall {
    Span span;
    double atS;    // seconds after the start
    double runMs;  // of it, on a CPU
    double waitMs; // waiting for one
    int cpuBefore; // the CPU the GUI thread ran on before it and after it
    int cpuAfter;
};

// A thread that does nothing but sleep 1 ms at a time, with the GUI thread's scheduling: its late wakeups are
// what the machine alone costs, so a GUI stall it shares is the machine's. Every 10 ms it also notes each CPU's
// steal time, so that a GUI stall can be told how long the host kept the GUI thread's CPU during it.
class ReferenceSleeper {
public:
    ReferenceSleeper()
        : m_thread([this] {
              ui::requestPromptWakeups();
              ui::raiseGuiThread();
              double last = clockMs(CLOCK_MONOTONIC);
              double lastSteal = 0;
              m_cpus = stealPerCpuMs().size();
              while (!m_stop.load(std::memory_order_relaxed)) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  const double now = clockMs(CLOCK_MONOTONIC);
                  const double late = std::max(0.0, now - last - 1.0);
                  std::vector<double> steal;
                  if (now - lastSteal >= 10) {
                      steal = stealPerCpuMs();
                      steal.resize(m_cpus, 0);
                      lastSteal = now;
                  }
                  std::lock_guard lock(m_mutex);
                  if (!steal.empty()) {
                      m_steal.push_back(now);
                      m_steal.insert(m_steal.end(), steal.begin(), steal.end());
                  }
                  m_lateness.add(late);
                  if (late > 30)
                      m_stalls.push_back(Span{last, now});
                  last = now;
              }
          })
    {
    }
    ~ReferenceSleeper() { stop(); }
    void stop()
    {
        m_stop = true;
        if (m_thread.joinable())
            m_thread.join();
    }
    // After stop().
    const LatenessHistogram &lateness() const { return m_lateness; }
    bool stalledDuring(const Span &span) const
    {
        return std::any_of(m_stalls.begin(), m_stalls.end(),
                           [&](const Span &s) { return s.startMs < span.endMs && span.startMs < s.endMs; });
    }
    // After stop(): how much of the span the host at least kept `cpu` away, from the notes just before and just
    // after it. The notes bound a wider window (more so when this thread was itself held up), so the steal in
    // that window less the window's time outside the span, less one step of the kernel's counter (10 ms), is
    // what the span surely had.
    double stealDuring(const Span &span, int cpu) const
    {
        if (cpu < 0 || static_cast<size_t>(cpu) >= m_cpus)
            return 0;
        const size_t stride = m_cpus + 1;
        const double *before = nullptr;
        const double *after = nullptr;
        for (size_t i = 0; i + stride <= m_steal.size(); i += stride) {
            if (m_steal[i] <= span.startMs)
                before = &m_steal[i];
            if (m_steal[i] >= span.endMs) {
                after = &m_steal[i];
                break;
            }
        }
        if (!before || !after)
            return 0;
        const double outside = (after[0] - before[0]) - (span.endMs - span.startMs);
        const double stepMs = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
        return std::max(0.0, after[1 + cpu] - before[1 + cpu] - outside - stepMs);
    }
    // After stop(): its own stalls over 50 ms.
    std::vector<Span> longStalls() const
    {
        std::vector<Span> out;
        std::copy_if(m_stalls.begin(), m_stalls.end(), std::back_inserter(out),
                     [](const Span &s) { return s.endMs - s.startMs > 51; });
        return out;
    }

private:
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    LatenessHistogram m_lateness;
    std::vector<Span> m_stalls;
    size_t m_cpus = 0;
    std::vector<double> m_steal; // per note: the time (ms), then each CPU's steal so far (ms)
    std::thread m_thread;
};

// Names every event delivery on the GUI thread that takes kSlowEventMs or more (receiver and event type), so a
// stall can be traced to its cause.
constexpr qint64 kSlowEventMs = 8;

class TimedApplication : public QApplication {
public:
    using QApplication::QApplication;
    std::function<void()> onRepaint;
    const QObject *untimed = nullptr; // the benchmark's own tick timer
    // GUI-thread CPU time in event deliveries (outermost ones, the tick's left out) since the last takeWork(),
    // and the most any one of them took.
    double workCpuMs = 0;
    double maxDeliveryCpuMs = 0;
    bool notify(QObject *receiver, QEvent *event) override
    {
        // Other threads' event loops (the engine's) deliver through here too.
        const bool onGui = QThread::currentThread() == thread();
        QElapsedTimer timer;
        timer.start();
        const double cpuBefore = clockMs(CLOCK_THREAD_CPUTIME_ID);
        const int type = event->type();
        const QPointer<QObject> alive(receiver); // the event may delete its receiver (DeferredDelete)
        const bool outermost = onGui && m_depth == 0 && receiver != untimed;
        m_depth += onGui ? 1 : 0;
        const bool result = QApplication::notify(receiver, event);
        m_depth -= onGui ? 1 : 0;
        const double cpuMs = clockMs(CLOCK_THREAD_CPUTIME_ID) - cpuBefore;
        if (outermost) {
            workCpuMs += cpuMs;
            maxDeliveryCpuMs = std::max(maxDeliveryCpuMs, cpuMs);
        }
        if (!alive)
            return result;
        if (onGui && type == QEvent::UpdateRequest && receiver->isWidgetType() && onRepaint)
            onRepaint(); // a window repainted: what the views got before it is now on screen
        if (const qint64 ms = timer.elapsed(); ms >= kSlowEventMs) {
            // CPU time beside wall time: the difference is time the thread waited for a CPU.
            std::printf("slow event: %lld ms (%.1f ms on CPU) delivering event type %d to %s \"%s\"%s\n",
                        static_cast<long long>(ms), cpuMs, type, receiver->metaObject()->className(),
                        qPrintable(receiver->objectName()), onGui ? "" : " on another thread");
        }
        return result;
    }

private:
    int m_depth = 0; // of the GUI thread's deliveries
};

} // namespace

int main(int argc, char **argv)
{
    emberline::engine::useHugePageMalloc(argv); // as the emberline program runs
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApplication app(argc, argv);
    // As Emberline's main() does.
    if (!ui::requestPromptWakeups())
        std::printf("the kernel refused a short time slice for the GUI thread\n");
    if (!ui::raiseGuiThread())
        std::printf("the GUI thread keeps its priority (raising it needs root or CAP_SYS_NICE)\n");
    const double seconds = argc > 1 ? std::atof(argv[1]) : 30;
    const double flushPeriod = argc > 2 ? std::atof(argv[2]) : 2;
    const QString compare = argc > 3 ? QString::fromLatin1(argv[3]) : QStringLiteral("off");

    engine::SessionConfig config;
    config.command = {EMBERLINE_BINARY_DIR "/tests/targets/many_stacks", std::to_string(seconds + 30)};
    config.frequency = 999;
    config.flushPeriodNs = static_cast<int64_t>(flushPeriod * 1e9);
    config.durationNs = static_cast<int64_t>(seconds * 1e9);
    // EMBERLINE_BENCH_WALL_TIME=0 records cpu time only, as --no-wall-time does.
    config.wallTime = qEnvironmentVariable("EMBERLINE_BENCH_WALL_TIME", QStringLiteral("1")) != QLatin1String("0");
    auto *session = new engine::ProfilingSession(config);
    ui::LiveSessionView view(session);
    view.resize(1400, 900);
    view.show();
    if (compare == QLatin1String("previous"))
        view.compareWithPreviousFlush();

    LatenessHistogram lateness;
    std::vector<GuiStall> guiStalls; // over 50 ms
    ReferenceSleeper sleeper;
    const double stealAtStart = stealSeconds();
    QElapsedTimer clock;
    clock.start();
    const double startMs = clockMs(CLOCK_MONOTONIC);
    qint64 lastTick = 0;
    double worstLateness = 0;
    double worstAtS = 0; // when the longest stall began, seconds after start
    // Where each stall's time went: on a CPU, waiting for one, or neither (asleep or blocked).
    const ThreadSchedStat schedStat;
    double lastRunMs = 0, lastWaitMs = 0;
    schedStat.read(lastRunMs, lastWaitMs);
    int lastCpu = ::sched_getcpu();
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        double runMs = 0, waitMs = 0;
        schedStat.read(runMs, waitMs);
        if (lastTick > 0) {
            const double late = std::max(0.0, static_cast<double>(now - lastTick) / 1e6 - 1.0);
            lateness.add(late);
            if (late > 30)
                std::printf("stall: the GUI thread was %.1f ms late at %.3f s (on a CPU %.1f ms, waiting for one "
                            "%.1f ms)\n",
                            late, static_cast<double>(lastTick) / 1e9, runMs - lastRunMs, waitMs - lastWaitMs);
            if (late > 50) {
                const double endMs = clockMs(CLOCK_MONOTONIC);
                guiStalls.push_back(GuiStall{Span{endMs - static_cast<double>(now - lastTick) / 1e6, endMs},
                                             static_cast<double>(lastTick) / 1e9, runMs - lastRunMs,
                                             waitMs - lastWaitMs, lastCpu, ::sched_getcpu()});
            }
            if (late > worstLateness) {
                worstLateness = late;
                worstAtS = static_cast<double>(lastTick) / 1e9;
            }
        }
        lastTick = now;
        lastRunMs = runMs;
        lastWaitMs = waitMs;
        lastCpu = ::sched_getcpu();
    });

    std::printf(
        "bench_live_gui: many_stacks, 8 threads, 999 Hz, %.0f s, flush every %.0f s, compare %s, wall time %s\n",
        seconds, flushPeriod, qPrintable(compare), config.wallTime ? "on" : "off");
    // gui_cpu_ms: the GUI thread's CPU time in event deliveries since the previous row (the benchmark's tick left
    // out): about one flush's work; max_event_ms: the most one delivery of those took.
    std::printf("%8s %10s %12s %14s %14s %10s %10s %12s\n", "flush", "update_ms", "rss_MiB", "agg_samples",
                "timeline_KiB", "samples", "gui_cpu_ms", "max_event_ms");
    app.untimed = &tick;
    std::vector<double> guiCpuPerFlush, maxDeliveryPerFlush;
    // A flush counts as shown once the window has repainted after the views took its data: the view's own
    // latency (flush arrival to data applied) plus the time until that repaint ends.
    std::vector<double> updates;
    uint32_t pendingSequence = 0;
    double pendingLatencyMs = 0;
    QElapsedTimer sinceApplied;
    QObject::connect(&view, &ui::LiveSessionView::viewsUpdated, [&](uint32_t sequence, double latencyMs) {
        if (compare == QLatin1String("pinned") && view.compareMode() == engine::LiveCompareMode::Off)
            view.pinBaselineFlush(sequence);
        pendingSequence = sequence;
        pendingLatencyMs = latencyMs;
        sinceApplied.start();
    });
    app.onRepaint = [&] {
        if (pendingSequence == 0)
            return;
        const double latencyMs = pendingLatencyMs + static_cast<double>(sinceApplied.nsecsElapsed()) / 1e6;
        updates.push_back(latencyMs);
        const auto &update = view.lastUpdate();
        const auto *snapshot = update ? update->snapshot.get() : nullptr;
        std::printf("%8u %10.1f %12.1f %14zu %14.1f %10zu %10.1f %12.1f\n", pendingSequence, latencyMs,
                    rssKiB() / 1024.0, snapshot ? snapshot->profile->sampleCount() : size_t(0),
                    snapshot ? snapshot->timelineBytes() / 1024.0 : 0.0,
                    snapshot ? snapshot->timelineSamples() : size_t(0), app.workCpuMs, app.maxDeliveryCpuMs);
        std::fflush(stdout);
        guiCpuPerFlush.push_back(app.workCpuMs);
        maxDeliveryPerFlush.push_back(app.maxDeliveryCpuMs);
        app.workCpuMs = 0;
        app.maxDeliveryCpuMs = 0;
        pendingSequence = 0;
    };
    // A session the engine refuses (a flush period under 1 s, say) ends at once: say why.
    QObject::connect(session, &engine::ProfilingSession::failed, [](const QString &message) {
        std::printf("session failed: %s\n", qPrintable(message));
        std::fflush(stdout);
    });
    long peakRss = 0;
    MallocState atPeak;
    QTimer rss;
    rss.setInterval(500);
    QObject::connect(&rss, &QTimer::timeout, [&] {
        if (const long now = rssKiB(); now > peakRss) {
            peakRss = now;
            atPeak = mallocState();
        }
    });
    QObject::connect(&view, &ui::LiveSessionView::sessionEnded, [&] {
        // Let the final flush reach the views, then report.
        QTimer::singleShot(3000, &app, [&] {
            tick.stop();
            std::printf(
                "views updated and repainted after a flush: %zu updates, median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                updates.size(), percentile(updates, 0.5), percentile(updates, 0.99),
                updates.empty() ? 0.0 : *std::max_element(updates.begin(), updates.end()));
            std::printf("GUI thread CPU per flush in event deliveries: median %.1f ms, p99 %.1f ms; the longest "
                        "delivery per flush: median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                        percentile(guiCpuPerFlush, 0.5), percentile(guiCpuPerFlush, 0.99),
                        percentile(maxDeliveryPerFlush, 0.5), percentile(maxDeliveryPerFlush, 0.99),
                        maxDeliveryPerFlush.empty()
                            ? 0.0
                            : *std::max_element(maxDeliveryPerFlush.begin(), maxDeliveryPerFlush.end()));
            std::printf("GUI event loop (1 ms timer lateness over %zu ticks): p99 %.2f ms, max %.2f ms (at %.1f s)\n",
                        lateness.count(), lateness.percentile(0.99), worstLateness, worstAtS);
            sleeper.stop();
            // A stall is the machine's when the reference sleeper shared it, or when the host's steal of the GUI
            // thread's CPU (the one it ran on before or after) during it makes up all but 50 ms of it.
            size_t shared = 0, stolen = 0;
            for (const GuiStall &g : guiStalls) {
                const double stallMs = g.span.endMs - g.span.startMs - 1.0;
                const double steal =
                    std::max(sleeper.stealDuring(g.span, g.cpuBefore), sleeper.stealDuring(g.span, g.cpuAfter));
                const bool isShared = sleeper.stalledDuring(g.span);
                shared += isShared ? 1 : 0;
                stolen += !isShared && stallMs - steal <= 50 ? 1 : 0;
                std::printf("stall over 50 ms: %.1f ms at %.3f s: on a CPU %.1f ms, waiting for one %.1f ms, neither "
                            "%.1f ms; CPU %d then %d, the host's steal of it during the stall %.0f ms%s\n",
                            stallMs, g.atS, g.runMs, g.waitMs, std::max(0.0, stallMs - g.runMs - g.waitMs), g.cpuBefore,
                            g.cpuAfter, steal, isShared ? "; the reference sleeper stalled too" : "");
            }
            std::printf("GUI thread stalls over 50 ms: %zu, of which %zu while the reference sleeper was also over "
                        "30 ms late and %zu under 50 ms without the host's steal of the GUI thread's CPU (the machine "
                        "paused)\n",
                        guiStalls.size(), shared, stolen);
            const LatenessHistogram &ref = sleeper.lateness();
            std::printf("reference sleeper (1 ms sleeps, no work) over %zu ticks: p99 %.2f ms, max %.2f ms\n",
                        ref.count(), ref.percentile(0.99), ref.max());
            for (const Span &r : sleeper.longStalls())
                std::printf("reference sleeper stalled %.1f ms at %.3f s\n", r.endMs - r.startMs - 1.0,
                            (r.startMs - startMs) / 1000.0);
            std::printf("steal time (the host kept the virtual CPUs): %.2f s over the run\n",
                        stealSeconds() - stealAtStart);
            const MallocState atEnd = mallocState();
            std::printf("memory: peak RSS %.1f MiB (malloc: %.1f MiB in use, %.1f MiB free in its arenas), final RSS "
                        "%.1f MiB (%.1f in use, %.1f free)\n",
                        peakRss / 1024.0, atPeak.inUseMiB, atPeak.freeMiB, rssKiB() / 1024.0, atEnd.inUseMiB,
                        atEnd.freeMiB);
            const engine::SessionSummary &s = view.session()->summary();
            std::printf("session: %llu samples, %llu lost, %.0f samples/s, %s\n",
                        static_cast<unsigned long long>(s.samples), static_cast<unsigned long long>(s.lost),
                        s.realRateHz, s.endReason.c_str());
            app.quit();
        });
    });
    tick.start();
    rss.start();
    session->start();
    return app.exec();
}
