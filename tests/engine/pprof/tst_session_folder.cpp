// A session folder opened as one profile: its profile.pprof when whole, otherwise its flush files merged (as
// after a crash or SIGKILL, when profile.pprof is missing, empty or cut short), a broken flush named and
// skipped, temporary files never read.

#include "tests/engine/test_support.h"

#include "engine/pprof/pprof_writer.h"
#include "engine/pprof/session_folder.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace emberline;
using namespace emberline::engine;

namespace {

// Flush `n` (1-based): `n` samples of main -> work_n, each worth 10 * n.
Profile flushProfile(int n)
{
    test::ProfileBuilder b({{"cpu-samples", "count"}, {"cpu-time", "nanoseconds"}});
    const uint32_t main = b.location({b.function("main")});
    const uint32_t work = b.location({b.function("work_" + std::to_string(n))});
    for (int i = 0; i < n; ++i)
        b.sample({work, main}, {1, int64_t(10) * n}, {b.numLabel("end_timestamp_ns", int64_t(1000) * n + i)});
    return b.take();
}

// A folder with flush-0001..flush-000N; `withProfile` adds the whole session merged as profile.pprof.
void writeSession(const QString &dir, int flushes, bool withProfile)
{
    std::vector<Profile> all;
    all.reserve(static_cast<size_t>(flushes));
    for (int n = 1; n <= flushes; ++n) {
        all.push_back(flushProfile(n));
        const QString name = QStringLiteral("flush-%1.pprof").arg(n, 4, 10, QLatin1Char('0'));
        QVERIFY(writePprofFile(all.back(), QDir(dir).filePath(name).toStdString()).ok());
    }
    if (withProfile) {
        std::vector<const Profile *> parts;
        parts.reserve(all.size());
        for (const Profile &p : all)
            parts.push_back(&p);
        auto merged = mergeProfiles(parts);
        QVERIFY(merged.ok());
        QVERIFY(writePprofFile(merged.value(), QDir(dir).filePath(QStringLiteral("profile.pprof")).toStdString()).ok());
    }
}

// profile.pprof as a recording writes it: the flushes' samples added up per stack, without their timestamps.
void writeUntimedSessionProfile(const QString &dir, int flushes)
{
    test::ProfileBuilder b({{"cpu-samples", "count"}, {"cpu-time", "nanoseconds"}});
    const uint32_t main = b.location({b.function("main")});
    for (int n = 1; n <= flushes; ++n) {
        const uint32_t work = b.location({b.function("work_" + std::to_string(n))});
        b.sample({work, main}, {n, int64_t(10) * n * n}, {});
    }
    QVERIFY(writePprofFile(b.take(), QDir(dir).filePath(QStringLiteral("profile.pprof")).toStdString()).ok());
}

void cutFile(const QString &path, qint64 keep)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QVERIFY(f.size() > keep);
    QVERIFY(f.resize(keep));
}

int64_t total(const Profile &p, size_t type)
{
    return p.totals().at(type);
}

} // namespace

class TestSessionFolder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void wholeProfileIsUsed();
    void missingProfileMergesFlushes();
    void truncatedProfileMergesFlushes();
    void emptyProfileMergesFlushes();
    void corruptFlushIsNamedAndSkipped();
    void nothingReadable();
    void timesComeFromTheFlushes();
};

// If this fails, a finished session opened in the window has no heatmap or time ranges (its profile.pprof keeps no
// sample's time, its flush files do), or a reader that needs no times reads every flush for nothing, or a broken
// flush makes the window show less than the whole session.
void TestSessionFolder::timesComeFromTheFlushes()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 3, false);
    writeUntimedSessionProfile(dir.path(), 3);
    auto plain = readSessionFolder(dir.path().toStdString());
    QVERIFY2(plain.ok(), plain.ok() ? "" : plain.error().message.c_str());
    QVERIFY(!plain->timesFromFlushes && !plain->fromFlushes);
    QCOMPARE(plain->profile.sampleCount(), size_t(3));

    auto timed = readSessionFolder(dir.path().toStdString(), {}, SessionTimes::Wanted);
    QVERIFY2(timed.ok(), timed.ok() ? "" : timed.error().message.c_str());
    QVERIFY(timed->timesFromFlushes);
    QVERIFY(!timed->fromFlushes); // profile.pprof was whole: nothing to warn about
    QCOMPARE(timed->flushesMerged, size_t(3));
    QCOMPARE(timed->profile.sampleCount(), size_t(1 + 2 + 3));
    QCOMPARE(total(timed->profile, 1), total(plain->profile, 1));
    QVERIFY(timed->profile.findString("end_timestamp_ns") != kNoIndex);

    // A broken flush: profile.pprof, whole, stays, and the reason is given.
    cutFile(dir.filePath(QStringLiteral("flush-0002.pprof")), 20);
    auto partial = readSessionFolder(dir.path().toStdString(), {}, SessionTimes::Wanted);
    QVERIFY2(partial.ok(), partial.ok() ? "" : partial.error().message.c_str());
    QVERIFY(!partial->timesFromFlushes);
    QCOMPARE(partial->profile.sampleCount(), size_t(3));
    QVERIFY2(partial->timesProblem.find("flush-0002.pprof") != std::string::npos, partial->timesProblem.c_str());

    // A profile.pprof that keeps its samples' times is read as it is.
    QTemporaryDir timedDir;
    writeSession(timedDir.path(), 2, true);
    auto whole = readSessionFolder(timedDir.path().toStdString(), {}, SessionTimes::Wanted);
    QVERIFY(whole.ok() && !whole->timesFromFlushes && whole->timesProblem.empty());
}

