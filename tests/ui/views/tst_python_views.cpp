// Python frames in the explorer, offscreen, on Emberline's own recording of tests/targets/python_split.py (`cpu 2
// thread`: Worker.hot, plain and outer.<locals>.cool split 60/30/10 on a thread started by threading.py; see
// tests/data/pprof/README.md). A Python frame is coloured from a family of its own (blues and teals) with one shade
// per module, and no native frame from that family; its tooltips say it is a Python frame, with its file as imported
// and line and its full path; its label keeps its angle brackets; the Disassembly tab says a Python function has no
// machine code; the Source tab lists the script's lines with Worker.hot's costs on its loop, as `report --list` counts
// them, found through a source root since the recorded path is not on this machine.
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"

#include "engine/model/python_frame.h"
#include "ui/common/source_roots.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/flamegraph/frame_colors.h"
#include "ui/models/disassembly_model.h"
#include "ui/models/source_lines_model.h"
#include "ui/models/top_functions_model.h"
#include "ui/views/explorer/disassembly_view.h"
#include "ui/views/explorer/source_view.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QHelpEvent>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <QToolTip>
#include <QTreeView>

#include <algorithm>
#include <map>

using namespace emberline;
using emberline::ui::SourceLinesModel;

// Named rather than anonymous: the unity build includes this file, and a test class with members of an
// anonymous namespace's types would then warn (-Wsubobject-linkage).
namespace python_views_test {

const QString kRecording = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/python-cpu.pprof");
// The same program recorded with the interpreter's frames kept (`record --python-interpreter-frames`).
const QString kInterpreterRecording = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/python-interpreter-frames.pprof");
const QString kTargets = QStringLiteral(EMBERLINE_SOURCE_DIR "/tests/targets");
const QString kScript = kTargets + QStringLiteral("/python_split.py");
// Where the script was when it was recorded: a path no machine running the tests has.
const std::string kRecordedScript = "/src/pyworkload/python_split.py";

// The script's lines (1-based) of Worker.hot: its def, and the two lines of its loop (the `for` and its body).
struct HotLines {
    int64_t def = 0;
    int64_t loop = 0;
    int64_t body = 0;
    int total = 0; // lines in the file
};
HotLines hotLines()
{
    QFile f(kScript);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(kScript));
    QList<QByteArray> lines = f.readAll().split('\n');
    if (!lines.isEmpty() && lines.back().isEmpty())
        lines.pop_back(); // the newline that ends the last line
    for (int i = 0; i < lines.size(); ++i)
        if (lines[i].trimmed() == "def hot(self, n):")
            return {i + 1, i + 3, i + 4, static_cast<int>(lines.size())};
    qFatal("no Worker.hot in %s", qPrintable(kScript));
}

uint32_t frameNamed(const engine::FrameTable &frames, const std::string &name, bool python)
{
    for (uint32_t f : frames.findByName(name))
        if (engine::isPythonFrame(frames.frame(f)) == python)
            return f;
    return engine::kNoIndex;
}

// The node of `frame` with the largest total.
uint32_t nodeOf(const engine::CallTree &tree, uint32_t frame)
{
    uint32_t best = engine::kNoIndex;
    for (uint32_t n = 1; n < tree.size(); ++n)
        if (tree.frame(n) == frame && (best == engine::kNoIndex || tree.totalOf(n) > tree.totalOf(best)))
            best = n;
    return best;
}

struct Cost {
    qint64 self = 0;
    qint64 total = 0;
    bool operator==(const Cost &o) const { return self == o.self && total == o.total; }
};

// line -> cost of Worker.hot, from `report --list --json` on the recording.
std::map<qint64, Cost> reportLines(Cost *function)
{
    QString error;
    const QByteArray json = test::reportOutput(
        {kRecording, QStringLiteral("--list"), QStringLiteral("^Worker\\.hot$"), QStringLiteral("--json")}, &error);
    const QJsonArray functions = QJsonDocument::fromJson(json).object().value(QStringLiteral("functions")).toArray();
    std::map<qint64, Cost> lines;
    if (functions.size() != 1) {
        qWarning() << "report --list gave" << functions.size() << "functions" << error;
        return lines;
    }
    const QJsonObject fn = functions.first().toObject();
    *function = {fn.value(QStringLiteral("self")).toInteger(), fn.value(QStringLiteral("total")).toInteger()};
    for (const auto &v : fn.value(QStringLiteral("lines")).toArray()) {
        const QJsonObject l = v.toObject();
        lines[l.value(QStringLiteral("line")).toInteger()] = {l.value(QStringLiteral("self")).toInteger(),
                                                              l.value(QStringLiteral("total")).toInteger()};
    }
    return lines;
}

