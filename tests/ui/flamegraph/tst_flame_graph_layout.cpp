#include "engine/analysis/function_table.h"
#include "engine/model/sample_filter.h"
#include "engine/pprof/pprof_reader.h"
#include "tests/ui/test_profiles.h"
#include "ui/flamegraph/flame_graph_layout.h"
#include "ui/flamegraph/frame_colors.h"

#include <QTest>

using namespace emberline;
using emberline::engine::kNoIndex;
using emberline::ui::FlameGraphLayout;
using emberline::ui::FlameRect;

// Named rather than anonymous: the unity build includes this file, and a test class with members of an
// anonymous namespace's types would then warn (-Wsubobject-linkage).
namespace flame_graph_layout_test {

struct Built {
    std::shared_ptr<const engine::Profile> profile;
    std::shared_ptr<const engine::FrameTable> frames;
    std::shared_ptr<const engine::CallTree> tree;
    std::vector<int64_t> perStack;
};

Built build(engine::Profile profile, int sampleType)
{
    Built b;
    b.profile = std::make_shared<const engine::Profile>(std::move(profile));
    b.frames = std::make_shared<const engine::FrameTable>(*b.profile);
    b.perStack = engine::valuesPerStack(*b.profile, sampleType, {});
    b.tree = std::make_shared<const engine::CallTree>(*engine::CallTree::build(*b.profile, *b.frames, b.perStack));
    return b;
}

uint32_t child(const engine::CallTree &tree, const engine::FrameTable &frames, uint32_t parent, const char *name)
{
    for (uint32_t c : tree.children(parent)) {
        if (frames.frame(tree.node(c).frame).name == name)
            return c;
    }
    return kNoIndex;
}

} // namespace flame_graph_layout_test
using namespace flame_graph_layout_test;

// Geometry of the flame graph without a screen: every number a user sees as a width, a position or a share.
class TestFlameGraphLayout : public QObject {
    Q_OBJECT

    Built m_small;
    uint32_t m_main = 0, m_a = 0, m_ab = 0, m_c = 0, m_cb = 0;
    FlameGraphLayout smallLayout(QSizeF size = {1000, 200})
    {
        FlameGraphLayout layout;
        layout.setTree(m_small.tree, m_small.frames);
        layout.setRowHeight(20);
        layout.setViewportSize(size);
        return layout;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_small = build(ui::test::makeSmallProfile(), 0);
        const auto &t = *m_small.tree;
        const auto &f = *m_small.frames;
        m_main = child(t, f, 0, "main");
        m_a = child(t, f, m_main, "a");
        m_c = child(t, f, m_main, "c");
        m_ab = child(t, f, m_a, "b");
        m_cb = child(t, f, m_c, "b");
        QVERIFY(m_ab != kNoIndex && m_cb != kNoIndex);
        QCOMPARE(t.total(), 100);
    }

    // Widths are total cost and children sit side by side in name order; if this fails, the flame graph
    // misrepresents where time goes.
    void fractionsOfSmallTree()
    {
        FlameGraphLayout layout = smallLayout();
        QCOMPARE(layout.fractionX(m_main), 0.0);
        QCOMPARE(layout.fractionWidth(m_main), 1.0);
        QCOMPARE(layout.fractionX(m_a), 0.0);
        QCOMPARE(layout.fractionWidth(m_a), 0.4);
        QCOMPARE(layout.fractionX(m_c), 0.4);
        QCOMPARE(layout.fractionWidth(m_c), 0.6);
        QCOMPARE(layout.fractionX(m_ab), 0.0);
        QCOMPARE(layout.fractionWidth(m_ab), 0.3);
        QCOMPARE(layout.fractionX(m_cb), 0.4);
        QCOMPARE(layout.fractionWidth(m_cb), 0.2);
        QCOMPARE(layout.rowCount(), 4u);
    }

    // Root at the bottom: row 0 is the last row of the viewport. If this fails the graph is drawn upside down
    // or off screen.
    void pixelsRootAtBottom()
    {
        FlameGraphLayout layout = smallLayout();
        QCOMPARE(layout.nodeRect(0), QRectF(0, 180, 1000, 20));
        QCOMPARE(layout.nodeRect(m_main), QRectF(0, 160, 1000, 20));
        QCOMPARE(layout.nodeRect(m_c), QRectF(400, 140, 600, 20));
        QCOMPARE(layout.nodeRect(m_cb), QRectF(400, 120, 200, 20));
        const std::vector<FlameRect> rects = layout.visibleRects();
        QCOMPARE(rects.size(), 6u);
        for (const FlameRect &r : rects)
            QCOMPARE(r.pixels, layout.nodeRect(r.node));
    }

