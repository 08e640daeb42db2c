#include "ui/models/caller_callee_table_model.h"

#include "ui/common/frame_source.h"
#include "ui/common/model_roles.h"

namespace emberline::ui {
namespace {

constexpr int kEdgeNameColumn = 0;

} // namespace

CallerCalleeTableModel::CallerCalleeTableModel(Side side, int columnCount, QObject *parent)
    : QAbstractTableModel(parent), m_side(side), m_columnCount(columnCount)
{
}

void CallerCalleeTableModel::setFrames(std::shared_ptr<const engine::FrameTable> frames, const std::string &unit)
{
    m_frames = std::move(frames);
    m_unit = unit;
}

uint32_t CallerCalleeTableModel::frameAt(int row) const
{
    if (row < 0 || static_cast<size_t>(row) >= edgeCount())
        return engine::kNoIndex;
    return edgeFrame(static_cast<size_t>(row));
}

int CallerCalleeTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(edgeCount());
}

int CallerCalleeTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_columnCount;
}

QVariant CallerCalleeTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto row = static_cast<size_t>(index.row());
    const uint32_t frameIndex = edgeFrame(row);
    const engine::Frame &frame = m_frames->frame(frameIndex);
    switch (role) {
    case Qt::DisplayRole:
    case SortRole:
        if (index.column() == kEdgeNameColumn)
            return QString::fromStdString(frame.name);
        return edgeValue(row, index.column(), role);
    case FrameRole:
        return frameIndex;
    case Qt::TextAlignmentRole:
        return index.column() == kEdgeNameColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                                 : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole: {
        const QString source = frameSourceText(frame);
        return QString::fromStdString(frame.name) + (source.isEmpty() ? QString() : QLatin1Char('\n') + source);
    }
    default:
        return {};
    }
}

QVariant CallerCalleeTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == kEdgeNameColumn)
        return m_side == Side::Callers ? tr("Caller") : tr("Callee");
    return valueHeader(section);
}

} // namespace emberline::ui