// If this fails, a finished session's profile.pprof is not what opens (the flushes are merged for nothing).
void TestSessionFolder::wholeProfileIsUsed()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 3, true);
    // A different flush-0004 that profile.pprof does not hold shows which of the two was read.
    QVERIFY(writePprofFile(flushProfile(4), dir.filePath(QStringLiteral("flush-0004.pprof")).toStdString()).ok());
    QVERIFY(isSessionFolder(dir.path().toStdString()));
    auto r = readSessionFolder(dir.path().toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(!r->fromFlushes);
    QCOMPARE(r->profile.sampleCount(), size_t(1 + 2 + 3));
    QCOMPARE(total(r->profile, 1), int64_t(10 * 1 + 20 * 2 + 30 * 3));
}

// If this fails, a session killed before it wrote profile.pprof cannot be opened, or loses flushes.
void TestSessionFolder::missingProfileMergesFlushes()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 4, false);
    // What a killed writer leaves behind: a temporary file, never read.
    QFile tmp(dir.filePath(QStringLiteral("profile.pprof.tmp")));
    QVERIFY(tmp.open(QIODevice::WriteOnly));
    tmp.write("\x1f\x8b garbage");
    tmp.close();
    auto r = readSessionFolder(dir.path().toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->fromFlushes);
    QCOMPARE(r->flushesMerged, size_t(4));
    QVERIFY(r->skipped.empty());
    QVERIFY2(r->sessionProfileProblem.find("profile.pprof: missing") != std::string::npos,
             r->sessionProfileProblem.c_str());
    QCOMPARE(r->profile.sampleCount(), size_t(1 + 2 + 3 + 4));
    QCOMPARE(total(r->profile, 0), int64_t(10));
    QCOMPARE(total(r->profile, 1), int64_t(10 + 40 + 90 + 160));
    // Every flush's function is there, and the per-sample timestamps the timeline reads.
    for (int n = 1; n <= 4; ++n)
        QVERIFY(r->profile.findString("work_" + std::to_string(n)) != kNoIndex);
    QVERIFY(r->profile.findString("end_timestamp_ns") != kNoIndex);
}

// If this fails, a profile.pprof cut short (the disk filled, the machine went down) is refused with the whole
// session, or read as if it were whole.
void TestSessionFolder::truncatedProfileMergesFlushes()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 3, true);
    const QString profile = dir.filePath(QStringLiteral("profile.pprof"));
    cutFile(profile, QFileInfo(profile).size() / 2);
    auto r = readSessionFolder(dir.path().toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->fromFlushes);
    QVERIFY2(r->sessionProfileProblem.starts_with(profile.toStdString() + ": "), r->sessionProfileProblem.c_str());
    QCOMPARE(r->profile.sampleCount(), size_t(6));
    QCOMPARE(total(r->profile, 1), int64_t(10 + 40 + 90));
}

void TestSessionFolder::emptyProfileMergesFlushes()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 2, true);
    cutFile(dir.filePath(QStringLiteral("profile.pprof")), 0);
    auto r = readSessionFolder(dir.path().toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(r->fromFlushes);
    QVERIFY2(r->sessionProfileProblem.find("empty") != std::string::npos, r->sessionProfileProblem.c_str());
    QCOMPARE(r->profile.sampleCount(), size_t(3));
}

// If this fails, one broken flush makes the whole folder unreadable, or is dropped without a word.
void TestSessionFolder::corruptFlushIsNamedAndSkipped()
{
    QTemporaryDir dir;
    writeSession(dir.path(), 4, false);
    const QString broken = dir.filePath(QStringLiteral("flush-0002.pprof"));
    cutFile(broken, 20);
    auto r = readSessionFolder(dir.path().toStdString());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->flushesMerged, size_t(3));
    QCOMPARE(r->skipped.size(), size_t(1));
    QVERIFY2(r->skipped[0].starts_with(broken.toStdString() + ": "), r->skipped[0].c_str());
    QCOMPARE(r->profile.sampleCount(), size_t(1 + 3 + 4));
    QCOMPARE(total(r->profile, 1), int64_t(10 + 90 + 160));
    QVERIFY(r->profile.findString("work_2") == kNoIndex);
}

// If this fails, a folder with nothing to read opens as an empty profile instead of saying why it cannot.
void TestSessionFolder::nothingReadable()
{
    QTemporaryDir dir;
    QVERIFY(!isSessionFolder(dir.path().toStdString()));
    auto empty = readSessionFolder(dir.path().toStdString());
    QVERIFY(!empty.ok());
    QVERIFY2(empty.error().message.find("not a session folder") != std::string::npos, empty.error().message.c_str());

    writeSession(dir.path(), 1, false);
    cutFile(dir.filePath(QStringLiteral("flush-0001.pprof")), 10);
    auto broken = readSessionFolder(dir.path().toStdString());
    QVERIFY(!broken.ok());
    QVERIFY2(broken.error().message.find("flush-0001.pprof") != std::string::npos, broken.error().message.c_str());

    auto file = readSessionFolder(dir.filePath(QStringLiteral("flush-0001.pprof")).toStdString());
    QVERIFY(!file.ok());
}

QTEST_GUILESS_MAIN(TestSessionFolder)
#include "tst_session_folder.moc"