    // Icicle: the root is the top row. If this fails the toggle does nothing or draws outside the view.
    void pixelsIcicle()
    {
        FlameGraphLayout layout = smallLayout();
        layout.setOrientation(FlameGraphLayout::Orientation::RootAtTop);
        QCOMPARE(layout.nodeRect(0), QRectF(0, 0, 1000, 20));
        QCOMPARE(layout.nodeRect(m_cb), QRectF(400, 60, 200, 20));
        QCOMPARE(layout.nodeAt(QPointF(450, 65)), m_cb);
        QCOMPARE(layout.nodeAt(QPointF(450, 5)), 0u);
    }

    // Hit testing must return the rectangle under the pointer and nothing on empty space; otherwise clicks
    // zoom into the wrong frame and tooltips lie.
    void hitTest()
    {
        FlameGraphLayout layout = smallLayout();
        QCOMPARE(layout.nodeAt(QPointF(500, 130)), m_cb);     // row 3, value 50 in [40, 60)
        QCOMPARE(layout.nodeAt(QPointF(100, 130)), m_ab);     // row 3, value 10 in [0, 30)
        QCOMPARE(layout.nodeAt(QPointF(350, 130)), kNoIndex); // a's self time: nothing above it
        QCOMPARE(layout.nodeAt(QPointF(700, 130)), kNoIndex); // c's self time
        QCOMPARE(layout.nodeAt(QPointF(999, 145)), m_c);
        QCOMPARE(layout.nodeAt(QPointF(10, 199)), 0u);
        QCOMPARE(layout.nodeAt(QPointF(500, 50)), kNoIndex); // above the deepest row
        QCOMPARE(layout.nodeAt(QPointF(-1, 190)), kNoIndex);
        QCOMPARE(layout.nodeAt(QPointF(1000, 190)), kNoIndex);
    }

    // Zooming makes the node full width, keeps its ancestors full width beneath it, hides its siblings and
    // rescales its callees. If this fails, zooming shows the wrong part of the profile.
    void zoom()
    {
        FlameGraphLayout layout = smallLayout();
        layout.setZoomNode(m_c);
        QCOMPARE(layout.zoomNode(), m_c);
        QCOMPARE(layout.breadcrumb(), (std::vector<uint32_t>{0, m_main, m_c}));
        QCOMPARE(layout.fractionWidth(m_c), 1.0);
        QCOMPARE(layout.fractionWidth(m_main), 1.0);
        QCOMPARE(layout.fractionX(m_cb), 0.0);
        QCOMPARE(layout.fractionWidth(m_cb), 20.0 / 60.0);
        QVERIFY(!layout.isShown(m_a));
        QVERIFY(!layout.isShown(m_ab));
        QCOMPARE(layout.nodeRect(m_a), QRectF());
        QCOMPARE(layout.visibleRects().size(), 4u); // root, main, c, c→b
        QCOMPARE(layout.nodeAt(QPointF(10, 130)), m_cb);
        QCOMPARE(layout.nodeAt(QPointF(900, 170)), m_main);
        QCOMPARE(layout.rowCount(), 4u);
        // The same call path in a rebuilt tree (another sample type) is found again.
        const std::vector<uint32_t> path = m_small.tree->pathTo(m_cb);
        QCOMPARE(layout.findByFramePath(path), m_cb);
        layout.setZoomNode(12345);
        QCOMPARE(layout.zoomNode(), 0u);
    }

