// `emberline report FILE --list REGEX` checked against `go tool pprof -list` as an independent reader on real Go
// and Node profiles (every line's self and total, each routine's self), with the source shown from the recorded
// path or a source root, a source that changed since the recording, and the errors.

#include "report_list_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline::test;

namespace {

struct OurFunction {
    Values values;
    std::map<qint64, Values> lines;
};

// (name, file) -> values, from --list --json.
std::map<std::pair<QString, QString>, OurFunction> readList(const QByteArray &json)
{
    std::map<std::pair<QString, QString>, OurFunction> out;
    const QJsonArray functions = QJsonDocument::fromJson(json).object().value(QStringLiteral("functions")).toArray();
    for (const auto &v : functions) {
        const QJsonObject f = v.toObject();
        OurFunction &fn = out[{f.value(QStringLiteral("name")).toString(), f.value(QStringLiteral("file")).toString()}];
        fn.values = {f.value(QStringLiteral("self")).toInteger(), f.value(QStringLiteral("total")).toInteger()};
        for (const auto &l : f.value(QStringLiteral("lines")).toArray()) {
            const QJsonObject line = l.toObject();
            fn.lines[line.value(QStringLiteral("line")).toInteger()] = {
                line.value(QStringLiteral("self")).toInteger(), line.value(QStringLiteral("total")).toInteger()};
        }
    }
    return out;
}

QString requireGo()
{
    QString go = goBinary();
    if (go.isEmpty() && qEnvironmentVariable("CI") == QLatin1String("true"))
        qFatal("go is not installed, and CI=true requires the go tool pprof cross-check");
    return go;
}

QString lineDump(const std::map<qint64, Values> &lines)
{
    QString s;
    for (const auto &[n, v] : lines)
        s += QStringLiteral(" %1:%2/%3").arg(n).arg(v.self).arg(v.total);
    return s;
}

} // namespace

