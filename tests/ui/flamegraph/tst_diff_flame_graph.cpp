// The differential flame graph without a screen: the geometry of its three width choices over one diff tree, the
// colours (red grew, blue shrank, intensity by relative change, neutral unchanged), the tooltip, and the widget's
// toggles and refreshes keeping zoom, selection and search. Painting is checked on an offscreen grab.
#include "engine/compare/comparison.h"
#include "tests/ui/test_profiles.h"
#include "ui/flamegraph/diff_colors.h"
#include "ui/flamegraph/diff_flame_graph_view.h"
#include "ui/flamegraph/flame_graph_layout.h"
#include "ui/flamegraph/flame_graph_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QTest>

using namespace emberline;
using emberline::engine::DiffTree;
using emberline::engine::kNoIndex;
using emberline::ui::FlameGraphLayout;

namespace {

using ui::test::loadedFrom;
using ui::test::profileOfPaths;

// Base: main→work 40, main→idle 10, main→work→hash 10.  New: main→work 60, main→parse 30, main→work→hash 10.
std::shared_ptr<const engine::Comparison> comparison(int64_t newWork = 60)
{
    engine::ComparisonRequest r;
    r.base =
        loadedFrom(profileOfPaths({{{"main", "work"}, 40}, {{"main", "idle"}, 10}, {{"main", "work", "hash"}, 10}}));
    r.next = loadedFrom(
        profileOfPaths({{{"main", "work"}, newWork}, {{"main", "parse"}, 30}, {{"main", "work", "hash"}, 10}}));
    auto c = engine::compareProfiles(r);
    return c ? c.value() : nullptr;
}

uint32_t nodeNamed(const engine::Comparison &c, const std::string &name)
{
    for (uint32_t n = 1; n < c.tree->size(); ++n)
        if (c.frames->frame(c.tree->node(n).frame).name == name)
            return n;
    return kNoIndex;
}

FlameGraphLayout layoutOf(const engine::Comparison &c, DiffTree::Widths widths)
{
    FlameGraphLayout layout;
    layout.setTree(c.tree->widths(widths), c.frames);
    layout.setViewportSize({1000, 400});
    layout.setRowHeight(20);
    return layout;
}

int redness(const QColor &c)
{
    return c.red() - c.blue();
}

} // namespace

