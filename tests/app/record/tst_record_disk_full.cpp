// `emberline record` into a folder that fills up or cannot be written, with the real binary and a real target:
// every failed write is named with its reason, no empty or unreadable profile is left under a final name, the
// session goes on to its end, the summary says what could not be saved, and the target's exit status is ours.
// Mounting a tiny tmpfs needs root: skipped locally without it, a failure under CI=true.

#include "engine/pprof/pprof_reader.h"
#include "tests/engine/session/perf_guard.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/mount.h>
#include <unistd.h>

namespace {

const QString kEmberline = QStringLiteral(EMBERLINE_BINARY_DIR "/app/emberline");
const QString kManyStacks = QStringLiteral(EMBERLINE_BINARY_DIR "/tests/targets/many_stacks");

struct Run {
    int exitCode = -1;
    QString err;
};

Run record(const QString &output, const QString &script)
{
    QProcess p;
    p.start(kEmberline, {QStringLiteral("record"), QStringLiteral("--frequency"), QStringLiteral("999"),
                         QStringLiteral("--flush-period"), QStringLiteral("1"), QStringLiteral("--output"), output,
                         QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"), script});
    p.waitForFinished(120000);
    return Run{p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
               QString::fromLocal8Bit(p.readAllStandardError())};
}

// A tmpfs of `options` mounted on a new folder, unmounted when it goes.
class Mount {
public:
    explicit Mount(const char *options) : m_path(m_dir.filePath(QStringLiteral("out")))
    {
        QDir().mkpath(m_path);
        m_mounted = ::mount("tmpfs", m_path.toLocal8Bit().constData(), "tmpfs", 0, options) == 0;
    }
    ~Mount()
    {
        if (m_mounted)
            ::umount2(m_path.toLocal8Bit().constData(), MNT_DETACH);
    }
    bool mounted() const { return m_mounted; }
    QString path() const { return m_path; }

private:
    QTemporaryDir m_dir;
    QString m_path;
    bool m_mounted = false;
};

#define REQUIRE_ROOT()                                                                                                 \
    do {                                                                                                               \
        if (::geteuid() != 0) {                                                                                        \
            if (emberline::test::inCi())                                                                               \
                QFAIL("mounting a tmpfs needs root, but CI=true: the disk-full handling cannot be tested");            \
            QSKIP("mounting a tmpfs needs root");                                                                      \
        }                                                                                                              \
    } while (0)

} // namespace

class TestRecordDiskFull : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void diskFull();
    void unwritableFolder();
};

// If this fails, a full disk loses flushes silently, leaves an empty or partial file under a final name, ends
// the session early or changes the target's exit status.
void TestRecordDiskFull::diskFull()
{
    REQUIRE_ROOT();
    Mount tiny("size=64k");
    QVERIFY(tiny.mounted());
    const Run r = record(tiny.path(), kManyStacks + QStringLiteral(" 6; exit 7"));
    QCOMPARE(r.exitCode, 7);

    // Every flush is reported, saved or not, in order and once: none goes missing without a word.
    const QRegularExpression flushLine(QStringLiteral("^emberline: flush (\\d+): \\d+ samples (-> |NOT saved: )(.*)$"),
                                       QRegularExpression::MultilineOption);
    int expected = 1;
    int notSaved = 0;
    for (auto it = flushLine.globalMatch(r.err); it.hasNext(); ++expected) {
        const auto m = it.next();
        QCOMPARE(m.captured(1).toInt(), expected);
        const QString file = tiny.path() + QStringLiteral("/flush-%1.pprof").arg(expected, 4, 10, QLatin1Char('0'));
        if (m.captured(2) == QLatin1String("-> ")) {
            QCOMPARE(m.captured(3), file);
        } else {
            ++notSaved;
            QCOMPARE(m.captured(3), file + QStringLiteral(": No space left on device"));
            QVERIFY2(!QFile::exists(file), qPrintable(file));
        }
    }
    const int flushes = expected - 1;
    QVERIFY2(flushes >= 5, qPrintable(r.err));
    QVERIFY2(notSaved >= 1, qPrintable(r.err)); // 64 KiB cannot hold six flushes of 100,000 call paths
    // The summary: what could not be saved, each file with its reason.
    QVERIFY2(r.err.contains(QStringLiteral("emberline: could not save %1 of %2 flush(es)").arg(notSaved).arg(flushes)),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(QStringLiteral("target exited with status 7")), qPrintable(r.err));

    // What is left under a final name is whole; nothing temporary is left at all.
    const QStringList left = QDir(tiny.path()).entryList(QDir::Files);
    // Nothing at all only where no flush fitted (a loaded machine's first flush holds more call paths already).
    QVERIFY2(!left.isEmpty() || notSaved == flushes, qPrintable(r.err));
    for (const QString &name : left) {
        QVERIFY2(name.endsWith(QLatin1String(".pprof")), qPrintable(name));
        auto read = emberline::engine::readPprofFile(QDir(tiny.path()).filePath(name).toStdString());
        QVERIFY2(read.ok(), read.ok() ? "" : read.error().message.c_str());
        QVERIFY(read->sampleCount() > 0);
    }
    if (!left.contains(QStringLiteral("profile.pprof")))
        QVERIFY2(r.err.contains(tiny.path() + QStringLiteral("/profile.pprof: No space left on device")),
                 qPrintable(r.err));
}

// If this fails, a folder that cannot be written is found out only at the end (or never), after the target ran.
void TestRecordDiskFull::unwritableFolder()
{
    QTemporaryDir marker;
    const QString ran = marker.filePath(QStringLiteral("ran"));
    const QString script = QStringLiteral("touch ") + ran;
    if (::geteuid() == 0) {
        Mount readOnly("ro,size=64k");
        QVERIFY(readOnly.mounted());
        const Run r = record(readOnly.path(), script);
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(readOnly.path() + QStringLiteral(": Read-only file system")), qPrintable(r.err));
    } else {
        QTemporaryDir dir;
        QVERIFY(QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        const Run r = record(dir.path(), script);
        QVERIFY(r.exitCode != 0);
        QVERIFY2(r.err.contains(dir.path() + QStringLiteral(": Permission denied")), qPrintable(r.err));
        QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    QVERIFY2(!QFile::exists(ran), "the target ran although nothing could be saved");
}

QTEST_GUILESS_MAIN(TestRecordDiskFull)
#include "tst_record_disk_full.moc"
