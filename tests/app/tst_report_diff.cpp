// `emberline report NEW --base BASE` checked against `go tool pprof -diff_base=BASE -top NEW` as an independent
// reader, on real Go and Node profiles: each base is the same producer's profile cut by pprof itself
// (`-proto -ignore=...`), so some functions shrink to nothing and the rest stay. Plus the error cases.

#include "report_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <map>

using namespace emberline::test;

namespace {

// pprof's own cut of a profile: the samples without a frame matching `ignore`, written as pprof.
QString pprofCut(const QString &go, const QString &file, const QString &ignore, const QString &out)
{
    const Run r = run(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-proto"),
                           QStringLiteral("-symbolize=none"), QStringLiteral("-ignore=") + ignore,
                           QStringLiteral("-output=") + out, file});
    return r.exitCode == 0 && QFile::exists(out) ? QString() : QString::fromUtf8(r.err);
}

struct DiffJson {
    QJsonObject root;
    std::map<QString, Values> change;
    std::map<QString, Values> base;
};

DiffJson readDiff(const QByteArray &out)
{
    DiffJson d;
    d.root = QJsonDocument::fromJson(out).object();
    for (const auto &v : d.root.value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        const QString name = f.value(QStringLiteral("name")).toString();
        d.change[name] = {f.value(QStringLiteral("self")).toInteger(), f.value(QStringLiteral("total")).toInteger()};
        d.base[name] = {f.value(QStringLiteral("base_self")).toInteger(),
                        f.value(QStringLiteral("base_total")).toInteger()};
    }
    return d;
}

QString requireGo()
{
    QString go = goBinary();
    if (go.isEmpty() && qEnvironmentVariable("CI") == QLatin1String("true"))
        qFatal("go is not installed, and CI=true requires the go tool pprof cross-check");
    return go;
}

} // namespace

