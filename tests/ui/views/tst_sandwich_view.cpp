// The sandwich tab, offscreen: the selected function's callers above it and its callees below, on a small profile
// with known values (tests/ui/test_profiles.h) and on Go's real CPU profile, where the function's total must
// equal what `emberline report --json` prints for it; the same with the Bottom-up toggle on (callers stay
// above); a click on a caller selects it.
#include "engine/analysis/sandwich.h"
#include "engine/model/frame_table.h"
#include "engine/model/sample_filter.h"
#include "tests/ui/test_profiles.h"
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/views/explorer/sandwich_view.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>
#include <map>

using namespace emberline;
using emberline::ui::ProfileExplorer;

namespace {

using Children = std::map<std::string, int64_t>;

// The children of the function's node (the root's only child) in one of the sandwich's trees, by name.
Children childrenOfFunction(const ui::FlameGraphView *view)
{
    const engine::CallTree &tree = *view->layout().tree();
    Children out;
    if (tree.children(0).size() != 1)
        return {{"<the root has not one child>", 0}};
    for (uint32_t child : tree.children(tree.children(0).front()))
        out[view->layout().frames()->frame(tree.node(child).frame).name] += tree.node(child).total;
    return out;
}

std::shared_ptr<const engine::LoadedProfile> smallLoaded()
{
    auto loaded = std::make_shared<engine::LoadedProfile>();
    auto profile = std::make_shared<const engine::Profile>(ui::test::makeSmallProfile(false));
    loaded->path = QStringLiteral("small");
    loaded->frames = std::make_shared<const engine::FrameTable>(*profile);
    loaded->threads = std::make_shared<const engine::ThreadIndex>(*profile);
    loaded->frameNames = engine::frameDisplayNames(*loaded->frames);
    loaded->totals = profile->totals();
    loaded->profile = profile;
    return loaded;
}

// The sandwich of `function` in a profile of name paths (root first).
std::shared_ptr<const engine::Sandwich> sandwichOf(const engine::Profile &profile, const engine::FrameTable &frames,
                                                   const char *function)
{
    const std::vector<int64_t> perStack = engine::valuesPerStack(profile, 0, {});
    auto built = engine::buildSandwich(profile, frames, perStack, frames.findByName(function).front());
    return built ? std::make_shared<const engine::Sandwich>(std::move(*built)) : nullptr;
}

// A path of `depth` frames named prefix0, prefix1, ... (root first).
std::vector<std::string> chain(const std::string &prefix, int depth)
{
    std::vector<std::string> names;
    names.reserve(static_cast<size_t>(depth));
    for (int i = 0; i < depth; ++i)
        names.push_back(prefix + std::to_string(i));
    return names;
}

// The rows of a sandwich pane that the pane cuts: above or below its viewport ("" when every row drawn is whole).
QString cutRows(const ui::FlameGraphView *view)
{
    const double height = view->layout().viewportSize().height();
    for (const ui::FlameRect &rect : view->layout().visibleRects()) {
        if (rect.pixels.top() < -0.5 || (view->layout().maxScrollOffset() == 0 && rect.pixels.bottom() > height + 0.5))
            return QStringLiteral("%1: row %2 at %3..%4 of %5 px")
                .arg(view->objectName())
                .arg(rect.row)
                .arg(rect.pixels.top())
                .arg(rect.pixels.bottom())
                .arg(height);
    }
    return {};
}

bool waitForSandwich(ProfileExplorer *explorer)
{
    return QTest::qWaitFor([&] { return !explorer->isBuildingSandwich(); }, 30000) &&
           explorer->sandwichView()->message().isEmpty();
}

} // namespace

