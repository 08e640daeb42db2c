#include "engine/pprof/pprof_writer.h"
#include "tests/ui/test_profiles.h"
#include "ui/common/model_roles.h"
#include "ui/common/recent_files.h"
#include "ui/flamegraph/breadcrumb_bar.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/views/explorer/profile_explorer.h"
#include "ui/views/explorer/profile_view.h"
#include "ui/views/widgets/thread_filter_button.h"
#include "ui/window/main_window.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QSettings>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTreeView>

using namespace emberline;
using emberline::ui::FlameGraphView;
using emberline::ui::MainWindow;
using emberline::ui::ProfileExplorer;
using emberline::ui::ProfileView;

namespace {

const QString kGoCpu = QStringLiteral(EMBERLINE_TEST_DATA "/pprof/go-cpu.pprof");

template <typename T> T *child(QWidget *parent, const char *name)
{
    return parent->findChild<T *>(QLatin1String(name));
}

} // namespace

// The window as a user drives it, offscreen: open a real file, search, click into a frame, go back through the
// breadcrumb, switch the sample type, filter threads, open a broken file, drop a file.
class TestMainWindow : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    ProfileExplorer *openAndWait(MainWindow &window, const QString &path)
    {
        window.openFiles({path});
        ProfileView *view = window.currentProfileView();
        if (!view)
            return nullptr;
        if (!QTest::qWaitFor([&] { return view->state() != ProfileView::State::Loading; }, 20000))
            return nullptr;
        if (!view->explorer())
            return nullptr;
        ProfileExplorer *explorer = view->explorer();
        if (!QTest::qWaitFor([&] { return explorer->analysis() != nullptr && !explorer->isAnalysing(); }, 20000))
            return nullptr;
        return explorer;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName(QStringLiteral("EmberlineTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.path());
        ui::RecentFiles().clear();
    }

    // Opening go-cpu.pprof (the path File > Open, the command line and drops all take) ends in a tab with a
    // flame graph; searching shows the matched share; clicking main.fibRec zooms and fills the breadcrumb;
    // the breadcrumb and Esc zoom back out. If this fails, the viewer's core interaction is broken.
    void openSearchAndZoom()
    {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(child<QWidget>(&window, "startPage")->isVisible());

        ProfileExplorer *explorer = openAndWait(window, kGoCpu);
        QVERIFY(explorer);
        QVERIFY(!child<QWidget>(&window, "startPage")->isVisible());
        QCOMPARE(window.tabs()->count(), 1);
        QCOMPARE(window.tabs()->tabText(0), QStringLiteral("go-cpu.pprof"));
        QVERIFY(ui::RecentFiles().files().contains(QFileInfo(kGoCpu).absoluteFilePath()));

        auto *flame = child<FlameGraphView>(explorer, "flameGraph");
        QVERIFY(flame);
        const auto &layout = flame->layout();
        QCOMPARE(layout.tree()->total(), explorer->loaded().totals[1]); // cpu/nanoseconds is the default

        // Search: the label shows the share, computed independently from the function table.
        auto *search = child<QLineEdit>(explorer, "flameSearch");
        QTest::keyClicks(search, QStringLiteral("main.fibRec"));
        const uint32_t fibFrame = explorer->loaded().frames->findByName("main.fibRec").front();
        int64_t fibTotal = 0;
        for (const auto &row : explorer->analysis()->functions->rows()) {
            if (row.frame == fibFrame)
                fibTotal = row.total;
        }
        QVERIFY(fibTotal > 0);
        const QString share =
            QString::number(100.0 * double(fibTotal) / double(layout.tree()->total()), 'f', 2) + QLatin1Char('%');
        auto *result = child<QLabel>(explorer, "searchResultLabel");
        QTRY_VERIFY2(result->text().contains(share), qPrintable(result->text() + QLatin1String(" / ") + share));
        QCOMPARE(layout.matchedTotal(), fibTotal);

        // Click the largest main.fibRec frame where the layout says it is.
        const uint32_t node = layout.largestNodeNamed("main.fibRec");
        const QRectF rect = layout.nodeRect(node);
        QVERIFY(flame->viewport()->rect().contains(rect.center().toPoint()));
        QTest::mouseClick(flame->viewport(), Qt::LeftButton, {}, rect.center().toPoint());
        QCOMPARE(layout.zoomNode(), node);
        QCOMPARE(layout.nodeRect(node).width(), double(flame->viewport()->width()));
        auto *breadcrumb = child<ui::BreadcrumbBar>(explorer, "flameBreadcrumb");
        QCOMPARE(breadcrumb->path().back().name, QStringLiteral("main.fibRec"));
        QCOMPARE(breadcrumb->path().front().name, QStringLiteral("all"));
        QVERIFY(child<QToolButton>(explorer, "resetZoomButton")->isEnabled());
        // The click also selected the function in the table and the caller/callee view.
        auto *table = child<QTreeView>(explorer, "topFunctionsTable");
        QCOMPARE(table->currentIndex().data(ui::FrameRole).toUInt(), fibFrame);
        QTRY_VERIFY(child<QLabel>(explorer, "callerCalleeTitle")->text().startsWith(QStringLiteral("main.fibRec")));
        QVERIFY(layout.isSelected(node));

        // Back to the root through the breadcrumb's first button, then zoom again and press Esc.
        QTest::mouseClick(child<QToolButton>(breadcrumb, "breadcrumb_0"), Qt::LeftButton);
        QCOMPARE(layout.zoomNode(), 0u);
        flame->zoomTo(node);
        QCOMPARE(layout.zoomNode(), node);
        flame->setFocus();
        QTest::keyClick(flame, Qt::Key_Escape);
        QCOMPARE(layout.zoomNode(), 0u);
        QCOMPARE(breadcrumb->path().size(), 1u);

        // Icicle toggle puts the root on the top row.
        QTest::mouseClick(child<QToolButton>(explorer, "icicleToggle"), Qt::LeftButton);
        QCOMPARE(layout.nodeRect(0).top(), 0.0);
    }

    // Switching the sample type rebuilds the tree for the new type on the worker and keeps the zoom path.
    // If this fails, the selector shows stale numbers or loses the user's place.
    void switchSampleType()
    {
        MainWindow window;
        window.resize(1400, 900);
        window.show();
        ProfileExplorer *explorer = openAndWait(window, kGoCpu);
        QVERIFY(explorer);
        auto *flame = child<FlameGraphView>(explorer, "flameGraph");
        const uint32_t node = flame->layout().largestNodeNamed("main.fibRec");
        flame->zoomTo(node);
        auto *combo = child<QComboBox>(explorer, "sampleTypeCombo");
        QCOMPARE(combo->count(), 2);
        QCOMPARE(combo->itemText(0), QStringLiteral("samples (count)"));
        combo->setCurrentIndex(0);
        QTRY_COMPARE(explorer->analysis()->sampleType, 0);
        QCOMPARE(flame->layout().tree()->total(), explorer->loaded().totals[0]);
        QCOMPARE(flame->layout().nodeName(flame->layout().zoomNode()), QStringLiteral("main.fibRec"));
        QVERIFY(child<QLabel>(explorer, "statusLine")->text().contains(QStringLiteral("samples")));
        QCOMPARE(flame->unit(), std::string("count"));
    }

    // A file that is not a profile ends in an error page naming the file, not a crash; a missing file too.
    void badFileShowsError()
    {
        const QString bad = m_dir.filePath(QStringLiteral("broken.pprof"));
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("\x1f\x8b this is not gzip at all");
        file.close();
        MainWindow window;
        window.show();
        window.openFiles({bad, m_dir.filePath(QStringLiteral("missing.pprof"))});
        QCOMPARE(window.tabs()->count(), 2);
        for (int i = 0; i < 2; ++i) {
            ProfileView *view = window.profileViewAt(i);
            QTRY_COMPARE(view->state(), ProfileView::State::Failed);
            auto *label = child<QLabel>(view, "errorLabel");
            QVERIFY(label->isVisibleTo(view));
            QVERIFY2(label->text().contains(QFileInfo(view->path()).fileName()), qPrintable(label->text()));
        }
        QVERIFY(!ui::RecentFiles().files().contains(bad));
        // Close both error tabs with their Close buttons: the start page comes back.
        for (int remaining = 1; remaining >= 0; --remaining) {
            window.tabs()->setCurrentIndex(0);
            QTest::mouseClick(child<QWidget>(window.profileViewAt(0), "closeTabButton"), Qt::LeftButton);
            QTRY_COMPARE(window.tabs()->count(), remaining);
        }
        QVERIFY(child<QWidget>(&window, "startPage")->isVisible());
    }

    // Dropping a file on the window opens it; opening it again switches to its tab instead of a duplicate.
    void dropOpensFile()
    {
        MainWindow window;
        window.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kGoCpu)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&window, &drop);
        QCOMPARE(window.tabs()->count(), 1);
        QTRY_COMPARE(window.currentProfileView()->state(), ProfileView::State::Ready);
        window.openFiles({kGoCpu});
        QCOMPARE(window.tabs()->count(), 1);
    }

    // Dropping `perf script` text and folded stacks (named as nothing in particular) opens each in a tab of its own,
    // read by its content. If this fails, the window accepts only pprof files from a drop.
    void dropOpensPerfScriptAndFoldedStacks()
    {
        const QString script = m_dir.filePath(QStringLiteral("dropped-script.txt"));
        const QString folded = m_dir.filePath(QStringLiteral("dropped-stacks.txt"));
        for (const auto &[path, text] : {std::pair{script, QByteArray("spin  1509 14773.167766:    1000 cpu-clock: \n"
                                                                      "\t    55d5c1a2b3c4 hot+0x15 (/tmp/spin)\n"
                                                                      "\t    55d5c1a2b400 main+0x40 (/tmp/spin)\n\n"
                                                                      "spin  1509 14773.168766:    3000 cpu-clock: \n"
                                                                      "\t    55d5c1a2b400 main+0x40 (/tmp/spin)\n\n")},
                                         std::pair{folded, QByteArray("main;work;hot 5\nmain;idle 2\n")}}) {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(text);
        }
        MainWindow window;
        window.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(script), QUrl::fromLocalFile(folded)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&window, &drop);
        QCOMPARE(window.tabs()->count(), 2);
        const int64_t expected[] = {4000, 7}; // cpu-clock nanoseconds; folded counts
        for (int i = 0; i < 2; ++i) {
            window.tabs()->setCurrentIndex(i);
            ProfileView *view = window.currentProfileView();
            QTRY_COMPARE(view->state(), ProfileView::State::Ready);
            ProfileExplorer *explorer = view->explorer();
            QTRY_VERIFY(explorer->analysis() != nullptr && !explorer->isAnalysing());
            QCOMPARE(explorer->analysis()->tree->total(), expected[i]);
        }
    }

    // A profile whose samples carry thread labels gets a thread filter; unchecking a thread re-derives the
    // tree without its samples. If this fails, the filter is missing or ignored.
    void threadFilter()
    {
        const QString path = m_dir.filePath(QStringLiteral("threads.pprof"));
        QVERIFY(engine::writePprofFile(ui::test::makeSmallProfile(true), path.toStdString()).ok());
        MainWindow window;
        window.show();
        ProfileExplorer *explorer = openAndWait(window, path);
        QVERIFY(explorer);
        auto *button = child<ui::ThreadFilterButton>(explorer, "threadFilterButton");
        QVERIFY(button->isVisibleTo(explorer));
        QCOMPARE(button->text(), QStringLiteral("All 2 threads"));
        QCOMPARE(explorer->analysis()->tree->total(), 100);
        ui::ThreadListModel *model = button->model();
        QVERIFY(model->setData(model->index(0, 0), Qt::Unchecked, Qt::CheckStateRole)); // worker
        QTRY_COMPARE(explorer->analysis()->tree->total(), 60);
        QCOMPARE(explorer->analysis()->keptSamples, 2u);
        QCOMPARE(button->text(), QStringLiteral("1 of 2 threads"));
    }

    // A session folder whose profile.pprof was cut short (Emberline was killed) opens as its flushes merged,
    // from File > Open Session and from a drop, with a notice that names the flush it had to skip. If this
    // fails, a crashed session cannot be opened in the window, or opens with part of it missing unsaid.
    void sessionFolderOpens()
    {
        const QString folder = m_dir.filePath(QStringLiteral("session"));
        QVERIFY(QDir().mkpath(folder));
        const engine::Profile flush = ui::test::makeSmallProfile(true);
        for (const char *name : {"flush-0001.pprof", "flush-0002.pprof"})
            QVERIFY(engine::writePprofFile(flush, QDir(folder).filePath(QLatin1String(name)).toStdString()).ok());
        QFile broken(QDir(folder).filePath(QStringLiteral("flush-0003.pprof")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("\x1f\x8b\x08 cut short");
        broken.close();
        QFile cut(QDir(folder).filePath(QStringLiteral("profile.pprof")));
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(QByteArray::fromStdString(engine::writePprof(flush)).left(40));
        cut.close();

        MainWindow window;
        window.show();
        window.openSessionFolder(folder);
        QCOMPARE(window.tabs()->count(), 1);
        ProfileView *view = window.currentProfileView();
        QTRY_COMPARE(view->state(), ProfileView::State::Ready);
        ProfileExplorer *explorer = view->explorer();
        QTRY_VERIFY(explorer->analysis() != nullptr && !explorer->isAnalysing());
        QCOMPARE(explorer->analysis()->tree->total(), 200); // both flushes, each 100
        auto *notice = child<QLabel>(view, "loadNotice");
        QVERIFY(notice->isVisibleTo(view));
        QVERIFY2(notice->text().contains(QStringLiteral("Merged from 2 flush file(s)")), qPrintable(notice->text()));
        QVERIFY2(notice->text().contains(broken.fileName()), qPrintable(notice->text()));

        MainWindow other;
        other.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(folder)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&other, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, {});
        QApplication::sendEvent(&other, &drop);
        QCOMPARE(other.tabs()->count(), 1);
        QTRY_COMPARE(other.currentProfileView()->state(), ProfileView::State::Ready);
        QCOMPARE(other.currentProfileView()->notice(), notice->text());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
