#pragma once

#include "engine/model/sample_filter.h"

#include <QAbstractListModel>

#include <memory>
#include <vector>

namespace emberline::ui {

// The threads of a profile as a checkable list, busiest first, for the thread filter. All threads start
// checked; checkedThreads() returns the ThreadIndex ordinals to keep, empty when every thread is checked
// (no filtering at all), and {kNoIndex} (an ordinal no sample has) when none is.
//
// Thread: GUI thread; the ThreadIndex was built on the loading worker.
class ThreadListModel : public QAbstractListModel {
    Q_OBJECT
public:
    explicit ThreadListModel(QObject *parent = nullptr);

    void setThreads(std::shared_ptr<const engine::ThreadIndex> threads);
    std::vector<uint32_t> checkedThreads() const;
    int checkedCount() const;
    void setAllChecked(bool checked);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

Q_SIGNALS:
    void checkedThreadsChanged();

private:
    std::shared_ptr<const engine::ThreadIndex> m_threads;
    std::vector<uint32_t> m_order;  // row -> thread ordinal
    std::vector<uint8_t> m_checked; // per row
};

} // namespace emberline::ui
