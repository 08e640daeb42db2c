// The workspace's room, offscreen: the detail tabs maximized and back (the action, its shortcut and the corner
// button), the flame graph's height following the depth it shows, splitter positions and the window's geometry
// remembered, short C++ names in the flame graph, and profiles opened on CPU time with the sample types explained.

#include "engine/pprof/pprof_writer.h"
#include "tests/ui/test_profiles.h"
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/common/short_name.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/window/main_window.h"

#include <QAction>
#include <QComboBox>
#include <QScrollBar>
#include <QSplitter>
#include <QSplitterHandle>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeWidget>
#include <QVBoxLayout>

using namespace emberline::ui;
namespace engine = emberline::engine;
namespace uitest = emberline::ui::test;
namespace viewtest = emberline::test;

namespace {

// A profile whose stacks are `depth` frames deep, one path, with a branch of eight frames beside it (under
// level0: "side0" … "side7").
std::shared_ptr<const engine::LoadedProfile> profileOfDepth(int depth)
{
    std::vector<std::string> path;
    path.reserve(static_cast<size_t>(depth));
    for (int i = 0; i < depth; ++i)
        path.push_back("level" + std::to_string(i));
    std::vector<std::string> side{"level0"};
    for (int i = 0; i < 8; ++i)
        side.push_back("side" + std::to_string(i));
    return uitest::loadedFrom(uitest::profileOfPaths({{path, 70}, {side, 30}}));
}

// The explorer alone in a window of `size`, with its first analysis applied and its room fitted.
struct Shown {
    QWidget window;
    ProfileExplorer *explorer = nullptr;
};

bool show(Shown &shown, std::shared_ptr<const engine::LoadedProfile> loaded, QSize size = {1400, 900})
{
    shown.explorer = new ProfileExplorer(std::move(loaded), &shown.window);
    auto *layout = new QVBoxLayout(&shown.window);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(shown.explorer);
    shown.window.resize(size);
    shown.window.show();
    if (!QTest::qWaitForWindowExposed(&shown.window) || !viewtest::waitForAnalysis(shown.explorer))
        return false;
    QTest::qWait(50); // the fit runs once the splitter has its size
    return true;
}

QSplitter *mainSplitter(ProfileExplorer *explorer)
{
    return explorer->findChild<QSplitter *>(QStringLiteral("mainSplitter"));
}

// Drags a splitter's handle by `delta` pixels along its orientation.
void dragHandle(QSplitter *splitter, int delta)
{
    QSplitterHandle *handle = splitter->handle(1);
    const QPoint from = handle->rect().center();
    const QPoint to = splitter->orientation() == Qt::Vertical ? from + QPoint(0, delta) : from + QPoint(delta, 0);
    QTest::mousePress(handle, Qt::LeftButton, {}, from);
    QMouseEvent move(QEvent::MouseMove, QPointF(to), handle->mapToGlobal(QPointF(to)), Qt::NoButton, Qt::LeftButton,
                     Qt::NoModifier);
    QApplication::sendEvent(handle, &move);
    QTest::mouseRelease(handle, Qt::LeftButton, {}, to);
}

} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_settings;

