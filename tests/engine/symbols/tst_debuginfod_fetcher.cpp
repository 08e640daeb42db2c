// DebuginfodFetcher against loopback servers: what it accepts as a debug file, what it says when the server is down,
// stalls or serves garbage, the progress of a download, that it asks once per build id whatever the answer, and
// that the symbolizer, which asks it, returns at once while a download hangs.

#include "engine/symbols/debuginfod_fetcher.h"
#include "engine/symbols/symbolizer.h"
#include "tests/engine/annotate/loopback_debuginfod.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <sys/socket.h>

using namespace emberline;
using namespace emberline::engine;
using namespace emberline::test;

namespace {

const std::string kHotLoop = HOT_LOOP_BINARY;

} // namespace

class TestDebuginfodFetcher : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::string m_buildId;
    QString m_stripped;

    DebuginfodStatus waitForAnswer(DebuginfodFetcher &fetcher)
    {
        fetcher.waitIdle(30000);
        return fetcher.status(m_buildId);
    }

    void useServer(const QString &url, const QString &cache)
    {
        qputenv("DEBUGINFOD_URLS", url.toUtf8());
        qputenv("DEBUGINFOD_CACHE_PATH", m_dir.filePath(cache).toUtf8());
        qputenv("DEBUGINFOD_TIMEOUT", "3");
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_buildId = Symbolizer::readBuildId(kHotLoop);
        QVERIFY(!m_buildId.empty());
        m_stripped = m_dir.filePath(QStringLiteral("hot_loop.stripped"));
        QProcess strip;
        strip.start(QStringLiteral(OBJCOPY),
                    {QStringLiteral("--strip-all"), QString::fromStdString(kHotLoop), m_stripped});
        QVERIFY(strip.waitForFinished() && strip.exitCode() == 0);
    }

    // If this fails, a file that cannot stand for the debug file would be used, or a good one refused.
    void checkDebugFile()
    {
        QVERIFY(DebuginfodFetcher::checkDebugFile(kHotLoop, m_buildId).ok());
        const Status other = DebuginfodFetcher::checkDebugFile(kHotLoop, std::string(40, 'a'));
        QVERIFY(!other.ok());
        QVERIFY2(other.error().message.find("another build") != std::string::npos, other.error().message.c_str());
        const Status stripped = DebuginfodFetcher::checkDebugFile(m_stripped.toStdString(), m_buildId);
        QVERIFY(!stripped.ok());
        QVERIFY2(stripped.error().message.find("neither DWARF nor a symbol table") != std::string::npos,
                 stripped.error().message.c_str());
        QFile garbage(m_dir.filePath(QStringLiteral("garbage")));
        QVERIFY(garbage.open(QIODevice::WriteOnly));
        garbage.write(QByteArray(1000, '\x7f'));
        garbage.close();
        const Status notElf = DebuginfodFetcher::checkDebugFile(garbage.fileName().toStdString(), m_buildId);
        QVERIFY(!notElf.ok());
        QVERIFY2(notElf.error().message.find("not ELF") != std::string::npos, notElf.error().message.c_str());
    }

    // If this fails, a server that is down is not said so, or is asked again for the same build id.
    void serverDown()
    {
        useServer(QStringLiteral("http://127.0.0.1:%1").arg(freePort()), QStringLiteral("cache-down"));
        DebuginfodFetcher fetcher;
        QCOMPARE(fetcher.status(m_buildId).state, DebuginfodState::NotAsked);
        fetcher.request(m_buildId, "hot_loop");
        const DebuginfodStatus status = waitForAnswer(fetcher);
        QCOMPARE(status.state, DebuginfodState::Failed);
        QVERIFY2(status.error.find("down or unreachable") != std::string::npos, status.error.c_str());
        fetcher.request(m_buildId, "hot_loop");
        QCOMPARE(fetcher.status(m_buildId).state, DebuginfodState::Failed);
        QVERIFY(fetcher.takeFound().empty());
    }

    // If this fails, garbage is handed over as a debug file, stays in the cache, or is fetched twice.
    void garbageRefusedOnce()
    {
        FixedAnswerServer server(QByteArray(5000, 'x'));
        useServer(server.url(), QStringLiteral("cache-garbage"));
        DebuginfodFetcher fetcher;
        fetcher.request(m_buildId, "hot_loop");
        fetcher.request(m_buildId, "hot_loop");
        const DebuginfodStatus status = waitForAnswer(fetcher);
        QCOMPARE(status.state, DebuginfodState::Failed);
        QVERIFY2(status.error.find("not ELF") != std::string::npos, status.error.c_str());
        fetcher.request(m_buildId, "hot_loop");
        fetcher.waitIdle(5000);
        QCOMPARE(server.requests(), 1);
        QVERIFY(fetcher.takeFound().empty());
        QVERIFY(!QFile::exists(
            m_dir.filePath(QStringLiteral("cache-garbage/%1/debuginfo").arg(QString::fromStdString(m_buildId)))));
    }

    // If this fails, the good file is not delivered, or delivered with the wrong words.
    void goodFileFound()
    {
        QFile file(QString::fromStdString(kHotLoop));
        QVERIFY(file.open(QIODevice::ReadOnly));
        FixedAnswerServer server(file.readAll());
        useServer(server.url(), QStringLiteral("cache-good"));
        DebuginfodFetcher fetcher;
        fetcher.request(m_buildId, "hot_loop");
        const DebuginfodStatus status = waitForAnswer(fetcher);
        QCOMPARE(status.state, DebuginfodState::Found);
        QVERIFY(QString::fromStdString(status.path).startsWith(m_dir.filePath(QStringLiteral("cache-good"))));
        const auto found = fetcher.takeFound();
        QCOMPARE(found.size(), size_t(1));
        QCOMPARE(found.front().first, m_buildId);
        QVERIFY(fetcher.takeFound().empty());
        QCOMPARE(debuginfodStatusText(status), std::string("debuginfod: debug file downloaded"));
    }

    // If this fails, a download in progress does not show how far it got, or a slow server holds up the end.
    void progressWhileDownloading()
    {
        QFile file(QString::fromStdString(kHotLoop));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray body = file.readAll();
        FixedAnswerServer server(body, body.size() / 2);
        useServer(server.url(), QStringLiteral("cache-slow"));
        QElapsedTimer timer;
        {
            DebuginfodFetcher fetcher;
            fetcher.request(m_buildId, "hot_loop");
            DebuginfodStatus status;
            timer.start();
            while (timer.elapsed() < 2500) {
                status = fetcher.status(m_buildId);
                // The size comes with the server's headers, which a loaded machine may read after the first bytes.
                if (status.state == DebuginfodState::Downloading && status.bytes > 0 && status.totalBytes > 0)
                    break;
                QThread::msleep(20);
            }
            QCOMPARE(status.state, DebuginfodState::Downloading);
            QVERIFY(status.bytes > 0 && status.bytes <= body.size() / 2);
            QCOMPARE(status.totalBytes, int64_t(body.size()));
            QVERIFY2(debuginfodStatusText(status).starts_with("debuginfod: downloading "),
                     debuginfodStatusText(status).c_str());
            QVERIFY(!fetcher.waitIdle(200));
            timer.restart();
        }
        // Cancelled when its owner goes, not after DEBUGINFOD_TIMEOUT.
        QVERIFY2(timer.elapsed() < 2500, qPrintable(QString::number(timer.elapsed())));
    }

    // If this fails, a server that stops sending is not given up after DEBUGINFOD_TIMEOUT, or not said so.
    void stalledServerTimesOut()
    {
        QFile file(QString::fromStdString(kHotLoop));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray body = file.readAll();
        FixedAnswerServer server(body, 4096); // a few KiB, then nothing: the transfer stalls
        useServer(server.url(), QStringLiteral("cache-stalled"));
        qputenv("DEBUGINFOD_TIMEOUT", "1");
        // One attempt: what the fetcher reports for a timed-out transfer. libdebuginfod (0.188) retries a failed
        // query, and in the sanitizer build its retry after a timeout came back as "not found" at once.
        qputenv("DEBUGINFOD_RETRY_LIMIT", "0");
        DebuginfodFetcher fetcher;
        fetcher.request(m_buildId, "hot_loop");
        QVERIFY(fetcher.waitIdle(15000));
        const DebuginfodStatus status = fetcher.status(m_buildId);
        qunsetenv("DEBUGINFOD_RETRY_LIMIT");
        QCOMPARE(status.state, DebuginfodState::Failed);
        QVERIFY2(status.error.find("did not answer in time") != std::string::npos, status.error.c_str());
    }

    // If this fails, the symbolizer waits on the network: a server that accepts and never answers holds it up.
    void symbolizerDoesNotWait()
    {
        // A listening socket nobody accepts from: the connection is made, the answer never comes.
        const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        QVERIFY(::bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0);
        QVERIFY(::listen(listener, 8) == 0);
        QVERIFY(::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length) == 0);
        useServer(QStringLiteral("http://127.0.0.1:%1").arg(ntohs(address.sin_port)), QStringLiteral("cache-hang"));
        QElapsedTimer timer;
        timer.start();
        {
            Symbolizer::Options options;
            options.debugDirectories.clear();
            options.debuginfod = true;
            Symbolizer symbolizer(options);
            const ModuleSymbols symbols = symbolizer.moduleSymbols(m_stripped.toStdString(), m_buildId);
            QVERIFY(symbols.status != SymbolStatus::FullDwarf);
            (void)symbolizer.symbolize(m_stripped.toStdString(), m_buildId, 0x1000);
            const DebuginfodState state = symbolizer.debuginfodStatus(m_buildId).state;
            QVERIFY(state == DebuginfodState::Waiting || state == DebuginfodState::Downloading);
            QVERIFY2(timer.elapsed() < 1500, qPrintable(QString::number(timer.elapsed())));
            QVERIFY(symbolizer.adoptDownloads().empty());
        }
        // The destructor cancels the download rather than wait for DEBUGINFOD_TIMEOUT.
        QVERIFY2(timer.elapsed() < 2900, qPrintable(QString::number(timer.elapsed())));
        ::close(listener);
    }

    void cleanupTestCase() { qunsetenv("DEBUGINFOD_URLS"); }
};

QTEST_GUILESS_MAIN(TestDebuginfodFetcher)
#include "tst_debuginfod_fetcher.moc"
