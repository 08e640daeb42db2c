// The start page, offscreen: the three ways in with what each does, and the recent files and session folders with
// what they are (program, date, duration, hottest function), read in the background and opened with one click.

#include "tests/ui/test_profiles.h"
#include "tests/ui/test_settings.h"

#include "engine/pprof/pprof_writer.h"
#include "ui/common/recent_files.h"
#include "ui/jobs/profile_summaries.h"
#include "ui/jobs/summary_cache.h"
#include "ui/views/widgets/start_page.h"
#include "ui/window/main_window.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

using namespace emberline;
using namespace emberline::ui;

namespace {

constexpr int64_t kRecordedMs = 1'760'000'000'000; // 2025-10-09, a recording's start

// A recording of `program`: hot 70, cold 30 in cpu nanoseconds, 12.4 s long, with the libraries mapped before
// the program as a recording lists them.
engine::Profile recordingOf(const std::string &program)
{
    engine::Profile p = test::profileOfPaths({{{"main", "hot"}, 70}, {{"main", "cold"}, 30}});
    for (const std::string &file :
         {std::string("/usr/lib/x86_64-linux-gnu/libc.so.6"), std::string("[vdso]"), "/home/user/build/" + program}) {
        engine::Mapping mapping;
        mapping.id = p.mappings().size() + 1;
        mapping.filename = p.intern(file);
        p.mappings().push_back(mapping);
    }
    p.timeNanos = kRecordedMs * 1'000'000;
    p.durationNanos = 12'400'000'000;
    return p;
}

QString columnText(QTreeWidget *list, int row, int column)
{
    return list->topLevelItem(row)->text(column);
}

} // namespace

