// `emberline report` as a user runs it, checked against `go tool pprof` as an independent reader: the totals of
// every sample type and, for every function pprof lists, self and total in raw units. Plus the text header and
// the error cases (missing file, corrupt file, unknown sample type, bad arguments).

#include "report_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <map>

using namespace emberline::test;

class TestReportCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void matchesGoToolPprof_data();
    void matchesGoToolPprof();
    void textHeader();
    void topLimitsRows();
    void missingFile();
    void corruptFile();
    void unknownSampleType();
    void badArguments();
    void sessionFolder();
    void hugePagesRestartOnlyWhereItPays();
};

// If this fails, the executable under test was not built (the test depends on the `emberline` target).
void TestReportCli::initTestCase()
{
    QVERIFY2(QFile::exists(kEmberline), qPrintable(kEmberline + QStringLiteral(" does not exist")));
}

void TestReportCli::matchesGoToolPprof_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("sampleType");
    QTest::addColumn<int>("index");
    const std::vector<std::pair<QString, QStringList>> files = {
        {QStringLiteral("go-cpu.pprof"), {QStringLiteral("samples"), QStringLiteral("cpu")}},
        {QStringLiteral("go-heap.pprof"),
         {QStringLiteral("alloc_objects"), QStringLiteral("alloc_space"), QStringLiteral("inuse_objects"),
          QStringLiteral("inuse_space")}},
        {QStringLiteral("node-wall.pb.gz"), {QStringLiteral("sample"), QStringLiteral("wall")}},
        {QStringLiteral("node-heap.pb.gz"), {QStringLiteral("inuse_objects"), QStringLiteral("inuse_space")}},
    };
    for (const auto &[file, types] : files) {
        for (int i = 0; i < types.size(); ++i)
            QTest::newRow(qPrintable(file + QLatin1Char(' ') + types[i])) << file << types[i] << i;
    }
}

// If this fails, `emberline report` disagrees with `go tool pprof` on a real file: a sample type total, or the
// self or total of a function (so the GUI's top table, which uses the same engine, would too).
void TestReportCli::matchesGoToolPprof()
{
    QFETCH(QString, file);
    QFETCH(QString, sampleType);
    QFETCH(int, index);
    const QString go = goBinary();
    if (go.isEmpty()) {
        if (qEnvironmentVariable("CI") == QLatin1String("true"))
            QFAIL("go is not installed, and CI=true requires the go tool pprof cross-check");
        QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
    }
    const QString path = kData + QLatin1Char('/') + file;
    const Run ours = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--json"),
                                      QStringLiteral("--sample-type"), sampleType});
    QVERIFY2(ours.exitCode == 0, ours.err.constData());
    QVERIFY2(ours.err.isEmpty(), ours.err.constData());
    QJsonParseError parseError;
    const QJsonObject json = QJsonDocument::fromJson(ours.out, &parseError).object();
    QVERIFY2(parseError.error == QJsonParseError::NoError, qPrintable(parseError.errorString()));
    const QJsonArray types = json.value(QStringLiteral("sample_types")).toArray();
    QVERIFY(index < types.size());
    const QJsonObject type = types[index].toObject();
    QCOMPARE(type.value(QStringLiteral("type")).toString(), sampleType);
    QVERIFY(json.value(QStringLiteral("samples")).toInteger() > 0);

    const PprofTop theirs = goTop(go, path, index, type.value(QStringLiteral("unit")).toString());
    QVERIFY2(theirs.ok, qPrintable(theirs.error));
    QCOMPARE(type.value(QStringLiteral("total")).toInteger(), theirs.total);

    std::map<QString, Values> mine;
    for (const auto &v : json.value(QStringLiteral("functions")).toArray()) {
        const QJsonObject f = v.toObject();
        const QString name = f.value(QStringLiteral("name")).toString();
        QVERIFY2(!mine.count(name), qPrintable(QStringLiteral("listed twice: ") + name));
        mine[name] = {f.value(QStringLiteral("self")).toInteger(), f.value(QStringLiteral("total")).toInteger()};
    }
    QVERIFY(!theirs.functions.empty());
    const QString disagreement = firstDisagreement(mine, theirs);
    QVERIFY2(disagreement.isEmpty(), qPrintable(disagreement));
    for (const auto &[name, v] : mine)
        QVERIFY2(theirs.functions.count(name), qPrintable(QStringLiteral("pprof does not list: ") + name));
}

