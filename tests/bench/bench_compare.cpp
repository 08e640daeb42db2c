// Opening one profile against comparing two, side by side in one run, the way the window does both: from the
// files on disk to the flame graph drawn (a ProfileView's flame graph; a CompareView's differential flame graph).
// While each runs, a 2 ms timer on the GUI thread measures the longest time the event loop was busy.
//   bench_compare NEW BASE [--repeat N]      (QT_QPA_PLATFORM=offscreen works)
// Prints per run: open ms, compare ms, their ratio, and the GUI thread's longest busy stretch for each; every
// event delivery on the GUI thread of 20 ms or more is named as it happens (receiver and event type).
#include "engine/common/huge_page_malloc.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/thread_scheduling.h"
#include "ui/views/compare/compare_explorer.h"
#include "ui/views/compare/compare_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QPointer>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

using namespace emberline::ui;

namespace {

// The longest gap between ticks of a fast timer: how long the GUI thread was busy at a stretch.
class BusyProbe {
public:
    BusyProbe()
    {
        m_timer.setInterval(2);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            const qint64 now = m_clock.nsecsElapsed();
            m_longest = std::max(m_longest, now - m_last);
            m_last = now;
        });
    }
    void start()
    {
        m_longest = 0;
        m_clock.start();
        m_last = 0;
        m_timer.start();
    }
    double stopMs()
    {
        m_timer.stop();
        return static_cast<double>(m_longest) / 1e6;
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_last = 0;
    qint64 m_longest = 0;
};

double threadCpuMs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Names every outermost event delivery on the GUI thread that takes kSlowDeliveryMs or more.
constexpr qint64 kSlowDeliveryMs = 20;

class SlowEventApplication : public QApplication {
public:
    using QApplication::QApplication;
    bool notify(QObject *receiver, QEvent *event) override
    {
        const bool outermost = m_depth == 0 && QThread::currentThread() == thread();
        if (!outermost)
            return QApplication::notify(receiver, event);
        QElapsedTimer timer;
        timer.start();
        const double cpuBefore = threadCpuMs();
        const int type = event->type();
        const QPointer<QObject> alive(receiver); // the event may delete its receiver (DeferredDelete)
        const QByteArray name = receiver->metaObject()->className();
        ++m_depth;
        const bool result = QApplication::notify(receiver, event);
        --m_depth;
        // CPU time beside wall time: the difference is time the thread waited for a CPU (a loaded machine).
        if (const qint64 ms = timer.elapsed(); ms >= kSlowDeliveryMs)
            std::printf("  slow GUI event: %lld ms (%.1f ms on CPU) delivering event type %d to %s \"%s\"\n",
                        static_cast<long long>(ms), threadCpuMs() - cpuBefore, type, name.constData(),
                        alive ? qPrintable(alive->objectName()) : "(deleted)");
        return result;
    }

private:
    int m_depth = 0;
};

struct Timing {
    double ms = 0;
    double busyMs = 0;
};

// Shows `view` at 1400×900, loads it and runs an event loop until its explorer has drawn the first picture:
// `watchDrawn(loop, drawn)`, called once the view loaded, connects the explorer's signal to a slot that repaints
// and then calls `drawn()`, or exits `loop` with 1 on failure. The milliseconds since `timer` started; the bench
// ends when loading or the analysis fails.
template <typename View, typename WatchDrawn>
double msUntilDrawn(View &view, const QElapsedTimer &timer, WatchDrawn watchDrawn)
{
    QEventLoop loop;
    view.resize(1400, 900);
    view.show();
    double ms = 0;
    const auto drawn = [&] {
        ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
        loop.quit();
    };
    QObject::connect(&view, &View::loadFinished, &loop, [&](bool ok) {
        if (!ok) {
            std::fprintf(stderr, "bench_compare: %s\n", qPrintable(view.errorMessage()));
            loop.exit(1);
            return;
        }
        watchDrawn(loop, drawn);
    });
    view.load();
    if (loop.exec() != 0)
        std::exit(1);
    return ms;
}

Timing openOne(const QString &path, BusyProbe &probe)
{
    QElapsedTimer timer;
    probe.start();
    timer.start();
    ProfileView view(path);
    const double ms = msUntilDrawn(view, timer, [&](QEventLoop &loop, const auto &drawn) {
        QObject::connect(view.explorer(), &ProfileExplorer::analysisApplied, &loop, [&view, drawn] {
            view.explorer()->flameGraph()->viewport()->repaint(); // drawn, not only scheduled
            drawn();
        });
    });
    return {ms, probe.stopMs()};
}

Timing compareTwo(const QString &next, const QString &base, BusyProbe &probe)
{
    QElapsedTimer timer;
    probe.start();
    timer.start();
    CompareView view(base, next);
    const double ms = msUntilDrawn(view, timer, [&](QEventLoop &loop, const auto &drawn) {
        QObject::connect(view.explorer(), &CompareExplorer::comparisonFailed, &loop, [&loop] { loop.exit(1); });
        QObject::connect(view.explorer(), &CompareExplorer::comparisonApplied, &loop, [&view, drawn] {
            view.explorer()->diffFlameGraph()->flameGraph()->viewport()->repaint();
            drawn();
        });
    });
    return {ms, probe.stopMs()};
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    emberline::engine::useHugePageMalloc(argv); // as the emberline program runs
    SlowEventApplication app(argc, argv);
    // As Emberline's main() does: the GUI thread runs promptly when it wakes.
    if (!requestPromptWakeups())
        std::printf("the kernel refused a short time slice for the GUI thread\n");
    const QStringList args = QApplication::arguments();
    if (args.size() < 3) {
        std::fprintf(stderr, "usage: bench_compare NEW BASE [--repeat N]\n");
        return 2;
    }
    int repeat = 3;
    if (const qsizetype at = args.indexOf(QStringLiteral("--repeat")); at > 0 && at + 1 < args.size())
        repeat = std::max(1, args.at(at + 1).toInt());
    BusyProbe probe;
    std::vector<double> open, compare, ratio;
    double openBusy = 0, compareBusy = 0;
    for (int r = 0; r < repeat; ++r) {
        const Timing o = openOne(args.at(1), probe);
        const Timing c = compareTwo(args.at(1), args.at(2), probe);
        open.push_back(o.ms);
        compare.push_back(c.ms);
        ratio.push_back(c.ms / o.ms);
        openBusy = std::max(openBusy, o.busyMs);
        compareBusy = std::max(compareBusy, c.busyMs);
        std::printf("run %d: open %.0f ms (GUI busy at most %.1f ms) | compare %.0f ms (GUI busy at most %.1f ms) | "
                    "ratio %.2f\n",
                    r + 1, o.ms, o.busyMs, c.ms, c.busyMs, c.ms / o.ms);
        std::fflush(stdout);
    }
    std::printf("median: open %.0f ms, compare %.0f ms, ratio %.2f (goal <= 2); GUI thread busy at most %.1f ms "
                "opening, %.1f ms comparing (goal <= 50)\n",
                median(open), median(compare), median(ratio), openBusy, compareBusy);
    return 0;
}