class TestStartPage : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        test::isolateSettings(m_dir, "tst_start_page");
        QFile::remove(SummaryCache::defaultFile()); // a run before this one left its summaries
    }

    // If this fails, a first-time user is not shown how to begin: the three ways in, each with what it does.
    void firstTimeShowsTheWaysIn()
    {
        StartPage page;
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QVERIFY(!page.recentList()->isVisible()); // nothing recent yet: no empty table
        QSignalSpy open(&page, &StartPage::openRequested);
        QSignalSpy profile(&page, &StartPage::profileRequested);
        QSignalSpy demo(&page, &StartPage::demoRequested);
        for (const char *name : {"startOpenButton", "startProfileButton", "startDemoButton"}) {
            auto *button = page.findChild<QPushButton *>(QLatin1String(name));
            QVERIFY2(button && button->isVisible(), name);
            auto *help = page.findChild<QLabel *>(QLatin1String(name) + QStringLiteral("Help"));
            QVERIFY2(help && help->isVisible() && help->text().size() > 30, name);
            QTest::mouseClick(button, Qt::LeftButton);
        }
        QCOMPARE(open.count(), 1);
        QCOMPARE(profile.count(), 1);
        QCOMPARE(demo.count(), 1);
    }

    // If this fails, the recent list says only file names (not what each profile is), or reads the files on the
    // GUI thread, or a click does not open the one clicked.
    void recentFilesSayWhatTheyAre()
    {
        const QString file = m_dir.filePath(QStringLiteral("server.pprof"));
        QVERIFY(engine::writePprofFile(recordingOf("server"), file.toStdString()).ok());
        const QString session = m_dir.filePath(QStringLiteral("session-1"));
        QVERIFY(QDir().mkpath(session));
        QVERIFY(engine::writePprofFile(recordingOf("renderer"), QDir(session).filePath("profile.pprof").toStdString())
                    .ok());
        const QString broken = m_dir.filePath(QStringLiteral("broken.pprof"));
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not a profile at all");
        }

        StartPage page;
        page.resize(1400, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        page.setRecentFiles({file, session, broken});
        QTreeWidget *list = page.recentList();
        QVERIFY(list->isVisible());
        QCOMPARE(list->topLevelItemCount(), 3);
        // Listed at once, read afterwards: the page does not wait for the files.
        QCOMPARE(columnText(list, 0, StartPage::ProgramColumn), QStringLiteral("reading…"));
        QVERIFY(page.isReadingSummaries());
        QTRY_VERIFY_WITH_TIMEOUT(!page.isReadingSummaries(), 10000);

        const QString recorded = QLocale().toString(QDateTime::fromMSecsSinceEpoch(kRecordedMs), QLocale::ShortFormat);
        QCOMPARE(columnText(list, 0, StartPage::NameColumn), QStringLiteral("server.pprof"));
        QCOMPARE(columnText(list, 0, StartPage::ProgramColumn), QStringLiteral("server"));
        QCOMPARE(columnText(list, 0, StartPage::RecordedColumn), recorded);
        QCOMPARE(columnText(list, 0, StartPage::DurationColumn), QStringLiteral("12 s"));
        QCOMPARE(columnText(list, 0, StartPage::TopFunctionColumn), QStringLiteral("hot (70.0% of cpu)"));
        QCOMPARE(columnText(list, 1, StartPage::NameColumn), QStringLiteral("session-1 (session)"));
        QCOMPARE(columnText(list, 1, StartPage::ProgramColumn), QStringLiteral("renderer"));
        QCOMPARE(columnText(list, 1, StartPage::TopFunctionColumn), QStringLiteral("hot (70.0% of cpu)"));
        QCOMPARE(columnText(list, 2, StartPage::ProgramColumn), QStringLiteral("cannot be read"));
        QVERIFY(!list->topLevelItem(2)->toolTip(StartPage::ProgramColumn).isEmpty());
        QVERIFY(columnText(list, 2, StartPage::TopFunctionColumn).isEmpty());

        // One click opens the row clicked.
        QSignalSpy activated(&page, &StartPage::recentFileActivated);
        const QRect second = list->visualItemRect(list->topLevelItem(1));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, second.center());
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.first().first().toString(), session);
    }

    // If this fails, a summary is read again although its file has not changed, or kept although it has (a live
    // session's folder grows while it records).
    void summariesFollowTheFile()
    {
        const QString file = m_dir.filePath(QStringLiteral("changing.pprof"));
        QVERIFY(engine::writePprofFile(recordingOf("first"), file.toStdString()).ok());
        ProfileSummaries summaries;
        QList<ProfileSummary> got;
        connect(&summaries, &ProfileSummaries::summaryReady, this,
                [&](const ProfileSummary &summary) { got.append(summary); });
        summaries.request({file});
        QTRY_COMPARE(got.size(), 1);
        QCOMPARE(got.last().program, QStringLiteral("first"));
        QTest::qWait(1100); // a later modification time than the first file's
        QVERIFY(engine::writePprofFile(recordingOf("second"), file.toStdString()).ok());
        summaries.request({file});
        QTRY_COMPARE(got.size(), 2);
        QCOMPARE(got.last().program, QStringLiteral("second"));
    }

    // Each start page below is a run of the app of its own: its ProfileSummaries starts empty, only the cache file
    // is shared. If this fails, a summary is computed again at every start of the app (the profile parsed again), or
    // kept for a file that changed since.
    void summariesOutliveTheRun()
    {
        const QString file = m_dir.filePath(QStringLiteral("kept.pprof"));
        QVERIFY(engine::writePprofFile(recordingOf("kept"), file.toStdString()).ok());
        const auto programShown = [](const QString &path) {
            StartPage page;
            page.resize(1200, 800);
            page.show();
            page.setRecentFiles({path});
            if (!QTest::qWaitFor([&] { return !page.isReadingSummaries(); }, 10000))
                return QStringLiteral("<still reading>");
            return columnText(page.recentList(), 0, StartPage::ProgramColumn);
        };
        QCOMPARE(programShown(file), QStringLiteral("kept"));
        QVERIFY(QFile::exists(SummaryCache::defaultFile()));

        // The same size and modification time, but no profile any more: a page that parsed it would say "cannot be
        // read"; the next run shows what the first read.
        const QDateTime modified = QFileInfo(file).lastModified();
        {
            QFile f(file);
            const qint64 size = f.size();
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            QCOMPARE(f.write(QByteArray(size, 'x')), size);
            f.close();
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(modified, QFileDevice::FileModificationTime));
        }
        QCOMPARE(QFileInfo(file).lastModified(), modified);
        QCOMPARE(programShown(file), QStringLiteral("kept"));

        // Changed: read again.
        QVERIFY(engine::writePprofFile(recordingOf("changed"), file.toStdString()).ok());
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::ReadWrite));
            QVERIFY(f.setFileTime(modified.addSecs(5), QFileDevice::FileModificationTime));
        }
        QCOMPARE(programShown(file), QStringLiteral("changed"));
        QCOMPARE(programShown(file), QStringLiteral("changed"));
    }

    // If this fails, the window's start page does not list the recent files, or a click there does not open one.
    void windowOpensARecentFileInOneClick()
    {
        const QString file = m_dir.filePath(QStringLiteral("window.pprof"));
        QVERIFY(engine::writePprofFile(recordingOf("window"), file.toStdString()).ok());
        RecentFiles().clear();
        RecentFiles().add(file);
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *page = window.findChild<StartPage *>();
        QVERIFY(page && page->isVisible());
        QTreeWidget *list = page->recentList();
        QCOMPARE(list->topLevelItemCount(), 1);
        QTRY_COMPARE(columnText(list, 0, StartPage::ProgramColumn), QStringLiteral("window"));
        QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->topLevelItem(0)).center());
        auto *tabs = window.findChild<QTabWidget *>(QStringLiteral("profileTabs"));
        QVERIFY(tabs);
        QTRY_COMPARE(tabs->count(), 1);
        QVERIFY(!page->isVisible());
    }
};

QTEST_MAIN(TestStartPage)
#include "tst_start_page.moc"