// If this fails, the text report's header no longer tells which file, sample type, duration and totals it shows.
void TestReportCli::textHeader()
{
    const QString path = kData + QStringLiteral("/go-cpu.pprof");
    const Run r = run(kEmberline, {QStringLiteral("report"), path});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    const QList<QByteArray> lines = r.out.split('\n');
    QVERIFY(lines.size() > 10);
    QCOMPARE(QString::fromUtf8(lines[0]), QStringLiteral("File: ") + path);
    QCOMPARE(QString::fromUtf8(lines[1]), QStringLiteral("Type: cpu (nanoseconds)")); // the default: last type
    QCOMPARE(QString::fromUtf8(lines[2]), QStringLiteral("Duration: 5.12 s"));
    QCOMPARE(QString::fromUtf8(lines[3]), QStringLiteral("Samples: 805, total 9.78 s"));
    QVERIFY(lines[4].startsWith("Showing "));
    QVERIFY(lines[5].contains("self") && lines[5].contains("total") && lines[5].contains("function"));
    // The heaviest function first, as in pprof -top.
    QVERIFY2(lines[6].endsWith("crypto/sha256.block"), lines[6].constData());
    QVERIFY(lines[6].contains("1.04 s"));

    const Run heap = run(kEmberline, {QStringLiteral("report"), kData + QStringLiteral("/go-heap.pprof"),
                                      QStringLiteral("--sample-type"), QStringLiteral("alloc_space")});
    QCOMPARE(heap.exitCode, 0);
    QVERIFY(heap.out.contains("Type: alloc_space (bytes)\n"));
    QVERIFY(heap.out.contains("Samples: 130, total 90.9 MiB\n"));
}

// If this fails, --top does not limit the rows (or miscounts them in the header and in JSON).
void TestReportCli::topLimitsRows()
{
    const QString path = kData + QStringLiteral("/node-wall.pb.gz");
    const Run r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--top"), QStringLiteral("3")});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QVERIFY2(lines[4].startsWith("Showing 3 of 32 functions"), lines[4].constData());
    QCOMPARE(lines.size(), 6 + 3);
    QVERIFY(lines.last().endsWith("jsonRoundTrip"));
    const Run j = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--top"), QStringLiteral("2"),
                                   QStringLiteral("--json")});
    QCOMPARE(j.exitCode, 0);
    QCOMPARE(QJsonDocument::fromJson(j.out).object().value(QStringLiteral("functions")).toArray().size(), 2);
}

// If this fails, a missing file exits 0, prints to stdout, or does not name the file.
void TestReportCli::missingFile()
{
    const QString path = QStringLiteral("/nonexistent/profile.pprof");
    const Run r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--json")});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains(path.toUtf8()), r.err.constData());
    QVERIFY2(r.err.contains("No such file"), r.err.constData());
}

// If this fails, a corrupt file is reported as a success or without saying what is wrong with which file.
void TestReportCli::corruptFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("cut.pprof"));
    QFile in(kData + QStringLiteral("/go-cpu.pprof"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QFile out(path);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(in.read(in.size() / 2));
    out.close();
    const Run r = run(kEmberline, {QStringLiteral("report"), path});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains(path.toUtf8()) && r.err.contains("truncated"), r.err.constData());
}

