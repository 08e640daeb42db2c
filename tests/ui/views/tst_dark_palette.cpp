// The views on a dark palette, offscreen: the timeline charts' labels, titles and grid follow the palette (and
// follow it back to a light one), the heatmap's empty cells take the base colour, and the tables' coloured
// texts (changes, problems, warnings, text on cost tints) keep a readable contrast on either palette.

#include "engine/analysis/heatmap.h"
#include "ui/common/color_scheme.h"
#include "ui/common/text_colors.h"
#include "ui/timeline/heatmap_layout.h"
#include "ui/timeline/heatmap_view.h"
#include "ui/timeline/timeline_chart_view.h"
#include "ui/timeline/timeline_view.h"
#include "ui/views/memory/memory_chart.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QLegend>
#include <QTest>

#include <cmath>

using namespace emberline;
using namespace emberline::ui;

namespace {

QPalette lightPalette()
{
    QPalette light;
    light.setColor(QPalette::Window, QColor(239, 239, 239));
    light.setColor(QPalette::WindowText, Qt::black);
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, Qt::black);
    return light;
}

// WCAG's contrast ratio of two colours: 1 (same) to 21 (black on white); 4.5 is the floor for body text.
double contrast(const QColor &a, const QColor &b)
{
    const auto luminance = [](const QColor &c) {
        const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a) + 0.05;
    const double lb = luminance(b) + 0.05;
    return std::max(la, lb) / std::min(la, lb);
}

} // namespace

class TestDarkPalette : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void cleanup() { QApplication::setPalette(lightPalette()); }

    // If this fails, the timeline charts keep QtCharts' light theme on a dark palette: axis titles and labels
    // nearly invisible, grid lines stark white.
    void timelineChartsFollowThePalette()
    {
        QApplication::setPalette(darkPalette());
        TimelineView timeline;
        timeline.resize(900, 300);
        timeline.show();
        QVERIFY(QTest::qWaitForWindowExposed(&timeline));
        const auto check = [](TimelineChartView *view, const QPalette &palette) {
            QChart *chart = view->chart();
            QCOMPARE(chart->backgroundBrush().color(), palette.color(QPalette::Base));
            QVERIFY(!chart->axes().isEmpty());
            for (QAbstractAxis *axis : chart->axes()) {
                QCOMPARE(axis->labelsBrush().color(), palette.color(QPalette::Text));
                QCOMPARE(axis->titleBrush().color(), palette.color(QPalette::Text));
                // A faint grid: closer to the base than to the text.
                const QColor grid = axis->gridLinePen().color();
                QCOMPARE(grid.rgb() & 0xffffff, palette.color(QPalette::Text).rgb() & 0xffffff);
                QVERIFY(grid.alpha() < 80);
                QCOMPARE(axis->gridLinePen().width(), 0); // cosmetic, as the timeline sets it
            }
        };
        check(timeline.cpuChart(), darkPalette());
        check(timeline.flushChart(), darkPalette());
        // The memory chart's legend names its lines in the palette's text colour.
        MemoryChart memory;
        memory.show();
        QCOMPARE(memory.chartView()->chart()->legend()->labelColor(), darkPalette().color(QPalette::Text));
        QApplication::setPalette(lightPalette());
        QTRY_COMPARE(timeline.cpuChart()->chart()->backgroundBrush().color(), QColor(Qt::white));
        check(timeline.cpuChart(), lightPalette());
    }

    // If this fails, a second without samples glares white in the heatmap on a dark palette.
    void heatmapEmptyCellsTakeTheBase()
    {
        QApplication::setPalette(darkPalette());
        constexpr int64_t kStart = 1'700'000'000'000'000'000;
        auto heatmap = std::make_shared<engine::Heatmap>(kStart);
        for (int64_t t = 0; t < 1'000'000'000; t += 10'000'000) {
            heatmap->add(kStart + t, 1);                 // second 0
            heatmap->add(kStart + 2'000'000'000 + t, 1); // second 2; second 1 has none
        }
        HeatmapView view;
        view.resize(900, 300);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.setHeatmap(heatmap);
        const QImage image = view.grab().toImage();
        const QPoint empty = view.layout().cellRect({1, 10}).center().toPoint();
        const QPoint full = view.layout().cellRect({0, 10}).center().toPoint();
        QCOMPARE(QColor(image.pixel(empty)), darkPalette().color(QPalette::Base));
        QVERIFY(QColor(image.pixel(full)).lightness() > darkPalette().color(QPalette::Base).lightness() + 60);
    }

    // If this fails, a table's coloured text is hard to read on one of the palettes: dark red on a dark base, or
    // light text on a light cost tint.
    void tableColoursKeepTheirContrast()
    {
        for (const QPalette &palette : {darkPalette(), lightPalette()}) {
            QApplication::setPalette(palette);
            const QColor base = palette.color(QPalette::Base);
            QCOMPARE(isDarkPalette(), palette.color(QPalette::Base).lightness() < 128);
            for (const QColor &text : {grewText(), shrankText(), problemText(), warningText()})
                QVERIFY2(
                    contrast(text, base) >= 4.5,
                    qPrintable(QStringLiteral("%1 on %2: %3").arg(text.name(), base.name()).arg(contrast(text, base))));
        }
        // Text on the cost tints (heatmap, source and disassembly rows) reads, whatever the palette's text colour.
        for (int step = 1; step <= 100; step += 11) {
            const QColor tint(heatColor(step, 100));
            QVERIFY2(contrast(textOn(tint), tint) >= 4.5, qPrintable(tint.name()));
        }
    }
};

QTEST_MAIN(TestDarkPalette)
#include "tst_dark_palette.moc"
