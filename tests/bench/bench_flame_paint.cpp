// bench_flame_paint [FILE.pprof] [--runs N]
//
// Loads a profile, builds the call tree of its default sample type, then renders FlameGraphView into a
// 1600x900 image offscreen at the root, with a search active, at a mid-depth node and at the deepest node that
// still holds at least 1% of the samples, N times each (default 50), and prints min/median/max milliseconds
// per paint. The budget is one frame at 60 Hz (16 ms) at any zoom; nothing is asserted here.

#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace emberline;

namespace {

struct Scenario {
    const char *name;
    uint32_t zoom;
    QString search;
};

uint32_t deepestBigNode(const engine::CallTree &tree)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < tree.size(); ++i) {
        if (tree.node(i).total * 100 >= tree.total() && tree.node(i).depth > tree.node(best).depth)
            best = i;
    }
    return best;
}

uint32_t biggestAtDepth(const engine::CallTree &tree, uint32_t depth)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < tree.size(); ++i) {
        if (tree.node(i).depth == depth && (best == 0 || tree.node(i).total > tree.node(best).total))
            best = i;
    }
    return best;
}

double ms(qint64 ns)
{
    return static_cast<double>(ns) / 1e6;
}

} // namespace

int main(int argc, char **argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QString path = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
    int runs = 50;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = std::max(1, std::atoi(argv[++i]));
        else
            path = QString::fromLocal8Bit(argv[i]);
    }

    QElapsedTimer timer;
    timer.start();
    auto read = engine::readPprofFile(path.toStdString());
    if (!read) {
        std::fprintf(stderr, "bench_flame_paint: %s\n", read.error().message.c_str());
        return 1;
    }
    auto profile = std::make_shared<const engine::Profile>(std::move(read).value());
    const qint64 readNs = timer.nsecsElapsed();
    timer.restart();
    auto frames = std::make_shared<const engine::FrameTable>(*profile);
    const int type = std::max(0, profile->defaultSampleTypeIndex());
    const auto perStack = engine::valuesPerStack(*profile, type, {});
    auto tree = std::make_shared<const engine::CallTree>(*engine::CallTree::build(*profile, *frames, perStack));
    const qint64 buildNs = timer.nsecsElapsed();
    std::printf("%s: %zu samples, %zu frames, %zu tree nodes, depth %u; read %.1f ms, tree %.1f ms\n", qPrintable(path),
                profile->sampleCount(), frames->size(), tree->size(), tree->maxDepth(), ms(readNs), ms(buildNs));

    ui::FlameGraphView view;
    view.setAttribute(Qt::WA_DontShowOnScreen);
    view.resize(1600, 900);
    view.show();
    view.setTree(tree, frames, profile->str(profile->sampleTypes()[type].unit), false);
    QImage image(1600, 900, QImage::Format_ARGB32_Premultiplied);

    const std::vector<Scenario> scenarios = {
        {"root", 0, {}},
        {"root, search \"a\"", 0, QStringLiteral("a")},
        {"mid-depth node", biggestAtDepth(*tree, std::max(1u, tree->maxDepth() / 2)), {}},
        {"deepest node with >=1% of samples", deepestBigNode(*tree), {}},
    };
    std::printf("%-36s %8s %8s %8s %8s  (%d paints of 1600x900)\n", "scenario", "rects", "min ms", "median", "max ms",
                runs);
    for (const Scenario &s : scenarios) {
        view.setSearch(s.search);
        view.zoomTo(s.zoom);
        view.render(&image); // warm-up: font caches, text widths
        std::vector<qint64> times;
        for (int i = 0; i < runs; ++i) {
            timer.restart();
            view.render(&image);
            times.push_back(timer.nsecsElapsed());
        }
        std::sort(times.begin(), times.end());
        const size_t rects = view.layout().visibleRects().size();
        std::printf("%-36s %8zu %8.2f %8.2f %8.2f\n", s.name, rects, ms(times.front()), ms(times[times.size() / 2]),
                    ms(times.back()));
    }
    return 0;
}
