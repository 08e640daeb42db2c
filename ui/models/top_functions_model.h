#pragma once

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>
#include <string>
#include <vector>

namespace emberline::ui {

// The top-functions table: one row per function with its self and total values and their shares of the
// whole (the same numbers as `emberline report` and `go tool pprof -top`). Rows come in the FunctionTable's
// order; sorting and filtering belong to FunctionFilterProxy.
//
// Thread: GUI thread; the tables it shows are immutable results built on a worker.
class TopFunctionsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, SelfColumn, TotalColumn, SelfPercentColumn, TotalPercentColumn, ColumnCount };

    explicit TopFunctionsModel(QObject *parent = nullptr);

    void setFunctions(std::shared_ptr<const engine::FunctionTable> functions,
                      std::shared_ptr<const engine::FrameTable> frames, const std::string &unit);
    void clear();
    int rowOfFrame(uint32_t frame) const; // -1 when the function has no row
    uint32_t frameAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const engine::FunctionTable> m_functions;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::string m_unit;
    std::vector<QString> m_names; // per row, converted once
};

} // namespace emberline::ui