class TestSandwichView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_sandwich_view");
    }

    // If this fails, the sandwich's callers or callees differ from the profile's known calls, bottom-up swaps
    // them, or a click on a caller does not select it.
    void knownCalls()
    {
        ProfileExplorer explorer(smallLoaded());
        explorer.resize(1200, 900);
        explorer.show();
        QVERIFY(test::waitForAnalysis(&explorer));
        explorer.showSandwich();
        QVERIFY(!explorer.sandwichView()->message().isEmpty()); // nothing selected yet
        const auto frameOf = [&](const char *name) { return explorer.shownFrames().findByName(name).front(); };
        explorer.selectFrame(frameOf("b"));
        QVERIFY(waitForSandwich(&explorer));
        ui::SandwichView *sandwich = explorer.sandwichView();
        QCOMPARE(sandwich->sandwich()->total, int64_t(50));
        QCOMPARE(sandwich->sandwich()->self, int64_t(50));
        QCOMPARE(childrenOfFunction(sandwich->callers()), (Children{{"a", 30}, {"c", 20}}));
        QCOMPARE(childrenOfFunction(sandwich->callees()), Children{});
        QVERIFY(sandwich->title().startsWith(QStringLiteral("b — total")));

        explorer.selectFrame(frameOf("c"));
        QVERIFY(waitForSandwich(&explorer));
        QCOMPARE(sandwich->sandwich()->total, int64_t(60));
        QCOMPARE(sandwich->sandwich()->self, int64_t(40));
        QCOMPARE(childrenOfFunction(sandwich->callers()), (Children{{"main", 60}}));
        QCOMPARE(childrenOfFunction(sandwich->callees()), (Children{{"b", 20}}));

        // Bottom-up: the stacks are inverted, the sandwich is not.
        explorer.findChild<QToolButton *>(QStringLiteral("bottomUpToggle"))->click();
        QVERIFY(test::waitForAnalysis(&explorer));
        QVERIFY(waitForSandwich(&explorer));
        QCOMPARE(explorer.shownFrames().frame(explorer.selectedFrame()).name, std::string("c"));
        QCOMPARE(childrenOfFunction(sandwich->callers()), (Children{{"main", 60}}));
        QCOMPARE(childrenOfFunction(sandwich->callees()), (Children{{"b", 20}}));

        // A click on "main" among the callers selects main.
        QTRY_VERIFY(sandwich->callers()->isVisible());
        const ui::FlameGraphView *callers = sandwich->callers();
        const uint32_t mainNode = callers->layout().largestNodeNamed("main");
        bool clicked = false;
        for (const ui::FlameRect &rect : callers->layout().visibleRects()) {
            if (rect.node == mainNode) {
                QTest::mouseClick(callers->viewport(), Qt::LeftButton, {}, rect.pixels.center().toPoint());
                clicked = true;
            }
        }
        QVERIFY(clicked);
        QCOMPARE(explorer.shownFrames().frame(explorer.selectedFrame()).name, std::string("main"));
    }

    // If this fails, a pane of the sandwich scrolls although both fit (their height is split in half whatever
    // their rows), or the callers' pane cuts its outermost row in half at its top when they do not fit.
    void panesShareTheHeightByTheirRows()
    {
        // In a window whose layout gives the view the height there is, below its own minimum if need be (a window
        // at 2× scale on a 1000-pixel screen is shorter than its widgets' minimums).
        QWidget window;
        auto *layout = new QVBoxLayout(&window);
        layout->setSizeConstraint(QLayout::SetNoConstraint);
        layout->setContentsMargins(0, 0, 0, 0);
        auto *inWindow = new ui::SandwichView(&window);
        layout->addWidget(inWindow);
        ui::SandwichView &view = *inWindow;
        window.resize(500, 420);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const auto show = [&](const engine::Profile &profile) {
            auto frames = std::make_shared<const engine::FrameTable>(profile);
            auto sandwich = sandwichOf(profile, *frames, "f");
            QVERIFY(sandwich);
            view.setSandwich(sandwich, frames, engine::frameDisplayNames(*frames), "nanoseconds", false);
            QTest::qWait(20);
        };
        // Eleven callers above f and one callee below it: 13 rows, and 1 + 2 rows, fit in 420 px.
        std::vector<std::string> path = chain("caller", 11);
        path.push_back("f");
        std::vector<std::string> deeper = path;
        deeper.push_back("leaf");
        show(ui::test::profileOfPaths({{path, 10}, {deeper, 5}}));
        const ui::FlameGraphView *callers = view.callers();
        const ui::FlameGraphView *callees = view.callees();
        QCOMPARE(callers->layout().rowCount(), 13u);
        QCOMPARE(callers->layout().maxScrollOffset(), 0.0);
        QCOMPARE(callees->layout().maxScrollOffset(), 0.0);
        QVERIFY2(cutRows(callers).isEmpty(), qPrintable(cutRows(callers)));

        // Forty callers do not fit: the callers' pane scrolls, its top row whole; the callees keep theirs.
        path = chain("caller", 40);
        path.push_back("f");
        deeper = path;
        deeper.push_back("leaf");
        show(ui::test::profileOfPaths({{path, 10}, {deeper, 5}}));
        QVERIFY(callers->layout().maxScrollOffset() > 0);
        QVERIFY2(cutRows(callers).isEmpty(), qPrintable(cutRows(callers)));
        QCOMPARE(callees->layout().maxScrollOffset(), 0.0);
        const double row = callers->layout().rowHeight();
        QCOMPARE(std::fmod(callers->layout().viewportSize().height(), row), 0.0);

        // Taller, the same; and as short as a tab at 2× scale, where the panes' own minimums used to halve it.
        for (int height : {611, 120, 110, 100, 90}) {
            window.resize(500, height);
            QTest::qWait(20);
            qWarning("DBG h %d callers %f callees %f", height, callers->layout().viewportSize().height(),
                     callees->layout().viewportSize().height());
            QVERIFY2(cutRows(callers).isEmpty(), qPrintable(cutRows(callers)));
            QCOMPARE(std::fmod(callers->layout().viewportSize().height(), row), 0.0);
            if (height > 300)
                QCOMPARE(callees->layout().maxScrollOffset(), 0.0);
        }
    }

    // If this fails, the sandwich of a real function disagrees with `report`'s total for it, or its callers'
    // and callees' widths do not add up.
    void realProfile()
    {
        ui::ProfileView view(test::kGoCpu);
        ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const QByteArray json = test::reportOutput({test::kGoCpu, QStringLiteral("--json")});
        std::map<QString, qint64> totals;
        for (const auto &v : QJsonDocument::fromJson(json).object().value(QStringLiteral("functions")).toArray())
            totals[v.toObject().value(QStringLiteral("name")).toString()] =
                v.toObject().value(QStringLiteral("total")).toInteger();
        const std::string name = "main.(*Matrix).Mul";
        QVERIFY(totals.count(QString::fromStdString(name)));
        explorer->showSandwich();
        explorer->selectFrame(explorer->shownFrames().findByName(name).front());
        QVERIFY(waitForSandwich(explorer));
        const engine::Sandwich *sandwich = explorer->sandwichView()->sandwich();
        QCOMPARE(sandwich->total, totals.at(QString::fromStdString(name)));
        QCOMPARE(sandwich->callers.total(), sandwich->total);
        QCOMPARE(sandwich->callees.total(), sandwich->total);
        int64_t callerSum = 0;
        for (const auto &[caller, total] : childrenOfFunction(explorer->sandwichView()->callers()))
            callerSum += total;
        QCOMPARE(callerSum, sandwich->total); // every sample through Mul has a caller
        int64_t calleeSum = 0;
        for (const auto &[callee, total] : childrenOfFunction(explorer->sandwichView()->callees()))
            calleeSum += total;
        QCOMPARE(calleeSum + sandwich->self, sandwich->total);
    }
};

QTEST_MAIN(TestSandwichView)
#include "tst_sandwich_view.moc"
