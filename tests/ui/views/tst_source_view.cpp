// The source tab of a profile, offscreen, on Go's real CPU profile: the selected function's lines with their
// self and total checked against `emberline report --list --json` on the same file (itself checked against
// `go tool pprof -list`), without the source file (the costly lines alone, and a note saying where it was
// looked for), with it found under a source root from the settings (every line, the hot ones tinted, scrolled
// to the hottest), and with a source shorter than the recording (the lines past its end said so).
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/common/source_roots.h"
#include "ui/models/source_lines_model.h"
#include "ui/views/explorer/source_view.h"

#include <QAbstractItemModelTester>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <map>

using namespace emberline;
using emberline::ui::SourceLinesModel;

// Named rather than anonymous: the unity build includes this file, and a test class with members of an
// anonymous namespace's types would then warn (-Wsubobject-linkage).
namespace source_view_test {

const QString kFunction = QStringLiteral("main.(*Matrix).Mul");

struct Cost {
    qint64 self = 0;
    qint64 total = 0;
    bool operator==(const Cost &o) const { return self == o.self && total == o.total; }
};

// line -> cost of the function, from `report --list --json`.
std::map<qint64, Cost> reportLines(const QString &regex, Cost *function)
{
    QString error;
    const QByteArray json =
        test::reportOutput({test::kGoCpu, QStringLiteral("--list"), regex, QStringLiteral("--json")}, &error);
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

bool writeStandIn(const QString &path, int lines)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    for (int i = 1; i <= lines; ++i)
        f.write(QStringLiteral("    work(%1) // line %1\n").arg(i).toUtf8());
    return true;
}

bool waitForListing(ui::ProfileExplorer *explorer)
{
    return QTest::qWaitFor([&] { return !explorer->isBuildingSource(); }, 30000) &&
           explorer->sourceView()->message().isEmpty();
}

} // namespace source_view_test
using namespace source_view_test;

class TestSourceView : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::map<qint64, Cost> m_expected;
    Cost m_function;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_source_view");
        m_expected = reportLines(QStringLiteral("^main\\.\\(\\*Matrix\\)\\.Mul$"), &m_function);
        QVERIFY(m_expected.size() >= 3); // a few lines of the loop, one of them much hotter
    }

    // If this fails, the source tab's lines differ from `report --list`, the note does not say the file is
    // missing, or the view is not on the hottest line.
    void withoutSourceFile()
    {
        ui::SourceRoots().setFolders({});
        ui::ProfileView view(test::kGoCpu);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const auto frames = explorer->loaded().frames->findByName(kFunction.toStdString());
        QCOMPARE(frames.size(), size_t(1));
        explorer->showSource();
        QVERIFY2(explorer->sourceView()->message().contains(QStringLiteral("Select a function")),
                 qPrintable(explorer->sourceView()->message()));
        explorer->selectFrame(frames.front());
        QVERIFY(waitForListing(explorer));

        ui::SourceView *source = explorer->sourceView();
        QAbstractItemModelTester tester(source->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(source->model()->rowCount(), static_cast<int>(m_expected.size())); // the costly lines alone
        QVERIFY(modelLines(source->model()) == m_expected);
        QCOMPARE(source->model()->listing()->function.self, m_function.self);
        QCOMPARE(source->model()->listing()->function.total, m_function.total);
        QVERIFY2(source->note().contains(QStringLiteral("not found at /src/goworkload/main.go")),
                 qPrintable(source->note()));
        QVERIFY(source->title().startsWith(kFunction));

        // The current row is the line with the largest total.
        const auto hottest = std::max_element(m_expected.begin(), m_expected.end(), [](const auto &a, const auto &b) {
            return a.second.total < b.second.total;
        });
        QCOMPARE(source->table()->currentIndex().data(SourceLinesModel::LineNumberRole).toLongLong(), hottest->first);
    }

    // If this fails, a source found under a source root is not shown line by line, the hot lines are not tinted,
    // or the view does not scroll to the hottest line.
    void withSourceUnderRoot()
    {
        QTemporaryDir root;
        QVERIFY(writeStandIn(root.filePath(QStringLiteral("goworkload/main.go")), 2000));
        ui::SourceRoots().setFolders({root.path()});
        ui::ProfileView view(test::kGoCpu);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        explorer->showSource();
        explorer->selectFrame(explorer->loaded().frames->findByName(kFunction.toStdString()).front());
        QVERIFY(waitForListing(explorer));

        ui::SourceView *source = explorer->sourceView();
        SourceLinesModel *model = source->model();
        QCOMPARE(model->rowCount(), 2000);
        QVERIFY(modelLines(model) == m_expected);
        QVERIFY2(source->note().isEmpty(), qPrintable(source->note()));
        QVERIFY(source->title().contains(root.filePath(QStringLiteral("goworkload/main.go"))));
        const auto hottest = std::max_element(m_expected.begin(), m_expected.end(), [](const auto &a, const auto &b) {
            return a.second.total < b.second.total;
        });
        const int hotRow = model->rowOfLine(hottest->first);
        QCOMPARE(hotRow, static_cast<int>(hottest->first - 1));
        QCOMPARE(model->index(hotRow, SourceLinesModel::CodeColumn).data().toString(),
                 QStringLiteral("    work(%1) // line %1").arg(hottest->first));
        // Tinted: the hot line, not a line without cost; the share is of the function's total.
        QVERIFY(model->index(hotRow, 0).data(Qt::BackgroundRole).isValid());
        QVERIFY(!model->index(0, 0).data(Qt::BackgroundRole).isValid());
        QCOMPARE(model->index(hotRow, 0).data(SourceLinesModel::HeatRole).toDouble(),
                 static_cast<double>(hottest->second.total) / static_cast<double>(m_function.total));
        // Scrolled there: the hot row is inside the viewport although it is far below the first line.
        QTRY_VERIFY(source->table()->verticalScrollBar()->value() > 0);
        const QRect rect = source->table()->visualRect(model->index(hotRow, 0));
        QVERIFY(source->table()->viewport()->rect().intersects(rect));
    }

    // If this fails, a line past the end of a source that changed since the recording is not said so, or breaks
    // the view.
    void sourceChangedSinceRecording()
    {
        QTemporaryDir root;
        const qint64 firstCostly = m_expected.begin()->first;
        const int shortLength = static_cast<int>(firstCostly); // every costly line but the first lies past its end
        QVERIFY(writeStandIn(root.filePath(QStringLiteral("goworkload/main.go")), shortLength));
        ui::SourceRoots().setFolders({root.path()});
        ui::ProfileView view(test::kGoCpu);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        explorer->showSource();
        explorer->selectFrame(explorer->loaded().frames->findByName(kFunction.toStdString()).front());
        QVERIFY(waitForListing(explorer));

        ui::SourceView *source = explorer->sourceView();
        const int pastEnd = static_cast<int>(m_expected.size()) - 1;
        QCOMPARE(source->model()->rowCount(), shortLength + pastEnd);
        QVERIFY(modelLines(source->model()) == m_expected);
        QVERIFY2(source->note().contains(QStringLiteral("past the end")), qPrintable(source->note()));
        const int lastRow = source->model()->rowCount() - 1;
        QVERIFY(source->model()
                    ->index(lastRow, SourceLinesModel::CodeColumn)
                    .data()
                    .toString()
                    .contains(QStringLiteral("past the end of the file")));
    }
};

QTEST_MAIN(TestSourceView)
#include "tst_source_view.moc"
