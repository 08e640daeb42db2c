// bench_live_gui: a live session of many_stacks (8 threads, ~100,000 distinct call paths) at 999 Hz in the real
// live view (offscreen unless QT_QPA_PLATFORM says otherwise). It prints, per flush, how long after the flush
// arrived the flame graph and tables showed it (data applied and the window repainted); the GUI thread's event-loop latency (a 1 ms timer's lateness:
// max and p99), with every stall over 30 ms and every event delivery of 8 ms or more named as it happens; and
// memory over the run (RSS, aggregated samples, timeline bytes). It never asserts timings.
// Usage: bench_live_gui [SECONDS=30] [FLUSH_PERIOD_SECONDS=2]

#include "engine/session/profiling_session.h"
#include "ui/views/live_session_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <functional>
#include <vector>

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

double threadCpuMs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

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
        const double cpuBefore = threadCpuMs();
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
                        static_cast<long long>(ms), threadCpuMs() - cpuBefore, type,
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

    std::vector<double> lateness;
    QElapsedTimer clock;
    clock.start();
    qint64 lastTick = 0;
    double worstLateness = 0;
    double worstAtS = 0; // when the longest stall began, seconds after start
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    tick.setInterval(1);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (lastTick > 0) {
            lateness.push_back(std::max(0.0, static_cast<double>(now - lastTick) / 1e6 - 1.0));
            if (lateness.back() > 30)
                std::printf("stall: the GUI thread was %.1f ms late at %.3f s\n", lateness.back(),
                            static_cast<double>(lastTick) / 1e9);
            if (lateness.back() > worstLateness) {
                worstLateness = lateness.back();
                worstAtS = static_cast<double>(lastTick) / 1e9;
            }
        }
        lastTick = now;
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
                        lateness.size(), percentile(lateness, 0.99), worstLateness, worstAtS);
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