    // Rectangles one pixel wide or narrower are neither listed nor hit; rows outside the viewport are not
    // listed. If this fails, a paint of a big profile visits millions of invisible frames.
    void culling()
    {
        FlameGraphLayout narrow = smallLayout({4, 200});
        // c→b is 0.2 × 4 = 0.8 px; a→b is 1.2 px.
        std::vector<uint32_t> nodes;
        for (const FlameRect &r : narrow.visibleRects())
            nodes.push_back(r.node);
        QCOMPARE(nodes, (std::vector<uint32_t>{0, m_main, m_a, m_ab, m_c}));
        QCOMPARE(narrow.nodeAt(QPointF(2.0, 130)), kNoIndex);

        FlameGraphLayout shortView = smallLayout({1000, 50});
        QCOMPARE(shortView.maxScrollOffset(), 30.0);
        QCOMPARE(shortView.visibleRects().size(), 4u); // rows 0..2; row 3 is above the top edge
        shortView.setScrollOffset(1000);
        QCOMPARE(shortView.scrollOffset(), 30.0);
        nodes.clear();
        for (const FlameRect &r : shortView.visibleRects())
            nodes.push_back(r.node);
        QCOMPARE(nodes, (std::vector<uint32_t>{m_main, m_a, m_ab, m_c, m_cb})); // root scrolled off the bottom
        QCOMPARE(shortView.nodeAt(QPointF(500, 5)), m_cb);
    }

    // The search share counts each sample once: "a" matches main and a, but main already holds every
    // sample. If this fails, the share shown next to the search box can exceed 100%.
    void searchShare()
    {
        FlameGraphLayout layout = smallLayout();
        layout.setSearch(QStringLiteral("b"));
        QCOMPARE(layout.matchedFrameCount(), 1u);
        QCOMPARE(layout.matchedTotal(), 50);
        QCOMPARE(layout.matchedShare(), 0.5);
        QVERIFY(layout.isMatch(m_ab) && layout.isMatch(m_cb) && !layout.isMatch(m_c));
        layout.setSearch(QStringLiteral("A"));
        QCOMPARE(layout.matchedFrameCount(), 2u);
        QCOMPARE(layout.matchedTotal(), 100);
        layout.setSearch(QStringLiteral("c"));
        QCOMPARE(layout.matchedTotal(), 60);
        layout.setSearch(QStringLiteral("zzz"));
        QCOMPARE(layout.matchedFrameCount(), 0u);
        QCOMPARE(layout.matchedShare(), 0.0);
        layout.setSearch(QString());
        QVERIFY(!layout.hasSearch());
        QVERIFY(!layout.isMatch(m_ab));
    }

    // On a real Go CPU profile: rectangles nest inside their parents, stay in the viewport, are wider than a
    // pixel, and hit-testing each rectangle's centre finds it. If this fails, real profiles draw overlapping
    // or misplaced frames.
    void realProfileGeometry()
    {
        auto read = engine::readPprofFile(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().message.c_str());
        Built real = build(std::move(read).value(), 1);
        FlameGraphLayout layout;
        layout.setTree(real.tree, real.frames);
        layout.setRowHeight(18);
        layout.setViewportSize({1600, 900});
        const std::vector<FlameRect> rects = layout.visibleRects();
        QVERIFY(rects.size() > 20);
        std::unordered_map<uint32_t, const FlameRect *> byNode;
        for (const FlameRect &r : rects)
            byNode[r.node] = &r;
        for (const FlameRect &r : rects) {
            QVERIFY(r.pixels.width() > 1.0);
            QVERIFY(r.pixels.left() >= 0 && r.pixels.right() <= 1600.0 + 1e-6);
            QVERIFY(r.pixels.bottom() > 0 && r.pixels.top() < 900);
            if (r.node != 0) {
                const uint32_t parent = real.tree->node(r.node).parent;
                if (auto it = byNode.find(parent); it != byNode.end()) {
                    QVERIFY(r.x >= it->second->x - 1e-12);
                    QVERIFY(r.x + r.width <= it->second->x + it->second->width + 1e-12);
                }
            }
            QCOMPARE(layout.nodeAt(r.pixels.center()), r.node);
        }
        const uint32_t fib = layout.largestNodeNamed("main.fibRec");
        QVERIFY(fib != kNoIndex);
        layout.setZoomNode(fib);
        QCOMPARE(layout.nodeRect(fib).width(), 1600.0);
        QCOMPARE(layout.nodeAt(QPointF(800, layout.rowTop(real.tree->node(fib).depth) + 9)), fib);
    }

