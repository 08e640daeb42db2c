#pragma once

#include "engine/compare/comparison.h"
#include "ui/models/caller_callee_table_model.h"

#include <memory>
#include <string>

namespace emberline::ui {

// One side of the caller/callee view of a comparison's selected function: its callers, or its callees, each
// with the value through that edge in the base and in the new profile, the change and the change %. Every column
// sorts by its raw value (SortRole).
//
// Thread: GUI thread; the DiffCallerCallee it shows was computed on a worker.
class DiffCallerCalleeModel : public CallerCalleeEdgeModel<engine::DiffCallerCallee> {
    Q_OBJECT
public:
    enum Column { NameColumn, BaseColumn, NewColumn, ChangeColumn, ChangePercentColumn, ColumnCount };

    explicit DiffCallerCalleeModel(Side side, QObject *parent = nullptr);

private:
    QVariant edgeValue(size_t row, int column, int role) const override;
    QVariant valueHeader(int section) const override;
};

} // namespace emberline::ui
