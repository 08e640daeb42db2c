// The disassembly view on Emberline's own recording of tests/targets/hot_loop (one tight loop by construction):
// the job runs off the GUI thread, the table lists spin's instructions with its source lines as separator rows,
// and the hottest row (scrolled into view) is one of the loop's instructions. Run under a real display with
// EMBERLINE_SHOW_MS set, the view stays shown that long (for screenshots).

#include "engine/annotate/debuginfod_client.h"
#include "engine/import/open_profile.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/models/disassembly_model.h"
#include "ui/views/explorer/disassembly_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");
const QString kHotLoop = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/hot_loop");

// [first, last]: from the backward branch's target to the branch.
std::pair<uint64_t, uint64_t> innermostLoop(const std::vector<engine::AnnotatedInstruction> &insns)
{
    static const QRegularExpression jump(QStringLiteral("^j\\w+ 0x([0-9a-f]+)$"));
    std::pair<uint64_t, uint64_t> loop{0, 0};
    for (const auto &insn : insns) {
        const auto m = jump.match(QString::fromStdString(insn.text));
        if (!m.hasMatch())
            continue;
        const uint64_t target = m.captured(1).toULongLong(nullptr, 16);
        if (target >= insns.front().address && target < insn.address &&
            (loop.second == 0 || insn.address - target < loop.second - loop.first))
            loop = {target, insn.address};
    }
    return loop;
}

} // namespace

