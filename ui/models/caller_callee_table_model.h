#pragma once

#include "engine/model/frame_table.h"

#include <QAbstractTableModel>

#include <memory>
#include <string>

namespace emberline::ui {

// What the caller/callee tables of a profile (CallerCalleeModel) and of a comparison (DiffCallerCalleeModel)
// share: one row an edge of the selected function to one of its callers, or callees; the first column names the
// frame at the other end (shown and sorted by name, with the file in the tooltip); FrameRole gives that frame.
// CallerCalleeEdgeModel holds the edges; its subclasses say what their value columns show and sort by.
//
// Thread: GUI thread.
class CallerCalleeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum class Side { Callers, Callees };

    Side side() const { return m_side; }
    // The frame at the other end of row `row`'s edge; kNoIndex outside the rows.
    uint32_t frameAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

protected:
    CallerCalleeTableModel(Side side, int columnCount, QObject *parent);

    // Between beginResetModel() and endResetModel(): the frames the edges name and the values' unit. Without
    // frames, the subclass must drop its edges.
    void setFrames(std::shared_ptr<const engine::FrameTable> frames, const std::string &unit);
    const std::string &unit() const { return m_unit; }

    // 0 when the subclass holds no edges.
    virtual size_t edgeCount() const = 0;
    virtual uint32_t edgeFrame(size_t row) const = 0;
    // What value column `column` (past the name) shows of row `row` for Qt::DisplayRole, or sorts by for SortRole.
    virtual QVariant edgeValue(size_t row, int column, int role) const = 0;
    virtual QVariant valueHeader(int section) const = 0;

private:
    Side m_side;
    int m_columnCount;
    std::shared_ptr<const engine::FrameTable> m_frames;
    std::string m_unit;
};

// The edges of one result of type `CallerCallee` (engine::CallerCallee or engine::DiffCallerCallee: a function's
// callers and callees, each edge with the frame at its other end), on this model's side.
template <typename CallerCallee> class CallerCalleeEdgeModel : public CallerCalleeTableModel {
public:
    void setCallerCallee(std::shared_ptr<const CallerCallee> data, std::shared_ptr<const engine::FrameTable> frames,
                         const std::string &unit)
    {
        beginResetModel();
        m_data = frames ? std::move(data) : nullptr;
        setFrames(std::move(frames), unit);
        endResetModel();
    }
    void clear() { setCallerCallee(nullptr, nullptr, {}); }

protected:
    using CallerCalleeTableModel::CallerCalleeTableModel;

    // Only while edgeCount() > 0.
    const CallerCallee &callerCallee() const { return *m_data; }
    const auto &edge(size_t row) const { return sideEdges()[row]; }

    size_t edgeCount() const override { return m_data ? sideEdges().size() : 0; }
    uint32_t edgeFrame(size_t row) const override { return edge(row).frame; }

private:
    const auto &sideEdges() const { return side() == Side::Callers ? m_data->callers : m_data->callees; }

    std::shared_ptr<const CallerCallee> m_data;
};

} // namespace emberline::ui