// line -> cost as the source view's model holds it, costly rows only.
std::map<qint64, Cost> modelLines(const SourceLinesModel *model)
{
    std::map<qint64, Cost> lines;
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, 0);
        const Cost cost{index.data(SourceLinesModel::SelfRole).toLongLong(),
                        index.data(SourceLinesModel::TotalRole).toLongLong()};
        if (cost.total != 0)
            lines[index.data(SourceLinesModel::LineNumberRole).toLongLong()] = cost;
    }
    return lines;
}

bool waitForListing(ui::ProfileExplorer *explorer)
{
    return QTest::qWaitFor([&] { return !explorer->isBuildingSource(); }, 30000) &&
           explorer->sourceView()->message().isEmpty();
}

// Whether a hue (degrees) is a blue or a teal of the Python family, with varied()'s shift of a few degrees.
bool inPythonHues(int hue)
{
    return hue >= 179 && hue <= 241;
}

} // namespace python_views_test
using namespace python_views_test;

class TestPythonViews : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    HotLines m_hot;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_python_views");
        ui::SourceRoots().setFolders({});
        m_hot = hotLines();
    }

    // If this fails, a Python function looks like native code (or two of one module look unrelated), or the
    // recording lost its Python frames.
    void pythonFramesHaveAColourFamilyOfTheirOwn()
    {
        ui::ProfileView view(kRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const engine::FrameTable &frames = *explorer->loaded().frames;
        const uint32_t hot = frameNamed(frames, "Worker.hot", true);
        const uint32_t plain = frameNamed(frames, "plain", true);
        const uint32_t cool = frameNamed(frames, "outer.<locals>.cool", true);
        const uint32_t run = frameNamed(frames, "Thread.run", true);
        QVERIFY(hot != engine::kNoIndex && plain != engine::kNoIndex && cool != engine::kNoIndex);
        QVERIFY(run != engine::kNoIndex);

        // One key per module: the script's functions share theirs, threading.py's has its own.
        const QString script = ui::frameColorKey(frames.frame(hot));
        QCOMPARE(script, QStringLiteral("python:python_split"));
        QCOMPARE(ui::frameColorKey(frames.frame(plain)), script);
        QCOMPARE(ui::frameColorKey(frames.frame(cool)), script);
        QCOMPARE(ui::frameColorKey(frames.frame(run)), QStringLiteral("python:threading"));
        QVERIFY(ui::colorForKey(script) != ui::colorForKey(QStringLiteral("python:threading")));

        // Every Python frame's colour is a blue or a teal; no native frame's is.
        ui::FramePalette palette;
        palette.reset(&frames);
        int python = 0;
        int native = 0;
        for (uint32_t f = 0; f < frames.size(); ++f) {
            const engine::Frame &frame = frames.frame(f);
            const QColor color = palette.normal(f);
            if (engine::isPythonFrame(frame)) {
                ++python;
                QVERIFY2(inPythonHues(color.hslHue()), frame.name.c_str());
            } else if (frame.symbolized && color.hslSaturation() > 40) { // not a grey (unsymbolized, pseudo)
                ++native;
                QVERIFY2(color.hslHue() < 177 || color.hslHue() > 243,
                         qPrintable(QStringLiteral("%1: hue %2").arg(frame.name.c_str()).arg(color.hslHue())));
            }
        }
        QVERIFY2(python >= 8, qPrintable(QString::number(python)));
        QVERIFY2(native >= 5, qPrintable(QString::number(native)));
        // Two frames of one module: the same hue, give or take the few degrees that set neighbours apart.
        QVERIFY(std::abs(palette.normal(hot).hslHue() - palette.normal(plain).hslHue()) <= 12);

        // What the flame graph draws: Worker.hot's rectangle is filled with its palette colour.
        ui::FlameGraphView *flame = explorer->flameGraph();
        const uint32_t node = nodeOf(*flame->layout().tree(), hot);
        QVERIFY(node != engine::kNoIndex);
        const QRectF rect = flame->layout().nodeRect(node);
        QVERIFY2(rect.width() > 40, "Worker.hot is too narrow to look at");
        const QImage image = flame->toImage();
        const QPoint inside(static_cast<int>(rect.right()) - 4, static_cast<int>(rect.center().y()));
        QCOMPARE(QColor(image.pixel(inside)).name(), palette.normal(hot).name());
    }

    // If this fails, hovering a Python frame does not say what it is or where its code is, or its label loses its
    // angle brackets to the C++ name shortener.
    void tooltipsSayPythonFileAndLine()
    {
        ui::ProfileView view(kRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const engine::FrameTable &frames = *explorer->loaded().frames;
        ui::FlameGraphView *flame = explorer->flameGraph();
        const engine::CallTree &tree = *flame->layout().tree();
        const uint32_t hot = frameNamed(frames, "Worker.hot", true);
        const engine::Frame &hotFrame = frames.frame(hot);
        QCOMPARE(hotFrame.file, kRecordedScript);
        // The lowest line sampled in the function: its loop, or the line before it.
        QVERIFY2(hotFrame.line > m_hot.def && hotFrame.line <= m_hot.body, qPrintable(QString::number(hotFrame.line)));

        const QString where = QStringLiteral("python_split.py:%1").arg(hotFrame.line);
        const QString tip = flame->toolTipFor(nodeOf(tree, hot));
        QVERIFY2(tip.contains(QStringLiteral("Python frame")), qPrintable(tip));
        QVERIFY2(tip.contains(where), qPrintable(tip));
        QVERIFY2(tip.contains(QString::fromStdString(kRecordedScript)), qPrintable(tip));

        // A module of the standard library is shown as imported, with its full path.
        const engine::Frame &runFrame = frames.frame(frameNamed(frames, "Thread.run", true));
        const QString runTip = flame->toolTipFor(nodeOf(tree, frameNamed(frames, "Thread.run", true)));
        QVERIFY2(runTip.contains(QStringLiteral("threading.py:%1").arg(runFrame.line)), qPrintable(runTip));
        QVERIFY2(runTip.contains(QString::fromStdString(runFrame.file).toHtmlEscaped()), qPrintable(runTip));
        QVERIFY2(QString::fromStdString(runFrame.file).contains(QStringLiteral("/lib/python3.")),
                 runFrame.file.c_str());
        QVERIFY2(runTip.contains(QStringLiteral("threading")), qPrintable(runTip));

        // Native code is not called Python: the interpreter's allocator, called from Worker.hot.
        const uint32_t native = frameNamed(frames, "pymalloc_alloc", false);
        QVERIFY(native != engine::kNoIndex);
        const QString nativeTip = flame->toolTipFor(nodeOf(tree, native));
        QVERIFY2(!nativeTip.contains(QStringLiteral("Python frame")), qPrintable(nativeTip));
        QVERIFY2(nativeTip.contains(QStringLiteral("libpython3.12.so")), qPrintable(nativeTip));

        // Hovering shows that text.
        flame->resetZoom();
        const QRectF rect = flame->layout().nodeRect(nodeOf(tree, hot));
        const QPoint at = rect.center().toPoint();
        QHelpEvent help(QEvent::ToolTip, at, flame->viewport()->mapToGlobal(at));
        QCoreApplication::sendEvent(flame->viewport(), &help);
        QTRY_VERIFY(QToolTip::isVisible());
        QVERIFY2(QToolTip::text().contains(where), qPrintable(QToolTip::text()));
        QToolTip::hideText();

        // The top-functions table's tooltip says the same.
        ui::TopFunctionsModel *top = explorer->findChild<ui::TopFunctionsModel *>();
        QVERIFY(top);
        const int row = top->rowOfFrame(hot);
        QVERIFY(row >= 0);
        const QString rowTip = top->index(row, 0).data(Qt::ToolTipRole).toString();
        QVERIFY2(rowTip.contains(QStringLiteral("Python frame: ") + where), qPrintable(rowTip));

        // Labels keep a Python name whole, short names on or off.
        QVERIFY(flame->shortNames());
        QCOMPARE(flame->labelFor(nodeOf(tree, frameNamed(frames, "outer.<locals>.cool", true))),
                 QStringLiteral("outer.<locals>.cool"));
        QCOMPARE(flame->labelFor(nodeOf(tree, frameNamed(frames, "<module>", true))), QStringLiteral("<module>"));
    }

    // If this fails, a Python function's Disassembly tab shows an error or an empty table instead of saying why
    // there is no machine code.
    void disassemblySaysThereIsNoMachineCode()
    {
        ui::ProfileView view(kRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const uint32_t hot = frameNamed(*explorer->loaded().frames, "Worker.hot", true);
        explorer->selectFrame(hot);
        ui::DisassemblyView *disassembly = explorer->disassemblyView();
        QSignalSpy shown(disassembly, &ui::DisassemblyView::functionShown);
        QSignalSpy failed(disassembly, &ui::DisassemblyView::failed);
        explorer->showDisassembly();
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 10000);
        QCOMPARE(shown.first().first().toString(), QStringLiteral("Worker.hot"));
        QVERIFY(failed.isEmpty());
        const auto *title = disassembly->findChild<QLabel *>(QStringLiteral("disassemblyTitle"));
        const auto *notes = disassembly->findChild<QLabel *>(QStringLiteral("disassemblyNotes"));
        QVERIFY2(title->text().contains(QStringLiteral("is a Python function: it has no machine code")),
                 qPrintable(title->text()));
        QVERIFY2(notes->isVisibleTo(disassembly) && notes->text().contains(QStringLiteral("bytecode")),
                 qPrintable(notes->text()));
        QCOMPARE(disassembly->model()->rowCount(), 0);
        QVERIFY(!disassembly->table()->isVisibleTo(disassembly)); // no empty table of instructions

        // Asked by name alone, the job finds only Python frames of that name and says the same.
        ui::DisassemblyView byName;
        byName.setProfile(explorer->loaded().profile);
        QSignalSpy byNameShown(&byName, &ui::DisassemblyView::functionShown);
        QSignalSpy byNameFailed(&byName, &ui::DisassemblyView::failed);
        byName.showFunction(QStringLiteral("plain"));
        QVERIFY(byNameShown.wait(10000));
        QVERIFY(byNameFailed.isEmpty());
        QVERIFY(byName.findChild<QLabel *>(QStringLiteral("disassemblyTitle"))
                    ->text()
                    .contains(QStringLiteral("is a Python function")));
    }

    // If this fails, the Source tab does not open the .py file found under a source root, or puts Worker.hot's
    // costs on other lines than its loop, or than `report --list` does.
    void sourceTabListsTheScript()
    {
        Cost function;
        const std::map<qint64, Cost> expected = reportLines(&function);
        QVERIFY(!expected.empty());
        ui::SourceRoots().setFolders({kTargets});
        ui::ProfileView view(kRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        explorer->showSource();
        explorer->selectFrame(frameNamed(*explorer->loaded().frames, "Worker.hot", true));
        QVERIFY(waitForListing(explorer));

        ui::SourceView *source = explorer->sourceView();
        SourceLinesModel *model = source->model();
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), m_hot.total); // every line of the file
        QVERIFY2(source->title().startsWith(QStringLiteral("Worker.hot — ") + kScript), qPrintable(source->title()));
        QVERIFY2(source->note().isEmpty(), qPrintable(source->note()));
        QCOMPARE(model->index(static_cast<int>(m_hot.def - 1), SourceLinesModel::CodeColumn).data().toString(),
                 QStringLiteral("    def hot(self, n):"));

        const std::map<qint64, Cost> lines = modelLines(model);
        QVERIFY(lines == expected);
        QCOMPARE(model->listing()->function.total, function.total);
        // The costs are Worker.hot's own lines: its loop carries nearly all of it.
        qint64 loop = 0;
        for (const auto &[line, cost] : lines) {
            QVERIFY2(line > m_hot.def && line <= m_hot.body + 1, qPrintable(QString::number(line)));
            if (line == m_hot.loop || line == m_hot.body)
                loop += cost.self;
        }
        QVERIFY2(loop * 10 >= function.self * 9, qPrintable(QStringLiteral("%1 of %2").arg(loop).arg(function.self)));
        const qint64 current = source->table()->currentIndex().data(SourceLinesModel::LineNumberRole).toLongLong();
        QVERIFY2(current == m_hot.loop || current == m_hot.body, qPrintable(QString::number(current)));
        QVERIFY(model->index(model->rowOfLine(current), 0).data(Qt::BackgroundRole).isValid());
    }

    // If this fails, a recording that kept the interpreter's frames shows them where the view option is off (or
    // hides them where it is on): the explorer's chain starts with the step that hides them, its flame graph has no
    // eval-loop frame under Worker.hot, and showing them (the window's View menu, or the step removed) brings them
    // back under Worker.hot; hiding them again puts the step back. A profile without them gets no step.
    void interpreterFramesToggle()
    {
        QVERIFY(!ui::ProfileExplorer::interpreterFramesShownByDefault());
        ui::ProfileView view(kInterpreterRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        QVERIFY(explorer->loaded().interpreterFrames);
        QCOMPARE(explorer->shape().transforms.size(), size_t(1));
        QVERIFY(explorer->hidesInterpreterFrames());
        const auto evalUnderHot = [&] {
            const engine::FrameTable &frames = explorer->shownFrames();
            const engine::CallTree &tree = *explorer->analysis()->tree;
            const uint32_t hot = frameNamed(frames, "Worker.hot", true);
            const auto evals = frames.findByName("_PyEval_EvalFrameDefault");
            int64_t under = 0;
            for (uint32_t n = 1; n < tree.size(); ++n) {
                if (tree.frame(n) != hot)
                    continue;
                // Since 3.11 one eval call runs Python-to-Python calls too: an eval frame anywhere rootward.
                for (uint32_t up = tree.parent(n); up != 0; up = tree.parent(up)) {
                    if (std::find(evals.begin(), evals.end(), tree.frame(up)) != evals.end()) {
                        under += tree.totalOf(n);
                        break;
                    }
                }
            }
            return under;
        };
        const int64_t all = explorer->analysis()->tree->total();
        QVERIFY(all > 0);
        QVERIFY2(evalUnderHot() * 100 <= all * 2, qPrintable(QString::number(evalUnderHot())));

        explorer->setInterpreterFramesShown(true);
        QVERIFY(test::waitForAnalysis(explorer));
        QVERIFY(explorer->shape().transforms.empty());
        QVERIFY2(evalUnderHot() * 100 >= all * 30, qPrintable(QString::number(evalUnderHot())));

        explorer->setInterpreterFramesShown(false);
        QVERIFY(test::waitForAnalysis(explorer));
        QVERIFY(explorer->hidesInterpreterFrames());

        ui::ProfileView plain(kRecording);
        ui::ProfileExplorer *other = test::openExplorer(plain);
        QVERIFY(other);
        QVERIFY(!other->loaded().interpreterFrames);
        other->setInterpreterFramesShown(false);
        QVERIFY(other->shape().transforms.empty());
    }

    // If this fails, a Python file that is not where it was recorded gives no word on where it was looked for.
    void sourceTabWithoutTheFile()
    {
        ui::SourceRoots().setFolders({});
        ui::ProfileView view(kRecording);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        explorer->showSource();
        explorer->selectFrame(frameNamed(*explorer->loaded().frames, "Worker.hot", true));
        QVERIFY(waitForListing(explorer));
        ui::SourceView *source = explorer->sourceView();
        QVERIFY2(source->note().contains(QStringLiteral("not found at ") + QString::fromStdString(kRecordedScript)),
                 qPrintable(source->note()));
        QVERIFY(source->model()->rowCount() >= 2); // the costly lines alone
        QVERIFY(source->model()->rowCount() <= 4);
    }
};

QTEST_MAIN(TestPythonViews)
#include "tst_python_views.moc"
