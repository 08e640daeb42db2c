// The Health tab offscreen: the model under QAbstractItemModelTester, the rows a user reads (module, cause,
// symbols, fix), the faults as lines, and the tab of a LiveSessionView fed a flush that carries health.
#include "engine/health/unwind_health.h"
#include "ui/models/unwind_health_model.h"
#include "ui/views/live/health_view.h"
#include "ui/views/live/session_status_bar.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QLabel>
#include <QTableView>
#include <QTest>

using namespace emberline;
using namespace emberline::engine;
using namespace emberline::ui;

namespace {

std::shared_ptr<const UnwindHealth> sampleHealth()
{
    UnwindCounters c;
    c.samples = 200;
    c.stackBytes = 4096;
    c.modules.resize(5);
    c.byModule.resize(5);
    c.modules[3].path = "/work/bin/deep_stack";
    c.modules[3].hasUnwindTable = true;
    c.modules[4].path = "/usr/lib/x86_64-linux-gnu/libstripped.so.1";
    c.modules[4].hasUnwindTable = true;
    c.byModule[3].samples = 190;
    c.byModule[3].incomplete = 180;
    c.byModule[3].causes[size_t(UnwindCause::StackCopyTooSmall)] = 180;
    c.byModule[3].neededStackBytes = 40000;
    c.byModule[4].samples = 10;
    c.incomplete = 180;
    std::vector<ModuleSymbols> symbols(5);
    symbols[3] = {SymbolStatus::FullDwarf, SymbolSource::InFile};
    symbols[4] = {SymbolStatus::SymbolTable, SymbolSource::InFile};
    return std::make_shared<const UnwindHealth>(buildUnwindHealth(
        c, symbols,
        {"perf map /tmp/perf-42.map: 7 malformed line(s) skipped", "kernel frames stay unnamed: kptr_restrict"},
        UnwindHealthContext{}));
}

QString cell(const QAbstractItemModel *model, int row, int column)
{
    return model->index(row, column).data().toString();
}

// Counters of a session whose stacks all went through one program, /work/bin/app (module 3 of `modules`, the
// first three being the kernel's and the unknowns' places), `incomplete` of them cut short.
UnwindCounters appCounters(uint64_t samples, uint64_t incomplete, size_t modules = 4)
{
    UnwindCounters c;
    c.samples = samples;
    c.incomplete = incomplete;
    c.stackBytes = 32768;
    c.modules.resize(modules);
    c.byModule.resize(modules);
    c.modules[3].path = "/work/bin/app";
    c.byModule[3].samples = samples;
    c.byModule[3].incomplete = incomplete;
    return c;
}

} // namespace

