// The transform chain of a profile tab, offscreen: right-click a frame in the flame graph and a row of the
// top-functions table, choose a transform, and the views show what `emberline report --focus/--ignore/--hide`
// prints for the same file (itself checked against pprof); the chain's chips remove their step; a chain that
// leaves no sample says so instead of drawing nothing; the thread filter combines with the chain; bottom-up
// puts each function's self cost at the root.
#include "engine/model/frame_table.h"
#include "tests/ui/test_profiles.h"
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/common/model_roles.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/models/thread_list_model.h"
#include "ui/models/top_functions_model.h"
#include "ui/views/explorer/top_functions_view.h"
#include "ui/views/widgets/thread_filter_button.h"
#include "ui/views/widgets/transform_chain_bar.h"

#include <QContextMenuEvent>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeView>

#include <map>

using namespace emberline;
using emberline::ui::ProfileExplorer;
using emberline::ui::TopFunctionsModel;

namespace {

struct Values {
    qint64 self = 0;
    qint64 total = 0;
};

// name -> (self, total) of every function, cpu nanoseconds, from `report --json` with `args`.
std::map<QString, Values> reportFunctions(const QStringList &args)
{
    const QByteArray json = test::reportOutput(QStringList{test::kGoCpu, QStringLiteral("--json")} + args);
    std::map<QString, Values> out;
    for (const auto &v : QJsonDocument::fromJson(json).object().value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        out[f.value(QStringLiteral("name")).toString()] = {f.value(QStringLiteral("self")).toInteger(),
                                                           f.value(QStringLiteral("total")).toInteger()};
    }
    return out;
}

// name -> (self, total) as the explorer's top-functions table holds them.
std::map<QString, Values> tableFunctions(ProfileExplorer *explorer)
{
    const TopFunctionsModel *model = explorer->findChild<ui::TopFunctionsView *>()->model();
    std::map<QString, Values> out;
    for (int row = 0; row < model->rowCount(); ++row) {
        const QString name = model->index(row, TopFunctionsModel::NameColumn).data(ui::SortRole).toString();
        out[name] = {model->index(row, TopFunctionsModel::SelfColumn).data(ui::SortRole).toLongLong(),
                     model->index(row, TopFunctionsModel::TotalColumn).data(ui::SortRole).toLongLong()};
    }
    return out;
}

// The flame graph's tree, and the tree built from the stacks of the profile the explorer derived: the window makes
// a transformed tree from the untransformed one (engine::transformCallTree) and must draw exactly the same.
std::pair<QString, QString> drawnAndRebuiltTree(ProfileExplorer *explorer)
{
    const auto analysis = explorer->analysis();
    const engine::LoadedProfile &shown = *analysis->loaded;
    const auto rebuilt = engine::CallTree::build(*shown.profile, *shown.frames, *analysis->perStack);
    return {QString::fromStdString(explorer->flameGraph()->layout().tree()->dump(*shown.frames)),
            QString::fromStdString(rebuilt->dump(*shown.frames))};
}

QString firstDifference(const std::map<QString, Values> &mine, const std::map<QString, Values> &theirs)
{
    if (mine.size() != theirs.size())
        return QStringLiteral("%1 functions shown, report has %2").arg(mine.size()).arg(theirs.size());
    for (const auto &[name, v] : theirs) {
        const auto it = mine.find(name);
        if (it == mine.end())
            return name + QStringLiteral(" missing");
        if (it->second.self != v.self || it->second.total != v.total)
            return QStringLiteral("%1: %2/%3, report %4/%5")
                .arg(name)
                .arg(it->second.self)
                .arg(it->second.total)
                .arg(v.self)
                .arg(v.total);
    }
    return {};
}

// Right-clicks the widest drawn rectangle of `name` in the flame graph and triggers the menu action `action`.
bool rightClickFlameFrame(ProfileExplorer *explorer, const std::string &name, const QString &action)
{
    ui::FlameGraphView *flame = explorer->flameGraph();
    const uint32_t node = flame->layout().largestNodeNamed(name);
    for (const ui::FlameRect &rect : flame->layout().visibleRects()) {
        if (rect.node != node)
            continue;
        const QPoint pos = rect.pixels.center().toPoint();
        QContextMenuEvent event(QContextMenuEvent::Mouse, pos, flame->viewport()->mapToGlobal(pos));
        QApplication::sendEvent(flame->viewport(), &event);
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        if (!menu)
            return false;
        auto *chosen = menu->findChild<QAction *>(action);
        if (!chosen)
            return false;
        chosen->trigger();
        menu->close();
        return true;
    }
    return false;
}

} // namespace

