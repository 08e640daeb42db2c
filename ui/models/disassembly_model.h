#pragma once

#include "ui/jobs/disassembly_runner.h"

#include <QAbstractTableModel>

#include <memory>
#include <vector>

namespace emberline::ui {

// A function's disassembly as a table: one row per instruction (self, total, address, instruction, bytes) and, each
// time the source line changes, a row for that line (file:line and its code) that the view spans across the
// columns. Costly instructions get a background from pale to hot by their share of the function's hottest
// instruction.
//
// Thread: GUI thread. Invariant: m_rows indexes into m_result's instructions, or names a source row.
class DisassemblyModel : public QAbstractTableModel {
    Q_OBJECT
public:
    // Cost first, as perf annotate shows it: the cost and the instruction stay in view in a narrow pane.
    enum Column { SelfColumn, TotalColumn, AddressColumn, InstructionColumn, BytesColumn, ColumnCount };
    enum Role { IsSourceRole = Qt::UserRole + 40, AddressRole, SelfRole };

    explicit DisassemblyModel(QObject *parent = nullptr);

    void setResult(std::shared_ptr<const DisassemblyResult> result);
    const DisassemblyResult *result() const { return m_result.get(); }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    bool isSourceRow(int row) const;
    // The row of the instruction with the most self (then total); -1 when nothing has a cost.
    int hottestRow() const;

private:
    struct Row {
        int instruction = -1; // -1: a source row
        int sourceOf = -1;    // for a source row: the first instruction of that line
    };
    QVariant sourceData(const Row &row, int column, int role) const;
    QVariant instructionData(int instruction, int column, int role) const;

    std::shared_ptr<const DisassemblyResult> m_result;
    std::vector<Row> m_rows;
    int64_t m_hottestSelf = 0;
};

} // namespace emberline::ui
