// Disassembly through a real debuginfod server (Debian's `debuginfod`, started on loopback by the test over a
// folder that holds an unstripped copy of tests/targets/hot_loop): a stripped copy at the recorded path gets its
// symbols and lines from the server, a recorded path that is gone gets the executable itself, and a server that
// is down is said so. Without DEBUGINFOD_URLS the stripped copy alone cannot name the function's extent, which
// shows that the server, not a local file, made the difference.

#include "hot_loop_profile.h"
#include "loopback_debuginfod.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace emberline;
using namespace emberline::test;

namespace {

void requireOrSkip(bool condition, const QString &why)
{
    if (condition)
        return;
    if (qEnvironmentVariable("CI") == QLatin1String("true"))
        QFAIL(qPrintable(why + QStringLiteral(" (required under CI=true; installer/install-deps.sh --test)")));
    QSKIP(qPrintable(why));
}

} // namespace

class TestDisassemblyDebuginfod : public QObject {
    Q_OBJECT
    engine::DisassemblyRequest request(const std::string &name)
    {
        engine::DisassemblyRequest r = emberline::test::request(name);
        r.useDebuginfod = true;
        return r;
    }

    QTemporaryDir m_dir;
    QString m_stripped;
    std::string m_buildId;
    QProcess m_server;
    int m_port = 0;

private Q_SLOTS:
    void initTestCase()
    {
        qunsetenv("DEBUGINFOD_URLS");
        m_buildId = ElfTestImage::fromFile(kHotLoop)->buildId();
        QVERIFY(!m_buildId.empty());
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("served")));
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("stripped")));
        QVERIFY(QFile::copy(QString::fromStdString(kHotLoop), m_dir.filePath(QStringLiteral("served/hot_loop"))));
        m_stripped = m_dir.filePath(QStringLiteral("stripped/hot_loop"));
        QProcess strip;
        strip.start(QStringLiteral(OBJCOPY),
                    {QStringLiteral("--strip-all"), QString::fromStdString(kHotLoop), m_stripped});
        QVERIFY(strip.waitForFinished() && strip.exitCode() == 0);
        QCOMPARE(ElfTestImage::fromFile(m_stripped.toStdString())->buildId(), m_buildId);
        QVERIFY(!ElfTestImage::fromFile(m_stripped.toStdString())->address("spin"));
    }

    // If this fails, the stripped copy names its functions by itself, and the later cases prove nothing.
    void strippedCopyAloneHasNoExtent()
    {
        HotLoopProfile h = hotLoopProfile(m_stripped.toStdString(), m_buildId);
        auto result = engine::disassembleFunctions(h.profile, perStack(h.profile), request("spin"));
        QVERIFY(result.ok());
        QVERIFY2(
            QString::fromStdString(result->front().error).contains(QLatin1String("no symbol or debug information")),
            result->front().error.c_str());
    }

    void startServer()
    {
        const QString server = QStandardPaths::findExecutable(QStringLiteral("debuginfod"));
        requireOrSkip(!server.isEmpty(), QStringLiteral("debuginfod is not installed"));
        m_port = freePort();
        QVERIFY(m_port > 0);
        m_server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_server.start(server, {QStringLiteral("-p"), QString::number(m_port), QStringLiteral("-d"),
                                m_dir.filePath(QStringLiteral("db.sqlite")), QStringLiteral("-F"),
                                m_dir.filePath(QStringLiteral("served"))});
        QVERIFY(m_server.waitForStarted());
        // Ready once its first scan has indexed the copy.
        const QByteArray path = "/buildid/" + QByteArray::fromStdString(m_buildId) + "/debuginfo";
        QElapsedTimer timer;
        timer.start();
        while (!httpStatus(m_port, path).contains("200") && timer.elapsed() < 30000 &&
               m_server.state() == QProcess::Running)
            QThread::msleep(100);
        QVERIFY2(httpStatus(m_port, path).contains("200"), "debuginfod did not serve the copy within 30 s");
        qputenv("DEBUGINFOD_URLS", QStringLiteral("http://127.0.0.1:%1").arg(m_port).toUtf8());
        qputenv("DEBUGINFOD_CACHE_PATH", m_dir.filePath(QStringLiteral("cache")).toUtf8());
        qputenv("DEBUGINFOD_TIMEOUT", "10");
    }

    // If this fails, debug information is not fetched by build id for a stripped binary: no listing, or no lines.
    void strippedCopyGetsSymbolsFromTheServer()
    {
        QVERIFY(m_port > 0);
        HotLoopProfile h = hotLoopProfile(m_stripped.toStdString(), m_buildId);
        auto result = engine::disassembleFunctions(h.profile, perStack(h.profile), request("spin"));
        QVERIFY(result.ok());
        const engine::FunctionDisassembly &fn = result->front();
        QVERIFY2(fn.error.empty(), fn.error.c_str());
        QCOMPARE(fn.binary, m_stripped.toStdString());
        QCOMPARE(fn.start, h.spinAddress);
        QCOMPARE(fn.instructions.front().self, int64_t(5));
        QVERIFY(std::any_of(fn.instructions.begin(), fn.instructions.end(), [](const auto &insn) {
            return insn.line > 0 && QString::fromStdString(insn.file).endsWith(QLatin1String("hot_loop.c"));
        }));
        const QString cache = m_dir.filePath(QStringLiteral("cache"));
        QVERIFY2(std::any_of(fn.notes.begin(), fn.notes.end(),
                             [&](const std::string &note) { return QString::fromStdString(note).contains(cache); }),
                 fn.notes.empty() ? "no notes" : fn.notes.front().c_str());
    }

    // If this fails, a binary that is gone from disk is not fetched from the server by its build id.
    void missingBinaryIsFetched()
    {
        QVERIFY(m_port > 0);
        HotLoopProfile h = hotLoopProfile(m_dir.filePath(QStringLiteral("gone/hot_loop")).toStdString(), m_buildId);
        auto result = engine::disassembleFunctions(h.profile, perStack(h.profile), request("spin"));
        QVERIFY(result.ok());
        const engine::FunctionDisassembly &fn = result->front();
        QVERIFY2(fn.error.empty(), fn.error.c_str());
        QCOMPARE(fn.origin, std::string("debuginfod"));
        QVERIFY(QString::fromStdString(fn.binary).startsWith(m_dir.filePath(QStringLiteral("cache"))));
        QCOMPARE(fn.instructions.front().self, int64_t(5));
    }

    // If this fails, a server that is down gives a silent empty answer, a hang or a crash instead of an error.
    void serverDownIsSaidSo()
    {
        QVERIFY(m_port > 0);
        m_server.terminate();
        QVERIFY(m_server.waitForFinished(10000));
        qputenv("DEBUGINFOD_CACHE_PATH", m_dir.filePath(QStringLiteral("cache2")).toUtf8());
        HotLoopProfile h = hotLoopProfile(m_dir.filePath(QStringLiteral("gone/hot_loop")).toStdString(), m_buildId);
        QElapsedTimer timer;
        timer.start();
        auto result = engine::disassembleFunctions(h.profile, perStack(h.profile), request("spin"));
        QVERIFY(result.ok());
        const QString error = QString::fromStdString(result->front().error);
        QVERIFY2(error.contains(QLatin1String("debuginfod: no executable")), qPrintable(error));
        QVERIFY(timer.elapsed() < 20000);
    }

    void cleanupTestCase()
    {
        if (m_server.state() != QProcess::NotRunning) {
            m_server.terminate();
            m_server.waitForFinished(10000);
        }
    }
};

QTEST_GUILESS_MAIN(TestDisassemblyDebuginfod)
#include "tst_disassembly_debuginfod.moc"
