// `emberline record` on node running a JavaScript loop with --perf-basic-prof: the JIT-compiled function holds
// most of the CPU time, and Emberline names it from node's /tmp/perf-PID.map instead of "anon+0x…".

#include "tests/engine/session/perf_guard.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");

QString nodeProgram()
{
    for (const char *name : {"node", "nodejs"}) {
        const QString path = QStandardPaths::findExecutable(QLatin1String(name));
        if (!path.isEmpty())
            return path;
    }
    return {};
}

} // namespace

class TestRecordJit : public QObject {
    Q_OBJECT

private Q_SLOTS:
    // If this fails, a JavaScript (or LuaJIT, or JVM) program's hot code shows as anonymous addresses.
    void nodeJitFramesNamed()
    {
        REQUIRE_PERF_EVENTS();
        const QString node = nodeProgram();
        if (node.isEmpty()) {
            if (emberline::test::inCi())
                QFAIL("nodejs is missing (installer/install-deps.sh --test installs it)");
            QSKIP("nodejs is not installed");
        }
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString script = dir.filePath(QStringLiteral("loop.js"));
        QFile js(script);
        QVERIFY(js.open(QIODevice::WriteOnly));
        js.write("function emberlineHotLoop(n) {\n"
                 "  let s = 0;\n"
                 "  for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003;\n"
                 "  return s;\n"
                 "}\n"
                 "let t = 0;\n"
                 "const end = Date.now() + 3000;\n"
                 "while (Date.now() < end) t += emberlineHotLoop(200000);\n"
                 "console.log(t > 0 ? 'done' : 'zero');\n");
        js.close();
        const QString out = dir.filePath(QStringLiteral("session"));
        QProcess record;
        record.start(kEmberline, {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("499"),
                                  QStringLiteral("--output"), out, QStringLiteral("--"), node,
                                  QStringLiteral("--perf-basic-prof"), script});
        QVERIFY(record.waitForFinished(60000));
        const QByteArray recordErr = record.readAllStandardError();
        QVERIFY2(record.exitCode() == 0, recordErr.constData());
        QVERIFY2(record.readAllStandardOutput().contains("done"), recordErr.constData());

        QProcess report;
        report.start(kEmberline, {QStringLiteral("report"), out + QStringLiteral("/profile.pprof"),
                                  QStringLiteral("--sample-type"), QStringLiteral("cpu-time"), QStringLiteral("--json"),
                                  QStringLiteral("--top"), QStringLiteral("1000")});
        QVERIFY(report.waitForFinished(60000));
        QCOMPARE(report.exitCode(), 0);
        const QJsonObject json = QJsonDocument::fromJson(report.readAllStandardOutput()).object();
        double hot = 0, anonymous = 0, all = 0;
        for (const QJsonValue &f : json.value(QStringLiteral("functions")).toArray()) {
            const QString name = f.toObject().value(QStringLiteral("name")).toString();
            const double self = f.toObject().value(QStringLiteral("self")).toDouble();
            all += self;
            if (name.contains(QStringLiteral("emberlineHotLoop")))
                hot += self;
            else if (name.startsWith(QStringLiteral("anon+")))
                anonymous += self;
        }
        QVERIFY(all > 0);
        // The loop is where node spends its time; what stays unnamed (interpreter stubs, code freed before the map
        // was read) is a small part.
        QVERIFY2(hot > 0.5 * all, qPrintable(QStringLiteral("hot %1 of %2").arg(hot).arg(all)));
        QVERIFY2(anonymous < hot / 4, qPrintable(QStringLiteral("anonymous %1, hot %2").arg(anonymous).arg(hot)));

        // node leaves its map in /tmp: remove the one this run wrote.
        QDirIterator maps(QStringLiteral("/tmp"), {QStringLiteral("perf-*.map")}, QDir::Files);
        while (maps.hasNext()) {
            QFile map(maps.next());
            if (map.open(QIODevice::ReadOnly) && map.readAll().contains(script.toUtf8()))
                map.remove();
        }
    }
};

QTEST_GUILESS_MAIN(TestRecordJit)
#include "tst_record_jit.moc"
