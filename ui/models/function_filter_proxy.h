#pragma once

#include <QList>
#include <QSortFilterProxyModel>

namespace emberline::ui {

// Sorts a function list by its raw values (SortRole: numbers as numbers, names case-insensitively) and filters
// it by a case-insensitive substring of the function name (column 0). Used over TopFunctionsModel and
// CallerCalleeModel, and over a comparison's tables, whose signed change columns may sort by the size of the change
// instead (growth and shrink alike, as `emberline report --base` orders them): the sign stays in the text.
//
// Thread: GUI thread.
class FunctionFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit FunctionFilterProxy(QObject *parent = nullptr);
    void setNameFilter(const QString &text);

    // The columns of signed changes that can sort by their size.
    void setChangeColumns(const QList<int> &columns) { m_changeColumns = columns; }
    bool isChangeColumn(int column) const { return m_changeColumns.contains(column); }
    // On: a change column sorts by the size of the change; off: by its signed value. Sorts again.
    void setSortByMagnitude(bool magnitude);
    bool sortsByMagnitude() const { return m_byMagnitude; }
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

protected:
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QList<int> m_changeColumns;
    bool m_byMagnitude = false;
};

} // namespace emberline::ui
