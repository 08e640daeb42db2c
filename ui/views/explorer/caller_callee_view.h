#pragma once

#include "engine/analysis/function_table.h"
#include "engine/model/frame_table.h"

#include <QWidget>

#include <memory>
#include <string>

class QLabel;
class QTreeView;

namespace emberline::ui {

class CallerCalleeModel;

// The selected function's callers (above) and callees (below), each sortable; double-clicking a row moves the
// selection to that function.
//
// Thread: GUI thread.
class CallerCalleeView : public QWidget {
    Q_OBJECT
public:
    explicit CallerCalleeView(QWidget *parent = nullptr);

    void setCallerCallee(std::shared_ptr<const engine::CallerCallee> data,
                         std::shared_ptr<const engine::FrameTable> frames, const std::string &unit);
    void clear();
    CallerCalleeModel *callersModel() const { return m_callers; }
    CallerCalleeModel *calleesModel() const { return m_callees; }

Q_SIGNALS:
    void frameActivated(uint32_t frame);

private:
    void setupUi();
    QTreeView *createTable(CallerCalleeModel *model, const QString &objectName);

    QLabel *m_title = nullptr;
    CallerCalleeModel *m_callers = nullptr;
    CallerCalleeModel *m_callees = nullptr;
};

} // namespace emberline::ui
