#include "ui/models/unwind_health_model.h"

#include "ui/common/text_colors.h"

#include "engine/common/strings.h"

#include <QBrush>
#include <QColor>

namespace emberline::ui {

UnwindHealthModel::UnwindHealthModel(QObject *parent) : QAbstractTableModel(parent) {}

void UnwindHealthModel::setHealth(std::shared_ptr<const engine::UnwindHealth> health)
{
    beginResetModel();
    m_health = std::move(health);
    endResetModel();
}

int UnwindHealthModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_health ? 0 : static_cast<int>(m_health->modules.size());
}

int UnwindHealthModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant UnwindHealthModel::displayText(const engine::ModuleHealth &m, int column) const
{
    switch (column) {
    case ModuleColumn:
        return QString::fromStdString(engine::baseName(m.path));
    case SamplesColumn:
        return QVariant::fromValue<qulonglong>(m.samples);
    case IncompleteColumn:
        if (m.incomplete == 0)
            return QStringLiteral("–");
        return tr("%1 (%2% of incomplete)").arg(m.incomplete).arg(100.0 * m.incompleteShare, 0, 'f', 1);
    case CauseColumn:
        return QString::fromStdString(m.causeText);
    case SymbolsColumn:
        return QString::fromStdString(m.symbolText);
    case FixColumn:
        return QString::fromStdString(m.fix);
    }
    return {};
}

QString UnwindHealthModel::toolTip(const engine::ModuleHealth &m) const
{
    QString tip = QString::fromStdString(m.path);
    if (!m.buildId.empty())
        tip += tr("\nbuild id %1").arg(QString::fromStdString(m.buildId));
    for (size_t i = 0; i < engine::kUnwindCauseCount; ++i) {
        if (m.causes[i] > 0)
            tip += tr("\n%1: %2 stack(s)")
                       .arg(QString::fromUtf8(engine::unwindCauseName(static_cast<engine::UnwindCause>(i))))
                       .arg(m.causes[i]);
    }
    if (!m.fix.empty())
        tip += tr("\nFix: %1").arg(QString::fromStdString(m.fix));
    return tip;
}

QVariant UnwindHealthModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !m_health || index.row() >= rowCount())
        return {};
    const engine::ModuleHealth &m = m_health->modules[static_cast<size_t>(index.row())];
    const int severity = m.incomplete > 0 ? 2 : (m.fix.empty() ? 0 : 1);
    switch (role) {
    case Qt::DisplayRole:
        return displayText(m, index.column());
    case Qt::ToolTipRole:
        return toolTip(m);
    case SeverityRole:
        return severity;
    case Qt::TextAlignmentRole:
        if (index.column() == SamplesColumn || index.column() == IncompleteColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (index.column() == CauseColumn && severity == 2)
            return QBrush(problemText());
        if (index.column() == SymbolsColumn && m.symbols.status != engine::SymbolStatus::FullDwarf)
            return QBrush(warningText());
        return {};
    }
    return {};
}

QVariant UnwindHealthModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::ToolTipRole && section == SamplesColumn)
        return tr("Stacks unwound with a frame in the module: CPU samples and, with wall time, off-CPU switches");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ModuleColumn:
        return tr("Module");
    case SamplesColumn:
        return tr("Stacks");
    case IncompleteColumn:
        return tr("Incomplete stacks ending here");
    case CauseColumn:
        return tr("Cause");
    case SymbolsColumn:
        return tr("Symbols");
    case FixColumn:
        return tr("Fix to try");
    }
    return {};
}

} // namespace emberline::ui