class TestReportDiff : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matchesGoToolPprofDiffBase_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("ignore");
        QTest::addColumn<QString>("sampleType");
        QTest::addColumn<int>("index");
        QTest::addColumn<bool>("cutIsBase");
        for (bool cutIsBase : {true, false}) {
            const char *direction = cutIsBase ? "grown" : "shrunk";
            QTest::newRow(qPrintable(QStringLiteral("go cpu, %1").arg(QLatin1String(direction))))
                << QStringLiteral("go-cpu.pprof") << QStringLiteral("fibRec|sha256") << QStringLiteral("cpu") << 1
                << cutIsBase;
            QTest::newRow(qPrintable(QStringLiteral("go heap alloc_space, %1").arg(QLatin1String(direction))))
                << QStringLiteral("go-heap.pprof") << QStringLiteral("allocLargeBuffers|buildTree")
                << QStringLiteral("alloc_space") << 1 << cutIsBase;
            QTest::newRow(qPrintable(QStringLiteral("node wall, %1").arg(QLatin1String(direction))))
                << QStringLiteral("node-wall.pb.gz") << QStringLiteral("RegExp|JSON") << QStringLiteral("wall") << 1
                << cutIsBase;
        }
    }

    // If this fails, `report --base` disagrees with `go tool pprof -diff_base` on real files: a function's change
    // in self or total, or which functions changed at all.
    void matchesGoToolPprofDiffBase()
    {
        QFETCH(QString, file);
        QFETCH(QString, ignore);
        QFETCH(QString, sampleType);
        QFETCH(int, index);
        QFETCH(bool, cutIsBase);
        const QString go = requireGo();
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
        QTemporaryDir dir;
        const QString whole = kData + QLatin1Char('/') + file;
        const QString cut = dir.filePath(QStringLiteral("cut.pb.gz"));
        const QString problem = pprofCut(go, whole, ignore, cut);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const QString next = cutIsBase ? whole : cut;
        const QString base = cutIsBase ? cut : whole;

        const Run ours = run(kEmberline, {QStringLiteral("report"), next, QStringLiteral("--base"), base,
                                          QStringLiteral("--json"), QStringLiteral("--sample-type"), sampleType});
        QVERIFY2(ours.exitCode == 0, ours.err.constData());
        const DiffJson mine = readDiff(ours.out);
        const QJsonObject type = mine.root.value(QStringLiteral("sample_types")).toArray()[index].toObject();
        QCOMPARE(type.value(QStringLiteral("type")).toString(), sampleType);
        const PprofTop theirs = goTop(go, next, index, type.value(QStringLiteral("unit")).toString(),
                                      {QStringLiteral("-diff_base=") + base});
        QVERIFY2(theirs.ok, qPrintable(theirs.error));
        // In a diff, pprof's "total" is the base's.
        QCOMPARE(mine.root.value(QStringLiteral("base")).toObject().value(QStringLiteral("total")).toInteger(),
                 theirs.total);
        QVERIFY(!theirs.functions.empty());
        const QString disagreement = firstDisagreement(mine.change, theirs);
        QVERIFY2(disagreement.isEmpty(), qPrintable(disagreement));
        qint64 selfSum = 0;
        for (const auto &[name, v] : theirs.functions) {
            // The direction the cut makes: every change is growth when the cut is the base, shrinkage otherwise.
            QVERIFY2(cutIsBase ? v.total >= 0 : v.total <= 0, qPrintable(name));
            selfSum += v.self;
        }
        for (const auto &[name, v] : mine.change)
            QVERIFY2(theirs.functions.count(name), qPrintable(QStringLiteral("pprof does not list: ") + name));
        QVERIFY(selfSum != 0);
        // Ordered by the size of the self change.
        const QJsonArray rows = mine.root.value(QStringLiteral("functions")).toArray();
        for (qsizetype i = 1; i < rows.size(); ++i)
            QVERIFY(std::llabs(rows[i - 1].toObject().value(QStringLiteral("self")).toInteger()) >=
                    std::llabs(rows[i].toObject().value(QStringLiteral("self")).toInteger()));
    }

    // If this fails, --normalize no longer scales the base to the new total, or the self changes no longer sum
    // to the change of the totals.
    void normalizeScalesTheBase()
    {
        const QString go = requireGo();
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot make a cut profile with go tool pprof");
        QTemporaryDir dir;
        const QString whole = kData + QStringLiteral("/go-cpu.pprof");
        const QString cut = dir.filePath(QStringLiteral("cut.pb.gz"));
        const QString problem = pprofCut(go, whole, QStringLiteral("fibRec"), cut);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        const Run plain =
            run(kEmberline, {QStringLiteral("report"), whole, QStringLiteral("--base"), cut, QStringLiteral("--json"),
                             QStringLiteral("--sample-type"), QStringLiteral("cpu")});
        const Run scaled =
            run(kEmberline, {QStringLiteral("report"), whole, QStringLiteral("--base"), cut, QStringLiteral("--json"),
                             QStringLiteral("--normalize"), QStringLiteral("--sample-type"), QStringLiteral("cpu")});
        QVERIFY2(plain.exitCode == 0 && scaled.exitCode == 0, scaled.err.constData());
        const DiffJson p = readDiff(plain.out), s = readDiff(scaled.out);
        const qint64 newTotal = s.root.value(QStringLiteral("sample_types"))
                                    .toArray()[1]
                                    .toObject()
                                    .value(QStringLiteral("total"))
                                    .toInteger();
        const QJsonObject base = s.root.value(QStringLiteral("base")).toObject();
        const double scale = base.value(QStringLiteral("scale")).toDouble();
        QVERIFY(scale > 1.0); // the cut is smaller
        QCOMPARE(p.root.value(QStringLiteral("base")).toObject().value(QStringLiteral("scale")).toDouble(), 1.0);
        // Truncated per sample: within one unit per sample of the new total.
        QVERIFY(std::llabs(base.value(QStringLiteral("total")).toInteger() - newTotal) <= 1000);
        qint64 change = 0;
        for (const auto &[name, v] : s.change)
            change += v.self;
        QCOMPARE(change, newTotal - base.value(QStringLiteral("total")).toInteger());
        // fibRec is not in the base at all: its change is the same with or without scaling.
        QCOMPARE(s.change.at(QStringLiteral("main.fibRec")), p.change.at(QStringLiteral("main.fibRec")));
    }

    // If this fails, a bad comparison is no longer a clear error with a non-zero exit.
    void badComparisons()
    {
        // No shared sample type: both profiles' types are named.
        Run r = run(kEmberline, {QStringLiteral("report"), kData + QStringLiteral("/go-cpu.pprof"),
                                 QStringLiteral("--base"), kData + QStringLiteral("/go-heap.pprof")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("share no sample type") && r.err.contains("cpu/nanoseconds") &&
                     r.err.contains("alloc_space/bytes"),
                 r.err.constData());
        // A missing base.
        r = run(kEmberline, {QStringLiteral("report"), kData + QStringLiteral("/go-cpu.pprof"),
                             QStringLiteral("--base"), QStringLiteral("/nonexistent/base.pprof")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("base:"), r.err.constData());
        // --normalize alone.
        r = run(kEmberline,
                {QStringLiteral("report"), kData + QStringLiteral("/go-cpu.pprof"), QStringLiteral("--normalize")});
        QCOMPARE(r.exitCode, 2);
        // The same file twice: nothing changed, said plainly.
        r = run(kEmberline, {QStringLiteral("report"), kData + QStringLiteral("/go-cpu.pprof"),
                             QStringLiteral("--base"), kData + QStringLiteral("/go-cpu.pprof")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("No function changed"), r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestReportDiff)
#include "tst_report_diff.moc"