// If this fails, an unknown --sample-type is not refused, or the message does not list what the file offers.
void TestReportCli::unknownSampleType()
{
    const Run r = run(kEmberline, {QStringLiteral("report"), kData + QStringLiteral("/go-heap.pprof"),
                                   QStringLiteral("--sample-type"), QStringLiteral("cpu")});
    QVERIFY(r.exitCode != 0);
    QVERIFY(r.out.isEmpty());
    QVERIFY2(r.err.contains("'cpu'"), r.err.constData());
    for (const char *type : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"})
        QVERIFY2(r.err.contains(type), r.err.constData());
}

// If this fails, malformed command lines are accepted or fail without a usage message.
void TestReportCli::badArguments()
{
    const QString path = kData + QStringLiteral("/go-heap.pprof");
    const std::vector<QStringList> cases = {
        {QStringLiteral("report")},
        {QStringLiteral("report"), path, path},
        {QStringLiteral("report"), path, QStringLiteral("--top"), QStringLiteral("many")},
        {QStringLiteral("report"), path, QStringLiteral("--top"), QStringLiteral("-4")},
        {QStringLiteral("report"), path, QStringLiteral("--no-such-option")},
    };
    for (const QStringList &args : cases) {
        const Run r = run(kEmberline, args);
        QVERIFY2(r.exitCode == 2, qPrintable(args.join(QLatin1Char(' '))));
        QVERIFY(r.out.isEmpty());
        QVERIFY(r.err.startsWith("emberline report: "));
    }
}

// If this fails, `emberline report DIR` cannot read a session that never wrote its profile.pprof (a crash, a
// SIGKILL), reads it partly without saying so, or gives up on the whole folder for one broken flush.
void TestReportCli::sessionFolder()
{
    QTemporaryDir dir;
    // Two flushes (the same Go profile twice: the merged totals double) and a third cut short; no profile.pprof.
    const QString source = kData + QStringLiteral("/go-cpu.pprof");
    QVERIFY(QFile::copy(source, dir.filePath(QStringLiteral("flush-0001.pprof"))));
    QVERIFY(QFile::copy(source, dir.filePath(QStringLiteral("flush-0002.pprof"))));
    QFile broken(dir.filePath(QStringLiteral("flush-0003.pprof")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    QFile whole(source);
    QVERIFY(whole.open(QIODevice::ReadOnly));
    broken.write(whole.read(whole.size() / 2));
    broken.close();

    const Run one = run(kEmberline, {QStringLiteral("report"), source, QStringLiteral("--json")});
    const Run folder = run(kEmberline, {QStringLiteral("report"), dir.path(), QStringLiteral("--json")});
    QCOMPARE(folder.exitCode, 0);
    QVERIFY2(folder.err.contains("merged 2 flush file(s)"), folder.err.constData());
    QVERIFY2(folder.err.contains("profile.pprof: missing"), folder.err.constData());
    QVERIFY2(folder.err.contains("skipped " + broken.fileName().toLocal8Bit() + ": "), folder.err.constData());
    const QJsonObject a = QJsonDocument::fromJson(one.out).object();
    const QJsonObject b = QJsonDocument::fromJson(folder.out).object();
    QCOMPARE(b.value(QStringLiteral("samples")).toInteger(), 2 * a.value(QStringLiteral("samples")).toInteger());
    const QJsonArray ta = a.value(QStringLiteral("sample_types")).toArray();
    const QJsonArray tb = b.value(QStringLiteral("sample_types")).toArray();
    QCOMPARE(tb.size(), ta.size());
    for (qsizetype i = 0; i < ta.size(); ++i)
        QCOMPARE(tb[i].toObject().value(QStringLiteral("total")).toInteger(),
                 2 * ta[i].toObject().value(QStringLiteral("total")).toInteger());

    // Once profile.pprof is there and whole, it is what is read, without a word.
    QVERIFY(QFile::copy(source, dir.filePath(QStringLiteral("profile.pprof"))));
    const Run finished = run(kEmberline, {QStringLiteral("report"), dir.path(), QStringLiteral("--json")});
    QCOMPARE(finished.exitCode, 0);
    QVERIFY2(finished.err.isEmpty(), finished.err.constData());
    QCOMPARE(QJsonDocument::fromJson(finished.out).object().value(QStringLiteral("samples")).toInteger(),
             a.value(QStringLiteral("samples")).toInteger());

    // A folder that is no session says so.
    QTemporaryDir empty;
    const Run none = run(kEmberline, {QStringLiteral("report"), empty.path()});
    QCOMPARE(none.exitCode, 1);
    QVERIFY2(none.err.contains("not a session folder"), none.err.constData());
}

QTEST_GUILESS_MAIN(TestReportCli)
#include "tst_report_cli.moc"

// If this fails, `report` on perf script or folded text starts itself a second time for huge pages (tens of
// milliseconds that the text's small tables never pay back), or `report` on a pprof file no longer does. strace
// counts the program's starts.
void TestReportCli::hugePagesRestartOnlyWhereItPays()
{
    const QString strace = QStandardPaths::findExecutable(QStringLiteral("strace"));
    if (strace.isEmpty()) {
        if (qgetenv("CI") == "true")
            QFAIL("strace is missing (installer/install-deps.sh --test installs it)");
        QSKIP("strace is not installed");
    }
    QFile thp(QStringLiteral("/sys/kernel/mm/transparent_hugepage/enabled"));
    const bool thpOff = !thp.open(QIODevice::ReadOnly) || thp.readAll().contains("[never]");
    QTemporaryDir dir;
    const auto starts = [&](const QString &input) {
        const QString log = dir.filePath(QStringLiteral("strace.log"));
        const Run r = run(strace, {QStringLiteral("-f"), QStringLiteral("-e"), QStringLiteral("trace=execve"),
                                   QStringLiteral("-o"), log, kEmberline, QStringLiteral("report"), input,
                                   QStringLiteral("--top"), QStringLiteral("1")});
        if (r.exitCode != 0)
            qWarning("%s", r.err.constData());
        QFile file(log);
        if (!file.open(QIODevice::ReadOnly))
            return -1;
        int count = 0;
        for (const QByteArray &line : file.readAll().split('\n'))
            count += line.contains("execve(") && line.trimmed().endsWith("= 0") ? 1 : 0;
        return count;
    };
    const QString text = QStringLiteral(EMBERLINE_TEST_DATA "/perf/cpu_split.perf-script");
    QCOMPARE(starts(text), 1);
    QCOMPARE(starts(kData + QStringLiteral("/go-cpu.pprof")), thpOff ? 1 : 2);
}
