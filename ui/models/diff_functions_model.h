#pragma once

#include "engine/compare/comparison.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <vector>

namespace emberline::ui {

// The top-functions table of a comparison: one row per function that has a value in either profile, with base,
// new, change and change % of its self value and of its total (the numbers of `emberline report --base`). Every
// column sorts by its raw value (SortRole) through FunctionFilterProxy; a change % of a function the base lacks
// sorts above every finite percentage.
//
// Thread: GUI thread; the comparison it shows is immutable, built on a worker.
class DiffFunctionsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        NameColumn,
        BaseSelfColumn,
        NewSelfColumn,
        SelfChangeColumn,
        SelfChangePercentColumn,
        BaseTotalColumn,
        NewTotalColumn,
        TotalChangeColumn,
        TotalChangePercentColumn,
        ColumnCount
    };

    explicit DiffFunctionsModel(QObject *parent = nullptr);

    void setComparison(std::shared_ptr<const engine::Comparison> comparison);
    int rowOfFrame(uint32_t frame) const; // -1 when the function has no row
    uint32_t frameAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const engine::DiffFunction &row, int column) const;
    QVariant sortValue(const engine::DiffFunction &row, int column) const;

    std::shared_ptr<const engine::Comparison> m_comparison;
    std::vector<QString> m_names; // per row, converted once
};

// The sort value of a change %: the percentage, +infinity for a value the base lacks, 0 when both are 0.
double changePercentSortValue(int64_t base, int64_t next);

} // namespace emberline::ui
