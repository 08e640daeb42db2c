// `emberline record` of a stripped copy of tests/targets/hot_loop while a real debuginfod (Debian's, started on
// loopback over a folder holding the unstripped build) serves its debug file: the recorded frames carry the
// function's name, and the health lines say the symbols were found by debuginfod. Without DEBUGINFOD_URLS the
// same copy records no name, which shows that the server made the difference. A server that is down, one that
// stalls, and one that answers with garbage or with the debug file of another build leave the frames named by
// address, never wrongly, with a line that says why.

#include "engine/symbols/symbolizer.h"
#include "tests/engine/annotate/loopback_debuginfod.h"
#include "tests/engine/session/perf_guard.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace emberline;
using namespace emberline::test;

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");
const QString kHotLoop = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/hot_loop");
const QString kOtherBuild = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/cpu_split");

struct Run {
    int exitCode = -1;
    QByteArray err;
};

void requireOrSkip(bool condition, const QString &why)
{
    if (condition)
        return;
    if (inCi())
        QFAIL(qPrintable(why + QStringLiteral(" (required under CI=true; installer/install-deps.sh --test)")));
    QSKIP(qPrintable(why));
}

// The function names of a profile, from `emberline report --json`.
QSet<QString> functionNames(const QString &profile)
{
    QProcess p;
    p.start(kEmberline, {QStringLiteral("report"), profile, QStringLiteral("--json"), QStringLiteral("--top"),
                         QStringLiteral("1000")});
    p.waitForFinished(60000);
    QSet<QString> names;
    const QJsonArray functions =
        QJsonDocument::fromJson(p.readAllStandardOutput()).object().value(QLatin1String("functions")).toArray();
    for (const auto &f : functions)
        names.insert(f.toObject().value(QLatin1String("name")).toString());
    return names;
}

} // namespace

