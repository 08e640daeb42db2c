// bench_live_gui: a live session of many_stacks (8 threads, ~100,000 distinct call paths) at 999 Hz in the real
// live view (offscreen unless QT_QPA_PLATFORM says otherwise). It prints, per flush, how long after the flush
// arrived the flame graph and tables showed it (data applied and the window repainted); the GUI thread's
// event-loop latency (a 1 ms timer's lateness:
// max and p99), with every stall over 30 ms and every event delivery of 8 ms or more named as it happens; and
// memory over the run (RSS, aggregated samples, timeline bytes). Beside the GUI thread, a reference thread that
// only sleeps 1 ms at a time (scheduled like the GUI thread) and the machine's steal time tell a stall of the GUI
// thread from a pause of the whole machine (a virtual machine whose CPUs the host took away). It never asserts
// timings.
// Usage: bench_live_gui [SECONDS=30] [FLUSH_PERIOD_SECONDS=2]

#include "engine/common/clock.h"
#include "engine/session/profiling_session.h"
#include "ui/views/live_session_view.h"
#include "ui/views/thread_scheduling.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <fcntl.h>
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

// The machine's steal time so far (the "cpu" line of /proc/stat), in seconds.
double stealSeconds()
{
    QFile stat(QStringLiteral("/proc/stat"));
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = stat.readLine().simplified().split(' ');
    return fields.size() > 8 ? fields[8].toDouble() / static_cast<double>(::sysconf(_SC_CLK_TCK)) : 0;
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

// A thread that does nothing but sleep 1 ms at a time, with the GUI thread's scheduling: its late wakeups are
// what the machine alone costs, so a GUI stall it shares is the machine's.
class ReferenceSleeper {
public:
    ReferenceSleeper()
        : m_thread([this] {
              ui::requestPromptWakeups();
              double last = clockMs(CLOCK_MONOTONIC);
              while (!m_stop.load(std::memory_order_relaxed)) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                  const double now = clockMs(CLOCK_MONOTONIC);
                  const double late = std::max(0.0, now - last - 1.0);
                  std::lock_guard lock(m_mutex);
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

private:
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    LatenessHistogram m_lateness;
    std::vector<Span> m_stalls;
    std::thread m_thread;
};

// Names every event delivery on the GUI thread that takes kSlowEventMs or more (receiver and event type), so a
// stall can be traced to its cause.
constexpr qint64 kSlowEventMs = 8;

class TimedApplication : public QApplication {
public:
    using QApplication::QApplication;
    std::function<void()> onRepaint;
    bool notify(QObject *receiver, QEvent *event) override
    {
        QElapsedTimer timer;
        timer.start();
        const double cpuBefore = clockMs(CLOCK_THREAD_CPUTIME_ID);
        const int type = event->type();
        const QPointer<QObject> alive(receiver); // the event may delete its receiver (DeferredDelete)
        const bool result = QApplication::notify(receiver, event);
        if (!alive)
            return result;
        if (type == QEvent::UpdateRequest && receiver->isWidgetType() && onRepaint)
            onRepaint(); // a window repainted: what the views got before it is now on screen
        if (const qint64 ms = timer.elapsed(); ms >= kSlowEventMs) {
            // CPU time beside wall time: the difference is time the GUI thread waited for a CPU.
            std::printf("slow event: %lld ms (%.1f ms on CPU) delivering event type %d to %s \"%s\"\n",
                        static_cast<long long>(ms), clockMs(CLOCK_THREAD_CPUTIME_ID) - cpuBefore, type,
                        receiver->metaObject()->className(), qPrintable(receiver->objectName()));
        }
        return result;
    }
};

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    TimedApplication app(argc, argv);
    // As Emberline's main() does.
    if (!ui::requestPromptWakeups())
        std::printf("the kernel refused a short time slice for the GUI thread\n");
    const double seconds = argc > 1 ? std::atof(argv[1]) : 30;
    const double flushPeriod = argc > 2 ? std::atof(argv[2]) : 2;

    engine::SessionConfig config;
    config.command = {EMBERLINE_BINARY_DIR "/tests/targets/many_stacks", std::to_string(seconds + 30)};
    config.frequency = 999;
    config.flushPeriodNs = static_cast<int64_t>(flushPeriod * 1e9);
    config.durationNs = static_cast<int64_t>(seconds * 1e9);
    auto *session = new engine::ProfilingSession(config);
    ui::LiveSessionView view(session);
    view.resize(1400, 900);
    view.show();

    LatenessHistogram lateness;
    std::vector<Span> guiStalls; // over 50 ms
    ReferenceSleeper sleeper;
    const double stealAtStart = stealSeconds();
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = 0;
    double worstLateness = 0;
    double worstAtS = 0; // when the longest stall began, seconds after start
    // Where each stall's time went: on a CPU, waiting for one, or neither (asleep or blocked).
    const ThreadSchedStat schedStat;
    double lastRunMs = 0, lastWaitMs = 0;
    schedStat.read(lastRunMs, lastWaitMs);
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
                guiStalls.push_back(Span{endMs - static_cast<double>(now - lastTick) / 1e6, endMs});
            }
            if (late > worstLateness) {
                worstLateness = late;
                worstAtS = static_cast<double>(lastTick) / 1e9;
            }
        }
        lastTick = now;
        lastRunMs = runMs;
        lastWaitMs = waitMs;
    });

    std::printf("bench_live_gui: many_stacks, 8 threads, 999 Hz, %.0f s, flush every %.0f s\n", seconds, flushPeriod);
    std::printf("%8s %10s %12s %14s %14s %10s\n", "flush", "update_ms", "rss_MiB", "agg_samples", "timeline_KiB",
                "samples");
    // A flush counts as shown once the window has repainted after the views took its data: the view's own
    // latency (flush arrival to data applied) plus the time until that repaint ends.
    std::vector<double> updates;
    uint32_t pendingSequence = 0;
    double pendingLatencyMs = 0;
    QElapsedTimer sinceApplied;
    QObject::connect(&view, &ui::LiveSessionView::viewsUpdated, [&](uint32_t sequence, double latencyMs) {
        pendingSequence = sequence;
        pendingLatencyMs = latencyMs;
        sinceApplied.start();
    });
    app.onRepaint = [&] {
        if (pendingSequence == 0)
            return;
        const double latencyMs = pendingLatencyMs + static_cast<double>(sinceApplied.nsecsElapsed()) / 1e6;
        updates.push_back(latencyMs);
        const auto &state = view.updater()->state();
        std::printf("%8u %10.1f %12.1f %14zu %14.1f %10zu\n", pendingSequence, latencyMs, rssKiB() / 1024.0,
                    state.snapshot ? state.snapshot->profile->sampleCount() : size_t(0),
                    state.snapshot ? state.snapshot->timelineBytes() / 1024.0 : 0.0,
                    state.snapshot ? state.snapshot->timelineSamples() : size_t(0));
        std::fflush(stdout);
        pendingSequence = 0;
    };
    // A session the engine refuses (a flush period under 1 s, say) ends at once: say why.
    QObject::connect(session, &engine::ProfilingSession::failed, [](const QString &message) {
        std::printf("session failed: %s\n", qPrintable(message));
        std::fflush(stdout);
    });
    long peakRss = 0;
    QTimer rss;
    rss.setInterval(500);
    QObject::connect(&rss, &QTimer::timeout, [&] { peakRss = std::max(peakRss, rssKiB()); });
    QObject::connect(&view, &ui::LiveSessionView::sessionEnded, [&] {
        // Let the final flush reach the views, then report.
        QTimer::singleShot(3000, &app, [&] {
            tick.stop();
            std::printf("views updated and repainted after a flush: %zu updates, median %.1f ms, p99 %.1f ms, max %.1f ms\n",
                        updates.size(), percentile(updates, 0.5), percentile(updates, 0.99),
                        updates.empty() ? 0.0 : *std::max_element(updates.begin(), updates.end()));
            std::printf("GUI event loop (1 ms timer lateness over %zu ticks): p99 %.2f ms, max %.2f ms (at %.1f s)\n",
                        lateness.count(), lateness.percentile(0.99), worstLateness, worstAtS);
            sleeper.stop();
            const auto machineStalls = std::count_if(guiStalls.begin(), guiStalls.end(),
                                                     [&](const Span &s) { return sleeper.stalledDuring(s); });
            std::printf("GUI thread stalls over 50 ms: %zu, of which %lld while the reference sleeper was also over "
                        "30 ms late (the machine paused)\n",
                        guiStalls.size(), static_cast<long long>(machineStalls));
            const LatenessHistogram &ref = sleeper.lateness();
            std::printf("reference sleeper (1 ms sleeps, no work) over %zu ticks: p99 %.2f ms, max %.2f ms\n",
                        ref.count(), ref.percentile(0.99), ref.max());
            std::printf("steal time (the host kept the virtual CPUs): %.2f s over the run\n",
                        stealSeconds() - stealAtStart);
            std::printf("memory: peak RSS %.1f MiB, final RSS %.1f MiB\n", peakRss / 1024.0, rssKiB() / 1024.0);
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
