#pragma once

#include "engine/annotate/source_listing.h"

#include <QAbstractTableModel>

#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// The rows of the source view: with the file, every line of it (costly or not) and then the costly lines past
// its end, each said so; without it, the costly lines alone. Columns: line, self, total, share of the
// function's total, code. A line's background is its heat (its share of the function's total).
//
// Thread: GUI thread; the listing is an immutable result built on a worker.
class SourceLinesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { LineColumn, SelfColumn, TotalColumn, ShareColumn, CodeColumn, ColumnCount };
    // Qt::UserRole + 10: the row's raw values (qint64) for tests and sorting.
    enum Role { LineNumberRole = Qt::UserRole + 10, SelfRole, TotalRole, HeatRole };

    explicit SourceLinesModel(QObject *parent = nullptr);

    void setListing(std::shared_ptr<const engine::SourceListing> listing, const std::string &unit);
    void clear();
    const engine::SourceListing *listing() const { return m_listing.get(); }
    // The row of a line number, -1 when the model has none.
    int rowOfLine(int64_t line) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        int64_t line = 0;
        int64_t self = 0;
        int64_t total = 0;
        QString code;
        bool pastEnd = false;
    };
    QVariant display(const Row &row, int column) const;
    double heat(const Row &row) const;

    std::shared_ptr<const engine::SourceListing> m_listing;
    std::string m_unit;
    std::vector<Row> m_rows;
};

} // namespace emberline::ui
