// `emberline report --focus/--ignore/--hide` checked against `go tool pprof -focus/-ignore/-hide -top` as an
// independent reader on real Go and Node profiles, alone, together, with --base and --top; folded output with a
// transform; and the error when a transform leaves nothing.

#include "report_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::test;

namespace {

struct Report {
    QJsonObject root;
    std::map<QString, Values> functions;
};

Report readReport(const QByteArray &out)
{
    Report r;
    r.root = QJsonDocument::fromJson(out).object();
    for (const auto &v : r.root.value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        r.functions[f.value(QStringLiteral("name")).toString()] = {f.value(QStringLiteral("self")).toInteger(),
                                                                   f.value(QStringLiteral("total")).toInteger()};
    }
    return r;
}

QString requireGo()
{
    QString go = goBinary();
    if (go.isEmpty() && qEnvironmentVariable("CI") == QLatin1String("true"))
        qFatal("go is not installed, and CI=true requires the go tool pprof cross-check");
    return go;
}

// ["--focus", "x", "--hide", "y"] -> ["-focus=x", "-hide=y"]
QStringList pprofFlags(const QStringList &ours)
{
    QStringList flags;
    for (qsizetype i = 0; i + 1 < ours.size(); i += 2)
        flags << QLatin1Char('-') + ours[i].mid(2) + QLatin1Char('=') + ours[i + 1];
    return flags;
}

} // namespace

