#pragma once

#include "engine/compare/comparison.h"

#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QTreeView;

namespace emberline::ui {

class DiffCallerCalleeModel;
class DiffFunctionsModel;
class FunctionFilterProxy;

// The tables of a comparison: the top functions with base, new, change and change % of self and total (with a
// name filter), and beside them the selected function's callers and callees with the same four columns. Every
// column sorts; the change columns first by the size of the change (the largest growth or shrink first, as
// `emberline report --base` orders them), then, click by click, by the largest growth and the largest shrink first.
// Emits the function the user picks; selectFrame() selects one picked elsewhere.
//
// Thread: GUI thread.
class DiffTablesView : public QWidget {
    Q_OBJECT
public:
    explicit DiffTablesView(QWidget *parent = nullptr);

    void setComparison(std::shared_ptr<const engine::Comparison> comparison);
    void setCallerCallee(std::shared_ptr<const engine::DiffCallerCallee> data);
    void selectFrame(uint32_t frame);
    DiffFunctionsModel *functionsModel() const { return m_functions; }
    FunctionFilterProxy *functionsProxy() const { return m_proxy; }
    QTreeView *functionsTable() const { return m_table; }
    DiffCallerCalleeModel *callersModel() const { return m_callers; }
    DiffCallerCalleeModel *calleesModel() const { return m_callees; }

Q_SIGNALS:
    void frameSelected(uint32_t frame);

private:
    void setupUi();
    void connectSignals();
    QWidget *createFunctionsPane();
    QWidget *createCallerCalleePane();
    QTreeView *createCallerCalleeTable(DiffCallerCalleeModel *model, const QString &objectName);

    std::shared_ptr<const engine::Comparison> m_comparison;
    DiffFunctionsModel *m_functions = nullptr;
    FunctionFilterProxy *m_proxy = nullptr;
    QLineEdit *m_filter = nullptr;
    QTreeView *m_table = nullptr;
    QLabel *m_callerTitle = nullptr;
    DiffCallerCalleeModel *m_callers = nullptr;
    DiffCallerCalleeModel *m_callees = nullptr;
};

} // namespace emberline::ui
