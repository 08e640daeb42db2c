// File > Export, offscreen, on Go's real CPU profile with a focus transform: the flame graph as SVG (one
// rectangle per frame drawn, every name in a tooltip) and PNG (the picture on screen), and the view saved as
// pprof, read back by `emberline report` with the same numbers as `report --focus` on the original file; a
// folder that does not exist is an error naming the file.
#include "engine/pprof/pprof_reader.h"
#include "tests/ui/test_settings.h"
#include "tests/ui/views/explorer_test_support.h"
#include "ui/flamegraph/flame_graph_view.h"
#include "ui/jobs/view_exporter.h"

#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

using namespace emberline;

class TestViewExport : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ui::test::isolateSettings(m_dir, "tst_view_export");
    }

    // If this fails, an export leaves out frames, writes another view than the one shown, or fails silently.
    void exportFocusedView()
    {
        ui::ProfileView view(test::kGoCpu);
        ui::ProfileExplorer *explorer = test::openExplorer(view);
        QVERIFY(explorer);
        const QString focus = QStringLiteral("^main\\.runCPU\\.func17$");
        explorer->addTransform({engine::Transform::Kind::Focus, focus.toStdString()});
        QVERIFY(test::waitForAnalysis(explorer));
        const engine::CallTree &tree = *explorer->flameGraph()->layout().tree();
        ui::ViewExporter exporter;
        QSignalSpy saved(&exporter, &ui::ViewExporter::saved);
        QSignalSpy failed(&exporter, &ui::ViewExporter::failed);

        // SVG: a background, then one <rect> per drawn frame, each titled with its name.
        const QString svgPath = m_dir.filePath(QStringLiteral("flame.svg"));
        exporter.saveSvg(svgPath, explorer->flameGraph()->toSvg(QStringLiteral("go-cpu")));
        QTRY_COMPARE(saved.count(), 1);
        QFile svgFile(svgPath);
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&svgFile);
        int rects = 0;
        QStringList titles;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement)
                continue;
            if (xml.name() == QLatin1String("rect"))
                ++rects;
            else if (xml.name() == QLatin1String("title"))
                titles << xml.readElementText();
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        size_t nonZero = 0;
        for (uint32_t n = 0; n < tree.size(); ++n)
            nonZero += tree.node(n).total > 0 ? 1 : 0;
        QVERIFY(rects > 10);
        QVERIFY(static_cast<size_t>(rects - 1) <= nonZero); // narrower than a pixel is left out, nothing invented
        QCOMPARE(titles.size(), rects - 1);
        QVERIFY(!titles.filter(QStringLiteral("main.runCPU.func17 (")).isEmpty());
        QVERIFY(titles.first().startsWith(QStringLiteral("all (")) &&
                titles.first().endsWith(QStringLiteral("100.00%)")));

        // PNG: the picture on screen, not blank.
        const QString pngPath = m_dir.filePath(QStringLiteral("flame.png"));
        exporter.savePng(pngPath, explorer->flameGraph()->toImage());
        QTRY_COMPARE(saved.count(), 2);
        const QImage png(pngPath);
        QCOMPARE(png.size(), explorer->flameGraph()->viewport()->size());
        QVERIFY(png.pixel(png.width() / 2, png.height() - 5) != png.pixel(2, 2));

        // pprof: what `report --focus` shows on the original.
        const QString pprofPath = m_dir.filePath(QStringLiteral("view.pprof"));
        exporter.savePprof(pprofPath, explorer->loadedProfile(), explorer->shape().transforms,
                           explorer->analysis()->filter);
        QTRY_COMPARE(saved.count(), 3);
        QCOMPARE(failed.count(), 0);
        auto back = engine::readPprofFile(pprofPath.toStdString());
        QVERIFY(back);
        QCOMPARE(back->totals()[1], tree.total());
        const QByteArray ours = test::reportOutput({pprofPath, QStringLiteral("--json")});
        const QByteArray theirs =
            test::reportOutput({test::kGoCpu, QStringLiteral("--json"), QStringLiteral("--focus"), focus});
        QVERIFY(!ours.isEmpty());
        QCOMPARE(ours, theirs);

        // A folder that does not exist: said so, with the file's name.
        const QString nowhere = m_dir.filePath(QStringLiteral("missing/flame.svg"));
        exporter.saveSvg(nowhere, QByteArray("<svg/>"));
        QTRY_COMPARE(failed.count(), 1);
        QVERIFY(failed.first().first().toString().contains(nowhere));
    }
};

QTEST_MAIN(TestViewExport)
#include "tst_view_export.moc"
