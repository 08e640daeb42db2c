#pragma once

#include "engine/health/unwind_health.h"

#include <QAbstractTableModel>
#include <QString>

#include <memory>

namespace emberline::ui {

// The health view's table: one row per module, in the health's order (worst first): the module, its samples,
// the incomplete stacks that end in it (count and share of all incomplete ones), the cause, its symbols and the
// fix to try. Tooltips carry the full path, the build id and the count of each cause.
//
// Thread: GUI thread; the health it shows is an immutable value built on the exporter thread.
class UnwindHealthModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { ModuleColumn, SamplesColumn, IncompleteColumn, CauseColumn, SymbolsColumn, FixColumn, ColumnCount };
    // The row's problem level for the view's colours: 0 none, 1 names missing, 2 stacks cut short.
    static constexpr int SeverityRole = Qt::UserRole + 1;

    explicit UnwindHealthModel(QObject *parent = nullptr);

    void setHealth(std::shared_ptr<const engine::UnwindHealth> health);
    const std::shared_ptr<const engine::UnwindHealth> &health() const { return m_health; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant displayText(const engine::ModuleHealth &m, int column) const;
    QString toolTip(const engine::ModuleHealth &m) const;

    std::shared_ptr<const engine::UnwindHealth> m_health;
};

} // namespace emberline::ui