private Q_SLOTS:
    void init()
    {
        m_settings = std::make_unique<QTemporaryDir>();
        uitest::isolateSettings(*m_settings, "tst_workspace");
    }

    // If this fails, a detail view cannot take the tab (or not come back): Source showed 11 lines of a file and
    // Disassembly four instructions in a quarter of the window.
    void maximizeActionAndShortcut()
    {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        window.openFiles({viewtest::kGoCpu});
        QVERIFY(QTest::qWaitFor([&] { return window.currentExplorer() != nullptr; }, 30000));
        ProfileExplorer *explorer = window.currentExplorer();
        QVERIFY(viewtest::waitForAnalysis(explorer));
        QTabWidget *details = explorer->detailTabs();
        const int before = details->height();
        QVERIFY(explorer->flameGraph()->isVisible());

        QTest::keyClick(&window, Qt::Key_M, Qt::ControlModifier);
        QVERIFY(explorer->isDetailsMaximized());
        QVERIFY(QTest::qWaitFor([&] { return details->height() > explorer->height() * 8 / 10; }, 2000));
        QVERIFY2(details->width() > explorer->width() * 9 / 10, qPrintable(QString::number(details->width())));
        QVERIFY(!explorer->flameGraph()->isVisible());
        QVERIFY(!explorer->findChild<TopFunctionsView *>()->isVisible());
        QVERIFY(explorer->maximizeDetailsAction()->isChecked());

        QTest::keyClick(&window, Qt::Key_M, Qt::ControlModifier);
        QVERIFY(!explorer->isDetailsMaximized());
        QVERIFY(explorer->flameGraph()->isVisible());
        QVERIFY(QTest::qWaitFor([&] { return std::abs(details->height() - before) <= 2; }, 2000));

        // One click on the corner of the tabs does the same.
        auto *corner = explorer->findChild<QToolButton *>(QStringLiteral("maximizeDetailsButton"));
        QVERIFY(corner && corner->isVisible());
        QTest::mouseClick(corner, Qt::LeftButton);
        QVERIFY(explorer->isDetailsMaximized());
        QTest::mouseClick(corner, Qt::LeftButton);
        QVERIFY(!explorer->isDetailsMaximized());
    }

    // A window at 2× scale on a 1600×1000 screen is 800×500. If this fails, the detail tabs need scroll arrows
    // there (Source, Sandwich and Disassembly hidden behind them), or the full labels are not back at 1×.
    void detailTabsFitAWindowAt2x()
    {
        for (const QString &file : {viewtest::kGoCpu, QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-heap.pprof")}) {
            MainWindow window;
            window.resize(800, 500);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.openFiles({file});
            QVERIFY(QTest::qWaitFor([&] { return window.currentExplorer() != nullptr; }, 30000));
            ProfileExplorer *explorer = window.currentExplorer();
            QVERIFY(viewtest::waitForAnalysis(explorer));
            QTabWidget *details = explorer->detailTabs();
            QTabBar *bar = details->tabBar();
            auto *corner = explorer->findChild<QToolButton *>(QStringLiteral("maximizeDetailsButton"));
            const auto everyTabShown = [&] {
                for (QToolButton *arrow : bar->findChildren<QToolButton *>()) {
                    if (arrow->isVisible())
                        return QStringLiteral("a scroll arrow is shown");
                }
                for (int i = 0; i < bar->count(); ++i) {
                    const QRect tab = bar->tabRect(i);
                    if (tab.left() < 0 || tab.right() >= bar->width() || !bar->isVisible())
                        return QStringLiteral("tab %1 at %2..%3 of %4")
                            .arg(i)
                            .arg(tab.left())
                            .arg(tab.right())
                            .arg(bar->width());
                    if (bar->tabToolTip(i).isEmpty())
                        return QStringLiteral("tab %1 without its full label").arg(i);
                }
                if (bar->geometry().right() >= corner->geometry().left())
                    return QStringLiteral("the tabs run under the corner button");
                return QString();
            };
            QTest::qWait(50);
            QVERIFY2(everyTabShown().isEmpty(), qPrintable(file + QStringLiteral(": ") + everyTabShown()));
            QCOMPARE(bar->tabText(0), QStringLiteral("Calls"));
            QCOMPARE(bar->tabToolTip(0), QStringLiteral("Callers / Callees"));
            QCOMPARE(corner->text(), QStringLiteral("⤢"));
            QCOMPARE(bar->tabText(3), QStringLiteral("Disasm"));

            // At 1×, the full labels.
            window.resize(1600, 1000);
            QTest::qWait(50);
            QVERIFY2(everyTabShown().isEmpty(), qPrintable(everyTabShown()));
            QCOMPARE(bar->tabText(0), QStringLiteral("Callers / Callees"));
            QCOMPARE(bar->tabText(3), QStringLiteral("Disassembly"));
            QCOMPARE(corner->text(), QStringLiteral("⤢ Maximize"));
            // Maximized, the corner says Restore; narrow again, its symbol.
            corner->click();
            QCOMPARE(corner->text(), QStringLiteral("⤡ Restore"));
            corner->click();
            window.resize(800, 500);
            QTest::qWait(50);
            QCOMPARE(corner->text(), QStringLiteral("⤢"));
        }
    }

    // If this fails, a shallow profile floats at the bottom of an empty band (or a deep one is cut off instead of
    // scrolling, or takes the tables' room).
    void flameGraphHeightFollowsDepth()
    {
        Shown shallow;
        QVERIFY(show(shallow, profileOfDepth(4)));
        FlameGraphView *flame = shallow.explorer->flameGraph();
        QCOMPARE(flame->layout().rowCount(), 10u); // the root, level0 and the side branch
        QVERIFY2(QTest::qWaitFor([&] { return std::abs(flame->height() - flame->contentHeightHint()) <= 2; }, 2000),
                 qPrintable(QStringLiteral("%1 for %2, pane %3, sizes %4 %5, breadcrumb %6")
                                .arg(flame->height())
                                .arg(flame->contentHeightHint())
                                .arg(flame->parentWidget()->height())
                                .arg(mainSplitter(shallow.explorer)->sizes()[0])
                                .arg(mainSplitter(shallow.explorer)->sizes()[1])
                                .arg(flame->parentWidget()->height() - flame->height())));
        QCOMPARE(flame->verticalScrollBar()->maximum(), 0);
        const QList<int> sizes = mainSplitter(shallow.explorer)->sizes();
        QVERIFY2(sizes[1] > sizes[0], "the tables get the room the flame graph does not need");

        Shown deep;
        QVERIFY(show(deep, profileOfDepth(80)));
        FlameGraphView *deepFlame = deep.explorer->flameGraph();
        const QList<int> deepSizes = mainSplitter(deep.explorer)->sizes();
        const double share = double(deepSizes[0]) / (deepSizes[0] + deepSizes[1]);
        QVERIFY2(std::abs(share - deep.explorer->flameShare()) < 0.02, qPrintable(QString::number(share)));
        QVERIFY(deepFlame->height() < deepFlame->contentHeightHint());
        QVERIFY(deepFlame->verticalScrollBar()->maximum() > 0); // the rest scrolls

        // Zoomed into the side branch, the deep profile's graph shrinks to the rows it then shows.
        const uint32_t side = deepFlame->layout().largestNodeNamed("side0");
        QVERIFY(side != engine::kNoIndex);
        deepFlame->zoomTo(side);
        QVERIFY(
            QTest::qWaitFor([&] { return std::abs(deepFlame->height() - deepFlame->contentHeightHint()) <= 2; }, 2000));
    }

    // If this fails, the user's splitter positions or the window's size are lost at the next start.
    void splittersAndGeometryRemembered()
    {
        double share = 0;
        QList<int> tables;
        {
            Shown first;
            QVERIFY(show(first, profileOfDepth(80)));
            const double before = first.explorer->flameShare();
            dragHandle(mainSplitter(first.explorer), -150);
            share = first.explorer->flameShare();
            QVERIFY2(share < before - 0.05, qPrintable(QStringLiteral("%1 → %2").arg(before).arg(share)));
            auto *tablesSplitter = first.explorer->findChild<QSplitter *>(QStringLiteral("tablesSplitter"));
            dragHandle(tablesSplitter, 200);
            tables = tablesSplitter->sizes();
        }
        Shown second;
        QVERIFY(show(second, profileOfDepth(80)));
        QCOMPARE(second.explorer->flameShare(), share);
        const QList<int> sizes = mainSplitter(second.explorer)->sizes();
        QVERIFY(std::abs(double(sizes[0]) / (sizes[0] + sizes[1]) - share) < 0.02);
        QCOMPARE(second.explorer->findChild<QSplitter *>(QStringLiteral("tablesSplitter"))->sizes(), tables);

        {
            MainWindow window;
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.resize(1234, 777);
            QTest::qWait(20);
            window.close();
        }
        MainWindow again;
        QCOMPARE(again.size(), QSize(1234, 777));
    }

    // If this fails, C++ names are shortened wrongly: a parameter list or template arguments left in, an operator
    // or a non-C++ name damaged.
    void shortNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("shortName");
        const auto row = [](const char *name, const char *shortName) {
            QTest::newRow(name) << QString::fromUtf8(name) << QString::fromUtf8(shortName);
        };
        row("std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector<…>::push_back");
        row("void std::__introsort_loop<int*, long, __gnu_cxx::__ops::_Iter_less_iter>(int*, int*, long, "
            "__gnu_cxx::__ops::_Iter_less_iter)",
            "std::__introsort_loop<…>");
        row("Matrix::multiply(Matrix const&) const", "Matrix::multiply");
        row("std::ostream::operator<<(int)", "std::ostream::operator<<");
        row("bool operator< <int>(Foo<int> const&, Foo<int> const&)", "operator< <…>");
        row("Functor::operator()(int) const", "Functor::operator()");
        row("(anonymous namespace)::worker(void*)", "(anonymous namespace)::worker");
        row("main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()");
        row("outer(int)::Local::run()", "outer::Local::run");
        row("operator new(unsigned long)", "operator new");
        row("hot_sixty", "hot_sixty");
        row("libstdc++.so.6.0.30+0xd44a2", "libstdc++.so.6.0.30+0xd44a2");
        row("run (app.py:12)", "run (app.py:12)");
        row("[kernel.kallsyms]", "[kernel.kallsyms]");
    }
    void shortNames()
    {
        QFETCH(QString, name);
        QFETCH(QString, shortName);
        QCOMPARE(shortFunctionName(name), shortName);
    }

    // If this fails, the flame graph draws full C++ signatures by default, or hides the full name from the
    // tooltip, or View > Short Function Names does not switch the labels.
    void flameGraphShortNames()
    {
        const std::string full = "std::vector<int, std::allocator<int> >::push_back(int const&)";
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("cxx.pprof"));
        QVERIFY(engine::writePprofFile(uitest::profileOfPaths({{{"main", full}, 10}}), path.toStdString()).ok());
        window.openFiles({path});
        QVERIFY(QTest::qWaitFor([&] { return window.currentExplorer() != nullptr; }, 30000));
        QVERIFY(viewtest::waitForAnalysis(window.currentExplorer()));
        FlameGraphView *flame = window.currentExplorer()->flameGraph();
        const uint32_t node = flame->layout().largestNodeNamed(full);
        QVERIFY(node != engine::kNoIndex);
        QVERIFY(flame->shortNames());
        QCOMPARE(flame->labelFor(node), QStringLiteral("std::vector<…>::push_back"));
        QVERIFY(flame->toolTipFor(node).contains(QString::fromStdString(full).toHtmlEscaped()));
        auto *action = window.findChild<QAction *>(QStringLiteral("shortNamesAction"));
        QVERIFY(action && action->isChecked());
        action->trigger();
        QCOMPARE(flame->labelFor(node), QString::fromStdString(full));
        // The choice is remembered for the next flame graph.
        FlameGraphView another;
        QVERIFY(!another.shortNames());
    }

    // If this fails, a profile with wall time last and no default opens on wall time, or the selector does not
    // say what the types mean.
    void opensOnCpuTimeWithTypesExplained()
    {
        engine::Profile typed;
        typed.sampleTypes().push_back({typed.intern("cpu-time"), typed.intern("nanoseconds")});
        typed.sampleTypes().push_back({typed.intern("wall-time"), typed.intern("nanoseconds")});
        typed.functions().push_back(engine::Function{1, typed.intern("work"), typed.intern("work"), 0, 0});
        engine::Location loc;
        loc.id = 1;
        loc.lines.push_back({0, 0, 0});
        typed.locations().push_back(loc);
        const uint32_t stack[] = {0};
        const int64_t values[] = {10, 90};
        typed.addSample(stack, values, {});
        QCOMPARE(typed.defaultSampleTypeIndex(), 1); // pprof's rule: the last, wall time
        Shown shown;
        QVERIFY(show(shown, uitest::loadedFrom(std::move(typed))));
        QCOMPARE(shown.explorer->sampleType(), 0);
        auto *combo = shown.explorer->findChild<QComboBox *>(QStringLiteral("sampleTypeCombo"));
        QVERIFY(combo->itemData(0, Qt::ToolTipRole).toString().contains(QStringLiteral("on a CPU")));
        QVERIFY(combo->itemData(1, Qt::ToolTipRole).toString().contains(QStringLiteral("waiting")));
        QVERIFY(combo->toolTip().contains(QStringLiteral("on a CPU")));
    }

    // If this fails, Help > Keyboard Shortcuts misses an action's shortcut.
    void shortcutsPageListsThem()
    {
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.findChild<QAction *>(QStringLiteral("shortcutsAction"))->trigger();
        auto *tree = window.findChild<QTreeWidget *>(QStringLiteral("shortcutsTree"));
        QVERIFY(tree);
        QStringList listed;
        for (QTreeWidgetItemIterator it(tree); *it; ++it)
            listed << (*it)->text(1);
        for (const char *name : {"maximizeDetailsMenuAction", "openAction", "profileProcessAction", "showSourceAction",
                                 "showDisassemblyAction", "shortNamesAction"}) {
            auto *action = window.findChild<QAction *>(QLatin1String(name));
            QVERIFY2(action && !action->shortcut().isEmpty(), name);
            QVERIFY2(listed.contains(action->shortcut().toString(QKeySequence::NativeText)), name);
        }
    }
};

QTEST_MAIN(TestWorkspace)
#include "tst_workspace.moc"