class TestDisassemblyView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, the view shows the wrong instructions or costs, blocks on the work, or does not bring the
    // hottest instruction (in the loop) into view.
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QProcess rec;
        rec.start(kEmberline,
                  {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("499"),
                   QStringLiteral("--output"), m_dir.path(), QStringLiteral("--"), kHotLoop, QStringLiteral("2")});
        QVERIFY(rec.waitForFinished(60000));
        if (rec.exitCode() != 0) {
            if (qEnvironmentVariable("CI") == QLatin1String("true"))
                QFAIL(
                    qPrintable(QStringLiteral("emberline record failed under CI=true: ") + rec.readAllStandardError()));
            QSKIP("cannot profile here");
        }
        m_recording = m_dir.filePath(QStringLiteral("profile.pprof"));
    }

    void hottestRowIsInTheLoop()
    {
        auto loaded = engine::readProfileFile(m_recording.toStdString());
        QVERIFY2(loaded.ok(), loaded ? "" : loaded.error().message.c_str());
        auto profile = std::make_shared<const engine::Profile>(std::move(loaded).value());

        ui::DisassemblyView view;
        QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::Fatal);
        view.setSourceRoots({EMBERLINE_SOURCE_DIR});
        view.setProfile(profile, profile->sampleTypeIndex("cpu-samples"));
        QSignalSpy shown(&view, &ui::DisassemblyView::functionShown);
        QSignalSpy failed(&view, &ui::DisassemblyView::failed);
        view.resize(1100, 720);
        view.show();
        view.showFunction(QStringLiteral("spin"));
        // The work is off the GUI thread: the view answers while it runs.
        QVERIFY(view.findChild<QLabel *>(QStringLiteral("disassemblyTitle"))
                    ->text()
                    .contains(QLatin1String("Disassembling")));
        QVERIFY2(shown.wait(30000), failed.isEmpty() ? "no answer" : qPrintable(failed.first().first().toString()));

        const ui::DisassemblyModel *model = view.model();
        const ui::DisassemblyResult *result = model->result();
        QVERIFY(result != nullptr);
        QVERIFY2(result->function.error.empty(), result->function.error.c_str());
        QVERIFY2(result->function.self >= 200, qPrintable(QString::number(result->function.self)));
        const auto loop = innermostLoop(result->function.instructions);
        QVERIFY(loop.second != 0);
        const int hottest = model->hottestRow();
        QVERIFY(hottest >= 0);
        const uint64_t address = model->index(hottest, 0).data(ui::DisassemblyModel::AddressRole).toULongLong();
        QVERIFY2(address >= loop.first && address <= loop.second,
                 qPrintable(QStringLiteral("hottest %1 outside the loop %2..%3")
                                .arg(address, 0, 16)
                                .arg(loop.first, 0, 16)
                                .arg(loop.second, 0, 16)));
        auto *table = view.findChild<QTableView *>(QStringLiteral("disassemblyTable"));
        const int y = table->rowViewportPosition(hottest);
        QVERIFY2(y >= 0 && y < table->viewport()->height(), "the hottest row is not in view");
        QVERIFY(model->index(hottest, ui::DisassemblyModel::SelfColumn).data(Qt::BackgroundRole).isValid());

        // Source rows separate the lines, with the loop's own code.
        bool loopLine = false;
        int sourceRows = 0;
        for (int row = 0; row < model->rowCount(); ++row) {
            if (!model->isSourceRow(row))
                continue;
            ++sourceRows;
            QCOMPARE(table->columnSpan(row, 0), int(ui::DisassemblyModel::ColumnCount));
            loopLine |= model->index(row, 0).data().toString().contains(QLatin1String("// HOT_LOOP"));
        }
        QVERIFY(sourceRows >= 3);
        QVERIFY(loopLine);

        if (const int ms = qEnvironmentVariableIntValue("EMBERLINE_SHOW_MS"); ms > 0)
            QTest::qWait(ms);
    }

    // The explorer's Disassembly tab (a frame's "Show Disassembly") shows the selected function of the opened
    // recording, with its loop. If this fails, the view exists but the window never shows it.
    void explorerTabShowsTheSelectedFunction()
    {
        ui::ProfileView profileView(m_recording);
        ui::ProfileExplorer *explorer = test::openExplorer(profileView);
        QVERIFY(explorer);
        const std::vector<uint32_t> frames = explorer->loaded().frames->findByName("spin");
        QVERIFY(!frames.empty());
        explorer->selectFrame(frames.front());
        ui::DisassemblyView *view = explorer->disassemblyView();
        QSignalSpy shown(view, &ui::DisassemblyView::functionShown);
        explorer->showDisassembly();
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty(), 30000);
        QCOMPARE(shown.first().first().toString(), QStringLiteral("spin"));
        const ui::DisassemblyResult *result = view->model()->result();
        QVERIFY(result != nullptr);
        QVERIFY2(result->function.error.empty(), result->function.error.c_str());
        QVERIFY(innermostLoop(result->function.instructions).second != 0);
        QVERIFY(result->function.self > 0);
    }

    // If this fails, a debuginfod download (seconds, or a timeout) could freeze the window.
    void debuginfodIsNeverAskedOnTheGuiThread()
    {
        qputenv("DEBUGINFOD_URLS", "http://127.0.0.1:9");
        engine::DebuginfodClient client;
        auto found = client.findExecutable("c579b694cb4bd59c530392c027ac3cfe1c914ab1");
        qunsetenv("DEBUGINFOD_URLS");
        QVERIFY(!found.ok());
        QVERIFY2(QString::fromStdString(found.error().message).contains(QLatin1String("GUI thread")),
                 found.error().message.c_str());
    }

    // If this fails, a function without addresses in the profile gets an empty table instead of a reason.
    void unknownFunctionIsSaidSo()
    {
        auto profile = std::make_shared<const engine::Profile>();
        ui::DisassemblyView view;
        view.setProfile(profile);
        QSignalSpy failed(&view, &ui::DisassemblyView::failed);
        view.showFunction(QStringLiteral("spin"));
        QVERIFY(failed.wait(10000));
        QVERIFY(!view.findChild<QLabel *>(QStringLiteral("disassemblyNotes"))->text().isEmpty());
        QCOMPARE(view.model()->rowCount(), 0);
    }

private:
    QTemporaryDir m_dir;
    QString m_recording;
};

QTEST_MAIN(TestDisassemblyView)
#include "tst_disassembly_view.moc"
