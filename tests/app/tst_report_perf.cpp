// perf.data and perf script text through `emberline report`, against `perf report` as an independent reader:
// a test target recorded here by `perf record --call-graph dwarf`, then per function the self sample counts and
// the self share of the period, and the share under each of the target's own functions, must equal
// `perf report --stdio --children`'s. Also the text of `perf script` read directly, and the message when perf is
// missing.

#include "report_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace emberline::test;

namespace {

const QString kTarget = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split");

bool inCi()
{
    return qEnvironmentVariable("CI") == QLatin1String("true");
}

struct PerfRow {
    double percent = 0;         // self share of the period
    double childrenPercent = 0; // share of the period with the function anywhere on the stack
    qint64 samples = 0;         // self samples
};

// `perf report --stdio --children --sort symbol -n`: "    58.67%     0.00%             0  [.] hot_sixty", and two
// more columns ("-  -", IPC) after the name on machines that count it.
std::map<QString, PerfRow> perfReport(const QString &perf, const QString &data, QString &error)
{
    std::map<QString, PerfRow> rows;
    const Run r = run(perf, {QStringLiteral("report"), QStringLiteral("-i"), data, QStringLiteral("--stdio"),
                             QStringLiteral("--children"), QStringLiteral("--sort"), QStringLiteral("symbol"),
                             QStringLiteral("-n"), QStringLiteral("-g"), QStringLiteral("none"),
                             QStringLiteral("--percent-limit"), QStringLiteral("0")});
    if (r.exitCode != 0) {
        error = QString::fromUtf8(r.err);
        return rows;
    }
    static const QRegularExpression rowRe(
        QStringLiteral("^\\s*([\\d.]+)%\\s+([\\d.]+)%\\s+(\\d+)\\s+\\[.\\] (.+?)(\\s+-\\s+-)?\\s*$"));
    for (const QByteArray &raw : r.out.split('\n')) {
        const auto m = rowRe.match(QString::fromUtf8(raw));
        if (m.hasMatch())
            rows[m.captured(4)] = {m.captured(2).toDouble(), m.captured(1).toDouble(), m.captured(3).toLongLong()};
    }
    if (rows.empty())
        error = QStringLiteral("no row in perf report's output: ") + QString::fromUtf8(r.out.left(2000));
    return rows;
}

// The functions of `report --json`, and the total of sample type `index`.
std::map<QString, Values> reportFunctions(const QByteArray &json, int index, qint64 &total)
{
    const QJsonObject root = QJsonDocument::fromJson(json).object();
    total = root.value(QStringLiteral("sample_types"))
                .toArray()[index]
                .toObject()
                .value(QStringLiteral("total"))
                .toInteger();
    std::map<QString, Values> out;
    for (const auto &v : root.value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        out[f.value(QStringLiteral("name")).toString()] = {f.value(QStringLiteral("self")).toInteger(),
                                                           f.value(QStringLiteral("total")).toInteger()};
    }
    return out;
}

} // namespace

// The recording every test function reads, made once by initTestCase.
struct Recording {
    QTemporaryDir dir;
    QString perf;
    QString data;
};

Recording &recording()
{
    static Recording r;
    return r;
}