class TestTransformChain : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_transform_chain");
    }

    // If this fails, a transform chosen in a frame's menu does not give `report`'s numbers, a chip does not
    // remove its step, or a chain that leaves no sample is drawn as an empty picture instead of said so.
    void focusIgnoreHideFromMenus()
    {
        ui::ProfileView view(test::kGoCpu);
        ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const auto untouched = tableFunctions(explorer);
        QCOMPARE(firstDifference(untouched, reportFunctions({})), QString());

        // Focus on main.fibRec, from the flame graph.
        QVERIFY(rightClickFlameFrame(explorer, "main.fibRec", QStringLiteral("focusAction")));
        QVERIFY(test::waitForAnalysis(explorer));
        const QString fibRec = QStringLiteral("^main\\.fibRec$");
        QCOMPARE(explorer->transformChain()->chipCount(), 1);
        QVERIFY(explorer->transformChain()->isVisible());
        QVERIFY(explorer->transformChain()->chip(0)->text().startsWith(QStringLiteral("focus '") + fibRec + "'"));
        const auto focused = reportFunctions({QStringLiteral("--focus"), fibRec});
        QCOMPARE(firstDifference(tableFunctions(explorer), focused), QString());
        QCOMPARE(explorer->flameGraph()->layout().tree()->total(), focused.at(QStringLiteral("main.fibRec")).total);
        const auto [focusDrawn, focusBuilt] = drawnAndRebuiltTree(explorer);
        QCOMPARE(focusDrawn, focusBuilt);

        // Then ignore it, from the table: nothing is left, and the views say so.
        ui::TopFunctionsView *top = explorer->findChild<ui::TopFunctionsView *>();
        explorer->selectFrame(explorer->shownFrames().findByName("main.fibRec").front());
        const QRect row = top->table()->visualRect(top->table()->currentIndex());
        QSignalSpy menuSpy(top, &ui::TopFunctionsView::frameContextMenuRequested);
        QContextMenuEvent event(QContextMenuEvent::Mouse, row.center(),
                                top->table()->viewport()->mapToGlobal(row.center()));
        QApplication::sendEvent(top->table()->viewport(), &event);
        QCOMPARE(menuSpy.count(), 1);
        auto *menu = qobject_cast<QMenu *>(QApplication::activePopupWidget());
        QVERIFY(menu);
        menu->findChild<QAction *>(QStringLiteral("ignoreAction"))->trigger();
        menu->close();
        QTRY_VERIFY_WITH_TIMEOUT(!explorer->message().isEmpty(), 30000);
        QVERIFY2(explorer->message().contains(QStringLiteral("no sample is left")), qPrintable(explorer->message()));
        QVERIFY(!explorer->flameGraph()->isVisible());
        QCOMPARE(explorer->transformChain()->chipCount(), 2);

        // Remove the focus step by its chip: the ignore alone is left, as `report --ignore` gives it.
        QTest::mouseClick(explorer->transformChain()->chip(0), Qt::LeftButton);
        QVERIFY(test::waitForAnalysis(explorer));
        QTRY_VERIFY(explorer->message().isEmpty());
        QVERIFY(explorer->flameGraph()->isVisible());
        QCOMPARE(explorer->transformChain()->chipCount(), 1);
        QCOMPARE(firstDifference(tableFunctions(explorer), reportFunctions({QStringLiteral("--ignore"), fibRec})),
                 QString());

        // Clear, then hide runtime frames: their cost goes to their callers, the total stays.
        explorer->clearTransforms();
        QVERIFY(test::waitForAnalysis(explorer));
        QVERIFY(!explorer->transformChain()->isVisible());
        QCOMPARE(firstDifference(tableFunctions(explorer), untouched), QString());
        explorer->addTransform({engine::Transform::Kind::Hide, "^runtime\\."});
        QVERIFY(test::waitForAnalysis(explorer));
        QCOMPARE(firstDifference(tableFunctions(explorer),
                                 reportFunctions({QStringLiteral("--hide"), QStringLiteral("^runtime\\.")})),
                 QString());
        const auto [hideDrawn, hideBuilt] = drawnAndRebuiltTree(explorer);
        QCOMPARE(hideDrawn, hideBuilt);
    }

    // If this fails, the thread filter and the chain do not combine (a thread's samples through a focus), or
    // bottom-up does not put each function's self cost at its root.
    void threadsAndBottomUp()
    {
        auto loaded = std::make_shared<engine::LoadedProfile>();
        auto profile = std::make_shared<const engine::Profile>(ui::test::makeSmallProfile(true));
        loaded->path = QStringLiteral("small");
        loaded->frames = std::make_shared<const engine::FrameTable>(*profile);
        loaded->threads = std::make_shared<const engine::ThreadIndex>(*profile);
        loaded->frameNames = engine::frameDisplayNames(*loaded->frames);
        loaded->totals = profile->totals();
        loaded->profile = profile;
        ProfileExplorer explorer(loaded);
        explorer.resize(1200, 800);
        explorer.show();
        QVERIFY(test::waitForAnalysis(&explorer));
        QCOMPARE(explorer.flameGraph()->layout().tree()->total(), qint64(100));

        // Only the "worker" thread (main→a→b 30, main→a 10), then focus on c: nothing is left.
        ui::ThreadListModel *threads = explorer.findChild<ui::ThreadFilterButton *>()->model();
        for (int row = 0; row < threads->rowCount(); ++row) {
            if (threads->index(row, 0).data().toString().contains(QStringLiteral("io")))
                threads->setData(threads->index(row, 0), Qt::Unchecked, Qt::CheckStateRole);
        }
        QVERIFY(test::waitForAnalysis(&explorer));
        QCOMPARE(explorer.flameGraph()->layout().tree()->total(), qint64(40));
        explorer.addTransform({engine::Transform::Kind::Focus, "^b$"});
        QVERIFY(test::waitForAnalysis(&explorer));
        QCOMPARE(explorer.flameGraph()->layout().tree()->total(), qint64(30)); // the worker's b, not io's 20
        explorer.removeTransform(0);
        explorer.addTransform({engine::Transform::Kind::Focus, "^c$"});
        QTRY_VERIFY_WITH_TIMEOUT(!explorer.message().isEmpty(), 10000);

        // Every thread again, no transform, bottom-up: the root's children are the functions with a self cost,
        // each as wide as its self: b 50, c 40, a 10.
        explorer.clearTransforms();
        for (int row = 0; row < threads->rowCount(); ++row)
            threads->setData(threads->index(row, 0), Qt::Checked, Qt::CheckStateRole);
        explorer.findChild<QToolButton *>(QStringLiteral("bottomUpToggle"))->click();
        QVERIFY(test::waitForAnalysis(&explorer));
        QVERIFY(explorer.message().isEmpty());
        const engine::CallTree &tree = *explorer.flameGraph()->layout().tree();
        std::map<std::string, int64_t> roots;
        for (uint32_t child : tree.children(0))
            roots[explorer.shownFrames().frame(tree.node(child).frame).name] = tree.node(child).total;
        QCOMPARE(roots, (std::map<std::string, int64_t>{{"a", 10}, {"b", 50}, {"c", 40}}));
        // b's callers above it: a 30 and c 20.
        const uint32_t b = explorer.flameGraph()->layout().largestNodeNamed("b");
        std::map<std::string, int64_t> callers;
        for (uint32_t child : tree.children(b))
            callers[explorer.shownFrames().frame(tree.node(child).frame).name] = tree.node(child).total;
        QCOMPARE(callers, (std::map<std::string, int64_t>{{"a", 30}, {"c", 20}}));
    }
};

QTEST_MAIN(TestTransformChain)
#include "tst_transform_chain.moc"
