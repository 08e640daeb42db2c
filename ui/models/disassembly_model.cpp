#include "ui/models/disassembly_model.h"

#include "ui/common/text_colors.h"

#include "engine/model/units.h"

#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QFontDatabase>

namespace emberline::ui {
namespace {

QString bytesText(const std::vector<uint8_t> &bytes)
{
    QString text;
    for (uint8_t b : bytes)
        text += QStringLiteral("%1 ").arg(b, 2, 16, QLatin1Char('0'));
    return text.trimmed();
}

// From pale yellow to deep orange-red as the share grows, like the flame graph's hot end.
QColor heat(double share)
{
    share = std::clamp(share, 0.0, 1.0);
    const int green = static_cast<int>(245 - share * 160);
    const int blue = static_cast<int>(200 - share * 170);
    return QColor(255, green, blue);
}

} // namespace

DisassemblyModel::DisassemblyModel(QObject *parent) : QAbstractTableModel(parent) {}

void DisassemblyModel::setResult(std::shared_ptr<const DisassemblyResult> result)
{
    beginResetModel();
    m_result = std::move(result);
    m_rows.clear();
    m_hottestSelf = 0;
    if (m_result) {
        const auto &insns = m_result->function.instructions;
        std::string file;
        int64_t line = -1;
        for (size_t i = 0; i < insns.size(); ++i) {
            if (insns[i].line > 0 && (insns[i].file != file || insns[i].line != line))
                m_rows.push_back({-1, static_cast<int>(i)});
            file = insns[i].file;
            line = insns[i].line;
            m_rows.push_back({static_cast<int>(i), -1});
            m_hottestSelf = std::max(m_hottestSelf, insns[i].self);
        }
    }
    endResetModel();
}

int DisassemblyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DisassemblyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

bool DisassemblyModel::isSourceRow(int row) const
{
    return row >= 0 && row < static_cast<int>(m_rows.size()) && m_rows[static_cast<size_t>(row)].instruction < 0;
}

int DisassemblyModel::hottestRow() const
{
    int best = -1;
    for (int r = 0; r < static_cast<int>(m_rows.size()); ++r) {
        const int i = m_rows[static_cast<size_t>(r)].instruction;
        if (i < 0)
            continue;
        const auto &insn = m_result->function.instructions[static_cast<size_t>(i)];
        if (insn.self == 0 && insn.total == 0)
            continue;
        if (best < 0)
            best = r;
        const auto &top =
            m_result->function.instructions[static_cast<size_t>(m_rows[static_cast<size_t>(best)].instruction)];
        if (insn.self > top.self || (insn.self == top.self && insn.total > top.total))
            best = r;
    }
    return best;
}

QVariant DisassemblyModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !m_result || index.row() >= static_cast<int>(m_rows.size()))
        return {};
    const Row &row = m_rows[static_cast<size_t>(index.row())];
    if (role == IsSourceRole)
        return row.instruction < 0;
    if (role == Qt::FontRole)
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    return row.instruction < 0 ? sourceData(row, index.column(), role)
                               : instructionData(row.instruction, index.column(), role);
}

QVariant DisassemblyModel::sourceData(const Row &row, int column, int role) const
{
    const auto &insn = m_result->function.instructions[static_cast<size_t>(row.sourceOf)];
    // A source line heads its instructions in a band of its own: pale blue-grey, or slate on a dark palette.
    if (role == Qt::ForegroundRole)
        return isDarkPalette() ? QColor(150, 185, 240) : QColor(40, 90, 160);
    if (role == Qt::BackgroundRole)
        return isDarkPalette() ? QColor(44, 50, 62) : QColor(238, 242, 248);
    if (role != Qt::DisplayRole || column != 0) // the row's one span starts at the first column
        return {};
    QString code;
    const auto it = m_result->sources.find(insn.file);
    if (it != m_result->sources.end() && insn.line >= 1 && insn.line <= static_cast<int64_t>(it->second.size()))
        code = QString::fromStdString(it->second[static_cast<size_t>(insn.line - 1)]).trimmed();
    return QStringLiteral("%1:%2    %3")
        .arg(QFileInfo(QString::fromStdString(insn.file)).fileName())
        .arg(insn.line)
        .arg(code);
}

QVariant DisassemblyModel::instructionData(int instruction, int column, int role) const
{
    const auto &insn = m_result->function.instructions[static_cast<size_t>(instruction)];
    const std::string &unit = m_result->unit;
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case AddressColumn:
            return QStringLiteral("%1").arg(insn.address, 0, 16);
        case BytesColumn:
            return bytesText(insn.bytes);
        case InstructionColumn:
            return QString::fromStdString(insn.text);
        case SelfColumn:
            return insn.self ? QString::fromStdString(engine::formatValue(insn.self, unit)) : QString();
        case TotalColumn:
            return insn.total ? QString::fromStdString(engine::formatValue(insn.total, unit)) : QString();
        default:
            return {};
        }
    case Qt::BackgroundRole:
        if (insn.self > 0 && m_hottestSelf > 0)
            return heat(double(insn.self) / double(m_hottestSelf));
        return {};
    case Qt::ForegroundRole: // a tinted row keeps dark text on a dark palette too
        if (insn.self > 0 && m_hottestSelf > 0)
            return textOn(heat(double(insn.self) / double(m_hottestSelf)));
        return {};
    case Qt::TextAlignmentRole:
        return column == SelfColumn || column == TotalColumn ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                             : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case AddressRole:
        return static_cast<qulonglong>(insn.address);
    case SelfRole:
        return static_cast<qlonglong>(insn.self);
    case Qt::ToolTipRole:
        if ((column == SelfColumn || column == TotalColumn) && m_result->function.self > 0)
            return QStringLiteral("%1 of the function's self")
                .arg(QString::fromStdString(engine::formatPercent(insn.self, m_result->function.self)));
        return {};
    default:
        return {};
    }
}

QVariant DisassemblyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case AddressColumn:
        return tr("Address");
    case BytesColumn:
        return tr("Bytes");
    case InstructionColumn:
        return tr("Instruction");
    case SelfColumn:
        return tr("Self");
    case TotalColumn:
        return tr("Total");
    default:
        return {};
    }
}

} // namespace emberline::ui
