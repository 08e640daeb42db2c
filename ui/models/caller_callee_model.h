#pragma once

#include "engine/model/frame_table.h"
#include "engine/model/function_table.h"

#include <QAbstractTableModel>

#include <memory>
#include <string>

namespace emberline::ui {

// One side of the caller/callee view of the selected function: its callers, or its callees, each with the
// value of the samples that pass through that edge and its share of the selected function's total.
//
// Thread: GUI thread; the CallerCallee it shows was computed on a worker.
class CallerCalleeModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Side { Callers, Callees };
    enum Column { NameColumn, ValueColumn, ShareColumn, ColumnCount };

    explicit CallerCalleeModel(Side side, QObject *parent = nullptr);

    void setCallerCallee(std::shared_ptr<const engine::CallerCallee> data,
                         std::shared_ptr<const engine::FrameTable> frames, const std::string &unit);
    void clear();
    Side side() const { return m_side; }
    uint32_t frameAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const std::vector<engine::CallerCallee::Edge> &edges() const;

    Side m_side;
    std::shared_ptr<const engine::CallerCallee> m_data;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::string m_unit;
};

} // namespace emberline::ui
