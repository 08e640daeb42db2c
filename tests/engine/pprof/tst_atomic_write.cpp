// Profiles are written atomically: a temporary file in the same folder, flushed to the disk, then renamed. On a
// full disk or a missing folder the write fails with the file and the reason, and leaves neither a temporary
// file nor an empty or partial file under the final name (an older file of that name stays as it was).
// The full-disk cases mount a tiny tmpfs: they need root, skip locally without it and fail under CI=true.

#include "tests/engine/test_support.h"

#include "engine/pprof/pprof_reader.h"
#include "engine/pprof/pprof_writer.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <sys/mount.h>
#include <unistd.h>

using namespace emberline;
using namespace emberline::engine;

namespace {

QByteArray contents(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::string incompressible(size_t bytes)
{
    std::string s(bytes, '\0');
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (char &c : s) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c = static_cast<char>(x);
    }
    return s;
}

} // namespace

class TestAtomicWrite : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void writesAndReplaces();
    void missingFolder();
    void fullDisk();
};

void TestAtomicWrite::writesAndReplaces()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("flush-0001.pprof"));
    QVERIFY(writeFileAtomically(path.toStdString(), "first").ok());
    QCOMPARE(contents(path), QByteArray("first"));
    QVERIFY(writeFileAtomically(path.toStdString(), "second, longer").ok());
    QCOMPARE(contents(path), QByteArray("second, longer"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{QStringLiteral("flush-0001.pprof")});
}

// If this fails, the error does not say which file, or a temporary file is left behind.
void TestAtomicWrite::missingFolder()
{
    const std::string path = "/nonexistent-dir/flush-0001.pprof";
    const Status st = writeFileAtomically(path, "bytes");
    QVERIFY(!st.ok());
    QCOMPARE(st.error().code, Error::Code::Io);
    QCOMPARE(st.error().message, path + ": No such file or directory");
}

// If this fails, a full disk leaves an empty or cut file under a final name, or damages the older one.
void TestAtomicWrite::fullDisk()
{
    if (::geteuid() != 0) {
        if (qEnvironmentVariable("CI") == QLatin1String("true"))
            QFAIL("mounting a tmpfs needs root, but CI=true");
        QSKIP("mounting a tmpfs needs root");
    }
    QTemporaryDir dir;
    const QString mountPoint = dir.filePath(QStringLiteral("tiny"));
    QVERIFY(QDir().mkpath(mountPoint));
    QVERIFY(::mount("tmpfs", mountPoint.toLocal8Bit().constData(), "tmpfs", 0, "size=64k") == 0);
    auto unmount = qScopeGuard([&] { ::umount2(mountPoint.toLocal8Bit().constData(), MNT_DETACH); });

    // An older file, then a replacement that does not fit: the older one stays whole.
    const QString path = QDir(mountPoint).filePath(QStringLiteral("profile.pprof"));
    QVERIFY(writeFileAtomically(path.toStdString(), "older").ok());
    const Status st = writeFileAtomically(path.toStdString(), incompressible(200 << 10));
    QVERIFY(!st.ok());
    QCOMPARE(st.error().message, path.toStdString() + ": No space left on device");
    QCOMPARE(contents(path), QByteArray("older"));
    QCOMPARE(QDir(mountPoint).entryList(QDir::Files), QStringList{QStringLiteral("profile.pprof")});

    // The session's streamed profile: refused on the way or at the end, and nothing left of it.
    const QString session = QDir(mountPoint).filePath(QStringLiteral("session.pprof"));
    auto go = readPprofFile(test::realPath(QStringLiteral("go-cpu.pprof")));
    QVERIFY(go.ok());
    bool failed = false;
    {
        PprofStreamWriter writer(session.toStdString(), {});
        for (int i = 0; i < 200 && !failed; ++i)
            failed = !writer.add(go.value()).ok();
        if (!failed) {
            auto end = writer.finish();
            failed = !end.ok();
            if (failed)
                QVERIFY2(end.error().message.starts_with(session.toStdString() + ": "), end.error().message.c_str());
        }
    }
    QVERIFY(failed);
    QCOMPARE(QDir(mountPoint).entryList(QDir::Files), QStringList{QStringLiteral("profile.pprof")});
}

QTEST_GUILESS_MAIN(TestAtomicWrite)
#include "tst_atomic_write.moc"
