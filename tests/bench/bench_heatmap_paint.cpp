// bench_heatmap_paint [--minutes M] [--hz F] [--runs N]
//
// The sub-second heatmap of a long session (default: 30 minutes at 999 Hz, ~2M samples, 1800 columns × 50
// rows): buckets the samples' timestamps (Heatmap::add), then renders HeatmapView into a 1600x400 image
// offscreen following the session's end, at its start, scrolled to the middle with ranges A and B selected, and
// at 3840x1000, N times each (default 50), and prints min/median/max milliseconds per paint. The budget is one
// frame at 60 Hz (16 ms); nothing is asserted here.

#include "engine/analysis/heatmap.h"
#include "ui/timeline/heatmap_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

using namespace emberline;

namespace {

double ms(qint64 ns)
{
    return static_cast<double>(ns) / 1e6;
}

// Samples of a session whose main thread is busy throughout (a sample at every tick) and whose second thread
// works in a load that rises and falls over a minute and bursts for 100 ms every second, so that every cell has
// its own value: ~2M samples for 30 minutes at 999 Hz.
std::vector<int64_t> sessionTimestamps(int64_t start, int minutes, int hz)
{
    std::vector<int64_t> times;
    const int64_t period = 1'000'000'000 / hz;
    const int64_t end = start + static_cast<int64_t>(minutes) * 60 * 1'000'000'000;
    uint64_t state = 12345;
    for (int64_t t = start; t < end; t += period) {
        times.push_back(t);
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const double second = static_cast<double>(t - start) / 1e9;
        const double load = 0.1 + 0.1 * std::sin(second / 60.0 * 2 * M_PI);
        const bool burst = std::fmod(second, 1.0) < 0.1;
        if (burst || static_cast<double>(state >> 11) / 9007199254740992.0 < load)
            times.push_back(t + period / 2);
    }
    return times;
}

void measure(const char *name, ui::HeatmapView &view, QImage &image, int runs)
{
    view.render(&image); // warm-up: fonts, label widths
    std::vector<qint64> times;
    QElapsedTimer timer;
    for (int i = 0; i < runs; ++i) {
        timer.restart();
        view.render(&image);
        times.push_back(timer.nsecsElapsed());
    }
    std::sort(times.begin(), times.end());
    const auto [first, last] = view.layout().visibleColumns();
    std::printf("%-40s %6zu %8.2f %8.2f %8.2f\n", name, (last - first) * static_cast<size_t>(view.layout().rows()),
                ms(times.front()), ms(times[times.size() / 2]), ms(times.back()));
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int minutes = 30;
    int hz = 999;
    int runs = 50;
    for (int i = 1; i + 1 < argc; ++i) {
        if (std::strcmp(argv[i], "--minutes") == 0)
            minutes = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--hz") == 0)
            hz = std::max(1, std::atoi(argv[++i]));
        else if (std::strcmp(argv[i], "--runs") == 0)
            runs = std::max(1, std::atoi(argv[++i]));
    }
    constexpr int64_t kStart = 1'700'000'000'000'000'000;
    const std::vector<int64_t> times = sessionTimestamps(kStart, minutes, hz);
    QElapsedTimer timer;
    timer.start();
    auto heatmap = std::make_shared<engine::Heatmap>(kStart);
    for (int64_t t : times)
        heatmap->add(t, 1);
    heatmap->extendTo(kStart + static_cast<int64_t>(minutes) * 60 * 1'000'000'000);
    const qint64 bucketNs = timer.nsecsElapsed();
    std::printf("%d min at %d Hz: %zu samples, %zu columns x %d rows, max %lld per cell; bucketed in %.1f ms\n",
                minutes, hz, times.size(), heatmap->columns(), heatmap->rows(),
                static_cast<long long>(heatmap->maxValue()), ms(bucketNs));

    ui::HeatmapView view;
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.resize(1600, 400);
    view.show();
    timer.restart();
    view.setHeatmap(heatmap);
    std::printf("setHeatmap on the GUI thread: %.3f ms\n", ms(timer.nsecsElapsed()));
    QImage image(1600, 400, QImage::Format_ARGB32_Premultiplied);

    std::printf("%-40s %6s %8s %8s %8s  (%d paints)\n", "scenario (1600x400 unless said)", "cells", "min ms", "median",
                "max ms", runs);
    measure("following the end", view, image, runs);
    // Scrolled through the view's own scroll bar, as the user does.
    view.findChild<QWidget *>(QStringLiteral("heatmapScrollBar"))->setProperty("value", 0);
    measure("at the start", view, image, runs);
    const size_t middle = heatmap->columns() / 2;
    view.findChild<QWidget *>(QStringLiteral("heatmapScrollBar"))
        ->setProperty("value", static_cast<int>(static_cast<double>(middle) * view.layout().cellWidth()));
    view.selectCells({middle, 10}, {middle + 40, 20});
    view.selectCells({middle + 60, 0}, {middle + 90, 49}, true);
    measure("middle, ranges A and B selected", view, image, runs);
    view.resize(3840, 1000);
    QImage large(3840, 1000, QImage::Format_ARGB32_Premultiplied);
    measure("3840x1000, ranges A and B", view, large, runs);
    return 0;
}