class TestReportList : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matchesGoToolPprofList_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("regex");
        QTest::addColumn<QString>("sampleType");
        QTest::addColumn<int>("index");
        QTest::addColumn<QString>("unit");
        QTest::addColumn<QString>("recordedDir");
        QTest::addColumn<QString>("source");
        QTest::newRow("go cpu") << "go-cpu.pprof"
                                << "^main\\."
                                << "cpu" << 1 << "nanoseconds"
                                << "/src/goworkload"
                                << "main.go";
        QTest::newRow("go heap alloc_space") << "go-heap.pprof"
                                             << "^main\\."
                                             << "alloc_space" << 1 << "bytes"
                                             << "/src/goworkload"
                                             << "main.go";
        QTest::newRow("go heap alloc_objects") << "go-heap.pprof"
                                               << "main"
                                               << "alloc_objects" << 0 << "count"
                                               << "/src/goworkload"
                                               << "main.go";
        QTest::newRow("node wall") << "node-wall.pb.gz"
                                   << "."
                                   << "wall" << 1 << "nanoseconds"
                                   << "/src/node"
                                   << "profile-node.js";
    }

    // If this fails, a line's self or total, or a function's self, differs from `go tool pprof -list` on a real
    // file, or a function pprof lists is missing. A function's total is checked against `-top` (pprof's ROUTINE
    // header adds its lines' cum, which counts a recursive function's samples once per line on the stack).
    void matchesGoToolPprofList()
    {
        QFETCH(QString, file);
        QFETCH(QString, regex);
        QFETCH(QString, sampleType);
        QFETCH(int, index);
        QFETCH(QString, unit);
        QFETCH(QString, recordedDir);
        QFETCH(QString, source);
        const QString go = requireGo();
        if (go.isEmpty())
            QSKIP("go (golang-go) is not installed: cannot cross-check with go tool pprof");
        QTemporaryDir dir;
        QVERIFY(writeStandInSource(dir.filePath(source), 5000));
        const QString path = kData + QLatin1Char('/') + file;
        const PprofList theirs = goList(go, path, regex, index, unit, dir.path(), recordedDir);
        QVERIFY2(theirs.ok, qPrintable(theirs.error));
        const PprofTop top = goTop(go, path, index, unit);
        QVERIFY2(top.ok, qPrintable(top.error));
        const Run ours = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), regex,
                                          QStringLiteral("--json"), QStringLiteral("--sample-type"), sampleType});
        QVERIFY2(ours.exitCode == 0, ours.err.constData());
        const auto mine = readList(ours.out);
        int compared = 0;
        for (const PprofRoutine &routine : theirs.routines) {
            if (routine.file != source)
                continue; // a file pprof could not find: it printed no lines
            const auto it = mine.find({routine.name, recordedDir + QLatin1Char('/') + source});
            QVERIFY2(it != mine.end(), qPrintable(QStringLiteral("missing function: ") + routine.name));
            QVERIFY2(it->second.lines == routine.lines,
                     qPrintable(routine.name + QStringLiteral(": ours") + lineDump(it->second.lines) +
                                QStringLiteral(", pprof") + lineDump(routine.lines)));
            QCOMPARE(it->second.values.self, routine.header.self);
            QVERIFY(it->second.values.total <= routine.header.total);
            QCOMPARE(it->second.values.total, top.functions.at(routine.name).total);
            ++compared;
        }
        QVERIFY2(compared >= 5, qPrintable(QStringLiteral("only %1 routines compared").arg(compared)));
    }

    // If this fails, the text listing no longer shows the source found under a source root, or no longer says
    // which costly lines lie past the end of a source that changed since the recording.
    void textWithSources()
    {
        QTemporaryDir dir;
        QVERIFY(writeStandInSource(dir.filePath(QStringLiteral("goworkload/main.go")), 5000));
        const QString path = kData + QStringLiteral("/go-cpu.pprof");
        Run r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("fibRec$"),
                                 QStringLiteral("--source-root"), dir.path()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("ROUTINE ======================== main.fibRec in /src/goworkload/main.go"),
                 r.out.constData());
        // fibRec's costly line 201 with its code, and context lines without cost.
        static const QRegularExpression costly(QStringLiteral("\\n\\s+390 ms\\s+390 ms\\s+201:// line 201\\n"));
        QVERIFY2(costly.match(QString::fromUtf8(r.out)).hasMatch(), r.out.constData());
        QVERIFY2(r.out.contains("         .          .    206:// line 206"), r.out.constData());

        // The same without the source: the per-line table alone, and why.
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("fibRec$")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("Source not found at /src/goworkload/main.go"), r.out.constData());
        QVERIFY2(QRegularExpression(QStringLiteral("390 ms\\s+390 ms\\s+201:\\n"))
                     .match(QString::fromUtf8(r.out))
                     .hasMatch(),
                 r.out.constData());

        // A source shorter than the recording's lines: those lines are said to be past its end.
        QVERIFY(writeStandInSource(dir.filePath(QStringLiteral("goworkload/main.go")), 202));
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("fibRec$"),
                             QStringLiteral("--source-root"), dir.path()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.out.contains("   202:// line 202"), r.out.constData());
        QVERIFY2(r.out.contains("which has 202 lines: the file changed since the recording?"), r.out.constData());
        QVERIFY2(r.out.contains("   205: (not in"), r.out.constData());
    }

    // If this fails, a bad --list is no longer a clear error with a non-zero exit.
    void errors()
    {
        const QString path = kData + QStringLiteral("/go-cpu.pprof");
        Run r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("fib(")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("'fib(' is not a valid regular expression"), r.err.constData());
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("^nosuchfn$")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("no function with a cost matches"), r.err.constData());
        r = run(kEmberline, {QStringLiteral("report"), path, QStringLiteral("--list"), QStringLiteral("fib"),
                             QStringLiteral("--base"), path});
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_GUILESS_MAIN(TestReportList)
#include "tst_report_list.moc"