class TestReportTransforms : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matchesGoToolPprof_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("sampleType");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QStringList>("transforms");
        const QString cpu = QStringLiteral("go-cpu.pprof");
        QTest::newRow("go cpu focus") << cpu << "cpu" << 1 << "nanoseconds" << QStringList{"--focus", "fibRec"};
        QTest::newRow("go cpu focus by file")
            << cpu << "cpu" << 1 << "nanoseconds" << QStringList{"--focus", "runtime/proc\\.go"};
        QTest::newRow("go cpu ignore") << cpu << "cpu" << 1 << "nanoseconds"
                                       << QStringList{"--ignore", "runtime\\.|sha256"};
        QTest::newRow("go cpu hide") << cpu << "cpu" << 1 << "nanoseconds" << QStringList{"--hide", "runtime\\."};
        QTest::newRow("go cpu hide inlined")
            << cpu << "cpu" << 1 << "nanoseconds" << QStringList{"--hide", "Mul|reduce"};
        QTest::newRow("go cpu focus ignore hide")
            << cpu << "cpu" << 1 << "nanoseconds"
            << QStringList{"--focus", "runCPU", "--ignore", "leafSpin", "--hide", "main\\.runCPU\\.func17"};
        QTest::newRow("go heap focus") << "go-heap.pprof"
                                       << "alloc_space" << 1 << "bytes"
                                       << QStringList{"--focus", "buildTree|allocLarge"};
        QTest::newRow("node wall hide") << "node-wall.pb.gz"
                                        << "wall" << 1 << "nanoseconds" << QStringList{"--hide", "RegExp|fib"};
        QTest::newRow("node wall ignore")
            << "node-wall.pb.gz"
            << "wall" << 1 << "nanoseconds" << QStringList{"--ignore", "\\(idle\\)|Garbage"};
    }

    // If this fails, a transform keeps, drops or moves other samples than pprof's: a function's self or total,
    // or the total, differs from `go tool pprof` with the same flags on a real file.
    void matchesGoToolPprof()
    {
        QFETCH(QString, file);
        QFETCH(QString, sampleType);
        QFETCH(int, index);
        QFETCH(QString, unit);
        QFETCH(QStringList, transforms);
        const QString go = requireGo();
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
        const QString path = kData + QLatin1Char('/') + file;
        const Run ours = run(kEmberline, QStringList{QStringLiteral("report"), path, QStringLiteral("--json"),
                                                     QStringLiteral("--sample-type"), sampleType} +
                                             transforms);
        QVERIFY2(ours.exitCode == 0, ours.err.constData());
        const Report mine = readReport(ours.out);
        const PprofTop theirs = goTop(go, path, index, unit, pprofFlags(transforms));
        QVERIFY2(theirs.ok, qPrintable(theirs.error));
        const PprofTop whole = goTop(go, path, index, unit);
        QVERIFY(!theirs.functions.empty());
        const QString disagreement = firstDisagreement(mine.functions, theirs);
        QVERIFY2(disagreement.isEmpty(), qPrintable(disagreement));
        for (const auto &[name, v] : mine.functions)
            QVERIFY2(theirs.functions.count(name) || (v.self == 0 && v.total == 0),
                     qPrintable(QStringLiteral("pprof does not list: ") + name));
        // The transform did something: the table is not the untransformed one.
        QVERIFY(theirs.functions != whole.functions);
        qint64 selfSum = 0;
        for (const auto &[name, v] : mine.functions)
            selfSum += v.self;
        const qint64 ourTotal = mine.root.value(QStringLiteral("sample_types"))
                                    .toArray()[index]
                                    .toObject()
                                    .value(QStringLiteral("total"))
                                    .toInteger();
        QCOMPARE(selfSum, ourTotal);
        QVERIFY(ourTotal <= whole.total);
    }

    // If this fails, transforms no longer apply to both sides of a comparison as pprof applies them to a
    // -diff_base, or --top no longer cuts the transformed table.
    void combinesWithBaseAndTop()
    {
        const QString go = requireGo();
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
        QTemporaryDir dir;
        const QString whole = kData + QStringLiteral("/go-cpu.pprof");
        const QString cut = dir.filePath(QStringLiteral("cut.pb.gz"));
        const Run made = run(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-proto"),
                                  QStringLiteral("-symbolize=none"), QStringLiteral("-ignore=fibRec"),
                                  QStringLiteral("-output=") + cut, whole});
        QVERIFY2(made.exitCode == 0, made.err.constData());
        const QStringList transforms = {QStringLiteral("--focus"), QStringLiteral("runCPU"), QStringLiteral("--hide"),
                                        QStringLiteral("runtime\\.")};
        const Run ours = run(kEmberline, QStringList{QStringLiteral("report"), whole, QStringLiteral("--base"), cut,
                                                     QStringLiteral("--json"), QStringLiteral("--sample-type"),
                                                     QStringLiteral("cpu")} +
                                             transforms);
        QVERIFY2(ours.exitCode == 0, ours.err.constData());
        const PprofTop theirs = goTop(go, whole, 1, QStringLiteral("nanoseconds"),
                                      QStringList{QStringLiteral("-diff_base=") + cut} + pprofFlags(transforms));
        QVERIFY2(theirs.ok, qPrintable(theirs.error));
        const Report mine = readReport(ours.out);
        const QString disagreement = firstDisagreement(mine.functions, theirs);
        QVERIFY2(disagreement.isEmpty(), qPrintable(disagreement));
        QVERIFY(mine.functions.count(QStringLiteral("main.fibRec")));

        const Run top = run(kEmberline, QStringList{QStringLiteral("report"), whole, QStringLiteral("--json"),
                                                    QStringLiteral("--top"), QStringLiteral("3")} +
                                            transforms);
        QVERIFY2(top.exitCode == 0, top.err.constData());
        const QJsonArray rows = QJsonDocument::fromJson(top.out).object().value(QStringLiteral("functions")).toArray();
        QCOMPARE(rows.size(), 3);
        const Run all =
            run(kEmberline, QStringList{QStringLiteral("report"), whole, QStringLiteral("--json")} + transforms);
        const QJsonArray allRows =
            QJsonDocument::fromJson(all.out).object().value(QStringLiteral("functions")).toArray();
        for (qsizetype i = 0; i < 3; ++i)
            QCOMPARE(rows[i].toObject(), allRows[i].toObject());
    }

    // If this fails, folded output no longer follows the transforms (hidden frames must not appear; the total
    // stays) or no longer reads back as the same numbers.
    void foldedWithTransforms()
    {
        QTemporaryDir dir;
        const QString path = kData + QStringLiteral("/go-cpu.pprof");
        const Run folded =
            run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--format"), QStringLiteral("folded"),
                             QStringLiteral("--sample-type"), QStringLiteral("cpu"), QStringLiteral("--hide"),
                             QStringLiteral("runtime\\.")});
        QVERIFY2(folded.exitCode == 0, folded.err.constData());
        QVERIFY(!folded.out.contains("runtime."));
        qint64 sum = 0;
        for (const QByteArray &line : folded.out.split('\n')) {
            if (!line.isEmpty())
                sum += line.mid(line.lastIndexOf(' ') + 1).toLongLong();
        }
        QFile out(dir.filePath(QStringLiteral("stacks.folded")));
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(folded.out);
        out.close();
        const Run back = run(kEmberline, {QStringLiteral("report"), out.fileName(), QStringLiteral("--json")});
        QVERIFY2(back.exitCode == 0, back.err.constData());
        const Run direct =
            run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--json"), QStringLiteral("--sample-type"),
                             QStringLiteral("cpu"), QStringLiteral("--hide"), QStringLiteral("runtime\\.")});
        const Report a = readReport(back.out), b = readReport(direct.out);
        QCOMPARE(a.functions, b.functions);
        QCOMPARE(a.root.value(QStringLiteral("sample_types"))
                     .toArray()[0]
                     .toObject()
                     .value(QStringLiteral("total"))
                     .toInteger(),
                 sum);
    }

    // If this fails, a transform that leaves nothing, or a bad regular expression, is no longer a clear error.
    void errors()
    {
        const QString path = kData + QStringLiteral("/go-cpu.pprof");
        Run r =
            run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--focus"), QStringLiteral("^nothing$")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("no sample is left after focus '^nothing$'"), r.err.constData());
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--ignore"), QStringLiteral(".")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("no sample is left after ignore '.'"), r.err.constData());
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--hide"), QStringLiteral("[")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("hide '[': not a valid regular expression"), r.err.constData());
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--format"), QStringLiteral("svg")});
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestReportTransforms)
#include "tst_report_transforms.moc"