class TestDiffFlameGraph : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, widths do not come from the chosen side, or base-only frames are drawn when hidden.
    void geometryPerWidths()
    {
        const auto c = comparison();
        QVERIFY(c);
        const uint32_t idle = nodeNamed(*c, "idle"), parse = nodeNamed(*c, "parse"), work = nodeNamed(*c, "work");
        QVERIFY(idle != kNoIndex && parse != kNoIndex && work != kNoIndex);

        FlameGraphLayout fresh = layoutOf(*c, DiffTree::Widths::New); // main 100: parse 30, work 70
        QCOMPARE(fresh.nodeRect(idle).width(), 0.0);
        QCOMPARE(fresh.nodeRect(parse), QRectF(0, 400 - 3 * 20, 300, 20));
        QCOMPARE(fresh.nodeRect(work).left(), 300.0);
        for (const auto &rect : fresh.visibleRects())
            QVERIFY(rect.node != idle);

        FlameGraphLayout with = layoutOf(*c, DiffTree::Widths::NewWithBaseOnly); // main 110: idle 10, parse, work
        QCOMPARE(with.nodeRect(idle), QRectF(0, 340, 1000.0 * 10 / 110, 20));
        QCOMPARE(with.nodeRect(parse).left(), 1000.0 * 10 / 110);
        QCOMPARE(with.nodeAt({5, 350}), idle);

        FlameGraphLayout base = layoutOf(*c, DiffTree::Widths::Base); // main 60: idle 10, work 50
        QCOMPARE(base.nodeRect(parse).width(), 0.0);
        QCOMPARE(base.nodeRect(work), QRectF(1000.0 * 10 / 60, 340, 1000.0 * 50 / 60, 20));
        // Zooming into a path the tree has no width for shows its nearest ancestor with one.
        fresh.setZoomNode(idle);
        QCOMPARE(fresh.zoomNode(), c->tree->node(idle).parent);
    }

    // If this fails, the colours no longer say grew (red), shrank (blue), unchanged (neutral) with intensity
    // following the relative change.
    void colours()
    {
        QCOMPARE(ui::diffColor(0.0), ui::diffNeutralColor());
        QCOMPARE(ui::diffColor(int64_t(50), int64_t(50)), ui::diffNeutralColor());
        QVERIFY(redness(ui::diffColor(int64_t(40), int64_t(60))) > 0);
        QVERIFY(redness(ui::diffColor(int64_t(60), int64_t(40))) < 0);
        QVERIFY(redness(ui::diffColor(0.8)) > redness(ui::diffColor(0.2)));
        QVERIFY(redness(ui::diffColor(-0.8)) < redness(ui::diffColor(-0.2)));
        QCOMPARE(ui::diffColor(int64_t(0), int64_t(7)), ui::diffColor(1.0));  // new path: full red
        QCOMPARE(ui::diffColor(int64_t(7), int64_t(0)), ui::diffColor(-1.0)); // gone: full blue
        QVERIFY(ui::diffColor(0.01) != ui::diffNeutralColor());               // a small change still shows

        const auto c = comparison();
        const ui::DiffFlameStyle style(c->tree, c->unit);
        QCOMPARE(style.fill(nodeNamed(*c, "hash")), ui::diffNeutralColor()); // 10 → 10
        QCOMPARE(style.fill(nodeNamed(*c, "parse")), ui::diffColor(1.0));
        QCOMPARE(style.fill(nodeNamed(*c, "idle")), ui::diffColor(-1.0));
        QCOMPARE(style.fill(nodeNamed(*c, "work")), ui::diffColor(int64_t(50), int64_t(70)));
    }

    // If this fails, the tooltip does not give base, new, change and change % of the hovered path.
    void toolTip()
    {
        const auto c = comparison();
        ui::DiffFlameGraphView view;
        view.resize(1000, 400);
        view.setDiff(c->tree, c->unit, false, c->frameNames);
        const QString tip = view.flameGraph()->toolTipFor(nodeNamed(*c, "work"));
        QVERIFY2(tip.contains(QLatin1String("Base")) && tip.contains(QLatin1String("50 ns")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("70 ns")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("+20 ns")), qPrintable(tip));
        QVERIFY2(tip.contains(QLatin1String("+40.0%")), qPrintable(tip));
        const QString idle = view.flameGraph()->toolTipFor(nodeNamed(*c, "idle"));
        QVERIFY2(idle.contains(QLatin1String("only in the base")), qPrintable(idle));
    }

    // If this fails, a toggle or a new diff tree (a live refresh) loses the user's zoom, selection or search.
    void togglesAndRefreshKeepState()
    {
        auto c = comparison();
        ui::DiffFlameGraphView view;
        view.resize(1000, 400);
        view.show();
        view.setDiff(c->tree, c->unit, false, c->frameNames);
        ui::FlameGraphView *flame = view.flameGraph();
        QCOMPARE(flame->layout().tree(), c->tree->widths(DiffTree::Widths::New).get());
        const uint32_t work = nodeNamed(*c, "work");
        flame->zoomTo(work);
        flame->setSelectedFrame(c->tree->node(work).frame);
        flame->setSearch(QStringLiteral("hash"));

        // Widths the tree has not made yet are made off the GUI thread; the picture changes when they are drawn.
        QVERIFY(!c->tree->hasWidths(DiffTree::Widths::NewWithBaseOnly));
        QSignalSpy shown(&view, &ui::DiffFlameGraphView::widthsShown);
        QSignalSpy chosen(&view, &ui::DiffFlameGraphView::widthsChanged);
        view.findChild<QCheckBox *>(QStringLiteral("diffBaseOnlyToggle"))->setChecked(true);
        QCOMPARE(chosen.count(), 1);
        QVERIFY(view.isPreparingWidths());
        QCOMPARE(flame->layout().tree(), c->tree->widths(DiffTree::Widths::New).get()); // still the old picture
        QTRY_COMPARE(shown.count(), 1);
        QVERIFY(!view.isPreparingWidths());
        QCOMPARE(flame->layout().tree(), c->tree->widths(DiffTree::Widths::NewWithBaseOnly).get());
        QCOMPARE(flame->layout().zoomNode(), work);
        view.findChild<QComboBox *>(QStringLiteral("diffWidthsCombo"))->setCurrentIndex(1);
        QCOMPARE(view.widths(), DiffTree::Widths::Base);
        QTRY_COMPARE(shown.count(), 2);
        QCOMPARE(flame->layout().tree(), c->tree->widths(DiffTree::Widths::Base).get());
        QCOMPARE(flame->layout().zoomNode(), work);

        // The next comparison: another tree and frame table; zoom path, selected frame and search follow by name.
        const auto next = comparison(90);
        view.setDiff(next->tree, next->unit, true, next->frameNames);
        QTRY_COMPARE(shown.count(), 3);
        QCOMPARE(flame->layout().tree(), next->tree->widths(DiffTree::Widths::Base).get());
        QCOMPARE(next->frames->frame(flame->layout().tree()->node(flame->layout().zoomNode()).frame).name,
                 std::string("work"));
        QCOMPARE(flame->layout().search(), QStringLiteral("hash"));
        QCOMPARE(flame->layout().matchedFrameCount(), size_t(1));
        QVERIFY(flame->layout().selectedFrame() != kNoIndex);
    }

    // If this fails, the paint does not use the change colours (the style is ignored by paintEvent).
    void paintsChangeColours()
    {
        const auto c = comparison();
        ui::DiffFlameGraphView view;
        view.resize(1000, 400);
        view.show();
        view.setDiff(c->tree, c->unit, false, c->frameNames);
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        ui::FlameGraphView *flame = view.flameGraph();
        const QImage image = flame->viewport()->grab().toImage();
        const QRectF parse = flame->layout().nodeRect(nodeNamed(*c, "parse"));
        QVERIFY(parse.width() > 20);
        // A point inside the rectangle, left of its label.
        const QPoint inside(static_cast<int>(parse.left()) + 2, static_cast<int>(parse.bottom()) - 3);
        QCOMPARE(image.pixelColor(inside * image.devicePixelRatio()), ui::diffColor(1.0));
        const QRectF hash = flame->layout().nodeRect(nodeNamed(*c, "hash"));
        const QPoint neutral(static_cast<int>(hash.left()) + 2, static_cast<int>(hash.bottom()) - 3);
        QCOMPARE(image.pixelColor(neutral * image.devicePixelRatio()), ui::diffNeutralColor());
    }
};

QTEST_MAIN(TestDiffFlameGraph)
#include "tst_diff_flame_graph.moc"
