#include "ui/views/memory/functions_over_time.h"

#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QStackedLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace emberline::ui {

FunctionsOverTime::FunctionsOverTime(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("functionsOverTime"));
    auto *chart = new QChart;
    chart->setMargins(QMargins(2, 2, 2, 2));
    chart->setBackgroundRoundness(0);
    chart->legend()->setAlignment(Qt::AlignRight);
    m_x = new QValueAxis(chart);
    m_x->setLabelFormat(QStringLiteral("%.0f s"));
    m_y = new QValueAxis(chart);
    chart->addAxis(m_x, Qt::AlignBottom);
    chart->addAxis(m_y, Qt::AlignLeft);
    m_view = new QChartView(chart, this);
    m_view->setRenderHint(QPainter::Antialiasing);
    m_view->setMinimumHeight(80);
    m_empty = new QLabel(tr("A live session's flushes tell what each function held over time; this profile has one "
                            "moment."),
                         this);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    auto *layout = new QStackedLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    layout->addWidget(m_empty);
    layout->setCurrentWidget(m_empty);
}

void FunctionsOverTime::setSeries(const std::vector<engine::FunctionOverTime> &series, int64_t sessionStartNs)
{
    QChart *chart = m_view->chart();
    chart->removeAllSeries();
    int64_t top = 0;
    int64_t lastNs = sessionStartNs;
    for (const engine::FunctionOverTime &f : series) {
        for (const auto &[t, bytes] : f.points) {
            top = std::max(top, bytes);
            lastNs = std::max(lastNs, t);
        }
    }
    auto *layout = static_cast<QStackedLayout *>(this->layout());
    if (series.empty() || series.front().points.empty()) {
        layout->setCurrentWidget(m_empty);
        return;
    }
    layout->setCurrentWidget(m_view);
    // One unit for the axis, from the largest value: 0 to 40 MiB, not 0 to 41,943,040 B.
    static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    double scale = 1;
    while (unit < 4 && static_cast<double>(top) / scale >= 1024) {
        scale *= 1024;
        ++unit;
    }
    // Six colours apart (the chart theme's own repeat after five).
    static const QColor kColors[] = {QColor(31, 119, 180),  QColor(255, 127, 14),  QColor(44, 160, 44),
                                     QColor(214, 39, 40),   QColor(148, 103, 189), QColor(140, 86, 75),
                                     QColor(227, 119, 194), QColor(127, 127, 127)};
    size_t index = 0;
    for (const engine::FunctionOverTime &f : series) {
        auto *line = new QLineSeries(chart);
        line->setColor(kColors[index++ % std::size(kColors)]);
        // A long C++ name would fill the legend: its start and end, the middle elided.
        const QString name = QString::fromStdString(f.function);
        line->setName(name.size() > 48 ? name.left(24) + QStringLiteral("\u2026") + name.right(23) : name);
        line->setPointsVisible(f.points.size() < 60);
        for (const auto &[t, bytes] : f.points)
            line->append(static_cast<double>(t - sessionStartNs) / 1e9, static_cast<double>(bytes) / scale);
        chart->addSeries(line);
        line->attachAxis(m_x);
        line->attachAxis(m_y);
    }
    // The session's span, ticks on round seconds (1, 2 or 5 times a power of ten, about four of them).
    const double span = std::max(1.0, static_cast<double>(lastNs - sessionStartNs) / 1e9);
    const double magnitude = std::pow(10.0, std::floor(std::log10(span / 4)));
    const double step = span / 4 / magnitude >= 5   ? 5 * magnitude
                        : span / 4 / magnitude >= 2 ? 2 * magnitude
                                                    : magnitude;
    m_x->setRange(0, span);
    m_x->setTickType(QValueAxis::TicksDynamic);
    m_x->setTickAnchor(0);
    m_x->setTickInterval(step);
    m_y->setRange(0, std::max(1.0, static_cast<double>(top) / scale * 1.1));
    m_y->setTickCount(4);
    m_y->applyNiceNumbers();
    m_y->setLabelFormat(QStringLiteral("%.0f ") + QLatin1String(kUnits[unit]));
}

QStringList FunctionsOverTime::functions() const
{
    QStringList out;
    const auto series = m_view->chart()->series();
    for (const QAbstractSeries *s : series)
        out << s->name();
    return out;
}

} // namespace emberline::ui
