#pragma once

#include <QSortFilterProxyModel>

namespace emberline::ui {

// Sorts a function list by its raw values (SortRole: numbers as numbers, names case-insensitively) and filters
// it by a case-insensitive substring of the function name (column 0). Used over TopFunctionsModel and
// CallerCalleeModel.
//
// Thread: GUI thread.
class FunctionFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit FunctionFilterProxy(QObject *parent = nullptr);
    void setNameFilter(const QString &text);
};

} // namespace emberline::ui
