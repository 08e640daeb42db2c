// The GUI's session facade on a real target: it runs RecordSession on its own thread, delivers started, live
// numbers, flushes and the end as queued signals on the owner's thread, never blocks the caller when stopping,
// and reports an engine refusal as failed(message).

#include "tests/engine/session/perf_guard.h"

#include "engine/session/profiling_session.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace emberline::engine;

namespace {

QString targetPath(const char *name)
{
    return QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/") + QLatin1String(name);
}

} // namespace

class TestProfilingSession : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // session folders go to a test location
    }

    // Launching cpu_split with 1 s flushes: started, then live numbers and two flushes arrive as signals on this
    // thread; stop() returns at once and finished follows with a summary, the flushes on disk. If this fails,
    // the GUI would freeze on Stop, miss flushes, or never learn that the session ended.
    void launchFlushesAndStopWithoutBlocking()
    {
        REQUIRE_PERF_EVENTS();
        QTemporaryDir dir;
        SessionConfig config;
        config.command = {targetPath("cpu_split").toStdString(), "20"};
        config.flushPeriodNs = 1'000'000'000;
        config.outputDirectory = dir.path().toStdString();
        ProfilingSession session(config);
        QSignalSpy started(&session, &ProfilingSession::started);
        QSignalSpy stats(&session, &ProfilingSession::statsUpdated);
        // The flushes reach this thread inside the live updates, each once, in sequence.
        std::vector<std::shared_ptr<const Flush>> flushes;
        connect(&session, &ProfilingSession::liveUpdated, this, [&](const std::shared_ptr<const LiveUpdate> &update) {
            flushes.insert(flushes.end(), update->flushes.begin(), update->flushes.end());
        });
        QSignalSpy finished(&session, &ProfilingSession::finished);
        session.start();
        QCOMPARE(session.state(), ProfilingSession::State::Running);
        QVERIFY(started.wait(5000));
        QTRY_VERIFY_WITH_TIMEOUT(flushes.size() >= 2, 10000);
        QVERIFY(stats.count() > 0);
        QCOMPARE(session.flushesReceived(), uint32_t(flushes.size()));
        for (size_t i = 0; i < flushes.size(); ++i)
            QCOMPARE(flushes[i]->sequence, uint32_t(i + 1));
        const auto flush = flushes.front();
        QVERIFY(flush && flush->profile && flush->profile->sampleCount() > 0);
        QElapsedTimer timer;
        timer.start();
        session.stop();
        QVERIFY2(timer.elapsed() < 50, "stop() must not wait for the session thread");
        QCOMPARE(session.state(), ProfilingSession::State::Stopping);
        QVERIFY(finished.wait(15000));
        QCOMPARE(session.state(), ProfilingSession::State::Finished);
        QVERIFY(session.summary().samples > 0);
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("flush-0001.pprof"))));
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("profile.pprof"))));
    }

    // Attaching to a pid that does not exist: failed(message) with the engine's words, no finished. If this
    // fails, the dialog could not tell the user why attaching was refused.
    void refusedAttachReportsTheEnginesMessage()
    {
        QTemporaryDir dir;
        SessionConfig config;
        config.pid = 999999;
        config.outputDirectory = dir.path().toStdString();
        ProfilingSession session(config);
        QSignalSpy failed(&session, &ProfilingSession::failed);
        QSignalSpy finished(&session, &ProfilingSession::finished);
        session.start();
        QVERIFY(failed.wait(10000));
        QVERIFY(!failed.at(0).at(0).toString().isEmpty());
        QCOMPARE(finished.count(), 0);
        QCOMPARE(session.state(), ProfilingSession::State::Failed);
    }

    // Without an output directory, the flushes go to a new folder under AppDataLocation/sessions. If this fails,
    // a GUI session would lose its flushes.
    void defaultOutputDirectoryIsUnderSessions()
    {
        SessionConfig config;
        config.pid = 999999;
        ProfilingSession session(config);
        QSignalSpy failed(&session, &ProfilingSession::failed);
        session.start();
        QVERIFY(session.outputDirectory().startsWith(ProfilingSession::sessionsDirectory()));
        QVERIFY(failed.wait(10000));
    }
};

QTEST_GUILESS_MAIN(TestProfilingSession)
#include "tst_profiling_session.moc"