class TestRecordDebuginfod : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_stripped;
    std::string m_buildId;
    int m_runs = 0;

    // Records the stripped copy for `seconds` with DEBUGINFOD_URLS=`urls` ("" unsets it) into a fresh folder.
    Run record(const QString &urls, const QString &output, double seconds = 3)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DEBUGINFOD_URLS"));
        if (!urls.isEmpty())
            env.insert(QStringLiteral("DEBUGINFOD_URLS"), urls);
        // A cache of its own per run, so that no run is answered from another's downloads.
        env.insert(QStringLiteral("DEBUGINFOD_CACHE_PATH"), m_dir.filePath(QStringLiteral("cache%1").arg(++m_runs)));
        env.insert(QStringLiteral("DEBUGINFOD_TIMEOUT"), QStringLiteral("10"));
        QProcess p;
        p.setProcessEnvironment(env);
        p.start(kEmberline, {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("299"),
                             QStringLiteral("--flush-period"), QStringLiteral("1"), QStringLiteral("--output"), output,
                             QStringLiteral("--"), m_stripped, QString::number(seconds)});
        p.waitForFinished(120000);
        return Run{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardError()};
    }

    // The frames of the stripped copy are named by address only: no name at all from the copy, none from a
    // wrong file (cpu_split's functions, or main, which the stripped copy cannot name).
    void verifyNamedByAddressOnly(const QString &output)
    {
        const QSet<QString> names = functionNames(output + QStringLiteral("/profile.pprof"));
        QVERIFY2(!names.isEmpty(), "profile.pprof has no functions");
        QVERIFY2(!names.contains(QStringLiteral("spin")) && !names.contains(QStringLiteral("main")) &&
                     !names.contains(QStringLiteral("hot_sixty")),
                 qPrintable(QStringList(names.values()).join(QLatin1Char(' '))));
        bool byAddress = false;
        for (const QString &name : names)
            byAddress |= name.startsWith(QLatin1String("hot_loop+0x"));
        QVERIFY2(byAddress, qPrintable(QStringList(names.values()).join(QLatin1Char(' '))));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_buildId = engine::Symbolizer::readBuildId(kHotLoop.toStdString());
        QVERIFY(!m_buildId.empty());
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("served")));
        QVERIFY(QFile::copy(kHotLoop, m_dir.filePath(QStringLiteral("served/hot_loop"))));
        m_stripped = m_dir.filePath(QStringLiteral("hot_loop"));
        QProcess strip;
        strip.start(QStringLiteral(OBJCOPY), {QStringLiteral("--strip-all"), kHotLoop, m_stripped});
        QVERIFY(strip.waitForFinished() && strip.exitCode() == 0);
        QCOMPARE(engine::Symbolizer::readBuildId(m_stripped.toStdString()), m_buildId);
    }

    // If this fails, the stripped copy names its functions by itself, and the cases below prove nothing.
    void withoutDebuginfodNoNames()
    {
        REQUIRE_PERF_EVENTS();
        const QString output = m_dir.filePath(QStringLiteral("plain"));
        const Run r = record({}, output);
        QCOMPARE(r.exitCode, 0);
        verifyNamedByAddressOnly(output);
    }

    // If this fails, a stripped program is not symbolized through debuginfod during `emberline record`, or the
    // health lines do not say where its names came from.
    void strippedProgramSymbolizedThroughDebuginfod()
    {
        REQUIRE_PERF_EVENTS();
        requireOrSkip(!LoopbackDebuginfod::executable().isEmpty(), QStringLiteral("debuginfod is not installed"));
        LoopbackDebuginfod server;
        QVERIFY2(server.start(m_dir.filePath(QStringLiteral("served")), m_dir.filePath(QStringLiteral("db.sqlite")),
                              m_buildId),
                 "debuginfod did not serve the unstripped copy within 30 s");
        const QString output = m_dir.filePath(QStringLiteral("served-run"));
        const Run r = record(server.url(), output);
        QCOMPARE(r.exitCode, 0);
        const QSet<QString> names = functionNames(output + QStringLiteral("/profile.pprof"));
        QVERIFY2(names.contains(QStringLiteral("spin")),
                 qPrintable(QStringList(names.values()).join(QLatin1Char(' '))));
        QVERIFY2(names.contains(QStringLiteral("main")),
                 qPrintable(QStringList(names.values()).join(QLatin1Char(' '))));
        // The last flush with the program's frames too: the names are in the flushes after the download, not only
        // in the merged profile. (The session's very last flush may hold only the target's exit, without them.)
        const QStringList flushes = QDir(output).entryList({QStringLiteral("flush-*.pprof")}, QDir::Files, QDir::Name);
        QVERIFY(!flushes.isEmpty());
        QSet<QString> lastWithProgram;
        for (auto it = flushes.crbegin(); it != flushes.crend() && lastWithProgram.isEmpty(); ++it) {
            const QSet<QString> inFlush = functionNames(output + QLatin1Char('/') + *it);
            const bool program = std::any_of(inFlush.begin(), inFlush.end(), [](const QString &name) {
                return name == QLatin1String("spin") || name.startsWith(QLatin1String("hot_loop+0x"));
            });
            if (program)
                lastWithProgram = inFlush;
        }
        QVERIFY2(lastWithProgram.contains(QStringLiteral("spin")),
                 qPrintable(QStringList(lastWithProgram.values()).join(QLatin1Char(' '))));
        QVERIFY2(r.err.contains("hot_loop") && r.err.contains("found by debuginfod"), r.err.constData());
        QVERIFY2(!r.err.contains("problem: debuginfod"), r.err.constData());
    }

    // If this fails, a server that is down crashes or hangs the session, gives names, or says nothing.
    void serverDownIsSaidSo()
    {
        REQUIRE_PERF_EVENTS();
        const QString output = m_dir.filePath(QStringLiteral("down-run"));
        const Run r = record(QStringLiteral("http://127.0.0.1:%1").arg(freePort()), output, 2);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("debuginfod could not give") && r.err.contains("down or unreachable"),
                 r.err.constData());
        verifyNamedByAddressOnly(output);
    }

    // If this fails, a server that sends half a file and then nothing holds the session's end up for longer than
    // the final flush's bounded wait, or is not said to be still downloading.
    void slowServerDoesNotHoldUpTheSession()
    {
        REQUIRE_PERF_EVENTS();
        QFile served(kHotLoop);
        QVERIFY(served.open(QIODevice::ReadOnly));
        const QByteArray body = served.readAll();
        FixedAnswerServer server(body, body.size() / 2);
        const QString output = m_dir.filePath(QStringLiteral("slow-run"));
        QElapsedTimer timer;
        timer.start();
        const Run r = record(server.url(), output, 2);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(timer.elapsed() < 2000 + 5000 + 5000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY2(r.err.contains("debuginfod: downloading"), r.err.constData());
        verifyNamedByAddressOnly(output);
    }

    // If this fails, bytes that are not ELF are taken for a debug file (a crash, or names from nowhere).
    void garbageIsRefused()
    {
        REQUIRE_PERF_EVENTS();
        FixedAnswerServer server(QByteArray(4096, '\x5a'));
        const QString output = m_dir.filePath(QStringLiteral("garbage-run"));
        const Run r = record(server.url(), output, 2);
        QCOMPARE(r.exitCode, 0);
        QVERIFY(server.requests() > 0);
        QVERIFY2(r.err.contains("debuginfod could not give") && r.err.contains("not ELF"), r.err.constData());
        verifyNamedByAddressOnly(output);
        // Refused files leave the cache, so that no later lookup trusts them.
        QVERIFY(!QFile::exists(
            m_dir.filePath(QStringLiteral("cache%1/%2/debuginfo")).arg(m_runs).arg(QString::fromStdString(m_buildId))));
    }

    // If this fails, the debug file of another build names the frames: wrong names, the worst answer.
    void otherBuildIsRefused()
    {
        REQUIRE_PERF_EVENTS();
        QFile other(kOtherBuild);
        QVERIFY(other.open(QIODevice::ReadOnly));
        FixedAnswerServer server(other.readAll());
        const QString output = m_dir.filePath(QStringLiteral("other-run"));
        const Run r = record(server.url(), output, 2);
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains("debuginfod could not give") && r.err.contains("another build"), r.err.constData());
        verifyNamedByAddressOnly(output);
    }
};

QTEST_GUILESS_MAIN(TestRecordDebuginfod)
#include "tst_record_debuginfod.moc"
