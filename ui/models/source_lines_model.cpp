#include "ui/models/source_lines_model.h"

#include "ui/common/text_colors.h"

#include "ui/common/value_text.h"

#include <QColor>
#include <QFont>

#include <algorithm>

namespace emberline::ui {
namespace {

// White to a warm red as the heat goes from 0 to 1; a line with any cost is tinted at least a little.
QColor heatColor(double heat)
{
    const double t = std::clamp(0.12 + 0.88 * heat, 0.0, 1.0);
    const auto mix = [t](int from, int to) { return static_cast<int>(from + (to - from) * t); };
    return QColor(mix(255, 240), mix(255, 110), mix(255, 80));
}

} // namespace

SourceLinesModel::SourceLinesModel(QObject *parent) : QAbstractTableModel(parent) {}

void SourceLinesModel::clear()
{
    beginResetModel();
    m_listing.reset();
    m_rows.clear();
    endResetModel();
}

void SourceLinesModel::setListing(std::shared_ptr<const engine::SourceListing> listing, const std::string &unit)
{
    beginResetModel();
    m_listing = std::move(listing);
    m_unit = unit;
    m_rows.clear();
    const std::vector<engine::LineCost> &costs = m_listing->function.lines;
    if (m_listing->source) {
        const std::vector<std::string> &lines = m_listing->source->lines;
        m_rows.reserve(lines.size() + m_listing->pastEnd.size());
        auto cost = costs.begin();
        for (size_t i = 0; i < lines.size(); ++i) {
            const auto n = static_cast<int64_t>(i + 1);
            while (cost != costs.end() && cost->line < n)
                ++cost;
            const bool costly = cost != costs.end() && cost->line == n;
            m_rows.push_back({n, costly ? cost->self : 0, costly ? cost->total : 0, QString::fromStdString(lines[i])});
        }
        for (const engine::LineCost &l : m_listing->pastEnd)
            m_rows.push_back(
                {l.line, l.self, l.total, tr("(past the end of the file: it changed since the recording)"), true});
    } else {
        for (const engine::LineCost &l : costs)
            m_rows.push_back({l.line, l.self, l.total, QString()});
    }
    endResetModel();
}

int SourceLinesModel::rowOfLine(int64_t line) const
{
    const auto it = std::find_if(m_rows.begin(), m_rows.end(), [line](const Row &r) { return r.line == line; });
    return it == m_rows.end() ? -1 : static_cast<int>(it - m_rows.begin());
}

int SourceLinesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SourceLinesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

double SourceLinesModel::heat(const Row &row) const
{
    const int64_t total = m_listing ? m_listing->function.total : 0;
    return total > 0 ? static_cast<double>(row.total) / static_cast<double>(total) : 0.0;
}

QVariant SourceLinesModel::display(const Row &row, int column) const
{
    switch (column) {
    case LineColumn:
        return QString::number(row.line);
    case SelfColumn:
        return row.self ? valueText(row.self, m_unit) : QString();
    case TotalColumn:
        return row.total ? valueText(row.total, m_unit) : QString();
    case ShareColumn:
        return row.total ? QString::number(heat(row) * 100.0, 'f', 1) + QLatin1Char('%') : QString();
    case CodeColumn:
        return row.code;
    default:
        return {};
    }
}

QVariant SourceLinesModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size()))
        return {};
    const Row &row = m_rows[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole:
        return display(row, index.column());
    case Qt::TextAlignmentRole:
        return index.column() == CodeColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::BackgroundRole:
        return row.total ? QVariant(heatColor(heat(row))) : QVariant();
    case Qt::ForegroundRole:
        // A tinted row keeps dark text on a dark palette too.
        if (row.pastEnd)
            return problemText();
        return row.total ? QVariant(textOn(heatColor(heat(row)))) : QVariant();
    case Qt::FontRole: {
        if (index.column() != CodeColumn)
            return {};
        QFont font(QStringLiteral("monospace"));
        font.setStyleHint(QFont::Monospace);
        font.setItalic(row.pastEnd);
        return font;
    }
    case LineNumberRole:
        return static_cast<qint64>(row.line);
    case SelfRole:
        return static_cast<qint64>(row.self);
    case TotalRole:
        return static_cast<qint64>(row.total);
    case HeatRole:
        return heat(row);
    default:
        return {};
    }
}

QVariant SourceLinesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case LineColumn:
        return tr("Line");
    case SelfColumn:
        return tr("Self");
    case TotalColumn:
        return tr("Total");
    case ShareColumn:
        return tr("Of function");
    case CodeColumn:
        return tr("Source");
    default:
        return {};
    }
}

} // namespace emberline::ui