class TestReportPerf : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QString &perf = recording().perf;
        QString &data = recording().data;
        QTemporaryDir &dir = recording().dir;
        perf = QStandardPaths::findExecutable(QStringLiteral("perf"));
        if (perf.isEmpty()) {
            if (inCi())
                QFAIL("perf (linux-perf) is not installed but CI=true");
            QSKIP("perf (linux-perf) is not installed");
        }
        data = dir.filePath(QStringLiteral("perf.data"));
        const Run rec = run(perf, {QStringLiteral("record"), QStringLiteral("-q"), QStringLiteral("-e"),
                                   QStringLiteral("cpu-clock"), QStringLiteral("-F"), QStringLiteral("499"),
                                   QStringLiteral("--call-graph"), QStringLiteral("dwarf"), QStringLiteral("-o"), data,
                                   QStringLiteral("--"), kTarget, QStringLiteral("1.5")});
        if (rec.exitCode != 0 || !QFile::exists(data)) {
            if (inCi())
                QFAIL(qPrintable(QStringLiteral("perf record failed under CI=true: ") + QString::fromUtf8(rec.err)));
            QSKIP(qPrintable(QStringLiteral("perf record cannot run here: ") + QString::fromUtf8(rec.err)));
        }
    }

    // If this fails, a function's self samples or self share read from perf.data differ from perf report's on the
    // same file: the import loses, adds or misplaces samples.
    void perfDataMatchesPerfReport()
    {
        const QString &perf = recording().perf;
        const QString &data = recording().data;
        QString error;
        const std::map<QString, PerfRow> theirs = perfReport(perf, data, error);
        QVERIFY2(!theirs.empty(), qPrintable(error));
        const Run counts = run(kEmberline, {QStringLiteral("report"), data, QStringLiteral("--json"),
                                            QStringLiteral("--sample-type"), QStringLiteral("samples")});
        QVERIFY2(counts.exitCode == 0, counts.err.constData());
        qint64 sampleTotal = 0;
        const auto mine = reportFunctions(counts.out, 0, sampleTotal);
        const Run periods = run(kEmberline, {QStringLiteral("report"), data, QStringLiteral("--json")});
        QVERIFY2(periods.exitCode == 0, periods.err.constData());
        qint64 periodTotal = 0;
        const auto minePeriods = reportFunctions(periods.out, 1, periodTotal);
        QCOMPARE(QJsonDocument::fromJson(periods.out)
                     .object()
                     .value(QStringLiteral("sample_types"))
                     .toArray()[1]
                     .toObject()
                     .value(QStringLiteral("type"))
                     .toString(),
                 QStringLiteral("cpu-clock"));
        qint64 perfSamples = 0;
        for (const auto &[name, row] : theirs)
            perfSamples += row.samples;
        QCOMPARE(sampleTotal, perfSamples);
        QVERIFY2(sampleTotal > 200, qPrintable(QString::number(sampleTotal)));
        int comparedSelf = 0;
        for (const auto &[name, row] : theirs) {
            if (name.startsWith(QLatin1String("0x")) || row.samples == 0)
                continue; // an address perf could not name (ours is "[unknown] (dso)"), or a caller with no self
            QVERIFY2(mine.count(name), qPrintable(QStringLiteral("missing function: ") + name));
            QCOMPARE(mine.at(name).self, row.samples);
            const double share = 100.0 * double(minePeriods.at(name).self) / double(periodTotal);
            QVERIFY2(std::abs(share - row.percent) < 0.006,
                     qPrintable(QStringLiteral("%1: ours %2%, perf %3%").arg(name).arg(share).arg(row.percent)));
            ++comparedSelf;
        }
        QVERIFY2(comparedSelf >= 1, "perf report named no function with self samples");
        // Totals of the target's own functions against perf report's Children column. Every self sample may land
        // in burn, so the callers are what tells a misread stack from a right one.
        for (const char *fn : {"main", "hot_sixty", "warm_thirty", "cool_ten", "burn"}) {
            const QString name = QString::fromLatin1(fn);
            QVERIFY2(theirs.count(name), qPrintable(QStringLiteral("perf report did not name ") + name));
            QVERIFY2(minePeriods.count(name), qPrintable(QStringLiteral("missing function: ") + name));
            const double share = 100.0 * double(minePeriods.at(name).total) / double(periodTotal);
            const double perfShare = theirs.at(name).childrenPercent;
            QVERIFY2(std::abs(share - perfShare) < 0.006,
                     qPrintable(QStringLiteral("%1 total: ours %2%, perf %3%").arg(name).arg(share).arg(perfShare)));
        }
        // The target's own split shows through: burn is where every chunk's work is done.
        QVERIFY(mine.count(QStringLiteral("burn")) && mine.at(QStringLiteral("burn")).self * 2 > sampleTotal);
        QVERIFY(mine.at(QStringLiteral("hot_sixty")).total > mine.at(QStringLiteral("cool_ten")).total);
    }

    // If this fails, `perf script` text saved to a file no longer reads as the same profile as the perf.data.
    void perfScriptTextMatchesPerfData()
    {
        const QString &perf = recording().perf;
        const QString &data = recording().data;
        const Run script =
            run(perf, {QStringLiteral("script"), QStringLiteral("--no-inline"), QStringLiteral("-i"), data});
        QVERIFY2(script.exitCode == 0, script.err.constData());
        QFile text(recording().dir.filePath(QStringLiteral("perf.txt")));
        QVERIFY(text.open(QIODevice::WriteOnly));
        text.write(script.out);
        text.close();
        const Run fromText = run(kEmberline, {QStringLiteral("report"), text.fileName(), QStringLiteral("--json")});
        const Run fromData = run(kEmberline, {QStringLiteral("report"), data, QStringLiteral("--json")});
        QVERIFY2(fromText.exitCode == 0 && fromData.exitCode == 0, fromText.err.constData());
        QCOMPARE(fromText.out, fromData.out);
    }

    // If this fails, a missing perf is no longer said with how to install it.
    void perfMissing()
    {
        const QString &data = recording().data;
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("EMBERLINE_PERF"), QStringLiteral("perf-that-is-not-installed"));
        p.setProcessEnvironment(env);
        p.start(kEmberline, {QStringLiteral("report"), data});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        const QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("apt install linux-perf"), err.constData());
    }
};

QTEST_GUILESS_MAIN(TestReportPerf)
#include "tst_report_perf.moc"
