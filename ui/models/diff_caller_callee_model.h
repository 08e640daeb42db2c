#pragma once

#include "engine/model/comparison.h"

#include <QAbstractTableModel>

#include <memory>
#include <string>

namespace emberline::ui {

// One side of the caller/callee view of a comparison's selected function: its callers, or its callees, each
// with the value through that edge in the base and in the new profile, the change and the change %. Every column
// sorts by its raw value (SortRole).
//
// Thread: GUI thread; the DiffCallerCallee it shows was computed on a worker.
class DiffCallerCalleeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Side { Callers, Callees };
    enum Column { NameColumn, BaseColumn, NewColumn, ChangeColumn, ChangePercentColumn, ColumnCount };

    explicit DiffCallerCalleeModel(Side side, QObject *parent = nullptr);

    void setCallerCallee(std::shared_ptr<const engine::DiffCallerCallee> data,
                         std::shared_ptr<const engine::FrameTable> frames, const std::string &unit);
    void clear();
    uint32_t frameAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<engine::DiffCallerCallee::Edge> &edges() const;

    Side m_side;
    std::shared_ptr<const engine::DiffCallerCallee> m_data;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::string m_unit;
};

} // namespace emberline::ui
