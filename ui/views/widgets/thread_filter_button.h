#pragma once

#include "ui/models/thread_list_model.h"

#include <QToolButton>

class QListView;

namespace emberline::ui {

// The thread filter: a button whose popup lists the profile's threads with check boxes, plus "All" and
// "None". Its text says how many threads are shown. Hidden by the owner when samples carry no thread labels.
//
// Thread: GUI thread.
class ThreadFilterButton : public QToolButton {
    Q_OBJECT
public:
    explicit ThreadFilterButton(QWidget *parent = nullptr);

    void setThreads(std::shared_ptr<const engine::ThreadIndex> threads);
    ThreadListModel *model() const { return m_model; }
    std::vector<uint32_t> selectedThreads() const { return m_model->checkedThreads(); }

Q_SIGNALS:
    void selectionChanged();

private:
    void setupUi();
    void connectSignals();
    void updateText();

    ThreadListModel *m_model = nullptr;
    QListView *m_list = nullptr;
    QToolButton *m_all = nullptr;
    QToolButton *m_none = nullptr;
};

} // namespace emberline::ui