    // The search share equals the function's total from FunctionTable (which also counts each sample once):
    // two independent computations of "share of samples passing through main.fibRec".
    void realProfileSearchShare()
    {
        auto read = engine::readPprofFile(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");
        QVERIFY(read.ok());
        Built real = build(std::move(read).value(), 1);
        auto table = engine::FunctionTable::build(*real.profile, *real.frames, real.perStack);
        QVERIFY(table);
        FlameGraphLayout layout;
        layout.setTree(real.tree, real.frames);
        int checked = 0;
        for (const char *name : {"main.fibRec", "runtime.mallocgc", "main.main"}) {
            const auto ids = real.frames->findByName(name);
            if (ids.empty())
                continue;
            int64_t expected = 0;
            for (const auto &row : table->rows()) {
                if (row.frame == ids.front())
                    expected = row.total;
            }
            size_t containing = 0;
            for (uint32_t f = 0; f < real.frames->size(); ++f)
                containing += QString::fromStdString(real.frames->frame(f).name).contains(QLatin1String(name));
            if (containing != 1)
                continue; // the search would also match other frames
            layout.setSearch(QLatin1String(name));
            QCOMPARE(layout.matchedTotal(), expected);
            QVERIFY(expected > 0);
            ++checked;
        }
        QVERIFY(checked > 0);
        layout.setSearch(QStringLiteral("main."));
        QVERIFY(layout.matchedShare() > 0.5 && layout.matchedShare() <= 1.0);
    }

    // Colours depend only on the key: Go package from the name, module for native code. If this fails,
    // colours flicker between refreshes or every frame of a package looks different.
    void colorKeys()
    {
        engine::Frame go{"github.com/acme/x.(*T).Run", "/src/x/t.go", 1, "server", true};
        QCOMPARE(ui::frameColorKey(go), QStringLiteral("github.com/acme/x"));
        engine::Frame node{"handler", "/app/node_modules/@scope/pkg/lib/a.js", 1, "", true};
        QCOMPARE(ui::frameColorKey(node), QStringLiteral("@scope/pkg"));
        engine::Frame internal{"listOnTimeout", "node:internal/timers", 1, "", true};
        QCOMPARE(ui::frameColorKey(internal), QStringLiteral("node:internal"));
        engine::Frame native{"std::vector<int>::push_back", "/usr/include/c++/12/bits/stl_vector.h", 1, "libfoo.so.1",
                             true};
        QCOMPARE(ui::frameColorKey(native), QStringLiteral("libfoo.so.1"));
        QCOMPARE(ui::colorForKey(QStringLiteral("runtime")), ui::colorForKey(QStringLiteral("runtime")));
        QVERIFY(ui::colorForKey(QStringLiteral("runtime")) != ui::colorForKey(QStringLiteral("main")));
    }

    // Python frames are coloured by their top package, from hues no other key gets. If this fails, a Python
    // function can look like native code, or the modules of one package look unrelated.
    void pythonColorFamily()
    {
        const engine::Frame encoder{"JSONEncoder.encode", "/usr/lib/python3.12/json/encoder.py", 258, "", true};
        const engine::Frame dumps{"dumps", "/usr/lib/python3.12/json/__init__.py", 183, "", true};
        const engine::Frame script{"Worker.hot", "/home/me/split.py", 18, "", true};
        const engine::Frame frozen{"_find_and_load", "<frozen importlib._bootstrap>", 1349, "", true};
        QCOMPARE(ui::frameColorKey(encoder), QStringLiteral("python:json"));
        QCOMPARE(ui::frameColorKey(dumps), QStringLiteral("python:json"));
        QCOMPARE(ui::frameColorKey(script), QStringLiteral("python:split"));
        QCOMPARE(ui::frameColorKey(frozen), QStringLiteral("python:importlib"));
        // Native code built from a .py file (Cython) lies in a mapping: coloured by its module.
        const engine::Frame cython{"__pyx_f_fast", "/src/fast.py", 3, "fast.cpython-312.so", true};
        QCOMPARE(ui::frameColorKey(cython), QStringLiteral("fast.cpython-312.so"));
        QVERIFY(ui::isPythonColorKey(ui::frameColorKey(encoder)));
        QVERIFY(!ui::isPythonColorKey(ui::frameColorKey(cython)));
        for (int i = 0; i < 3000; ++i) {
            const int python = ui::colorForKey(QStringLiteral("python:module%1").arg(i)).hslHue();
            QVERIFY2(python >= 185 && python < 235, qPrintable(QString::number(python)));
            const int native = ui::colorForKey(QStringLiteral("libmodule%1.so").arg(i)).hslHue();
            QVERIFY2(native < 170 || native >= 250, qPrintable(QString::number(native)));
        }
    }
};

QTEST_GUILESS_MAIN(TestFlameGraphLayout)
#include "tst_flame_graph_layout.moc"
