#pragma once

#include "engine/live/live_profile.h"

#include <QAbstractListModel>

#include <vector>

namespace emberline::ui {

// The threads of a live session, in the order they first appeared (a LiveThread ordinal is its row, stable for
// the whole session), each with a check box: checked threads are shown, unchecked ones hidden from the timeline,
// the flame graph and the tables. New threads arrive checked; a refresh keeps the user's choices.
//
// Thread: GUI thread.
class LiveThreadModel : public QAbstractListModel {
    Q_OBJECT
public:
    explicit LiveThreadModel(QObject *parent = nullptr);

    void setThreads(const std::vector<engine::LiveThread> &threads);
    std::vector<uint32_t> hiddenThreads() const;
    bool isHidden(uint32_t thread) const { return thread < m_hidden.size() && m_hidden[thread]; }
    void isolate(int row);
    void showAll();

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

Q_SIGNALS:
    void hiddenThreadsChanged();

private:
    void setHidden(std::vector<uint8_t> hidden);

    std::vector<engine::LiveThread> m_threads;
    std::vector<uint8_t> m_hidden;
    uint64_t m_totalHits = 0;
};

} // namespace emberline::ui