class TestHealthView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // If this fails, the model breaks Qt's rules (the tester warns and fails) or the rows lose their meaning.
    void modelRows()
    {
        UnwindHealthModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        model.setHealth(sampleHealth());
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(UnwindHealthModel::ColumnCount));
        QCOMPARE(cell(&model, 0, UnwindHealthModel::ModuleColumn), QStringLiteral("deep_stack"));
        QCOMPARE(cell(&model, 0, UnwindHealthModel::CauseColumn), QStringLiteral("stack copy too small"));
        QVERIFY(cell(&model, 0, UnwindHealthModel::IncompleteColumn).startsWith(QStringLiteral("180 (100.0%")));
        QVERIFY(cell(&model, 0, UnwindHealthModel::FixColumn).contains(QStringLiteral("--stack-size 40960")));
        QCOMPARE(cell(&model, 1, UnwindHealthModel::SymbolsColumn), QStringLiteral("symbol table only, in the file"));
        QVERIFY(cell(&model, 1, UnwindHealthModel::FixColumn).contains(QStringLiteral("-dbgsym")));
        QVERIFY(model.index(0, 0).data(Qt::ToolTipRole).toString().contains(QStringLiteral("/work/bin/deep_stack")));
        QCOMPARE(model.index(0, 0).data(UnwindHealthModel::SeverityRole).toInt(), 2);
        QCOMPARE(model.index(1, 0).data(UnwindHealthModel::SeverityRole).toInt(), 1);
        model.setHealth(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    // What a user sees: the totals, the table, and each fault as a line of its own; nothing before a flush.
    void viewShowsSummaryAndFaults()
    {
        HealthView view;
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto *summary = view.findChild<QLabel *>(QStringLiteral("healthSummary"));
        auto *faults = view.findChild<QLabel *>(QStringLiteral("healthFaults"));
        auto *table = view.findChild<QTableView *>(QStringLiteral("healthTable"));
        QVERIFY(summary && faults && table);
        QVERIFY(summary->text().contains(QStringLiteral("first flush")));
        QVERIFY(!faults->isVisible());
        QVERIFY(!view.hasProblems());

        view.setHealth(sampleHealth());
        QVERIFY2(summary->text().contains(QStringLiteral("180 of 200 stacks incomplete (90.00%)")),
                 qPrintable(summary->text()));
        QVERIFY(summary->text().contains(QStringLiteral("4096 bytes")));
        QVERIFY(faults->isVisible());
        const QStringList lines = faults->text().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[0].contains(QStringLiteral("7 malformed line(s)")));
        QVERIFY(lines[1].contains(QStringLiteral("kptr_restrict")));
        QCOMPARE(table->model()->rowCount(), 2);
        QVERIFY(view.hasProblems());
        // The fix column is the last and stretches: its text is not cut to a sliver.
        QVERIFY(table->columnWidth(UnwindHealthModel::FixColumn) > 200);
    }

    // The status bar's incomplete share is of the CPU samples; the health's counts take in the stacks of off-CPU
    // waits too. If this fails, the tab and the status bar give two different shares of "incomplete stacks" (0.21%
    // and 0.13%) with nothing to tell them apart, or the tab is marked by the share the status bar does not show.
    void sameIncompleteShareAsTheStatusBar()
    {
        const UnwindCounters c = appCounters(20000, 42); // 10000 CPU samples and 10000 stacks of off-CPU waits
        engine::SessionStats stats;
        stats.samples = 10000;
        stats.incomplete = 13;
        SessionStatusBar bar;
        bar.setStats(stats);
        const QString shown = bar.findChild<QLabel *>(QStringLiteral("incompleteLabel"))->text();
        QCOMPARE(shown, QStringLiteral("0.13% incomplete"));

        HealthView view;
        view.setHealth(std::make_shared<const UnwindHealth>(buildUnwindHealth(c, {}, {}, {})));
        view.setCpuSamples(stats.incomplete, stats.samples);
        const QString summary = view.findChild<QLabel *>(QStringLiteral("healthSummary"))->text();
        QVERIFY2(summary.startsWith(QStringLiteral("0.13% of the CPU samples' stacks incomplete (13 of 10000)")),
                 qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("off-CPU waits")) && summary.contains(QStringLiteral("(0.21%)")),
                 qPrintable(summary));

        // Marked by the CPU samples' share, the status bar's.
        stats.incomplete = 300; // 3%
        view.setCpuSamples(stats.incomplete, stats.samples);
        QCOMPARE(view.numbersAtStake().size(), 1);
        QVERIFY(view.numbersAtStake().first().startsWith(QStringLiteral("3.0% of the CPU samples' stacks")));
    }

    // A healthy session: no faults shown, and the summary says every stack was complete.
    void healthySession()
    {
        const UnwindCounters c = appCounters(50, 0);
        std::vector<ModuleSymbols> symbols(4);
        symbols[3] = {SymbolStatus::FullDwarf, SymbolSource::BuildId};
        HealthView view;
        view.setHealth(std::make_shared<const UnwindHealth>(buildUnwindHealth(c, symbols, {}, {})));
        QVERIFY(!view.hasProblems());
        QVERIFY(view.summaryText().contains(QStringLiteral("every stack reached main")));
        QVERIFY(view.findChild<QLabel *>(QStringLiteral("healthFaults"))->isHidden());
    }

    // If this fails, a clean run is marked "Health ⚠" for system libraries without debug symbols (numbers that are
    // not at stake), or a run whose numbers are at stake is not marked.
    void markedOnlyWhenNumbersAtStake()
    {
        UnwindCounters c = appCounters(1000, 0, 6);
        c.modules[4].path = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30";
        c.byModule[4].samples = 400;
        c.modules[5].path = "/opt/vendor/libblob.so";
        c.byModule[5].samples = 15; // 1.5%: no names, but hardly any time
        std::vector<ModuleSymbols> symbols(6);
        symbols[3] = {SymbolStatus::FullDwarf, SymbolSource::BuildId};
        symbols[4] = {SymbolStatus::SymbolTable, SymbolSource::InFile};
        symbols[5] = {SymbolStatus::None, SymbolSource::None};
        HealthView view;
        view.setHealth(std::make_shared<const UnwindHealth>(buildUnwindHealth(c, symbols, {}, {})));
        QVERIFY(!view.hasProblems());  // the table still says libstdc++ has a symbol table only
        view.setLostSamples(10, 1000); // 1%
        QVERIFY(!view.hasProblems());

        view.setLostSamples(100, 1000);
        QCOMPARE(view.numbersAtStake().size(), 1);
        QVERIFY(view.numbersAtStake().first().contains(QStringLiteral("lost")));
        view.setLostSamples(0, 1000);

        c.byModule[5].samples = 300; // 30% of the stacks go through frames without names
        view.setHealth(std::make_shared<const UnwindHealth>(buildUnwindHealth(c, symbols, {}, {})));
        QCOMPARE(view.numbersAtStake().size(), 1);
        QVERIFY(view.numbersAtStake().first().contains(QStringLiteral("libblob.so")));

        c.byModule[5].samples = 15;
        c.incomplete = 50; // 5%
        c.byModule[3].incomplete = 50;
        view.setHealth(std::make_shared<const UnwindHealth>(buildUnwindHealth(c, symbols, {}, {})));
        QCOMPARE(view.numbersAtStake().size(), 1);
        QVERIFY(view.numbersAtStake().first().contains(QStringLiteral("incomplete")));
    }
};

QTEST_MAIN(TestHealthView)
#include "tst_health_view.moc"
