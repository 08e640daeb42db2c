// A recording opens on CPU time in every reader: `emberline record` with wall time (its default) writes
// default_sample_type = cpu-time, so `emberline report` without --sample-type and `go tool pprof -top` show what
// the program spent on a CPU, not the time its idle threads spent waiting.

#include "tests/engine/session/perf_guard.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");
const QString kWaiter = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/waiter");

struct Output {
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Output run(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    p.waitForFinished(120000);
    return Output{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                  p.readAllStandardError()};
}

// The first "Type: ..." line of a report.
QByteArray typeLine(const QByteArray &text)
{
    for (const QByteArray &line : text.split('\n')) {
        if (line.trimmed().startsWith("Type:"))
            return line.trimmed();
    }
    return {};
}

} // namespace

class TestRecordCpuFirst : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        REQUIRE_PERF_EVENTS();
        QVERIFY(m_dir.isValid());
        // The waiter's threads mostly sleep and wait for a lock: its wall time is several times its CPU time.
        const Output r = run(kEmberline, {QStringLiteral("record"), QStringLiteral("--output"), m_dir.path(),
                                          QStringLiteral("--"), kWaiter, QStringLiteral("1.5")});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY2(r.err.contains("context switches (wall time)"), r.err.constData()); // wall time was recorded
        m_profile = m_dir.filePath(QStringLiteral("profile.pprof"));
    }

    // If this fails, `emberline report` opens a recording on wall time (or another type) unless told otherwise.
    void reportShowsCpuTimeByDefault()
    {
        const Output byDefault = run(kEmberline, {QStringLiteral("report"), m_profile});
        QVERIFY2(byDefault.exitCode == 0, byDefault.err.constData());
        QVERIFY2(typeLine(byDefault.out).startsWith("Type: cpu-time"), byDefault.out.constData());
        const Output cpu = run(kEmberline, {QStringLiteral("report"), QStringLiteral("--sample-type"),
                                            QStringLiteral("cpu-time"), m_profile});
        QVERIFY2(cpu.exitCode == 0, cpu.err.constData());
        QCOMPARE(byDefault.out, cpu.out);
        const Output json = run(kEmberline, {QStringLiteral("report"), QStringLiteral("--json"), m_profile});
        QVERIFY2(json.out.contains("\"wall-time\""), json.out.constData()); // the wall time is there, not shown
    }

    // If this fails, `go tool pprof`, an independent reader, opens the recording on another sample type.
    void goPprofShowsCpuTimeByDefault()
    {
        const QString go = QStandardPaths::findExecutable(QStringLiteral("go"));
        if (go.isEmpty()) {
            if (emberline::test::inCi())
                QFAIL("go is not installed but CI=true: the independent reader check cannot run");
            QSKIP("go (golang-go) is not installed");
        }
        const Output top =
            run(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-top"), m_profile});
        QVERIFY2(top.exitCode == 0, top.err.constData());
        QVERIFY2(typeLine(top.out) == "Type: cpu-time", top.out.constData());
        const Output wall = run(go, {QStringLiteral("tool"), QStringLiteral("pprof"), QStringLiteral("-top"),
                                     QStringLiteral("-sample_index=wall-time"), m_profile});
        QVERIFY2(typeLine(wall.out) == "Type: wall-time", wall.out.constData());
    }

private:
    QTemporaryDir m_dir;
    QString m_profile;
};

QTEST_GUILESS_MAIN(TestRecordCpuFirst)
#include "tst_record_cpu_first.moc"
