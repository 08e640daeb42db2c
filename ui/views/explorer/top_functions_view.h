#pragma once

#include <QWidget>

class QLineEdit;
class QTreeView;

namespace emberline::ui {

class TopFunctionsModel;
class FunctionFilterProxy;

// The top-functions table with its filter field. Emits the frame of the selected function; selectFrame()
// selects a function from elsewhere (a click in the flame graph), clearing the filter if it hides it.
//
// Thread: GUI thread.
class TopFunctionsView : public QWidget {
    Q_OBJECT
public:
    explicit TopFunctionsView(QWidget *parent = nullptr);

    TopFunctionsModel *model() const { return m_model; }
    FunctionFilterProxy *proxy() const { return m_proxy; }
    QTreeView *table() const { return m_table; }
    // Selects the frame's row; when the table filter hides it, clears the filter only if revealIfFiltered.
    void selectFrame(uint32_t frame, bool revealIfFiltered = true);
    uint32_t selectedFrame() const;

Q_SIGNALS:
    void frameSelected(uint32_t frame);
    // A right-click on a function's row (for its context menu).
    void frameContextMenuRequested(uint32_t frame, const QPoint &globalPos);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    // In a narrow pane (a window at 2× scale) the Self and Total columns go, the percentages stay, so that the
    // function names keep room to be read; they come back when the pane is wide enough.
    void fitColumns();
    void setupUi();
    void connectSignals();

    TopFunctionsModel *m_model = nullptr;
    FunctionFilterProxy *m_proxy = nullptr;
    QLineEdit *m_filter = nullptr;
    QTreeView *m_table = nullptr;
};

} // namespace emberline::ui
